#pragma once
#include <cstdint>

#include "mimorx/core/complex.hpp"
#include "mimorx/modem/modulation.hpp"

namespace mimorx::modem::detail {
void map_cuda(Modulation mod, const std::uint8_t* bits, cf32* symbols, std::int64_t n, int device,
              void* stream);
// bits and/or llrs may be null; n0 is null when hard.
void demap_cuda(Modulation mod, const cf32* y, const float* n0, std::int64_t n0_size,
                std::uint8_t* bits, float* llrs, std::int64_t n, int device, void* stream);
}  // namespace mimorx::modem::detail

#pragma once
#include <cstdint>

#include "mimorx/core/complex.hpp"
#include "mimorx/modem/modulation.hpp"

namespace mimorx::detect::detail {
// Exhaustive ML on the device. workspace: at least ml_workspace_bytes(...) bytes of device memory.
std::size_t ml_workspace_bytes(std::int64_t vectors, int nt, Modulation mod, bool soft);
void ml_cuda(Modulation mod, int nt, int nr, bool soft, const cf32* h, std::int64_t h_stride,
             const cf32* y, std::int64_t y_stride, int vectors_per_channel, std::int64_t vectors,
             const float* n0, std::int64_t n0_size, std::uint8_t* bits, float* llrs,
             void* workspace, int device, void* stream, int max_hypotheses_per_thread = 256);
}  // namespace mimorx::detect::detail

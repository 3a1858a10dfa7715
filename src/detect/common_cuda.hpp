#pragma once
#include <cstdint>

namespace mimorx::detect::detail {
// Bit 0: h has a non-finite value; bit 1: y does; bit 2: a noise variance is not finite > 0.
int count_bad_values_cuda(const float* h, std::int64_t hn, const float* y, std::int64_t yn,
                          const float* n0, std::int64_t nn, int device);
}  // namespace mimorx::detect::detail

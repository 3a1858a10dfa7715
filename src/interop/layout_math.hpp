#pragma once
// The per-element rules of interop::LayoutConverter, shared by the CPU loops and the kernels.
#include <cstdint>

#include "mimorx/core/complex.hpp"
#include "mimorx/core/hd.hpp"

namespace mimorx::interop::detail {

// What a gather writes for an index past its input row: NaN, visible downstream.
constexpr float kBadIndex = __builtin_nanf("");

MIMORX_HD std::uint8_t bit_of_float(float v) { return v == 1.0f ? 1 : 0; }
MIMORX_HD bool is_bit(float v) { return v == 0.0f || v == 1.0f; }

MIMORX_HD float gathered(const float* in_row, int index, float scale, float start) {
  return index >= 0 ? start + scale * in_row[index] : start;
}

MIMORX_HD float covariance_noise(const cf32* s, int n, std::int64_t diag_stride) {
  float sum = 0.0f;
  for (int i = 0; i < n; ++i) sum += s[i * diag_stride].re;
  return sum / float(n);
}

}  // namespace mimorx::interop::detail

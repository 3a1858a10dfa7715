#pragma once
// Per-path arithmetic of the K-best detector shared by the CPU reference and the kernel
// (rounding-explicit operations from nway_math.hpp, so both keep identical lists).
#include <cstdint>

#include "detect/nway_math.hpp"
#include "mimorx/core/rounding.hpp"

namespace mimorx::detect::kbest {

constexpr int kMaxChildren = 4096;    // k * sqrt(M): the largest block sort
constexpr int kMaxPathBytes = 16384;  // 2 (double buffer) * k * 2nt level indices

// Interference-cancelled observation of level l for a path whose levels > l are fixed.
MIMORX_HD float parent_z(const float* e, const nway::Layout& lay, int l, int levels,
                         const std::uint8_t* path) {
  float z = e[lay.yhat(l)];
  for (int c = lay.d - 1; c > l; --c) {
    z = rounding::ffma(-e[lay.r(l, c)], float(2 * int(path[c]) - (levels - 1)), z);
  }
  return z;
}
// Partial distance of the child with level i at level l.
MIMORX_HD float child_distance(const float* e, const nway::Layout& lay, int l, int levels, float z,
                               int i, float parent_d) {
  const float err = rounding::ffma(-e[lay.r(l, l)], float(2 * i - (levels - 1)), z);
  return rounding::ffma(err, err, parent_d);
}
// Bits of a full path (natural column order), bit t*m + k = b_k of stream t.
MIMORX_HD std::uint64_t path_bits(const std::uint8_t* path, int nt, int axis_k) {
  const int m = 2 * axis_k;
  std::uint64_t w = 0;
  for (int p = 0; p < nt; ++p) {
    w |= std::uint64_t(nway::symbol_bits_of_levels(axis_k, path[2 * p], path[2 * p + 1]))
         << (p * m);
  }
  return w;
}
// Sort key of a distance: non-negative floats order like their bit patterns.
MIMORX_HD std::uint32_t key_of(float d) { return rounding::bits_of_float(d); }
MIMORX_HD float distance_of_key(std::uint32_t k) { return rounding::float_of_bits(k); }

}  // namespace mimorx::detect::kbest

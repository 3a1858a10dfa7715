#pragma once
// Output helpers shared by the two sphere-detector kernels (sphere_cuda.cu, sphere_lane_cuda.cu):
// a block's level -> axis-bits table and the store of one stream's hard bits.
#include <cstdint>

#include "detect/sphere_math.hpp"

namespace mimorx::detect::sphere {

// lbits[l] = axis bits c0..c(k-1) of level l (bit j = c_j), for the q levels of `mod`
// (nothing for BPSK). Block-wide; ends with __syncthreads().
__device__ inline void fill_level_bits(Modulation mod, int q, unsigned char* lbits) {
  if (mod != Modulation::bpsk && int(threadIdx.x) < q) {
    std::uint8_t cb[4];
    const int k = axis_bits(mod);
    level_bits(k, int(threadIdx.x), cb);
    unsigned packed = 0;
    for (int j = 0; j < k; ++j) packed |= unsigned(cb[j]) << j;
    lbits[threadIdx.x] = static_cast<unsigned char>(packed);
  }
  __syncthreads();
}

// Stores the mb bits of one QAM stream (axis bits cre, cim interleaved as write_stream does)
// at out, as one word where the alignment allows.
__device__ inline void store_stream_bits(std::uint8_t* out, int mb, unsigned cre, unsigned cim) {
  std::uint64_t word = 0;
  for (int j = 0; j < mb / 2; ++j) {
    word |= std::uint64_t((cre >> j) & 1u) << (16 * j);
    word |= std::uint64_t((cim >> j) & 1u) << (16 * j + 8);
  }
  const auto addr = reinterpret_cast<std::uintptr_t>(out);
  if (mb == 2 && addr % 2 == 0) {
    *reinterpret_cast<std::uint16_t*>(out) = std::uint16_t(word);
  } else if (mb == 4 && addr % 4 == 0) {
    *reinterpret_cast<std::uint32_t*>(out) = std::uint32_t(word);
  } else if (mb == 8 && addr % 8 == 0) {
    *reinterpret_cast<std::uint64_t*>(out) = word;
  } else {
    for (int j = 0; j < mb; ++j) out[j] = std::uint8_t(word >> (8 * j));
  }
}

}  // namespace mimorx::detect::sphere

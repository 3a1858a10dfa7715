#pragma once
// CUDA entry points of the K-best detector (kbest_cuda.cu, kbest_warp_cuda.cu). Device pointers;
// stream is a cudaStream_t.
#include <cstdint>

#include "mimorx/core/complex.hpp"
#include "mimorx/modem/modulation.hpp"

namespace mimorx::detect::kbest_cuda {

void qr(const cf32* h, std::int64_t h_stride, const cf32* y, std::int64_t y_stride,
        std::int64_t vectors, int vectors_per_channel, int nt, int nr, float scale, float* e,
        int device, void* stream);

// With cand_d non-null writes the final lists instead of bits and LLRs; llrs may be null.
void search(const float* e, std::int64_t vectors, int nt, Modulation mod, int k, const float* n0,
            std::int64_t n0_size, float clip, std::uint8_t* bits, float* llrs, float* cand_d,
            std::uint8_t* cand_sym, int device, void* stream);

// The warp-per-vector kernel (kbest_warp_cuda.cu) runs k paths as warp_width(k) (the next power
// of two, at least 8), at most 64, with at most 256 children per level, and packs a path's 2nt
// level indices of log2(sqrt(M)) bits into 32 bits. search_warp runs it on the current device
// where it fits (false: not run).
inline int warp_width(int k) {
  int kp = 8;
  while (kp < k) kp *= 2;
  return kp;
}
inline bool warp_kernel_fits(int nt, Modulation mod, int k) {
  const int kp = warp_width(k);
  return (nt == 2 || nt == 4 || nt == 8) && 2 * nt * axis_bits(mod) <= 32 && kp <= 64 &&
         kp * axis_levels(mod) <= 256;
}
bool search_warp(const float* e, std::int64_t vectors, int nt, Modulation mod, int k,
                 const float* n0, std::int64_t n0_size, float clip, std::uint8_t* bits, float* llrs,
                 float* cand_d, std::uint8_t* cand_sym, void* stream);

}  // namespace mimorx::detect::kbest_cuda

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

// The warp-per-vector kernel (kbest_warp_cuda.cu): whether it runs this shape (k rounded up to
// a power of two >= 8, at most 64, times sqrt(M) at most 256 children; 2nt log2(sqrt(M)) <= 32
// bits per packed path), and the search with it on the current device (false: not run).
bool warp_kernel_fits(int nt, Modulation mod, int k);
bool search_warp(const float* e, std::int64_t vectors, int nt, Modulation mod, int k,
                 const float* n0, std::int64_t n0_size, float clip, std::uint8_t* bits, float* llrs,
                 float* cand_d, std::uint8_t* cand_sym, void* stream);

}  // namespace mimorx::detect::kbest_cuda

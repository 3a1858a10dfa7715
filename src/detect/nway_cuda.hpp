#pragma once
// CUDA entry points of the N-way detector (kernels in nway_cuda.cu and nway_fast_cuda.cu).
// Pointers are device pointers; `stream` is a cudaStream_t.
#include <cstdint>

#include "mimorx/core/complex.hpp"
#include "mimorx/modem/modulation.hpp"

namespace mimorx::detect::nway_cuda {

// Algorithm 1 for every (vector, pass): E[(v * n_ways + n) * es ...] (layout in nway_math.hpp).
void qr(const cf32* h, std::int64_t h_stride, const cf32* y, std::int64_t y_stride,
        std::int64_t vectors, int vectors_per_channel, int nt, int nr, int n_ways, float scale,
        float* e, int device, void* stream);

// Algorithms 2 and 3. llrs may be null (hard output only). With cand_d non-null, writes the
// candidate list (distances and symbol indices) instead of bits and LLRs.
void search(const float* e, std::int64_t vectors, int nt, int n_ways, Modulation mod,
            const float* n0, std::int64_t n0_size, float clip, std::uint8_t* bits, float* llrs,
            float* cand_d, std::uint8_t* cand_sym, int device, void* stream);

// The fixed-shape path (nway_fast_cuda.cu; nt = 2 or 4, nt <= nr <= 8): the per-pass
// register-resident QR, and the search for E written by it (up to 64-QAM, bits and LLRs only).
// Each returns false, doing nothing, for shapes it does not take.
bool qr_fixed(const cf32* h, std::int64_t h_stride, const cf32* y, std::int64_t y_stride,
              std::int64_t vectors, int vectors_per_channel, int nt, int nr, int n_ways,
              float scale, float* e, int device, void* stream);
bool search_fast(const float* e, std::int64_t vectors, int nt, int nr, int n_ways, Modulation mod,
                 const float* n0, std::int64_t n0_size, float clip, std::uint8_t* bits, float* llrs,
                 int device, void* stream);

}  // namespace mimorx::detect::nway_cuda

#pragma once
// CUDA entry point of the trellis detector (trellis_cuda.cu). Pointers are device pointers;
// `stream` is a cudaStream_t.
#include <cstdint>

#include "mimorx/core/complex.hpp"
#include "mimorx/modem/modulation.hpp"

namespace mimorx::detect::trellis_cuda {

// The trellis search of every vector from the complex QR in the workspace: r (channel c at
// r + c * r_stride, nt x nt column-major), z = Q^H y (vector v at z + v * z_stride, nt). llrs
// may be null (hard output only). With cand_d non-null, writes the candidate lists (layout in
// trellis.hpp) instead of bits and LLRs.
void search(const cf32* r, std::int64_t r_stride, const cf32* z, std::int64_t z_stride,
            std::int64_t vectors, int vectors_per_channel, int nt, Modulation mod, const float* n0,
            std::int64_t n0_size, float clip, std::uint8_t* bits, float* llrs, float* cand_d,
            std::uint8_t* cand_sym, int device, void* stream);

}  // namespace mimorx::detect::trellis_cuda

#pragma once
// Device pieces both CUDA decoder kernels use (decoder_cuda.cu, decoder_pair_cuda.cu): shared-
// memory alignment, reading a channel LLR, writing a codeword's hard decisions.
#include <cstddef>
#include <cstdint>

#include "ldpc/decoder_cuda_internal.hpp"

namespace mimorx::ldpc::detail {

__host__ __device__ constexpr std::size_t align16(std::size_t b) {
  return (b + 15) & ~std::size_t(15);
}

// LLR i of a codeword (0 for the padding words past the batch); NaN and Inf are read as 0 and
// flagged in `bad` (DecoderConfig::check_input reports them).
// Branch-free, so that the loads of several calls can be issued together.
__device__ __forceinline__ float channel_llr(const float* llr, bool valid, int i, int& bad) {
  const float x = valid ? llr[i] : 0.f;
  const bool finite = isfinite(x);
  bad |= finite ? 0 : 1;
  return finite ? x : 0.f;
}

// Pre-quantised LLR i of a codeword (0 for the padding words), saturated to +-limit.
__device__ __forceinline__ int channel_q8(const std::int8_t* llr, bool valid, int i, int limit) {
  return clamp_llr(valid ? int(llr[i]) : 0, limit);
}

// Hard decisions (negative APP = bit 1) of codeword cw to p.out in p.mode, by the codeword's Z
// threads (thread r); variable i's APP is app[stride * i]. Packed output: one byte per thread,
// MSB first, eight shared-memory reads instead of a warp ballot, so that any k (22Z or 10Z need
// not be a multiple of 8 or 32) is handled alike.
template <class T>
__device__ void write_decisions(const T* app, int stride, int cw, int r, const KParams& p) {
  if (p.mode == OutMode::info_packed) {
    const int bytes = (p.k + 7) / 8;
    std::uint8_t* o = p.out + std::size_t(cw) * bytes;
    for (int b = r; b < bytes; b += p.z) {
      unsigned v = 0;
#pragma unroll
      for (int j = 0; j < 8; ++j) {
        const int i = 8 * b + j;
        if (i < p.k && app[std::size_t(stride) * i] < T(0)) v |= 0x80u >> j;
      }
      o[b] = std::uint8_t(v);
    }
  } else {
    const int len = p.mode == OutMode::codeword ? p.n_used : p.k;
    std::uint8_t* o = p.out + std::size_t(cw) * len;
    for (int i = r; i < len; i += p.z) o[i] = app[std::size_t(stride) * i] < T(0) ? 1 : 0;
  }
}

}  // namespace mimorx::ldpc::detail

// CUDA kernels of the N-way detector for the shapes with a register-resident QR (nt = 2 or 4,
// nt <= nr <= 8): the per-pass fixed-size QR (nway_qr_fixed.hpp) and the register-resident
// search and LLR merge (nway_fast_math.hpp). Other shapes use nway_cuda.cu's shared-memory
// kernels. Both produce what the CPU reference (nway_plan.cpp) computes, bit for bit.
#include <cstdint>
#include <string>
#include <type_traits>

#include "core/cuda_check.hpp"
#include "detect/nway_cuda.hpp"
#include "detect/nway_fast_math.hpp"
#include "detect/nway_qr_fixed.hpp"
#include "mimorx/core/error.hpp"

namespace mimorx::detect::nway_cuda {

namespace {

using nway::FastShape;
using rounding::fmin_num;

constexpr float kInf = __builtin_huge_valf();

// ---- QR: one thread per (channel, pass) ----------------------------------------------------
// 64 problems per block: 8400 channels are 132 blocks, one per SM. Each thread decomposes its
// (channel, pass) once and writes the E problem of each of the channel's vectors. The E
// problems are staged in shared memory (odd stride: the threads of a warp write distinct banks)
// one vector index u at a time and stored by the block with coalesced writes: with one vector
// per channel the block's problems are contiguous; with vpc vectors per channel each channel's
// n_ways problems of vector u are (n_ways * 52 floats for 4x4). Direct per-thread stores of
// the E problems of several vectors measured 10x slower (537600 vectors, 12 per channel).
constexpr int kQrThreads = 64;

template <int NR, int NT>
__global__ void __launch_bounds__(kQrThreads)
    fixed_qr_kernel(const cf32* __restrict__ h, std::int64_t h_stride, const cf32* __restrict__ y,
                    std::int64_t y_stride, std::int64_t channels, int vpc, int n_ways, float scale,
                    float* __restrict__ e_out) {
  constexpr int ES = nway::Layout(NT).es, ESP = ES | 1;
  __shared__ float stage[kQrThreads * ESP];
  __shared__ std::int64_t dest[kQrThreads];
  const int t = int(threadIdx.x);
  const std::int64_t problems = channels * n_ways;
  const std::int64_t first = std::int64_t(blockIdx.x) * kQrThreads, p = first + t;
  const bool has = p < problems;
  const std::int64_t c = has ? p / n_ways : 0;
  const int n = int(p - c * n_ways);
  nway::PassQr<NR, NT> s;
  if (has) {
    const cf32* hm = h + c * h_stride;
    nway::fixed_pass_qr<NR, NT>([hm](int i) { return hm[i]; }, n, s);
  }
  const std::int64_t left = problems - first;
  const int count = int(left < kQrThreads ? left : kQrThreads) * ES;
  for (int u = 0; u < vpc; ++u) {
    if (has) {
      const std::int64_t v = c * vpc + u;
      cf32 yv[NR];
#pragma unroll
      for (int i = 0; i < NR; ++i) yv[i] = y[v * y_stride + i];
      nway::fixed_pass_store<NR, NT>(s, yv, scale, stage + t * ESP);
      dest[t] = (v * n_ways + n) * ES;
    }
    __syncthreads();
    for (int i = t; i < count; i += kQrThreads) {
      const int q = i / ES, k = i - q * ES;
      e_out[dest[q] + k] = stage[q * ESP + k];
    }
    __syncthreads();
  }
}

// A bit with no counter-hypothesis in the list: the flip of the best candidate (pass bn, levels
// packed in blw) with its pass's E from global memory (nway::complete_minima). Not inlined: the
// merge loop is unrolled over the bits, and one copy of this rarely taken path keeps the
// unrolled loop small.
template <int NT, int L>
__device__ __noinline__ void flip_missing(const float* e, int bn, unsigned blw, int j, float* m0,
                                          float* m1, nway::PathErrors* pe) {
  using S = FastShape<NT, L>;
  int lev[S::D];
#pragma unroll
  for (int l = 0; l < S::D; ++l) lev[l] = int(blw >> (S::KA * l)) & (L - 1);
  nway::complete_minima(e, nway::Layout(NT), S::KA, NT, bn, lev, j, m0, m1, *pe);
}

// ---- search + LLR merge ----------------------------------------------------------------------
// A vector has tv = next_pow2(n_ways) * (M / C) threads (a power of two <= 32, consecutive
// lanes): thread (n, part) runs candidates part * C .. part * C + C - 1 of pass n; threads with
// n >= n_ways only contribute +inf. Results are staged per block and stored coalesced.
constexpr int kSearchThreads = 128;

template <int NT, int L, int C>
__global__ void __launch_bounds__(kSearchThreads)
    fast_search_kernel(const float* __restrict__ e_in, std::int64_t vectors, int n_ways, int tv,
                       const float* __restrict__ n0, std::int64_t n0_size, float clip,
                       std::uint8_t* __restrict__ bits, float* __restrict__ llrs) {
  using S = FastShape<NT, L>;
  constexpr int ES = S::ES, NB = S::NB, TP = S::M / C;
  constexpr int VW = ES % 4 == 0 ? 4 : 2;  // floats per vector load (problems are VW-aligned)
  static_assert(ES % VW == 0 && S::M % C == 0, "layout");
  extern __shared__ __align__(16) unsigned char raw[];
  const int vb = kSearchThreads / tv;  // vectors per block
  float* s_llr = reinterpret_cast<float*>(raw);
  std::uint8_t* s_bits = reinterpret_cast<std::uint8_t*>(s_llr + vb * NB);

  const int tl = int(threadIdx.x) & (tv - 1), vl = int(threadIdx.x) / tv;
  const int n = tl / TP, part = tl - n * TP;
  const std::int64_t v0 = std::int64_t(blockIdx.x) * vb, v = v0 + vl;
  const bool active = v < vectors && n < n_ways;

  float d[C];
  unsigned w[C];
  // The thread's best candidate (nway::candidate_key: metric, then index n M + k) and its
  // packed level word.
  unsigned long long bk = ~0ull;
  unsigned blw = 0;
  if (active) {
    float e[ES];
    using Vec = std::conditional_t<VW == 4, float4, float2>;
    const Vec* src = reinterpret_cast<const Vec*>(e_in + (v * n_ways + n) * ES);
#pragma unroll
    for (int q = 0; q < ES / VW; ++q) {
      const Vec x = __ldg(src + q);
      e[VW * q] = x.x;
      e[VW * q + 1] = x.y;
      if constexpr (VW == 4) {
        e[VW * q + 2] = x.z;
        e[VW * q + 3] = x.w;
      }
    }
#pragma unroll
    for (int i = 0; i < C; ++i) {
      const unsigned lw = nway::fast_path<NT, L>(e, part * C + i, &d[i]);
      w[i] = nway::fast_stream_word<NT, L>(lw, n);
      const unsigned long long key = nway::candidate_key(d[i], unsigned(n * S::M + part * C + i));
      if (key < bk) {
        bk = key;
        blw = lw;
      }
    }
  } else {
#pragma unroll
    for (int i = 0; i < C; ++i) {
      d[i] = kInf;
      w[i] = 0;
    }
  }

  // The vector's best candidate, the same on every thread of the vector (a total order):
  // its metric bd, pass bn, level word blw and bit word bw.
  for (int off = tv >> 1; off > 0; off >>= 1) {
    const unsigned long long ok = __shfl_xor_sync(0xffffffffu, bk, off);
    const unsigned olw = __shfl_xor_sync(0xffffffffu, blw, off);
    if (ok < bk) {
      bk = ok;
      blw = olw;
    }
  }
  const float bd = nway::key_metric(bk);
  const int bn = int(unsigned(bk) / unsigned(S::M));
  const unsigned bw = nway::fast_stream_word<NT, L>(blw, bn);
  // Counter-hypothesis minima per Gray-word position.
  float cm[NB];
#pragma unroll
  for (int b = 0; b < NB; ++b) cm[b] = kInf;
#pragma unroll
  for (int i = 0; i < C; ++i) {
    const unsigned x = w[i] ^ bw;
#pragma unroll
    for (int b = 0; b < NB; ++b) {
      if (x & (1u << b)) cm[b] = fmin_num(cm[b], d[i]);  // a predicate and a predicated min
    }
  }
  for (int off = tv >> 1; off > 0; off >>= 1) {
#pragma unroll
    for (int b = 0; b < NB; ++b) cm[b] = fmin_num(cm[b], __shfl_xor_sync(0xffffffffu, cm[b], off));
  }

  const bool valid = v < vectors;
  const float inv_n0 = valid ? rounding::fdiv(1.f, n0[n0_size == 1 ? 0 : v]) : 0.f;
  nway::PathErrors pe;  // the best candidate's errors, computed at this thread's first flip
#pragma unroll
  for (int j = 0; j < NB; ++j) {
    if (valid && (j & (tv - 1)) == tl) {
      const int pos = S::position(j);
      // Bit c of the best candidate is the complement of its Gray bit.
      const bool best_one = ((bw >> pos) & 1u) == 0;
      float m0 = best_one ? cm[pos] : bd, m1 = best_one ? bd : cm[pos];
      if (cm[pos] == kInf)
        flip_missing<NT, L>(e_in + (v * n_ways + bn) * ES, bn, blw, j, &m0, &m1, &pe);
      s_bits[vl * NB + j] = nway::hard_of_minima(m0, m1);
      if (llrs) s_llr[vl * NB + j] = nway::llr_of_minima(m0, m1, inv_n0, clip);
    }
  }
  __syncthreads();
  const std::int64_t left = vectors - v0;
  const int count = int(left < vb ? left : vb) * NB;
  const std::int64_t o0 = v0 * NB;
  for (int i = int(threadIdx.x); i < count; i += kSearchThreads) bits[o0 + i] = s_bits[i];
  if (llrs) {
    for (int i = int(threadIdx.x); i < count; i += kSearchThreads) llrs[o0 + i] = s_llr[i];
  }
}

int next_pow2(int x) {
  int p = 1;
  while (p < x) p <<= 1;
  return p;
}

template <int NT, int L, int C>
void launch_c(const float* e, std::int64_t vectors, int n_ways, int tv, const float* n0,
              std::int64_t n0_size, float clip, std::uint8_t* bits, float* llrs,
              cudaStream_t stream) {
  const int vb = kSearchThreads / tv;
  const std::size_t smem = std::size_t(vb) * FastShape<NT, L>::NB * (sizeof(float) + 1);
  const unsigned blocks = unsigned((vectors + vb - 1) / vb);
  fast_search_kernel<NT, L, C><<<blocks, kSearchThreads, smem, stream>>>(e, vectors, n_ways, tv, n0,
                                                                         n0_size, clip, bits, llrs);
  MIMORX_CUDA_CHECK_LAUNCH();
}

template <int NT, int L>
void launch_fast(const float* e, std::int64_t vectors, int n_ways, const float* n0,
                 std::int64_t n0_size, float clip, std::uint8_t* bits, float* llrs,
                 cudaStream_t stream) {
  constexpr int M = FastShape<NT, L>::M;
  const int ways = next_pow2(n_ways);
  // 16 candidates per thread (min(16, M)) where the batch gives the GPU enough threads that
  // way (measured: fewer instructions per candidate, the per-thread merge amortised); smaller
  // batches take the fewest candidates per thread (4, or 8 where 4 would put more than a warp
  // on one vector) for more threads to hide latency.
  int c = M < 16 ? M : 16;
  if (vectors * ways * (M / c) < 132 * 1024) {
    c = M < 4 ? M : 4;
    while (ways * (M / c) > 32) c *= 2;
  }
  const int tv = ways * (M / c);
  switch (c) {
    case 4:
      return launch_c<NT, L, 4>(e, vectors, n_ways, tv, n0, n0_size, clip, bits, llrs, stream);
    case 8:
      if constexpr (M >= 64) {
        return launch_c<NT, L, 8>(e, vectors, n_ways, tv, n0, n0_size, clip, bits, llrs, stream);
      }
      break;
    case 16:
      if constexpr (M >= 16) {
        return launch_c<NT, L, 16>(e, vectors, n_ways, tv, n0, n0_size, clip, bits, llrs, stream);
      }
      break;
  }
  throw Unsupported("nway fast search: " + std::to_string(c) + " candidates per thread");
}

}  // namespace

bool qr_fixed(const cf32* h, std::int64_t h_stride, const cf32* y, std::int64_t y_stride,
              std::int64_t vectors, int vectors_per_channel, int nt, int nr, int n_ways,
              float scale, float* e, int device, void* stream) {
  if (!nway::fixed_qr_shape(nt, nr)) return false;
  if (vectors == 0) return true;
  MIMORX_CUDA_CHECK(cudaSetDevice(device));
  const cudaStream_t s = detail::as_stream(stream);
  const std::int64_t channels = vectors / vectors_per_channel;
  const unsigned blocks = unsigned((channels * n_ways + kQrThreads - 1) / kQrThreads);
  return nway::fixed_qr_dispatch(nt, nr, [&]<int NR, int NT>() {
    fixed_qr_kernel<NR, NT><<<blocks, kQrThreads, 0, s>>>(h, h_stride, y, y_stride, channels,
                                                          vectors_per_channel, n_ways, scale, e);
    MIMORX_CUDA_CHECK_LAUNCH();
  });
}

bool search_fast(const float* e, std::int64_t vectors, int nt, int nr, int n_ways, Modulation mod,
                 const float* n0, std::int64_t n0_size, float clip, std::uint8_t* bits, float* llrs,
                 int device, void* stream) {
  const int levels = axis_levels(mod);
  if (!nway::fixed_qr_shape(nt, nr) || levels > 8) return false;
  if (vectors == 0) return true;
  MIMORX_CUDA_CHECK(cudaSetDevice(device));
  const cudaStream_t s = detail::as_stream(stream);
  auto go = [&]<int NT>() {
    switch (levels) {
      case 2:
        return launch_fast<NT, 2>(e, vectors, n_ways, n0, n0_size, clip, bits, llrs, s);
      case 4:
        return launch_fast<NT, 4>(e, vectors, n_ways, n0, n0_size, clip, bits, llrs, s);
      case 8:
        return launch_fast<NT, 8>(e, vectors, n_ways, n0, n0_size, clip, bits, llrs, s);
    }
  };
  if (nt == 2) {
    go.template operator()<2>();
  } else {
    go.template operator()<4>();
  }
  return true;
}

}  // namespace mimorx::detect::nway_cuda

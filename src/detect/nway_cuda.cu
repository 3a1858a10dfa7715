// CUDA kernels of the N-way detector: Algorithm 1 (nway_qr_kernel.cuh) and Algorithms 2 + 3.
#include <algorithm>
#include <cstdint>
#include <string>

#include "core/cuda_check.hpp"
#include "detect/nway_cuda.hpp"
#include "detect/nway_math.hpp"
#include "detect/nway_qr_kernel.cuh"
#include "mimorx/core/error.hpp"

namespace mimorx::detect::nway_cuda {

namespace {

using nway::fmin2;

constexpr float kInf = __builtin_huge_valf();
constexpr int kBlock = 256;
constexpr int kChunkValues = 32;  // (min over b=0, min over b=1) for 16 bits per round

constexpr int log2i(int x) { return x <= 1 ? 0 : 1 + log2i(x / 2); }

// Butterfly reduce-scatter of min over groups of lanes: after the steps with offsets O, O/2,
// ..., 1 every lane of a 2*O-lane group holds SIZE / (2*O) consecutive values, lane j the values
// [j * SIZE / (2*O), ...), each the minimum over the group. One shuffle per value kept instead
// of one per value per step: 30 shuffles for 32 values over 16 lanes instead of 128.
template <int O, int SIZE>
__device__ __forceinline__ void reduce_scatter_min(float* a, int lane) {
  if constexpr (O >= 1) {
    const bool upper = (lane & O) != 0;
#pragma unroll
    for (int i = 0; i < SIZE / 2; ++i) {
      const float send = upper ? a[i] : a[i + SIZE / 2];
      const float keep = upper ? a[i + SIZE / 2] : a[i];
      a[i] = fmin2(keep, __shfl_xor_sync(0xffffffffu, send, O));
    }
    reduce_scatter_min<O / 2, SIZE / 2>(a, lane);
  }
}

// One block handles gv vectors; a vector has tv = M * ns threads: thread (slot, k) runs
// candidate k of passes slot, slot + ns, ... (ns = n_ways except for 64/256-QAM with many
// ways, where the block would exceed 256 threads). Candidate lists are merged per 16 bits by a
// warp reduce-scatter, then across the rows (passes, warps) through shared memory.
template <int NT, int L>
__global__ void __launch_bounds__(kBlock)
    search_kernel(const float* __restrict__ e_in, std::int64_t vectors, int n_ways, int ns,
                  int ppt, int gv, int tv, int esp, int rows, const float* __restrict__ n0,
                  std::int64_t n0_size, float clip, std::uint8_t* __restrict__ bits,
                  float* __restrict__ llrs, float* __restrict__ cand_d,
                  std::uint8_t* __restrict__ cand_sym) {
  constexpr int D = 2 * NT, M = L * L, W = M < 32 ? M : 32, KA = log2i(L), MB = 2 * KA;
  constexpr int NB = NT * MB, ES = D * (D + 1) / 2 + 2 * D, PER = kChunkValues / W;
  constexpr int MAXP = M >= 256 ? 8 : (M >= 64 ? 2 : 1);
  extern __shared__ float smem[];
  float* tile = smem;
  float* red = smem + std::int64_t(gv) * n_ways * esp;

  const std::int64_t v0 = std::int64_t(blockIdx.x) * gv;
  const std::int64_t left = vectors - v0;
  const int nvb = int(left < gv ? left : gv);
  {
    const float* src = e_in + v0 * n_ways * ES;
    const int count = nvb * n_ways * ES;
    for (int i = threadIdx.x; i < count; i += blockDim.x) {
      const int pr = i / ES;
      tile[pr * esp + (i - pr * ES)] = src[i];
    }
  }
  __syncthreads();

  const int vl = threadIdx.x / tv, tl = threadIdx.x - vl * tv;
  const int slot = tl / M, k = tl - slot * M;
  const int lane = threadIdx.x & 31;
  const bool valid = vl < nvb;
  const std::int64_t v = v0 + vl;

  float d[MAXP];
  std::uint64_t w[MAXP];
#pragma unroll
  for (int pp = 0; pp < MAXP; ++pp) {
    const int n = slot + pp * ns;
    d[pp] = kInf;
    w[pp] = 0;
    if (valid && pp < ppt && n < n_ways) {
      int lev[D];
      d[pp] = nway::search_path<D, L>(tile + (vl * n_ways + n) * esp, k, lev);
      w[pp] = nway::path_bits<NT>(lev, n, KA);
      if (cand_d) {
        const std::int64_t c = (v * n_ways + n) * M + k;
        cand_d[c] = d[pp];
#pragma unroll
        for (int t = 0; t < NT; ++t) {
          cand_sym[c * NT + t] = std::uint8_t(
              nway::symbol_index_of_bits(MB, unsigned(w[pp] >> (t * MB)) & ((1u << MB) - 1)));
        }
      }
    }
  }
  if (cand_d) return;  // uniform over the grid: no barrier or shuffle follows

  const float inv_n0 = valid ? nway::fdiv(1.f, n0[n0_size == 1 ? 0 : v]) : 0.f;
#pragma unroll
  for (int c = 0; c * 16 < NB; ++c) {
    float a[kChunkValues];
#pragma unroll
    for (int j = 0; j < 16; ++j) {
      const int bit = c * 16 + j;
      a[2 * j] = kInf;
      a[2 * j + 1] = kInf;
      if (bit < NB) {
#pragma unroll
        for (int pp = 0; pp < MAXP; ++pp) {
          const bool one = (w[pp] >> bit) & 1u;
          a[2 * j] = fmin2(a[2 * j], one ? kInf : d[pp]);
          a[2 * j + 1] = fmin2(a[2 * j + 1], one ? d[pp] : kInf);
        }
      }
    }
    reduce_scatter_min<W / 2, kChunkValues>(a, lane);
    const int base = (lane % W) * PER;  // first value index this lane holds
    if (rows == 1) {
      // N = 1, M <= 16: the W lanes of a pass hold all minima of their vector.
      if (valid) {
#pragma unroll
        for (int q = 0; q < PER / 2; ++q) {
          const int bit = c * 16 + base / 2 + q;
          if (bit < NB) {
            const std::int64_t o = v * NB + bit;
            bits[o] = nway::hard_of_minima(a[2 * q], a[2 * q + 1]);
            if (llrs) llrs[o] = nway::llr_of_minima(a[2 * q], a[2 * q + 1], inv_n0, clip);
          }
        }
      }
    } else {
      const int row = slot * (M / W) + k / W;
      if (valid) {
#pragma unroll
        for (int i = 0; i < PER; ++i) red[(vl * rows + row) * kChunkValues + base + i] = a[i];
      }
      __syncthreads();
      if (valid) {
        for (int q = tl; q < 16; q += tv) {
          const int bit = c * 16 + q;
          if (bit >= NB) continue;
          float m0 = kInf, m1 = kInf;
          for (int r = 0; r < rows; ++r) {
            m0 = fmin2(m0, red[(vl * rows + r) * kChunkValues + 2 * q]);
            m1 = fmin2(m1, red[(vl * rows + r) * kChunkValues + 2 * q + 1]);
          }
          const std::int64_t o = v * NB + bit;
          bits[o] = nway::hard_of_minima(m0, m1);
          if (llrs) llrs[o] = nway::llr_of_minima(m0, m1, inv_n0, clip);
        }
      }
      __syncthreads();
    }
  }
}

template <int NT, int L>
void launch_search(const float* e, std::int64_t vectors, int n_ways, const float* n0,
                   std::int64_t n0_size, float clip, std::uint8_t* bits, float* llrs,
                   float* cand_d, std::uint8_t* cand_sym, cudaStream_t stream) {
  constexpr int D = 2 * NT, M = L * L, W = M < 32 ? M : 32;
  constexpr int ES = D * (D + 1) / 2 + 2 * D;
  const int ns = std::min(n_ways, std::max(1, kBlock / M));
  const int ppt = (n_ways + ns - 1) / ns;
  const int tv = M * ns;
  const int esp = ES | 1;  // odd stride: the problems of a warp read from distinct banks
  const int rows = (n_ways == 1 && M <= 16) ? 1 : ns * (M / W);
  int gv = std::max(1, kBlock / tv);
  auto smem = [&](int g) {
    return std::size_t(g) * (std::size_t(n_ways) * esp + (rows > 1 ? rows * kChunkValues : 0)) *
           sizeof(float);
  };
  while (gv > 1 && smem(gv) > 48 * 1024) --gv;
  const int threads = (gv * tv + 31) / 32 * 32;
  const std::int64_t blocks = (vectors + gv - 1) / gv;
  search_kernel<NT, L><<<unsigned(blocks), threads, smem(gv), stream>>>(
      e, vectors, n_ways, ns, ppt, gv, tv, esp, rows, n0, n0_size, clip, bits, llrs, cand_d,
      cand_sym);
  MIMORX_CUDA_CHECK_LAUNCH();
}

template <int NT>
void launch_search_l(int levels, const float* e, std::int64_t vectors, int n_ways,
                     const float* n0, std::int64_t n0_size, float clip, std::uint8_t* bits,
                     float* llrs, float* cand_d, std::uint8_t* cand_sym, cudaStream_t s) {
  switch (levels) {
    case 2:
      return launch_search<NT, 2>(e, vectors, n_ways, n0, n0_size, clip, bits, llrs, cand_d,
                                  cand_sym, s);
    case 4:
      return launch_search<NT, 4>(e, vectors, n_ways, n0, n0_size, clip, bits, llrs, cand_d,
                                  cand_sym, s);
    case 8:
      return launch_search<NT, 8>(e, vectors, n_ways, n0, n0_size, clip, bits, llrs, cand_d,
                                  cand_sym, s);
    case 16:
      return launch_search<NT, 16>(e, vectors, n_ways, n0, n0_size, clip, bits, llrs, cand_d,
                                   cand_sym, s);
  }
  throw Unsupported("mod: " + std::to_string(levels) + " levels per axis");
}

}  // namespace

void qr(const cf32* h, std::int64_t h_stride, const cf32* y, std::int64_t y_stride,
        std::int64_t vectors, int vectors_per_channel, int nt, int nr, int n_ways, float scale,
        float* e, int device, void* stream) {
  MIMORX_CUDA_CHECK(cudaSetDevice(device));
  nway::launch_mgs_qr(h, h_stride, y, y_stride, vectors, vectors_per_channel, nt, nr, n_ways,
                      scale, e, detail::as_stream(stream));
}

void search(const float* e, std::int64_t vectors, int nt, int n_ways, Modulation mod,
            const float* n0, std::int64_t n0_size, float clip, std::uint8_t* bits, float* llrs,
            float* cand_d, std::uint8_t* cand_sym, int device, void* stream) {
  if (vectors == 0) return;
  MIMORX_CUDA_CHECK(cudaSetDevice(device));
  const cudaStream_t s = detail::as_stream(stream);
  const int levels = axis_levels(mod);
  switch (nt) {
    case 2:
      return launch_search_l<2>(levels, e, vectors, n_ways, n0, n0_size, clip, bits, llrs,
                                cand_d, cand_sym, s);
    case 4:
      return launch_search_l<4>(levels, e, vectors, n_ways, n0, n0_size, clip, bits, llrs,
                                cand_d, cand_sym, s);
    case 8:
      return launch_search_l<8>(levels, e, vectors, n_ways, n0, n0_size, clip, bits, llrs,
                                cand_d, cand_sym, s);
  }
  throw Unsupported("nt: " + std::to_string(nt));
}

}  // namespace mimorx::detect::nway_cuda

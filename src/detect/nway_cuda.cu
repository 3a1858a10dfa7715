// CUDA kernels of the N-way detector: Algorithm 1 (nway_qr_kernel.cuh) and Algorithms 2 + 3.
#include <algorithm>
#include <cstdint>
#include <string>
#include <type_traits>

#include "core/cuda_check.hpp"
#include "detect/nway_cuda.hpp"
#include "detect/nway_math.hpp"
#include "detect/nway_qr_kernel.cuh"
#include "mimorx/core/error.hpp"

namespace mimorx::detect::nway_cuda {

namespace {

using rounding::fmin_num;

constexpr float kInf = __builtin_huge_valf();
constexpr int kBlock = 256;

// One block handles gv vectors; a vector has tv = M * ns threads: thread (slot, k) runs
// candidate k of passes slot, slot + ns, ... (ns = n_ways except for 64/256-QAM with many
// ways, where the block would exceed 256 threads). The candidates (distance, bit word) go to
// shared memory; then thread (q, j) of a vector scans candidates q, q + Q, ... for bit j
// (Q = tv / NB subsets), and the Q partial minima are combined. This transpose costs ~7
// instructions per (candidate, bit); a warp butterfly reduce-scatter of two values per bit
// spends about half of the kernel's instructions in the merge and is ~1.5x slower. The
// vector's best candidate (nway::candidate_key) is a per-thread minimum over its passes,
// combined by one shared 64-bit atomic min per thread; a bit without a counter-hypothesis
// recomputes that candidate's path from the tile and takes its flip metric
// (nway::complete_minima).
template <int NT, int L>
__global__ void __launch_bounds__(kBlock)
    search_kernel(const float* __restrict__ e_in, std::int64_t vectors, int n_ways, int ns, int ppt,
                  int gv, int tv, int esp, const float* __restrict__ n0, std::int64_t n0_size,
                  float clip, std::uint8_t* __restrict__ bits, float* __restrict__ llrs,
                  float* __restrict__ cand_d, std::uint8_t* __restrict__ cand_sym) {
  constexpr int D = 2 * NT, M = L * L, KA = nway::log2_pow2(L), MB = 2 * KA;
  constexpr int NB = NT * MB, ES = nway::Layout(NT).es;
  constexpr int MAXP = M >= 256 ? 8 : (M >= 64 ? 2 : 1);
  using Word = std::conditional_t<(NB > 32), std::uint64_t, std::uint32_t>;
  extern __shared__ __align__(16) unsigned char raw[];
  const int nm = n_ways * M;
  auto* best_key = reinterpret_cast<unsigned long long*>(raw);         // gv
  Word* cw = reinterpret_cast<Word*>(best_key + gv);                   // gv * nm
  float* tile = reinterpret_cast<float*>(cw + std::int64_t(gv) * nm);  // gv * n_ways * esp
  float* cd = tile + std::int64_t(gv) * n_ways * esp;                  // gv * nm
  float* red = cd + std::int64_t(gv) * nm;                             // gv * 2 * tv

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
    for (int i = threadIdx.x; i < gv; i += blockDim.x) best_key[i] = ~0ull;
  }
  __syncthreads();

  const int vl = threadIdx.x / tv, tl = threadIdx.x - vl * tv;
  const int slot = tl / M, k = tl - slot * M;
  const bool valid = vl < nvb;
  const std::int64_t v = v0 + vl;
  unsigned long long key = ~0ull;  // this thread's best candidate (nway::candidate_key)

#pragma unroll
  for (int pp = 0; pp < MAXP; ++pp) {
    const int n = slot + pp * ns;
    if (valid && pp < ppt && n < n_ways) {
      int lev[D];
      const float dist = nway::search_path<D, L>(tile + (vl * n_ways + n) * esp, k, lev);
      const Word w = nway::path_bits<NT, KA, Word>(lev, n);
      if (cand_d) {
        const std::int64_t c = (v * n_ways + n) * M + k;
        cand_d[c] = dist;
#pragma unroll
        for (int t = 0; t < NT; ++t) {
          cand_sym[c * NT + t] = std::uint8_t(
              nway::symbol_index_of_bits(MB, unsigned(w >> (t * MB)) & ((1u << MB) - 1)));
        }
      } else {
        cd[vl * nm + n * M + k] = dist;
        cw[vl * nm + n * M + k] = w;
        key = min(key, (unsigned long long)nway::candidate_key(dist, unsigned(n * M + k)));
      }
    }
  }
  if (cand_d) return;  // uniform over the grid: no barrier follows
  if (valid) atomicMin(&best_key[vl], key);
  __syncthreads();

  const int q_count = tv / NB > 1 ? tv / NB : 1;  // uniform over the grid
  const float inv_n0 = valid ? rounding::fdiv(1.f, n0[n0_size == 1 ? 0 : v]) : 0.f;
  // Bit j's hard decision and LLR from its minima, a missing one completed by the flip of the
  // best candidate.
  // The best candidate's path and errors, computed at this thread's first flip.
  nway::PathErrors pe;
  int lev[D];
  auto finish = [&](float m0, float m1, int j) {
    if ((m0 == kInf) != (m1 == kInf)) {
      const int c = int(unsigned(best_key[vl])), nb = c / M;
      const float* ep = tile + (vl * n_ways + nb) * esp;
      if (!pe.ready) nway::search_path<D, L>(ep, c - nb * M, lev);
      nway::complete_minima(ep, nway::Layout(NT), KA, NT, nb, lev, j, &m0, &m1, pe);
    }
    const std::int64_t o = v * NB + j;
    bits[o] = nway::hard_of_minima(m0, m1);
    if (llrs) llrs[o] = nway::llr_of_minima(m0, m1, inv_n0, clip);
  };
  if (valid) {
    const float* dv = cd + vl * nm;
    const Word* wv = cw + vl * nm;
    for (int item = tl; item < NB * q_count; item += tv) {
      const int q = item / NB, j = item - q * NB;
      float m0 = kInf, m1 = kInf;
#pragma unroll 4
      for (int c = q; c < nm; c += q_count) {
        const float dc = dv[c];
        const bool one = (wv[c] >> j) & 1u;
        m0 = one ? m0 : fmin_num(m0, dc);
        m1 = one ? fmin_num(m1, dc) : m1;
      }
      if (q_count == 1) {
        finish(m0, m1, j);
      } else {
        red[vl * 2 * tv + 2 * item] = m0;
        red[vl * 2 * tv + 2 * item + 1] = m1;
      }
    }
  }
  if (q_count == 1) return;
  __syncthreads();
  if (valid && tl < NB) {
    float m0 = kInf, m1 = kInf;
    for (int q = 0; q < q_count; ++q) {
      m0 = fmin_num(m0, red[vl * 2 * tv + 2 * (q * NB + tl)]);
      m1 = fmin_num(m1, red[vl * 2 * tv + 2 * (q * NB + tl) + 1]);
    }
    finish(m0, m1, tl);
  }
}

template <int NT, int L>
void launch_search(const float* e, std::int64_t vectors, int n_ways, const float* n0,
                   std::int64_t n0_size, float clip, std::uint8_t* bits, float* llrs, float* cand_d,
                   std::uint8_t* cand_sym, cudaStream_t stream) {
  constexpr int M = L * L, NB = NT * 2 * nway::log2_pow2(L);
  constexpr int ES = nway::Layout(NT).es;
  const std::size_t word = NB > 32 ? 8 : 4;
  const int ns = std::min(n_ways, std::max(1, kBlock / M));
  const int ppt = (n_ways + ns - 1) / ns;
  const int tv = M * ns;
  const int esp = ES | 1;  // odd stride: the problems of a warp read from distinct banks
  int gv = std::max(1, kBlock / tv);
  auto smem = [&](int g) {
    const std::size_t nm = std::size_t(n_ways) * M;
    return std::size_t(g) *
           (8 + nm * word + (std::size_t(n_ways) * esp + nm + 2 * tv) * sizeof(float));
  };
  while (gv > 1 && smem(gv) > 48 * 1024) --gv;
  const int threads = (gv * tv + 31) / 32 * 32;
  const std::int64_t blocks = (vectors + gv - 1) / gv;
  search_kernel<NT, L><<<unsigned(blocks), threads, smem(gv), stream>>>(
      e, vectors, n_ways, ns, ppt, gv, tv, esp, n0, n0_size, clip, bits, llrs, cand_d, cand_sym);
  MIMORX_CUDA_CHECK_LAUNCH();
}

template <int NT>
void launch_search_l(int levels, const float* e, std::int64_t vectors, int n_ways, const float* n0,
                     std::int64_t n0_size, float clip, std::uint8_t* bits, float* llrs,
                     float* cand_d, std::uint8_t* cand_sym, cudaStream_t s) {
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
  nway::launch_mgs_qr(h, h_stride, y, y_stride, vectors, vectors_per_channel, nt, nr, n_ways, scale,
                      e, detail::as_stream(stream));
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
      return launch_search_l<2>(levels, e, vectors, n_ways, n0, n0_size, clip, bits, llrs, cand_d,
                                cand_sym, s);
    case 4:
      return launch_search_l<4>(levels, e, vectors, n_ways, n0, n0_size, clip, bits, llrs, cand_d,
                                cand_sym, s);
    case 8:
      return launch_search_l<8>(levels, e, vectors, n_ways, n0, n0_size, clip, bits, llrs, cand_d,
                                cand_sym, s);
  }
  throw Unsupported("nt: " + std::to_string(nt));
}

}  // namespace mimorx::detect::nway_cuda

// CUDA K-best detector: one block per received vector; per level, the K * sqrt(M) children of
// the kept paths are sorted by a CUB block radix sort (stable, so ties keep child order as in the
// CPU reference) and the K best kept. Shapes that fit one warp run the warp kernel instead
// (kbest_warp_cuda.cu). QR: the N-way detector's Algorithm 1 kernel.
#include <algorithm>
#include <cstdint>
#include <cub/block/block_radix_sort.cuh>
#include <string>

#include "core/cuda_check.hpp"
#include "detect/kbest_cuda.hpp"
#include "detect/kbest_math.hpp"
#include "detect/nway_math.hpp"
#include "detect/nway_qr_kernel.cuh"
#include "mimorx/core/error.hpp"

namespace mimorx::detect::kbest_cuda {

namespace {

constexpr float kInf = __builtin_huge_valf();

struct SmemLayout {
  std::size_t bw = 0, e = 0, z = 0, dist = 0, paths = 0, bytes = 0;
  __host__ __device__ SmemLayout(int k, int d, int es) {
    bw = 0;  // k uint64 path bit words (final list)
    e = bw + std::size_t(k) * 8;
    z = e + std::size_t(es) * 4;
    dist = z + std::size_t(k) * 4;
    paths = dist + std::size_t(2 * k) * 4;
    bytes = paths + std::size_t(2 * k) * d;
  }
};

template <int BLOCK, int IPT>
__global__ void __launch_bounds__(BLOCK)
    kbest_kernel(const float* __restrict__ e_in, int nt, int levels, int axis_k, int kk,
                 const float* __restrict__ n0, std::int64_t n0_size, float clip,
                 std::uint8_t* __restrict__ bits, float* __restrict__ llrs,
                 float* __restrict__ cand_d, std::uint8_t* __restrict__ cand_sym) {
  using Sort = cub::BlockRadixSort<unsigned, BLOCK, IPT, int>;
  __shared__ typename Sort::TempStorage sort_tmp;
  extern __shared__ __align__(16) unsigned char raw[];
  const nway::Layout lay(nt);
  const int d = lay.d, L = levels, tid = threadIdx.x;
  const SmemLayout sl(kk, d, lay.es);
  auto* bw = reinterpret_cast<std::uint64_t*>(raw + sl.bw);
  float* e = reinterpret_cast<float*>(raw + sl.e);
  float* z = reinterpret_cast<float*>(raw + sl.z);
  float* dist = reinterpret_cast<float*>(raw + sl.dist);
  std::uint8_t* paths = raw + sl.paths;
  const std::int64_t v = blockIdx.x;

  for (int i = tid; i < lay.es; i += BLOCK) e[i] = e_in[v * lay.es + i];
  if (tid == 0) dist[0] = 0.f;
  for (int i = tid; i < d; i += BLOCK) paths[i] = 0;
  __syncthreads();

  int cur = 0, count = 1;
  for (int l = d - 1; l >= 0; --l) {
    const std::uint8_t* pc = paths + std::size_t(cur) * kk * d;
    std::uint8_t* pn = paths + std::size_t(cur ^ 1) * kk * d;
    const float* dc = dist + cur * kk;
    float* dn = dist + (cur ^ 1) * kk;
    for (int p = tid; p < count; p += BLOCK) z[p] = kbest::parent_z(e, lay, l, L, pc + p * d);
    __syncthreads();
    unsigned keys[IPT];
    int vals[IPT];
#pragma unroll
    for (int j = 0; j < IPT; ++j) {
      const int c = tid * IPT + j;
      vals[j] = c;
      keys[j] = 0xffffffffu;  // padding sorts after every distance, +inf included
      if (c < count * L) {
        const int p = c / L;
        keys[j] = kbest::key_of(kbest::child_distance(e, lay, l, L, z[p], c - p * L, dc[p]));
      }
    }
    // A list that keeps every child above the last level keeps child order (kbest_plan.cpp).
    if (l == 0 || count * L > kk) Sort(sort_tmp).Sort(keys, vals);
    const int nc = min(kk, count * L);
#pragma unroll
    for (int j = 0; j < IPT; ++j) {
      const int r = tid * IPT + j;
      if (r < nc) {
        const int c = vals[j], p = c / L;
        for (int q = 0; q < d; ++q) pn[r * d + q] = pc[p * d + q];
        pn[r * d + l] = std::uint8_t(c - p * L);
        dn[r] = kbest::distance_of_key(keys[j]);
      }
    }
    __syncthreads();
    cur ^= 1;
    count = nc;
  }
  const std::uint8_t* pf = paths + std::size_t(cur) * kk * d;
  const float* df = dist + cur * kk;
  const int m = 2 * axis_k, nb = nt * m;
  if (cand_d) {
    for (int r = tid; r < kk; r += BLOCK) {
      const std::int64_t c = v * kk + r;
      cand_d[c] = r < count ? df[r] : kInf;
      const std::uint64_t w = r < count ? kbest::path_bits(pf + r * d, nt, axis_k) : 0;
      for (int t = 0; t < nt; ++t) {
        cand_sym[c * nt + t] = r < count ? std::uint8_t(nway::symbol_index_of_bits(
                                               m, unsigned(w >> (t * m)) & ((1u << m) - 1)))
                                         : std::uint8_t(0);
      }
    }
    return;
  }
  for (int r = tid; r < count; r += BLOCK) bw[r] = kbest::path_bits(pf + r * d, nt, axis_k);
  __syncthreads();
  const float inv_n0 = rounding::fdiv(1.f, n0[n0_size == 1 ? 0 : v]);
  nway::PathErrors pe;  // the best path's errors, computed at this thread's first flip
  for (int j = tid; j < nb; j += BLOCK) {
    float m0 = kInf, m1 = kInf;
    for (int r = 0; r < count; ++r) {
      if ((bw[r] >> j) & 1u) {
        m1 = rounding::fmin_num(m1, df[r]);
      } else {
        m0 = rounding::fmin_num(m0, df[r]);
      }
    }
    // Path 0 of the sorted list is the best candidate (nway::complete_minima).
    nway::complete_minima(e, lay, axis_k, nt, 0, pf, j, &m0, &m1, pe);
    bits[v * nb + j] = nway::hard_of_minima(m0, m1);
    if (llrs) llrs[v * nb + j] = nway::llr_of_minima(m0, m1, inv_n0, clip);
  }
}

template <int BLOCK, int IPT>
void launch(const float* e, std::int64_t vectors, int nt, Modulation mod, int kk, const float* n0,
            std::int64_t n0_size, float clip, std::uint8_t* bits, float* llrs, float* cand_d,
            std::uint8_t* cand_sym, cudaStream_t s) {
  const nway::Layout lay(nt);
  const SmemLayout sl(kk, lay.d, lay.es);
  auto kernel = kbest_kernel<BLOCK, IPT>;
  MIMORX_CUDA_CHECK(
      cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(sl.bytes)));
  kernel<<<unsigned(vectors), BLOCK, sl.bytes, s>>>(e, nt, axis_levels(mod), axis_bits(mod), kk, n0,
                                                    n0_size, clip, bits, llrs, cand_d, cand_sym);
  MIMORX_CUDA_CHECK_LAUNCH();
}

}  // namespace

void qr(const cf32* h, std::int64_t h_stride, const cf32* y, std::int64_t y_stride,
        std::int64_t vectors, int vectors_per_channel, int nt, int nr, float scale, float* e,
        int device, void* stream) {
  MIMORX_CUDA_CHECK(cudaSetDevice(device));
  nway::launch_mgs_qr(h, h_stride, y, y_stride, vectors, vectors_per_channel, nt, nr, 1, scale, e,
                      detail::as_stream(stream));
}

void search(const float* e, std::int64_t vectors, int nt, Modulation mod, int k, const float* n0,
            std::int64_t n0_size, float clip, std::uint8_t* bits, float* llrs, float* cand_d,
            std::uint8_t* cand_sym, int device, void* stream) {
  if (vectors == 0) return;
  MIMORX_CUDA_CHECK(cudaSetDevice(device));
  if (search_warp(e, vectors, nt, mod, k, n0, n0_size, clip, bits, llrs, cand_d, cand_sym,
                  stream)) {
    return;
  }
  const cudaStream_t s = detail::as_stream(stream);
  const int children = k * axis_levels(mod);
  // The smallest block sort that holds all children.
  if (children <= 64) {
    return launch<64, 1>(e, vectors, nt, mod, k, n0, n0_size, clip, bits, llrs, cand_d, cand_sym,
                         s);
  }
  if (children <= 256) {
    return launch<128, 2>(e, vectors, nt, mod, k, n0, n0_size, clip, bits, llrs, cand_d, cand_sym,
                          s);
  }
  if (children <= 1024) {
    return launch<256, 4>(e, vectors, nt, mod, k, n0, n0_size, clip, bits, llrs, cand_d, cand_sym,
                          s);
  }
  if (children <= 2048) {
    return launch<256, 8>(e, vectors, nt, mod, k, n0, n0_size, clip, bits, llrs, cand_d, cand_sym,
                          s);
  }
  if (children <= kbest::kMaxChildren) {
    return launch<256, 16>(e, vectors, nt, mod, k, n0, n0_size, clip, bits, llrs, cand_d, cand_sym,
                           s);
  }
  throw InvalidArgument("k: " + std::to_string(k) + " gives " + std::to_string(children) +
                        " children per level; at most " + std::to_string(kbest::kMaxChildren));
}

}  // namespace mimorx::detect::kbest_cuda

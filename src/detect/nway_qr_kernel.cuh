#pragma once
// Algorithm 1 of the N-way detector (also used by the K-best detector): MRVD + modified
// Gram-Schmidt of the extended real matrix V = [H~ | y~] (2nr x (2nt+1)) in shared memory, 2nt
// threads per problem, several problems per block so that warps are full. Thread t owns column
// t and thread k also the y column at step k: at step k every thread t >= k forms its dot
// product with v_k, then (after sqrt(s_kk), computed redundantly by each) updates its column, so
// all 2nt threads work in both phases. The per-element arithmetic is nway_math.hpp's, identical
// to the CPU reference.
#include <cstdint>

#include "core/cuda_check.hpp"
#include "detect/nway_math.hpp"

namespace mimorx::detect::nway {

struct QrGeometry {
  int problems_per_block = 1;
  int v_stride = 0;  // floats between two problems' V tiles in shared memory
  std::size_t smem_bytes = 0;
};

inline QrGeometry qr_geometry(int nt, int nr) {
  const Layout lay(nt);
  const int d = lay.d, vsz = 2 * nr * (d + 1);
  QrGeometry g;
  // V is row-major with row stride d+1; a problem stride congruent to d (mod 32) puts the d
  // threads of the 32/d problems of a warp on 32 different banks.
  g.v_stride = vsz + (((d - vsz) % 32) + 32) % 32;
  g.problems_per_block = 256 / d;
  auto bytes = [&](int p) { return std::size_t(p) * (g.v_stride + lay.es + 1) * sizeof(float); };
  // Whole warps (the steps use __syncwarp): at least 32 / d problems.
  while (g.problems_per_block > 32 / d && bytes(g.problems_per_block) > 48 * 1024) {
    g.problems_per_block /= 2;
  }
  g.smem_bytes = bytes(g.problems_per_block);
  return g;
}

// Problem p = vector * n_ways + pass; vector v uses channel v / vectors_per_channel. The 2nt
// threads of a problem lie in one warp (2nt divides 32), so the steps synchronise with
// __syncwarp, not with block barriers.
// static: this header is compiled into the N-way and the K-best components, which may be
// linked together.
static __global__ void __launch_bounds__(256)
    mgs_qr_kernel(const cf32* h, std::int64_t h_stride, const cf32* y, std::int64_t y_stride,
                  std::int64_t problems, int vpc, int nt, int nr, int n_ways, float scale, int ppb,
                  int v_stride, float* e_out) {
  extern __shared__ float smem[];
  const Layout lay(nt);
  const int d = lay.d, es = lay.es, stride = d + 1, rows = 2 * nr;
  const int p = threadIdx.x / d, t = threadIdx.x - p * d;
  const std::int64_t first = std::int64_t(blockIdx.x) * ppb;
  const std::int64_t prob = first + p;
  const bool valid = p < ppb && prob < problems;
  float* v = smem + p * v_stride;
  float* et = smem + std::int64_t(ppb) * v_stride;
  float* e = et + p * es;
  float* skk = et + std::int64_t(ppb) * es;  // s_kk of each problem's current step
  if (valid) {
    const std::int64_t vec = n_ways == 1 ? prob : prob / n_ways;
    const int n = int(prob - vec * n_ways);
    const cf32* hm = h + (vpc == 1 ? vec : vec / vpc) * h_stride;
    const cf32* ym = y + vec * y_stride;
    load_extended_column(hm, ym, nr, nt, n, t, v, stride);
    if (t == 0) load_extended_column(hm, ym, nr, nt, n, d, v, stride);
  }
  __syncwarp();
  for (int k = 0; k < d; ++k) {
    float s_own = 0.f, s_y = 0.f;
    if (valid && t >= k) {
      s_own = mgs_dot(v, stride, rows, k, t);
      if (t == k) {
        s_y = mgs_dot(v, stride, rows, k, d);
        skk[p] = s_own;
      }
    }
    __syncwarp();
    if (valid && t >= k) {
      float r = 0.f;
      const float inv = mgs_inv_norm(skk[p], &r);
      if (t == k) {
        store_r(lay, scale, k, k, r, e);
        store_r(lay, scale, k, d, mgs_update(v, stride, rows, k, d, s_y, inv), e);
      } else {
        store_r(lay, scale, k, t, mgs_update(v, stride, rows, k, t, s_own, inv), e);
      }
    }
    __syncwarp();
  }
  __syncthreads();
  // The staged E tiles of the block are contiguous in global memory: coalesced copy-out.
  const std::int64_t left = problems - first;
  const int count = int((left < ppb ? left : ppb) * es);
  for (int i = threadIdx.x; i < count; i += blockDim.x) e_out[first * es + i] = et[i];
}

static void launch_mgs_qr(const cf32* h, std::int64_t h_stride, const cf32* y,
                          std::int64_t y_stride, std::int64_t vectors, int vpc, int nt, int nr,
                          int n_ways, float scale, float* e, cudaStream_t stream) {
  const std::int64_t problems = vectors * n_ways;
  if (problems == 0) return;
  const QrGeometry g = qr_geometry(nt, nr);
  const std::int64_t blocks = (problems + g.problems_per_block - 1) / g.problems_per_block;
  mgs_qr_kernel<<<unsigned(blocks), g.problems_per_block * 2 * nt, g.smem_bytes, stream>>>(
      h, h_stride, y, y_stride, problems, vpc, nt, nr, n_ways, scale, g.problems_per_block,
      g.v_stride, e);
  MIMORX_CUDA_CHECK_LAUNCH();
}

}  // namespace mimorx::detect::nway

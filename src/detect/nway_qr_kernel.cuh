#pragma once
// Algorithm 1 of the N-way detector (also used by the K-best detector): MRVD + modified
// Gram-Schmidt of the extended real matrix V = [H~ | y~] (2nr x (2nt+1)) in shared memory, 2nt
// threads per problem, several problems per block so that warps are full. Thread t owns column
// t; at step k thread k normalises column k and then projects y while the threads t > k project
// their own columns, so all 2nt threads do one projection per step. The per-element arithmetic
// is nway_math.hpp's, identical to the CPU reference.
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
  auto bytes = [&](int p) { return std::size_t(p) * (g.v_stride + lay.es) * sizeof(float); };
  while (g.problems_per_block > 1 && bytes(g.problems_per_block) > 48 * 1024) {
    g.problems_per_block /= 2;
  }
  g.smem_bytes = bytes(g.problems_per_block);
  return g;
}

// Problem p = vector * n_ways + pass; vector v uses channel v / vectors_per_channel.
// static: this header is compiled into the N-way and the K-best components, which may be
// linked together.
static __global__ void __launch_bounds__(256) mgs_qr_kernel(const cf32* h, std::int64_t h_stride,
                                                     const cf32* y, std::int64_t y_stride,
                                                     std::int64_t problems, int vpc, int nt,
                                                     int nr, int n_ways, float scale, int ppb,
                                                     int v_stride, float* e_out) {
  extern __shared__ float smem[];
  const Layout lay(nt);
  const int d = lay.d, es = lay.es, stride = d + 1, rows = 2 * nr;
  const int p = threadIdx.x / d, t = threadIdx.x - p * d;
  const std::int64_t first = std::int64_t(blockIdx.x) * ppb;
  const std::int64_t prob = first + p;
  const bool valid = p < ppb && prob < problems;
  float* v = smem + p * v_stride;
  float* e = smem + std::int64_t(ppb) * v_stride + p * es;
  if (valid) {
    const std::int64_t vec = prob / n_ways;
    const int n = int(prob - vec * n_ways);
    const cf32* hm = h + (vec / vpc) * h_stride;
    const cf32* ym = y + vec * y_stride;
    load_extended_column(hm, ym, nr, nt, n, t, v, stride);
    if (t == 0) load_extended_column(hm, ym, nr, nt, n, d, v, stride);
  }
  __syncthreads();
  for (int k = 0; k < d; ++k) {
    if (valid && t == k) store_r(lay, scale, k, k, mgs_normalize(v, stride, rows, k), e);
    __syncthreads();
    if (valid && t >= k) {
      const int col = t == k ? d : t;
      store_r(lay, scale, k, col, mgs_project(v, stride, rows, k, col), e);
    }
    __syncthreads();
  }
  // The staged E tiles of the block are contiguous in global memory: coalesced copy-out.
  const std::int64_t left = problems - first;
  const int count = int((left < ppb ? left : ppb) * es);
  const float* et = smem + std::int64_t(ppb) * v_stride;
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

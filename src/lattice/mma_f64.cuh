#pragma once
// float64 matrix products on the tensor cores (sm_80 and later): mma.m8n8k4.f64 does 256
// multiply-adds per warp instruction, twice the FMA pipe's float64 rate, and needs 8
// shared-memory loads per 16 of them where a register-tiled FMA loop needs about one per two
// (an FMA loop is bound by those loads). Used by the Gram matrix
// (gram_cholesky_cuda.cu), the lattice check's product B T (rebuild_cuda.cu) and the block
// method's products with the size-reduction multipliers (block_lll_cuda.cu). Each product term
// is rounded once and the sums in an order fixed by the code, so results are deterministic; the
// order differs from a sequential loop's, so float64 sums may differ from one in the last bits
// (integer-valued sums below 2^53 are exact in any order). On sm_90 warp_mma issues
// mma.m16n8k4.f64 for each pair of 8 x 8 tiles (mma_f64_pair), at twice m8n8k4's rate; the
// results are the same to the bit (the 1024 benchmark's R and B').
#include <cuda_runtime.h>

namespace mimorx::lattice::detail {

// C (8 x 8) += A (8 x 4) B (4 x 8). Fragments (PTX ISA, m8n8k4 .f64): lane l holds A(l / 4, l % 4),
// B(l % 4, l / 4) and C(l / 4, 2 (l % 4) + t) in c0 (t = 0) and c1 (t = 1).
// Before sm_80 (no float64 tensor cores) the same fragments are multiplied with shuffles and FMAs,
// so that builds for older architectures (MIMORX_CUDA_ARCHS) still work, slowly.
__device__ __forceinline__ void mma_f64(double& c0, double& c1, double a, double b) {
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 800
  asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};"
               : "+d"(c0), "+d"(c1)
               : "d"(a), "d"(b));
#else
  const int lane = threadIdx.x % 32, r = lane / 4, c = 2 * (lane % 4);
#pragma unroll
  for (int k = 0; k < 4; ++k) {
    const double ar = __shfl_sync(0xffffffffu, a, 4 * r + k);
    const double b0 = __shfl_sync(0xffffffffu, b, 4 * c + k);
    const double b1 = __shfl_sync(0xffffffffu, b, 4 * (c + 1) + k);
    c0 = fma(ar, b0, c0);
    c1 = fma(ar, b1, c1);
  }
#endif
}

// Two vertically stacked 8 x 8 tiles at once: (ct0, ct1) += A_top B and (cb0, cb1) += A_bot B,
// with the fragments of mma_f64 (at, ab: lane l's A_top(l / 4, l % 4), A_bot(l / 4, l % 4)). On
// sm_90 this is one mma.m16n8k4.f64: the H100 issues it at the same instruction rate as
// m8n8k4, so twice the multiply-adds (bench/lattice/gpubench_dmma_rate.cu measures both).
// Its fragments are those of two m8n8k4 sharing B (A rows groupID and groupID + 8, C rows the
// same), so the callers' layouts do not change.
__device__ __forceinline__ void mma_f64_pair(double& ct0, double& ct1, double& cb0, double& cb1,
                                             double at, double ab, double b) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile(
      "mma.sync.aligned.m16n8k4.row.col.f64.f64.f64.f64 {%0, %1, %2, %3}, {%4, %5}, {%6}, "
      "{%0, %1, %2, %3};"
      : "+d"(ct0), "+d"(ct1), "+d"(cb0), "+d"(cb1)
      : "d"(at), "d"(ab), "d"(b));
#else
  mma_f64(ct0, ct1, at, b);
  mma_f64(cb0, cb1, ab, b);
#endif
}

// Where acc[i][j][t] of warp_mma lies in the warp's block: row acc_row(i, lane), column
// acc_col(j, t, lane) (the C fragment above, tile (i, j)).
__device__ __forceinline__ int acc_row(int i, int lane) { return 8 * i + lane / 4; }
__device__ __forceinline__ int acc_col(int j, int t, int lane) {
  return 8 * j + 2 * (lane % 4) + t;
}

// A warp's (8 NI) x (8 NJ) block of C += A B over k in [0, KS) (KS a multiple of 4), operands in
// shared memory at A(r, k) = sa[r * AR + k * AK], B(k, c) = sb[c * BC + k * BK];
// acc[i][j][t] = C(acc_row(i, lane), acc_col(j, t, lane)). Choose the strides so that the
// fragment loads of a half-warp (r or c in 0..3, k in 0..3) hit distinct banks.
template <int KS, int NI, int NJ, int AR, int AK, int BC, int BK>
__device__ __forceinline__ void warp_mma(const double* sa, const double* sb,
                                         double (&acc)[NI][NJ][2], int lane) {
#pragma unroll
  for (int k4 = 0; k4 < KS; k4 += 4) {
    const int k = k4 + lane % 4, q = lane / 4;
    double a[NI], b[NJ];
#pragma unroll
    for (int i = 0; i < NI; ++i) a[i] = sa[(8 * i + q) * AR + k * AK];
#pragma unroll
    for (int j = 0; j < NJ; ++j) b[j] = sb[(8 * j + q) * BC + k * BK];
#pragma unroll
    for (int i = 0; i + 1 < NI; i += 2)
#pragma unroll
      for (int j = 0; j < NJ; ++j)
        mma_f64_pair(acc[i][j][0], acc[i][j][1], acc[i + 1][j][0], acc[i + 1][j][1], a[i], a[i + 1],
                     b[j]);
    if constexpr (NI % 2 == 1)
#pragma unroll
      for (int j = 0; j < NJ; ++j) mma_f64(acc[NI - 1][j][0], acc[NI - 1][j][1], a[NI - 1], b[j]);
  }
}

// A warp's warp_mma sums into a column-major tile: part[(c0 + column) * ld + r0 + row], (r0, c0)
// the warp's block in the tile (the split-K products stage their partial tiles this way).
template <int NI, int NJ>
__device__ __forceinline__ void store_acc(double* part, int ld, int r0, int c0,
                                          const double (&acc)[NI][NJ][2], int lane) {
#pragma unroll
  for (int i = 0; i < NI; ++i)
#pragma unroll
    for (int j = 0; j < NJ; ++j)
#pragma unroll
      for (int t = 0; t < 2; ++t)
        part[(c0 + acc_col(j, t, lane)) * ld + r0 + acc_row(i, lane)] = acc[i][j][t];
}

}  // namespace mimorx::lattice::detail

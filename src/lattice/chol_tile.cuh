#pragma once
// The device steps of the float64 Cholesky factorisation shared by the chained panel kernels
// (gram_cholesky_cuda.cu) and the persistent lookahead kernel (chol_lookahead_cuda.cu): one
// warp factors a 32 x 32 diagonal block, one thread solves one column of a block row. Both
// paths use these same steps in the same order, so that they give the same R to the last bit.
#include <cuda_runtime.h>

namespace mimorx::lattice::detail {

constexpr int kPanel = 32;  // Cholesky block size (one warp factors it)

// Warp-level factor of the diagonal block G_pp = R_pp^T R_pp of nb <= 32 columns: load(i, k) =
// G(p + i, p + k) for i, k < nb (only i <= k is used). Lane k holds column k in registers; each
// row of the factor is passed on through shared memory (`row`: 2 x 2 kPanel). A short block is
// padded with the identity. Leaves d[i][k] = R(p + i, p + k) (zero below the diagonal) and
// inv[j] = 1 / R(p + j, p + j). Returns (on every lane) whether a pivot was not positive and
// finite; such a pivot is replaced by 1, so that the rest stays finite.
//
// The column shifts down one entry a step (c[0] is always the step's entry), so that the step
// loop need not be unrolled whole: 4 steps a loop body. Unrolled whole, the factor was ~40 KB
// of straight-line code run once per panel, its instructions fetched through L2 each time: in
// the lookahead kernel (chol_lookahead_cuda.cu) 6.3 us a factor while the other blocks idled,
// 10 us while they loaded L2; 4 steps a body: 7.0 and 8.1 us. The rows' upper halves stay
// zero, for the entries shifted in past the block's end.
template <class Load>
__device__ __forceinline__ bool factor_diag_warp(Load&& load, int nb, double (*d)[kPanel + 1],
                                                 double* inv, double (*row)[2 * kPanel]) {
  const int lane = threadIdx.x & 31;
  double c[kPanel];  // c[i] = entry j + i of column `lane` at step j
#pragma unroll
  for (int i = 0; i < kPanel; ++i)
    c[i] = lane < nb && i < nb ? load(i, lane) : (i == lane ? 1.0 : 0.0);
  row[0][kPanel + lane] = 0.0;
  row[1][kPanel + lane] = 0.0;
  bool any_bad = false;
  // Lanes left of the diagonal are updated too, without a predicate per entry: their values
  // are never read (the pivot of step j is lane j's, row j is read from lanes > j, and d keeps
  // the upper part only); 31 lane predicates a step cost ~400 instructions a step where the
  // compiler ran short of predicate registers.
#pragma unroll 4
  for (int j = 0; j < kPanel; ++j) {
    const double piv = __shfl_sync(0xffffffffu, c[0], j);
    const bool bad = !(piv > 0) || !isfinite(piv);
    any_bad = any_bad || bad;
    // 1/sqrt once, then multiplications: the division and square root were the step's critical
    // path.
    const double ir = bad ? 1.0 : rsqrt(piv);
    inv[j] = ir;                                                       // the same from every lane
    const double rj = lane == j ? (bad ? 1.0 : piv * ir) : c[0] * ir;  // R(j, lane), lane >= j
    d[j][lane] = j <= lane ? rj : 0.0;
    // Row j through shared memory (one broadcast load per entry) rather than shuffles (two per
    // double): the warp's instruction count is this loop's cost. Two rows alternate, so one
    // __syncwarp per step suffices.
    row[j & 1][lane] = rj;
    __syncwarp();
#pragma unroll
    for (int i = 1; i < kPanel; ++i) c[i - 1] = c[i] - row[j & 1][j + i] * rj;
    c[kPanel - 1] = 0.0;
  }
  __syncwarp();
  return any_bad;
}

// One column of a block row, R_pp^T x = g (forward substitution with the lower R_pp^T), in
// place in v: x_i = (g_i - sum_{j<i} R(p+j, p+i) x_j) / R(p+i, p+i). Right-looking, so that the
// critical path is one multiply-add per row, not a chain of i. Unrolled whole: shifting like
// factor_diag_warp (4 steps a loop body) costs twice the multiply-adds (the triangle is lost)
// and measured 3.3 instead of 2.0 us a 32-column tile.
__device__ __forceinline__ void solve_column(double (&v)[kPanel], const double (*d)[kPanel + 1],
                                             const double* inv) {
#pragma unroll
  for (int j = 0; j < kPanel; ++j) {
    v[j] *= inv[j];
#pragma unroll
    for (int i = j + 1; i < kPanel; ++i) v[i] -= d[j][i] * v[j];
  }
}

}  // namespace mimorx::lattice::detail

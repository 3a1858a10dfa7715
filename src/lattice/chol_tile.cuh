#pragma once
// The device steps of the float64 Cholesky factorisation shared by the chained panel kernels
// (gram_cholesky_cuda.cu) and the persistent lookahead kernel (chol_lookahead_cuda.cu): one
// warp factors a 32 x 32 diagonal block, one thread solves one column of a block row. Both
// paths use these same steps in the same order, so that they give the same R to the last bit.
#include <cuda_runtime.h>

#include <type_traits>

namespace mimorx::lattice::detail {

constexpr int kPanel = 32;  // Cholesky block size (one warp factors it)

// Warp-level factor of the diagonal block G_pp = R_pp^T R_pp of nb <= 32 columns: load(i, k) =
// G(p + i, p + k) for i, k < nb (only i <= k is used). `load` must be safe to call for every
// i, k < kPanel (clamp the indices of a short block), so that the 32 loads need no branches:
// loads under a condition compiled to a branch each, ~10 KB of code that the lookahead kernel's
// block 0 fetched cold every panel. Lane k holds column k in registers; each row of the factor
// is passed on through shared memory (`row`: 2 x 2 kPanel). A short block is padded with the
// identity. Leaves d[i][k] = R(p + i, p + k) (zero below the diagonal) and
// inv[j] = 1 / R(p + j, p + j). Returns (on every lane) whether a pivot was not positive, normal
// and finite; such a pivot is replaced by 1, so that the rest stays finite.
//
// The column shifts down one entry a step (c[0] is always the step's entry), so that the step
// loop need not be unrolled whole: 4 steps a loop body. Unrolled whole, the factor is ~40 KB of
// straight-line code run once per panel, its instructions fetched through L2 each time, which is
// slow when the other blocks of the lookahead kernel (chol_lookahead_cuda.cu) load L2 too.
//
// The step's critical path is the next pivot: its shuffle, its 1/sqrt and the multiplication
// by it. Three things keep other work off that path (each leaves R and inv the same to the bit):
// - the pivot test without branches (`&`, not `||`): branches split the step into blocks the
//   compiler schedules one after the other;
// - c[0] of the next step, c[1] - R(j, j + 1) R(j, lane), from a shuffle of R(j, j + 1) rather
//   than from row j in shared memory, and the 1/sqrt at the end of the step, where the
//   compiler can interleave it with the update;
// - row j stored shifted by j (R(j, j + i) at row[.][kPanel + i], written by lane j + i), so
//   that every lane reads constant offsets. Entries past the block's end read stale values of
//   an earlier row; they only ever meet rows past the block's end, which are never read.
// The next pivot is not taken from the pivot lane's registers before the row goes through shared
// memory: the update would then wait behind the 1/sqrt.
// The index of G(p + i, p + k) in a column-major m x m matrix, i and k clamped to the block's
// nb columns: a load from it is safe for every i, k < kPanel (factor_diag_warp's contract).
__device__ __forceinline__ long long diag_block_index(int m, int p, int nb, int i, int k) {
  return (long long)(p + min(k, nb - 1)) * m + p + min(i, nb - 1);
}

// The factor's steps in phases of kPanel / kFactorPhases steps, each updating only the entries
// still in the block at its first step (32, then 16): 704 instead of 960 multiply-adds a lane,
// the same R to the bit. Four phases are no faster than two and more code.
constexpr int kFactorPhases = 2;
static_assert(kFactorPhases == 1 || kFactorPhases == 2 || kFactorPhases == 4);

// 1/sqrt(x) for a positive normal x (not zero, subnormal, infinite or NaN): libdevice's rsqrt
// without its branch to the slow path for the other inputs, which factor_diag_warp rules out
// beforehand. The same instructions (MUFU.RSQ64H of the high word, one Newton step with its
// cubic term), so the same result to the bit, without the branch and its convergence barrier
// on each step's critical path.
__device__ __forceinline__ double rsqrt_normal(double x) {
  double y;
  asm("rsqrt.approx.ftz.f64 %0, %1;" : "=d"(y) : "d"(x));
  const double e = fma(x, -(y * y), 1.0);
  return fma(fma(e, 0.375, 0.5), y * e, y);
}

template <class Load>
__device__ __forceinline__ bool factor_diag_warp(Load&& load, int nb, double (*d)[kPanel + 1],
                                                 double* inv, double (*row)[2 * kPanel]) {
  const int lane = threadIdx.x & 31;
  double c[kPanel];  // c[i] = entry j + i of column `lane` at step j
#pragma unroll
  for (int i = 0; i < kPanel; ++i) {
    const double g = load(i, lane);
    c[i] = lane < nb && i < nb ? g : (i == lane ? 1.0 : 0.0);
  }
  // 1/sqrt once, then multiplications: the division and square root were the step's critical
  // path. A pivot that is not positive, normal and finite gives 1 (and bad): a subnormal pivot
  // (below 2^-1022, of a Gram matrix whose entries are squared lengths) is a failed factorisation.
  auto checked_rsqrt = [](double piv, bool& bad) {
    bad = !((piv >= 0x1p-1022) & (piv < __longlong_as_double(0x7ff0000000000000LL)));
    const double r = rsqrt_normal(piv);
    return bad ? 1.0 : r;
  };
  bool bad = false, any_bad = false;
  double piv = __shfl_sync(0xffffffffu, c[0], 0);
  double ir = checked_rsqrt(piv, bad);
  // Lanes left of the diagonal are updated too, without a predicate per entry: their values
  // are never read (the pivot of step j is lane j's, row j is read from lanes > j, and d keeps
  // the upper part only); 31 lane predicates a step cost ~400 instructions a step where the
  // compiler ran short of predicate registers.
  // Steps j0 .. j0 + kSteps - 1 with the column's live entries c[0 .. kLive - 1] (rows j .. 31
  // at the first of them; the entries past them are rows past the block, never read).
  auto steps = [&](auto live, int j0) {
    constexpr int kLive = decltype(live)::value;
#pragma unroll 4
    for (int j = j0; j < j0 + kPanel / kFactorPhases; ++j) {
      any_bad = any_bad | bad;
      inv[j] = ir;                                                       // the same from every lane
      const double rj = lane == j ? (bad ? 1.0 : piv * ir) : c[0] * ir;  // R(j, lane), lane >= j
      d[j][lane] = j <= lane ? rj : 0.0;
      // Two rows alternate, so one __syncwarp per step suffices.
      double* rw = row[j & 1] + kPanel;
      rw[lane - j] = rj;
      const int next = (j + 1) & (kPanel - 1);  // past the last step: unused
      const double next_piv = __shfl_sync(0xffffffffu, fma(-rj, rj, c[1]), next);
      const double c0 = fma(-__shfl_sync(0xffffffffu, rj, next), rj, c[1]);
      __syncwarp();
#pragma unroll
      for (int i = 2; i < kLive; ++i) c[i - 1] = fma(-rw[i], rj, c[i]);
      c[0] = c0;
      c[kLive - 1] = 0.0;
      piv = next_piv;
      ir = checked_rsqrt(piv, bad);
    }
  };
  constexpr int kStep = kPanel / kFactorPhases;
  steps(std::integral_constant<int, kPanel>{}, 0);
  if constexpr (kFactorPhases >= 2) steps(std::integral_constant<int, kPanel - kStep>{}, kStep);
  if constexpr (kFactorPhases >= 4) {
    steps(std::integral_constant<int, kPanel - 2 * kStep>{}, 2 * kStep);
    steps(std::integral_constant<int, kPanel - 3 * kStep>{}, 3 * kStep);
  }
  __syncwarp();
  return any_bad;
}

// One column of a block row, R_pp^T x = g (forward substitution with the lower R_pp^T), in
// place in v: x_i = (g_i - sum_{j<i} R(p+j, p+i) x_j) / R(p+i, p+i). Right-looking, so that the
// critical path is one multiply-add per row, not a chain of i. Unrolled whole: shifting like
// factor_diag_warp (4 steps a loop body) costs twice the multiply-adds (the triangle is lost).
__device__ __forceinline__ void solve_column(double (&v)[kPanel], const double (*d)[kPanel + 1],
                                             const double* inv) {
#pragma unroll
  for (int j = 0; j < kPanel; ++j) {
    v[j] *= inv[j];
#pragma unroll
    for (int i = j + 1; i < kPanel; ++i) v[i] = fma(-d[j][i], v[j], v[i]);
  }
}

}  // namespace mimorx::lattice::detail

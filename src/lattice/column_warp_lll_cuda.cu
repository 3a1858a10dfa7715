// The block method's diagonal blocks reduced for latency (column_warp_lll.hpp): one thread block
// per block, one warp per column, lane i holding R(i, k) and U(i, k) in registers. The blocks
// are read from R in float64 and stay there: the rotations update R, so no Gram-Schmidt is ever
// recomputed. Every number follows column_warp_lll_host's operations (explicit fma and
// _rn intrinsics: nvcc would contract the plain expressions), so the kernel and the host model
// give the same U to the bit (tests/lattice/test_lll_gpu_block.cpp).
//
// Why: the window of a large reduction is a few blocks of 32, and the batched all-swap kernel
// (lll_cuda.cu, shaped for thousands of bases) spends each swap phase behind its Gram-Schmidt
// recomputations and block-wide barriers; here a phase is two block barriers.
#include <cuda_runtime.h>

#include <cstdint>

#include "core/cuda_check.hpp"
#include "lattice/column_warp_lll.hpp"
#include "lattice/lll_math.hpp"

namespace mimorx::lattice::detail {
namespace {

constexpr unsigned kAll = 0xffffffffu;
constexpr int kMax = kColumnWarpMaxBlock;

struct Shared {
  double x[2][kMax][kMax + 1];  // snapshots of the columns (double-buffered: one barrier less)
  long long u[2][kMax][kMax + 1];
  double inv[2][kMax];  // 1 / r_jj of the snapshot (the full size reduction)
  double cs[kMax], sn[kMax], rho[kMax];
  int swap[kMax];
  int bad;  // an LllStatus other than reduced, the largest raised
};

__device__ __forceinline__ void raise(Shared& sh, LllStatus s) { atomicMax(&sh.bad, int(s)); }

// Column k reduced against the snapshot buf, j = k - 1 down to 0 (the snapshot's columns keep
// their r_jj, so the result is size-reduced).
__device__ void full_reduce(Shared& sh, int buf, int k, int lane, double& x, long long& u) {
  for (int j = k - 1; j >= 0; --j) {
    const double xj = __shfl_sync(kAll, x, j);
    const double q = round_nearest(__dmul_rn(xj, sh.inv[buf][j]));
    if (q == 0.0) continue;  // the same for the whole warp
    if (!(fabs(q) <= kColumnWarpMaxMultiplier)) {
      if (lane == 0) raise(sh, LllStatus::precision_loss);
      return;
    }
    x = fma(-q, sh.x[buf][j][lane], x);
    u -= (long long)q * sh.u[buf][j][lane];
  }
  if (column_warp_u_too_big(u)) raise(sh, LllStatus::precision_loss);
}

__global__ void __launch_bounds__(kMax * 32)
    column_warp_lll_kernel(const double* r, int m, int s0, int stride, int sz, double delta,
                           long max_phases, std::int64_t* u_out, std::int32_t* status) {
  __shared__ Shared sh;
  const int c = blockIdx.x, s = s0 + c * stride;
  const int k = threadIdx.x / 32, lane = threadIdx.x % 32;  // column k, row lane
  double x = lane <= k && lane < sz ? r[(long long)(s + k) * m + s + lane] : 0.0;
  long long u = lane == k ? 1 : 0;
  if (threadIdx.x == 0) sh.bad = 0;
  int buf = 0;
  auto snapshot = [&] {
    sh.x[buf][k][lane] = x;
    sh.u[buf][k][lane] = u;
    if (lane == k) sh.inv[buf][k] = __drcp_rn(x);
  };
  LllStatus result = LllStatus::not_converged;
  int quiet = 0, since_full = 0;
  for (long phase = 0;; ++phase) {
    if (phase >= max_phases) break;
    const int par = (phase & 1) ? 0 : 1;  // pairs (k - 1, k) with k odd first
    snapshot();
    __syncthreads();
    // Each pair's second column: reduced against the first, Lovasz, the rotation's numbers.
    bool swapped = false;
    if (k >= 1 && (k & 1) == par) {
      const double a = sh.x[buf][k - 1][k - 1];
      const double b = __shfl_sync(kAll, x, k - 1), cc = __shfl_sync(kAll, x, k);
      const double q = round_nearest(__dmul_rn(b, __drcp_rn(a)));
      double b2 = b;
      if (q != 0.0) {
        if (!(fabs(q) <= kColumnWarpMaxMultiplier)) {
          if (lane == 0) raise(sh, LllStatus::precision_loss);
        } else {
          x = fma(-q, sh.x[buf][k - 1][lane], x);
          u -= (long long)q * sh.u[buf][k - 1][lane];
          if (column_warp_u_too_big(u)) raise(sh, LllStatus::precision_loss);
          b2 = fma(-q, a, b);  // lane k - 1's new x
        }
      }
      const double lhs = __dmul_rn(__dmul_rn(delta, a), a);
      const double rhs = __dadd_rn(__dmul_rn(b2, b2), __dmul_rn(cc, cc));
      swapped = lhs > rhs;
      if (swapped) {
        const double rh = __dsqrt_rn(rhs);
        if (!(rh > 0.0 && isfinite(rh))) {
          if (lane == 0) raise(sh, LllStatus::singular);
        }
        sh.x[buf][k][lane] = x;  // the partner takes the reduced column
        sh.u[buf][k][lane] = u;
        if (lane == 0) {
          sh.cs[k] = __ddiv_rn(b2, rh);
          sh.sn[k] = __ddiv_rn(cc, rh);
          sh.rho[k] = rh;
        }
      }
      if (lane == 0) sh.swap[k] = swapped;
    }
    const int swaps = __syncthreads_count(swapped && lane == 0);
    if (sh.bad) break;
    if (swaps) {
      // The swaps: column k - 1 takes the reduced column k and k the old k - 1 ...
      if (k >= 1 && (k & 1) == par && sh.swap[k]) {
        x = sh.x[buf][k - 1][lane];
        u = sh.u[buf][k - 1][lane];
      } else if (k + 1 < sz && ((k + 1) & 1) == par && sh.swap[k + 1]) {
        x = sh.x[buf][k + 1][lane];
        u = sh.u[buf][k + 1][lane];
      }
      // ... then rows (k - 1, k) of every column by the reflection [cs sn; sn -cs], which leaves
      // (rho, 0) in column k - 1 (set exactly) and a positive r_kk.
      const bool low = (lane & 1) == par;  // this lane is row k of its pair, else row k - 1
      const int pk = low ? lane : lane + 1;
      const double other = __shfl_sync(kAll, x, low ? lane - 1 : lane + 1);
      if (pk >= 1 && pk < sz && sh.swap[pk]) {
        const double cs = sh.cs[pk], sn = sh.sn[pk];
        if (k == pk - 1) {
          x = low ? 0.0 : sh.rho[pk];
        } else if (low) {
          x = fma(sn, other, -__dmul_rn(cs, x));
        } else {
          x = fma(cs, x, __dmul_rn(sn, other));
        }
      }
    }
    buf ^= 1;
    ++since_full;
    quiet = swaps ? 0 : quiet + 1;
    const bool last = quiet >= 2;
    if (last || since_full >= kColumnWarpFullEvery) {
      snapshot();
      __syncthreads();
      if (k < sz) full_reduce(sh, buf, k, lane, x, u);
      buf ^= 1;
      since_full = 0;
      __syncthreads();
      if (sh.bad) break;
      if (last) {
        result = LllStatus::reduced;
        break;
      }
    }
  }
  __syncthreads();
  if (sh.bad) result = LllStatus(sh.bad);
  if (k < sz && lane < sz) u_out[(long long)c * sz * sz + (long long)k * sz + lane] = u;
  if (threadIdx.x == 0) status[c] = std::int32_t(result);
}

}  // namespace

void column_warp_lll_enqueue(const double* r, int m, int s0, int stride, int sz, int count,
                             double delta, long max_phases, std::int64_t* u, std::int32_t* status,
                             void* stream) {
  if (count <= 0) return;
  column_warp_lll_kernel<<<unsigned(count), unsigned(32 * sz), 0,
                           static_cast<cudaStream_t>(stream)>>>(r, m, s0, stride, sz, delta,
                                                                max_phases, u, status);
  MIMORX_CUDA_CHECK_LAUNCH();
}

}  // namespace mimorx::lattice::detail

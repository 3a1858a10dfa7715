#pragma once
// LLL of the block method's small diagonal blocks for latency: the few blocks of a window (four
// of 32 columns at m = 1024) each reduced by one thread block, one warp per column, on R in
// float64 updated by rotations (column_warp_lll_cuda.cu). The all-swap order of the paper's
// CR-AS-LLL (pairs (k - 1, k) with k odd, then even), with each pair's column k size-reduced
// against k - 1 before its Lovasz test and a full size reduction every kColumnWarpFullEvery
// phases and at the end; done after two phases in a row without a swap.
// column_warp_lll_host is the same algorithm, operation for operation, on the CPU: the oracle
// the kernel is tested against (the same U to the bit).
#include <cstdint>

#include "mimorx/config.hpp"
#include "mimorx/core/hd.hpp"
#include "mimorx/lattice/lll.hpp"

namespace mimorx::lattice::detail {

constexpr int kColumnWarpMaxBlock = 32;  // one warp a column, one lane a row
constexpr int kColumnWarpFullEvery = 32;
// A larger size-reduction multiplier ends the reduction with precision_loss (as does an entry
// of U of 2^31 or more: the float32 blocks' int32 T had the same limit).
constexpr double kColumnWarpMaxMultiplier = 1073741824.0;  // 2^30
MIMORX_HD bool column_warp_u_too_big(long long v) { return v >= (1LL << 31) || v <= -(1LL << 31); }

// r: R's diagonal block (upper triangular, sz x sz, column-major with leading dimension ld,
// positive diagonal); u: sz x sz column-major, receives U with R U reduced (up to the rotations'
// rounding). Returns reduced, not_converged (max_phases swap phases), precision_loss or
// singular; U is meaningful only when reduced. 2 <= sz <= kColumnWarpMaxBlock.
LllStatus column_warp_lll_host(int sz, const double* r, int ld, double delta, long max_phases,
                               std::int64_t* u);

#if MIMORX_HAS_CUDA
// Blocks c < count: R(s..s+sz, s..s+sz), s = s0 + c * stride, of the m x m column-major R in
// device memory; U_c into u + c sz^2 (column-major), the status into status[c].
void column_warp_lll_enqueue(const double* r, int m, int s0, int stride, int sz, int count,
                             double delta, long max_phases, std::int64_t* u, std::int32_t* status,
                             void* stream);
#endif

}  // namespace mimorx::lattice::detail

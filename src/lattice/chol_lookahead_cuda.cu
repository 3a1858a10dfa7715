// The block method's float64 Cholesky factorisation (R^T R = G, R upper) as one persistent,
// cooperative kernel with a lookahead of one panel, in place of the chain of 2 launches per
// 32-column panel (gram_cholesky_cuda.cu), whose time a panel is nearly all latency.
//
// Phase q (panel q's diagonal block R_qq already factored, in place):
//   block 0, the lookahead: solves the block row's tile X(q, q+1) = R_qq^{-T} G(q, q+1), updates
//     G(q+1, q+1) -= X^T X and factors it, so that the next phase can start at once;
//   the other blocks: every other tile (i, j), q+1 <= i <= j, of the trailing matrix,
//     G(i, j) -= X(q, i)^T X(q, j), solving the X tiles they need themselves (a work unit is one
//     column j with up to 7 tiles i: warp 0 solves X(q, j), warps 1..7 the X(q, i)).
// No grid-wide barrier between phases: block 0 waits for the other blocks' previous phase (a
// counter) and they for that and for block 0's factor of their phase's panel (a flag), so no
// block waits for more than the data it reads. Block 0's warps 1..7 wait and fetch the next
// phase's operands while warp 0 factors, so that block 0's next phase starts with them in shared
// memory.
// The X tiles go to a scratch row (two, by phase parity) and are copied into R's rows one phase
// later: in phase q other blocks still read G(q, j) where X(q, j) belongs. Reads of data other
// blocks wrote go through L2 (__ldcg), not the SM's incoherent L1.
//
// Block 0's steps (operand loads, solve, update, factor, stores) are the critical path, the
// factor the largest of them; hence its straight-line, branch-free code (factor_step) and the
// solve by all of block 0's threads (solve_first_tile). Per-phase timings: docs/lll.md.
//
// The steps (factor_diag_warp, solve_column, the trailing update's multiply-adds in k order and
// the subtraction last) are the chain's own, except block 0's solve (folded pivots) and its
// update of the next diagonal block (tensor cores): the two paths' R agree to rounding, not to
// the last bit.
#include <cooperative_groups.h>
#include <cuda_runtime.h>

#include <algorithm>

#include "core/cuda_check.hpp"
#include "core/cuda_occupancy.hpp"
#include "core/cuda_smem_limit.hpp"
#include "lattice/chol_tile.cuh"
#include "lattice/lll_internal.hpp"
#include "lattice/mma_f64.cuh"
#include "mimorx/core/error.hpp"

namespace mimorx::lattice::detail {
namespace {

namespace cg = cooperative_groups;

constexpr int kWarps = 8;
constexpr int kThreads = 32 * kWarps;
constexpr int kChunk = kWarps - 1;  // tiles i a work unit at most (a warp solves each)
constexpr int kLd = kPanel + 1;

struct Smem {
  double x[kWarps][kPanel][kLd];  // X tiles of the block row: x[w][i][c] = X(p + i, c0_w + c)
  double d[kPanel][kLd];          // R_qq, d[i][k] = R(p + i, p + k)
  double inv[kPanel];             // 1 / R(p + i, p + i)
  double row[2][2 * kPanel];      // factor_diag_warp's rows
};

// The block's shared memory. The heavy warp steps (the factor, the solve, a unit's update) are
// separate functions, not inlined, each compiled under its own register pressure (the kernel as
// a whole needs ~250 registers); they take the shared state from here rather than through a
// generic pointer, so that their accesses compile to shared-memory loads.
extern __shared__ double smem_raw[];
__device__ __forceinline__ Smem& shared_state() { return *reinterpret_cast<Smem*>(smem_raw); }

// The scratch (the `diag` buffer): two X rows of kPanel x mpad doubles (xs[c * kPanel + i] =
// X(p + i, c)), then two sets of kPanel reciprocal pivots.
__host__ __device__ inline long long padded(int m) { return (m + kPanel - 1) / kPanel * kPanel; }
__device__ inline double* x_row(double* scratch, int m, int q) {
  return scratch + (q & 1) * kPanel * padded(m);
}
__device__ inline double* inv_set(double* scratch, int m, int q) {
  return scratch + 2 * kPanel * padded(m) + (q & 1) * kPanel;
}
// Two words after them: [0] the last panel block 0 has factored, [1] how many phases the other
// blocks have finished, all of them together (each adds 1 a phase).
__device__ inline unsigned* phase_words(double* scratch, int m) {
  return reinterpret_cast<unsigned*>(scratch + 2 * kPanel * padded(m) + 2 * kPanel);
}
__device__ __forceinline__ unsigned load_acquire(const unsigned* p) {
  unsigned v;
  asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}
// Thread 0 waits until *p >= want, then the block goes on (the loads after it see what was
// written before the store or atomic that made it so: acquire, then the block's barrier). The
// other blocks wait this way, off the critical path: they nap between polls.
__device__ __forceinline__ void block_wait_at_least(const unsigned* p, unsigned want) {
  if (threadIdx.x == 0)
    while (load_acquire(p) < want) __nanosleep(64);
  __syncthreads();
}

// A global load (through L2) or store under a predicate, without a branch: the compiler turns a
// conditional access into a branch around it, and block 0 runs its steps once a panel with a
// cold instruction cache, so a branch an element of a 32-element loop is code it fetches cold
// and a chain of steps it waits on (see factor_step).
__device__ __forceinline__ double ldcg_if(bool p, const double* a) {
  double v;
  asm volatile(
      "{\n .reg .pred q;\n setp.ne.b32 q, %2, 0;\n mov.b64 %0, 0;\n @q ld.global.cg.f64 %0, "
      "[%1];\n}"
      : "=d"(v)
      : "l"(a), "r"(int(p)));
  return v;
}
__device__ __forceinline__ void stcg_if(bool p, double* a, double v) {
  asm volatile(
      "{\n .reg .pred q;\n setp.ne.b32 q, %2, 0;\n @q st.global.cg.f64 [%0], %1;\n}" ::"l"(a),
      "d"(v), "r"(int(p))
      : "memory");
}

// Warp: tile (rows of panel q, columns c0 .. c0 + 31) of R into registers (coalesced: lane =
// row), then into x. All 32 loads are issued before the first store: one L2 latency, not 32 in
// a row.
struct TileLoad {
  double v[kPanel];
  __device__ __forceinline__ void issue(const double* r, int m, int p, int c0) {
    const int lane = threadIdx.x & 31;
#pragma unroll
    for (int cc = 0; cc < kPanel; ++cc)
      v[cc] = ldcg_if(c0 + cc < m, &r[(long long)(c0 + cc) * m + p + lane]);
  }
  __device__ __forceinline__ void store(double (*x)[kLd]) const {
    const int lane = threadIdx.x & 31;
#pragma unroll
    for (int cc = 0; cc < kPanel; ++cc) x[lane][cc] = v[cc];
    __syncwarp();
  }
};

// Warp: X = R_qq^{-T} of the tile in s.x[w], in place (lane = column).
__device__ __noinline__ void solve_tile(int w) {
  Smem& s = shared_state();
  const int lane = threadIdx.x & 31;
  double v[kPanel];
#pragma unroll
  for (int i = 0; i < kPanel; ++i) v[i] = s.x[w][i][lane];
  solve_column(v, s.d, s.inv);
#pragma unroll
  for (int i = 0; i < kPanel; ++i) s.x[w][i][lane] = v[i];
  __syncwarp();
}

// Block 0: X = R_qq^{-T} of the tile in s.x[0], in place, by all threads (the lookahead): 8
// threads a column (lanes 8c' .. 8c' + 7 of a warp; thread `sub` holds rows sub, sub + 8, sub +
// 16, sub + 24), row j passed on by a shuffle within the 8 lanes at step j, each row's reciprocal
// pivot folded into its coefficients and its right-hand side beforehand: x_i = g_i / r_ii -
// sum_j (r_ji / r_ii) x_j. A step's chain is a shuffle and a multiply-add (the coefficient's
// multiplication does not wait for it), shorter than one thread a column (solve_column) or
// scaling row j at its step. The rounding differs from solve_column's (the other X tiles, the
// chain of panel kernels) in the last bits. Ends with __syncthreads.
__device__ __noinline__ void solve_first_tile() {
  Smem& s = shared_state();
  constexpr int kGroup = kThreads / kPanel;  // threads a column
  constexpr int kRows = kPanel / kGroup;     // rows a thread
  static_assert(kGroup == 8 && kRows == 4);
  const int c = threadIdx.x / kGroup, sub = threadIdx.x % kGroup;
  double v[kRows], iv[kRows];
#pragma unroll
  for (int r = 0; r < kRows; ++r) {
    iv[r] = s.inv[sub + kGroup * r];
    v[r] = s.x[0][sub + kGroup * r][c] * iv[r];
  }
#pragma unroll
  for (int j = 0; j < kPanel; ++j) {
    const double xj = __shfl_sync(0xffffffffu, v[j / kGroup], j % kGroup, kGroup);
#pragma unroll
    for (int r = 0; r < kRows; ++r) {
      const int i = sub + kGroup * r;
      if (i > j) v[r] = fma(-(s.d[j][i] * iv[r]), xj, v[r]);
    }
  }
#pragma unroll
  for (int r = 0; r < kRows; ++r) s.x[0][sub + kGroup * r][c] = v[r];
  __syncthreads();
}

// Warp: the solved tile (columns c0..) into the scratch row. The values are read before the
// first store, so that the stores do not each wait on their own shared-memory load in turn.
__device__ __forceinline__ void store_x(const double (*x)[kLd], int m, int c0, double* xs) {
  const int lane = threadIdx.x & 31;
  double v[kPanel];
#pragma unroll
  for (int cc = 0; cc < kPanel; ++cc) v[cc] = x[lane][cc];
  double* dst = xs + (long long)c0 * kPanel + lane;
#pragma unroll
  for (int cc = 0; cc < kPanel; ++cc) stcg_if(c0 + cc < m, dst + cc * kPanel, v[cc]);
}

// Thread (a, b0) of a block owns rows I0 + a of columns J0 + b0 + 8 e (e < kPer) of a
// trailing tile: those in the matrix and, on a diagonal tile (I0 == J0), in its upper part.
constexpr int kPer = kPanel / kWarps;
__device__ __forceinline__ bool owned(int m, int I0, int J0, int e, int& row, int& col) {
  const int a = threadIdx.x % 32, b = threadIdx.x / 32 + kWarps * e;
  row = I0 + a;
  col = J0 + b;
  return row < m && col < m && (I0 != J0 || a <= b);
}
__device__ __forceinline__ void load_old(const double* r, int m, int I0, int J0,
                                         double (&old)[kPer]) {
#pragma unroll
  for (int e = 0; e < kPer; ++e) {
    int row, col;
    const bool own = owned(m, I0, J0, e, row, col);
    old[e] = ldcg_if(own, &r[(long long)col * m + row]);
  }
}

// Thread (a, b0)'s products acc[t][e] = sum_k X_i(k, a) X_j(k, b0 + 8 e) of kTiles tiles, X_j =
// s.x[0] and X_i = s.x[1 + t], k in order: the trailing update's arithmetic (the chain's).
template <int kTiles>
__device__ __forceinline__ void tile_products(const Smem& s, double (&acc)[kTiles][kPer]) {
  const int a = threadIdx.x % 32, b0 = threadIdx.x / 32;
#pragma unroll 4
  for (int k = 0; k < kPanel; ++k) {
    double xj[kPer];
#pragma unroll
    for (int e = 0; e < kPer; ++e) xj[e] = s.x[0][k][b0 + kWarps * e];
#pragma unroll
    for (int t = 0; t < kTiles; ++t) {
      const double x = s.x[1 + t][k][a];
#pragma unroll
      for (int e = 0; e < kPer; ++e) acc[t][e] = fma(x, xj[e], acc[t][e]);
    }
  }
}

// Block 0: the next diagonal block G(c0.., c0..) - X^T X (X = X(q, q + 1) in s.x[0]) into
// s.x[1] (s.x[1][a][b] = G(c0 + a, c0 + b), zero outside the upper part; the old values in
// s.x[2]), for the factor, on the
// float64 tensor cores: warp w takes the 16 x 8 output tile at rows 16 (w % 2), columns 8 (w / 2)
// (mma.m16n8k4, mma_f64.cuh: lane l holds rows l / 4 and l / 4 + 8, columns 2 (l % 4) + {0, 1}),
// its accumulators starting from the old values, the k range in 8 steps of 4 (FMAs would need 5
// shared loads per 4 multiply-adds a thread, on every phase's critical path). The chain of panel
// kernels sums the same products one FMA at a time, in k order after the
// others: the two paths' R differ in the last bits (LookaheadCholeskyMatchesChain).
// Block 0's operands of phase q (p = q kPanel, c0 = p + kPanel), by threads t0 .. t0 + count - 1
// of the block (t = threadIdx.x - t0): the block row's tile G(q, q + 1) into s.x[0] (x[i][c] =
// G(p + i, c0 + c)) and the next diagonal block's old values into s.x[2] (x[a][b] = G(c0 + a,
// c0 + b) in its upper part, zero elsewhere), every load issued before the first store (one L2
// latency).
__device__ __noinline__ void fetch_lookahead(const double* r, int m, int p, int c0, int t,
                                             int count, Smem& s) {
  constexpr int kEach = 2 * kPanel * kPanel / (kThreads - 32) + 1;
  double v[kEach];
#pragma unroll
  for (int u = 0; u < kEach; ++u) {
    const int e = t + u * count, i = e % kPanel, c = (e / kPanel) % kPanel;
    const bool diag = e >= kPanel * kPanel;
    const bool ok = e < 2 * kPanel * kPanel && c0 + c < m && (!diag || i <= c);
    v[u] = ldcg_if(ok, &r[(long long)(c0 + c) * m + (diag ? c0 : p) + i]);
  }
#pragma unroll
  for (int u = 0; u < kEach; ++u) {
    const int e = t + u * count, i = e % kPanel, c = (e / kPanel) % kPanel;
    if (e < 2 * kPanel * kPanel) s.x[e >= kPanel * kPanel ? 2 : 0][i][c] = v[u];
  }
}

__device__ __forceinline__ void update_next_diagonal(int m, int c0, Smem& s) {
  static_assert(kWarps == 8, "eight 16 x 8 tiles");
  const int lane = threadIdx.x & 31, w = threadIdx.x / 32;
  const int ar = 16 * (w % 2), bc = 8 * (w / 2);
  double c[4];
#pragma unroll
  for (int t = 0; t < 4; ++t)
    c[t] = s.x[2][ar + lane / 4 + 8 * (t / 2)][bc + 2 * (lane % 4) + t % 2];
  if (bc + 7 >= ar) {  // not wholly below the diagonal
#pragma unroll
    for (int k4 = 0; k4 < kPanel; k4 += 4) {
      const int k = k4 + lane % 4;
      mma_f64_pair(c[0], c[1], c[2], c[3], -s.x[0][k][ar + lane / 4], -s.x[0][k][ar + lane / 4 + 8],
                   s.x[0][k][bc + lane / 4]);
    }
  }
#pragma unroll
  for (int t = 0; t < 4; ++t) {
    const int a = ar + lane / 4 + 8 * (t / 2), b = bc + 2 * (lane % 4) + t % 2;
    s.x[1][a][b] = a <= b && c0 + b < m ? c[t] : 0.0;
  }
}

// Block, a work unit's trailing tiles G(i_begin + t, j) -= X(q, i_begin + t)^T X(q, j), t <
// kTiles, with X(q, j) in s.x[0] and X(q, i_begin + t) in s.x[t + 1] once the block passes the
// __syncthreads here. The old values are requested first (one L2 latency for all tiles), and
// the tiles are updated together: each X(q, j) entry loaded from shared memory serves kTiles
// multiply-adds (one tile at a time would need 5 shared loads per 4 multiply-adds).
template <int kTiles>
__device__ __noinline__ void update_unit(double* r, int m, int i_begin, int j) {
  const Smem& s = shared_state();
  const int J0 = j * kPanel;
  double old[kTiles][kPer];
#pragma unroll
  for (int t = 0; t < kTiles; ++t) load_old(r, m, (i_begin + t) * kPanel, J0, old[t]);
  __syncthreads();
  double acc[kTiles][kPer] = {};
  tile_products<kTiles>(s, acc);
#pragma unroll
  for (int t = 0; t < kTiles; ++t)
#pragma unroll
    for (int e = 0; e < kPer; ++e) {
      int row, col;
      const bool own = owned(m, (i_begin + t) * kPanel, J0, e, row, col);
      stcg_if(own, &r[(long long)col * m + row], old[t][e] - acc[t][e]);
    }
}

// update_unit for a run-time number of tiles, 1 <= tiles <= kChunk.
template <int kTiles = 1>
__device__ __forceinline__ void update_unit_of(int tiles, double* r, int m, int i_begin, int j) {
  if constexpr (kTiles < kChunk) {
    if (tiles == kTiles)
      update_unit<kTiles>(r, m, i_begin, j);
    else
      update_unit_of<kTiles + 1>(tiles, r, m, i_begin, j);
  } else {
    update_unit<kChunk>(r, m, i_begin, j);
  }
}

// Block 0, warp 0: factor the diagonal block of panel q, read from R (kFromGlobal) or from
// s.x[1] (the lookahead's updated tile); R_qq into R in place and its reciprocal pivots into the
// scratch. The factor stays in s.x[kWarps - 1] and s.inv for this block's next phase (s.d
// holds this phase's R_qq).
//
// Block 0 runs this once a panel with its instruction cache cold for it (the kernel's other
// steps come in between), so the code is kept free of branches: the source a template
// parameter, the loads unconditional (clamped), the 32 values of the stores read before the
// first store. (A run-time source with conditional loads and stores compiles to ~10 KB of code
// with one branch per element, fetched cold on every panel: ~1.5x the factor's time.)
template <bool kFromGlobal>
__device__ __noinline__ void factor_step(double* r, int m, int q, double* scratch, int* fail) {
  Smem& s = shared_state();
  const int p = q * kPanel, nb = min(kPanel, m - p), lane = threadIdx.x & 31;
  double(*d)[kLd] = s.x[kWarps - 1];
  const bool bad = factor_diag_warp(
      [&](int i, int k) {
        if constexpr (kFromGlobal)
          return __ldcg(&r[diag_block_index(m, p, nb, i, k)]);
        else
          return s.x[1][i][k];
      },
      nb, d, s.inv, s.row);
  if (bad && lane == 0) *fail = 1;
  double v[kPanel];
#pragma unroll
  for (int k = 0; k < kPanel; ++k) v[k] = d[lane][k];
  double* col = r + (long long)p * m + p + lane;
#pragma unroll
  for (int k = 0; k < kPanel; ++k) stcg_if(lane <= k && k < nb, col + (long long)k * m, v[k]);
  __stcg(&inv_set(scratch, m, q)[lane], s.inv[lane]);
}

// R_qq into s.d: from global (published by block 0, its reciprocal pivots from `scratch`) or,
// with scratch null (block 0), from this block's own s.x[kWarps-1].
__device__ __forceinline__ void load_diag(const double* r, int m, int p, const double* scratch,
                                          Smem& s) {
  constexpr int kEach = kPanel * kPanel / kThreads;
  double v[kEach];
  const bool own = scratch == nullptr;
#pragma unroll
  for (int t = 0; t < kEach; ++t) {
    const int e = threadIdx.x + t * kThreads, i = e % kPanel, k = e / kPanel;
    v[t] = own ? s.x[kWarps - 1][i][k]
               : (i <= k && p + k < m ? __ldcg(&r[(long long)(p + k) * m + p + i]) : 0.0);
  }
  if (!own && threadIdx.x < kPanel) s.inv[threadIdx.x] = __ldcg(&scratch[threadIdx.x]);
#pragma unroll
  for (int t = 0; t < kEach; ++t) {
    const int e = threadIdx.x + t * kThreads;
    s.d[e % kPanel][e / kPanel] = v[t];
  }
}

// Blocks first_block.. of the grid: the X row of panel q (scratch row of phase q, columns from
// panel q + 1 on) into R's rows of panel q.
__device__ __forceinline__ void publish_x_row(double* r, int m, double* scratch, int q,
                                              int first_block) {
  const int p = (q + 1) * kPanel;
  const double* xs = x_row(scratch, m, q);
  const long long total = (long long)(m - p) * kPanel;
  for (long long e = (long long)(blockIdx.x - first_block) * kThreads + threadIdx.x; e < total;
       e += (long long)(gridDim.x - first_block) * kThreads) {
    const int c = p + int(e / kPanel), i = int(e % kPanel);
    __stcg(&r[(long long)c * m + q * kPanel + i], __ldcg(&xs[(long long)c * kPanel + i]));
  }
}

// The work units of phase q with `chunk` tiles a unit at most: the sum over columns j = q + 2 ..
// np - 1 of ceil(n / chunk), n = j - q, in closed form (N = a chunk + b: full groups of columns
// give chunk (1 + .. + a) units, the rest (a + 1) b, less the column n = 1 that is not there).
// No divisions by a run-time chunk in a loop over the columns: they cost microseconds a phase.
__host__ __device__ inline int phase_units(int q, int np, int chunk) {
  const int n = np - 1 - q;
  if (n < 2) return 0;
  const int a = n / chunk, b = n % chunk;
  return chunk * a * (a + 1) / 2 + (a + 1) * b - 1;
}

// The fewest tiles a unit (at most kChunk) for which phase q's units do not outnumber the
// workers: a phase ends with its slowest block, and a unit's time grows with its tiles (with
// kChunk tiles a unit throughout, block 0 waits at the barrier for the heaviest units).
__device__ __forceinline__ int phase_chunk(int q, int np, int workers) {
  int chunk = 1;
  while (chunk < kChunk && phase_units(q, np, chunk) > workers) ++chunk;
  return chunk;
}

// Work units of phase q for the blocks other than block 0: per column j >= q + 2, the tiles
// i in [q + 1, j] in chunks of phase_chunk; unit u goes to block 1 + u % (gridDim.x - 1). Calls
// f(j, i_begin, i_end) for this block's units. The walk skips whole columns (a scan over every
// unit with a modulo each is slow at large m) and divides by nothing: a column has one unit more
// than the column before it every chunk columns.
template <class F>
__device__ __forceinline__ void for_my_units(int q, int np, F&& f) {
  const int workers = gridDim.x - 1;
  const int chunk = phase_chunk(q, np, workers);
  int j = q + 2, first = 0;  // column j's first unit
  int units = 1, fill = 2;   // column j's units, and its tiles in the last of them
  for (; fill > chunk; fill -= chunk) ++units;
  for (int u = int(blockIdx.x) - 1;; u += workers) {
    for (;;) {
      if (j >= np) return;
      if (u < first + units) break;
      first += units;
      ++j;
      if (++fill > chunk) {
        fill = 1;
        ++units;
      }
    }
    const int i0 = q + 1 + (u - first) * chunk;
    f(j, i0, min(i0 + chunk, j + 1));
  }
}

// Phases q0 .. q1 - 1 (q1 <= np - 1), then the last one's X row into R. Afterwards R's columns
// before q1 kPanel are final, panel q1's diagonal block is factored (the last lookahead) and
// the trailing matrix holds its Gram data updated through phase q1 - 1. resume: panel q0 was
// factored by an earlier launch (R_qq in R, its reciprocal pivots in the scratch) and the X row
// before it published.
__global__ void __launch_bounds__(kThreads)
    chol_lookahead_kernel(double* r, int m, int q0, int q1, int resume, double* scratch,
                          int* fail) {
  Smem& s = shared_state();
  cg::grid_group grid = cg::this_grid();
  const int np = (m + kPanel - 1) / kPanel;
  const int warp = threadIdx.x / 32;
  unsigned* words = phase_words(scratch, m);
  unsigned* factored = words;  // panel q0 is: factored below or by the launch before
  unsigned* finished = words + 1;
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    factored[0] = unsigned(q0);
    finished[0] = 0;
  }
  if (!resume && blockIdx.x == 0 && warp == 0) factor_step<true>(r, m, q0, scratch, fail);
  grid.sync();
  // No grid-wide barrier between the phases: block 0 waits for the other blocks' work of the
  // phase before (all of it, normally done long before its own steps end), the other blocks for
  // that and for block 0's factor of their phase's panel. Block 0's steps, the critical path,
  // do not wait for a barrier's round trips after they end.
  const unsigned others = gridDim.x - 1;
  for (int q = q0; q < q1; ++q) {
    const int p = q * kPanel;  // panels before the last are full
    double* xs = x_row(scratch, m, q);
    if (blockIdx.x == 0) {
      const int c0 = p + kPanel;
      // The operands: fetched by warps 1.. during the last phase's factor, but in the first.
      if (q == q0) {
        fetch_lookahead(r, m, p, c0, threadIdx.x, kThreads, s);
        __syncthreads();
      }
      // A resumed launch's first R_qq is in global memory only.
      load_diag(r, m, p, resume && q == q0 ? inv_set(scratch, m, q) : nullptr, s);
      __syncthreads();
      // The lookahead's solve is on the critical path: all of the block's threads take it.
      solve_first_tile();
      // Warp 1 has no tile of the update (below the diagonal): it stores the solved tile.
      if (warp == 1) store_x(s.x[0], m, c0, xs);
      update_next_diagonal(m, c0, s);
      __syncthreads();
      if (warp == 0) {
        factor_step<false>(r, m, q + 1, scratch, fail);
        // Panel q + 1's R_qq and reciprocal pivots (and the X tile above) are written: released.
        __syncwarp();
        if (threadIdx.x == 0) {
          __threadfence();
          atomicExch(factored, unsigned(q + 1));
        }
      } else if (q + 1 < q1) {
        // Meanwhile the next phase's operands, once the other blocks have finished this phase:
        // the tiles are theirs, and the next phase overwrites what they read in this one
        // (scratch row q + 1 & 1, published from as row q - 1; the reciprocal pivots of parity
        // q, read as panel q's). Normally they finish before the factor does, so the phase does
        // not wait for the L2 latency of its loads after the factor.
        // Each warp waits on its own: with a named barrier among the seven warps instead,
        // racecheck reports hazards in this kernel that we cannot account for.
        if ((threadIdx.x & 31) == 0)
          while (load_acquire(finished) < unsigned(q + 1 - q0) * others) {
          }
        __syncwarp();
        fetch_lookahead(r, m, p + kPanel, c0 + kPanel, threadIdx.x - 32, kThreads - 32, s);
      }
      __syncthreads();
    } else {
      block_wait_at_least(factored, unsigned(q));
      if (q > q0) block_wait_at_least(finished, unsigned(q - q0) * others);
      load_diag(r, m, p, inv_set(scratch, m, q), s);
      // Last phase's X row into R's rows of panel q - 1 (nobody reads them in this phase).
      if (q > q0) publish_x_row(r, m, scratch, q - 1, 1);
      __syncthreads();
      for_my_units(q, np, [&](int j, int i_begin, int i_end) {
        const int tiles = i_end - i_begin;
        // The X tiles' block-row entries (one warp each), solved.
        const bool solver = warp <= tiles;
        if (solver) {
          TileLoad tile;
          tile.issue(r, m, p, (warp == 0 ? j : i_begin + warp - 1) * kPanel);
          tile.store(s.x[warp]);
          solve_tile(warp);
          if (warp == 0 && i_end == j + 1) store_x(s.x[0], m, j * kPanel, xs);
        }
        update_unit_of(tiles, r, m, i_begin, j);
        __syncthreads();
      });
      __syncthreads();  // (a block without units) every thread's stores before the count
      if (threadIdx.x == 0) {
        __threadfence();
        atomicAdd(finished, 1u);
      }
    }
  }
  grid.sync();
  // The last phase's X row into R.
  if (q1 > q0) publish_x_row(r, m, scratch, q1 - 1, 0);
}

// Blocks that fit on the device at once (a cooperative launch needs them all resident); 0 where
// cooperative launches are not supported.
int resident_blocks() {
  int device = 0, coop = 0;
  MIMORX_CUDA_CHECK(cudaGetDevice(&device));
  MIMORX_CUDA_CHECK(cudaDeviceGetAttribute(&coop, cudaDevAttrCooperativeLaunch, device));
  if (!coop) return 0;
  const auto* kernel = reinterpret_cast<const void*>(chol_lookahead_kernel);
  mimorx::detail::raise_smem_limit(kernel);
  return mimorx::detail::resident_blocks(kernel, kThreads, sizeof(Smem));
}

}  // namespace

std::size_t lookahead_scratch_size(int m) {
  return std::size_t(2 * kPanel * padded(m) + 2 * kPanel + 1);  // + phase_words
}

bool cholesky_lookahead_split_supported(int m, int first, int until, int reserve) {
  if (m - first <= kPanel) return false;
  const int np = (m + kPanel - 1) / kPanel;
  if (until % kPanel != 0 || until <= first || until > (np - 1) * kPanel) return false;
  return resident_blocks() - reserve >= 2;
}

bool cholesky_lookahead_enqueue(double* r, int m, int first, double* scratch, int* fail,
                                void* stream, int until, bool resume, int reserve) {
  const int np = (m + kPanel - 1) / kPanel;
  int q0 = first / kPanel;
  int q1 = until > 0 ? until / kPanel : np - 1;
  if (resume && q0 >= q1) return true;  // the last panel: factored by the launch before
  if (!resume && m - first <= kPanel) return false;  // the chain's one launch
  const int blocks = resident_blocks() - reserve;
  const int units = phase_units(q0, np, 1);  // phase q0's at one tile a unit, the most
  const int grid = std::min(blocks, 1 + std::max(units, 1));
  if (grid < 2) {
    if (resume || until > 0)  // cholesky_lookahead_split_supported said otherwise
      throw Unsupported("the split lookahead factorisation does not fit the device");
    return false;
  }
  int res = resume ? 1 : 0;
  void* args[] = {&r, &m, &q0, &q1, &res, &scratch, &fail};
  MIMORX_CUDA_CHECK(cudaLaunchCooperativeKernel(
      reinterpret_cast<const void*>(chol_lookahead_kernel), dim3(grid), dim3(kThreads), args,
      sizeof(Smem), mimorx::detail::as_stream(stream)));
  return true;
}

}  // namespace mimorx::lattice::detail

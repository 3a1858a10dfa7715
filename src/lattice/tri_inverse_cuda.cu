// The inverse W = R^{-1} of the leading f x f block of the block method's R (upper triangular,
// column-major, ld m) in float64, by recursive doubling: the 128 x 128 diagonal blocks inverted
// in parallel (one thread block each, doubling inside it from 32 x 32 blocks), then for s = 128,
// 256, ...: every pair of neighbouring s-blocks A, C gets W_AC = -W_AA R_AC W_CC (two batched
// products). log2(f / 128) + 1 dependent launches instead of the f / 32 steps of a forward
// substitution, and none of them on the critical path while the block pass runs longer: the
// block method runs it on a side stream, and the tail refactorisation's head block
// X = R_hh^{-T} G_ht becomes one product W^T G_ht (instead of a forward substitution of f / 32
// dependent chunk steps).
//
// The products: 64 x 64 output tiles of 8 warps on the float64 tensor cores (mma_f64.cuh), 16
// deep slabs, the k range of a tile cut to where its triangular operand is not zero and split
// over a cluster of blocks (split_k.cuh).
//
// The diagonal inverses and the levels s = 32 and 64 run in one kernel: as launches of their own
// (a pair a level, each with a few small tiles) they made W late for the refactorisation that
// waits for it.
#include <cuda_runtime.h>

#include <algorithm>

#include "core/cuda_check.hpp"
#include "core/cuda_smem_limit.hpp"
#include "lattice/lll_internal.hpp"
#include "lattice/mma_f64.cuh"
#include "lattice/split_k.cuh"

namespace mimorx::lattice::detail {
namespace {

constexpr int kDiag = 32;    // the diagonal blocks inverted by back substitution
constexpr int kFused = 128;  // the diagonal blocks inverted by one thread block
constexpr int kFusedThreads = 256;
// Shared memory of fused_diag_inverse_kernel (doubles): W's block (column-major, ld 129), R's
// staged blocks and the products' T (each four 32 x 33 blocks or one 64 x 65).
constexpr int kFusedLd = kFused + 1, kStage = 4 * kDiag * (kDiag + 1);
constexpr std::size_t kFusedSmem = sizeof(double) * (kFused * kFusedLd + 2 * kStage);

// acc[a][c] += sum over k in [k0, k1) of A(k, a) B(k, c), a register tile of RA x RC outputs a
// thread (a_at, b_at: the operands' entries, from shared memory), one fma an entry and k.
template <int RA, int RC, class AAt, class BAt>
__device__ __forceinline__ void tile_product(int k0, int k1, AAt&& a_at, BAt&& b_at,
                                             double (&acc)[RA][RC]) {
  for (int k = k0; k < k1; ++k) {
    double av[RA], bv[RC];
#pragma unroll
    for (int a = 0; a < RA; ++a) av[a] = a_at(k, a);
#pragma unroll
    for (int c = 0; c < RC; ++c) bv[c] = b_at(k, c);
#pragma unroll
    for (int a = 0; a < RA; ++a)
#pragma unroll
      for (int c = 0; c < RC; ++c) acc[a][c] = fma(av[a], bv[c], acc[a][c]);
  }
}

// One 128 x 128 diagonal block p = 128 blockIdx.x of W (a short last block padded with the
// identity; the entries below the diagonal written as zeros): warps 0-3 invert its four 32 x 32
// diagonal blocks by back substitution (lane j computes column j) while the other R blocks wait
// in registers, then the levels s = 32 (two pairs) and s = 64 (one pair) as
// W_AC = -W_AA (R_AC W_CC), every thread a 2 x 4 or 4 x 4 register tile of the output.
__global__ void __launch_bounds__(kFusedThreads)
    fused_diag_inverse_kernel(const double* r, int ld, int f, int block0, double* w,
                              const int* skip) {
  if (skip && *skip) return;
  extern __shared__ double smem[];
  double* sw = smem;                      // sw[j * kFusedLd + i] = W(p + i, p + j)
  double* sa = smem + kFused * kFusedLd;  // staged R
  double* st = sa + kStage;               // staged R of the diagonal blocks, then T
  const int p = (block0 + int(blockIdx.x)) * kFused, nb = min(kFused, f - p), t = threadIdx.x;
  const int warp = t / 32, lane = t % 32;
  // R(p + i, p + k) of the block, padded with the identity.
  auto rr = [&](int i, int k) {
    return i < nb && k < nb ? r[(long long)(p + k) * ld + p + i] : (i == k ? 1.0 : 0.0);
  };
  // Every global load first, into registers (stored to shared memory when its area is free), so
  // that they are in flight together.
  // Warps 0-3: row `lane` of diagonal block q = warp; warps 4-7: level 32's R_AC of pair b,
  // entries e = t - 128 + 128 v; all: level 64's R_AC, entries e = t + 256 v.
  double dv[kDiag];
  if (warp < 4) {
#pragma unroll
    for (int k = 0; k < kDiag; ++k) dv[k] = rr(kDiag * warp + lane, kDiag * warp + k);
  } else {
#pragma unroll
    for (int v = 0; v < 16; ++v) {
      const int e = t - 128 + 128 * v, b = e / (kDiag * kDiag), i = e % kDiag,
                k = e / kDiag % kDiag;
      dv[v] = rr(64 * b + i, 64 * b + kDiag + k);
    }
  }
  double pre64[16];
#pragma unroll
  for (int v = 0; v < 16; ++v) {
    const int e = t + kFusedThreads * v;
    pre64[v] = rr(e % 64, 64 + e / 64);
  }
  if (warp < 4) {
    // st[q * 1056 + i * 33 + k] = R(32q + i, 32q + k)
    double* sq = st + warp * kDiag * (kDiag + 1);
#pragma unroll
    for (int k = 0; k < kDiag; ++k) sq[lane * (kDiag + 1) + k] = dv[k];
  } else {
    // sa[b * 1056 + k * 33 + i] = R(64b + i, 64b + 32 + k)
#pragma unroll
    for (int v = 0; v < 16; ++v) {
      const int e = t - 128 + 128 * v, b = e / (kDiag * kDiag), i = e % kDiag,
                k = e / kDiag % kDiag;
      sa[b * kDiag * (kDiag + 1) + k * (kDiag + 1) + i] = dv[v];
    }
  }
  __syncthreads();
  if (warp < 4) {
    const double* sq = st + warp * kDiag * (kDiag + 1);
    const int j = lane, q0 = kDiag * warp;
    // The reciprocal pivots first (independent), so that the back substitution's chain has
    // multiplications instead of divisions.
    double inv[kDiag];
#pragma unroll
    for (int i = 0; i < kDiag; ++i) inv[i] = 1.0 / sq[i * (kDiag + 1) + i];
    double x[kDiag];  // column j of the block's inverse; x[k] = 0 for k > j
#pragma unroll
    for (int i = kDiag - 1; i >= 0; --i) {
      double acc = 0;
#pragma unroll
      for (int k = i + 1; k < kDiag; ++k) acc = fma(sq[i * (kDiag + 1) + k], x[k], acc);
      x[i] = i > j ? 0.0 : ((i == j ? 1.0 : 0.0) - acc) * inv[i];
    }
#pragma unroll
    for (int i = 0; i < kDiag; ++i) sw[(q0 + j) * kFusedLd + q0 + i] = x[i];
    // The zeros of the 32 x 32 blocks below the diagonal blocks (the rest of the lower part is
    // covered by the pairs' blocks, written below, which are above the diagonal).
    for (int q = warp + 1; q < 4; ++q)
      for (int i = 0; i < kDiag; ++i) sw[(q0 + j) * kFusedLd + kDiag * q + i] = 0.0;
  }
  __syncthreads();
  // Level 32, pairs b = 0, 1 (A = [64b, 64b + 32), C = A + 32): T = R_AC W_CC into st
  // (st[b * 1056 + j * 33 + i]); thread: pair t / 128, rows i0 + 16 a, columns j0 + 8 c.
  {
    const int b = t / 128, i0 = t % 16, j0 = t % 128 / 16, c0 = 64 * b + kDiag;
    const double* ra = sa + b * kDiag * (kDiag + 1);
    double acc[2][4] = {};
    tile_product(
        0, j0 + 25, [&](int k, int a) { return ra[k * (kDiag + 1) + i0 + 16 * a]; },
        [&](int k, int c) { return sw[(c0 + j0 + 8 * c) * kFusedLd + c0 + k]; }, acc);
    double* tb = st + b * kDiag * (kDiag + 1);
#pragma unroll
    for (int a = 0; a < 2; ++a)
#pragma unroll
      for (int c = 0; c < 4; ++c) tb[(j0 + 8 * c) * (kDiag + 1) + i0 + 16 * a] = acc[a][c];
  }
  __syncthreads();
  // Level 32: W_AC = -W_AA T (W_AA's zeros below the diagonal from the first step); meanwhile
  // level 64's R_AC into sa (sa[k * 65 + i] = R(i, 64 + k); level 32 read sa before the barrier).
  {
    const int b = t / 128, i0 = t % 16, j0 = t % 128 / 16, a0 = 64 * b, c0 = a0 + kDiag;
    const double* tb = st + b * kDiag * (kDiag + 1);
    double acc[2][4] = {};
    tile_product(
        i0, kDiag, [&](int k, int a) { return sw[(a0 + k) * kFusedLd + a0 + i0 + 16 * a]; },
        [&](int k, int c) { return tb[(j0 + 8 * c) * (kDiag + 1) + k]; }, acc);
#pragma unroll
    for (int a = 0; a < 2; ++a)
#pragma unroll
      for (int c = 0; c < 4; ++c) sw[(c0 + j0 + 8 * c) * kFusedLd + a0 + i0 + 16 * a] = -acc[a][c];
#pragma unroll
    for (int v = 0; v < 16; ++v) {
      const int e = t + kFusedThreads * v;
      sa[(e / 64) * 65 + e % 64] = pre64[v];
    }
  }
  __syncthreads();
  // Level 64, one pair (A = [0, 64), C = [64, 128)): T = R_AC W_CC into st (st[j * 65 + i]),
  // then W_AC = -W_AA T; thread: rows i0 + 16 a, columns j0 + 16 c.
  const int i0 = t % 16, j0 = t / 16;
  {
    double acc[4][4] = {};
    tile_product(
        0, j0 + 49, [&](int k, int a) { return sa[k * 65 + i0 + 16 * a]; },
        [&](int k, int c) { return sw[(64 + j0 + 16 * c) * kFusedLd + 64 + k]; }, acc);
#pragma unroll
    for (int a = 0; a < 4; ++a)
#pragma unroll
      for (int c = 0; c < 4; ++c) st[(j0 + 16 * c) * 65 + i0 + 16 * a] = acc[a][c];
  }
  __syncthreads();
  {
    double acc[4][4] = {};
    tile_product(
        i0, 64, [&](int k, int a) { return sw[k * kFusedLd + i0 + 16 * a]; },
        [&](int k, int c) { return st[(j0 + 16 * c) * 65 + k]; }, acc);
#pragma unroll
    for (int a = 0; a < 4; ++a)
#pragma unroll
      for (int c = 0; c < 4; ++c) sw[(64 + j0 + 16 * c) * kFusedLd + i0 + 16 * a] = -acc[a][c];
  }
  __syncthreads();
  for (int e = t; e < kFused * kFused; e += kFusedThreads) {
    const int i = e % kFused, j = e / kFused;
    if (i < nb && j < nb) w[(long long)(p + j) * ld + p + i] = sw[j * kFusedLd + i];
  }
}

// The three products (every matrix column-major with ld `ld`; pair b of level s: A = [a0, a0 +
// s), C = [c0, c0 + nc), a0 = 2 b s, c0 = a0 + s, nc = min(s, f - c0)):
//   kRC:  T(A, C) = R(A, C) W(C, C)      (W(C, C) upper: k <= j)
//   kWT:  W(A, C) = -W(A, A) T(A, C)     (W(A, A) upper: k >= i)
//   kApply: X = W(0:f, 0:f)^T G          (W^T lower: k <= i), G f x cols with ld ldg, X in x.
enum Mode : int { kRC = 0, kWT = 1, kApply = 2 };

struct ProductArgs {
  const double* r;  // R (kRC)
  double* w;        // W
  double* tmp;      // T
  const double* g;  // G (kApply)
  double* x;        // X (kApply)
  long long ld, ldg;
  int f, s, cols;
  const int* skip;  // may be null; non-zero: do nothing
};

constexpr int kLdA = 64 + 4, kLdB = 16 + 4;  // slab strides (distinct banks per half-warp)

template <int kMode>
__global__ void __launch_bounds__(256) tri_product_kernel(ProductArgs pa) {
  if (pa.skip && *pa.skip) return;  // the whole cluster
  // This batch's operands: op(A)(i, k), B(k, j), C(i, j).
  const double *a, *b;
  double* c;
  long long lda, ldb, ldc;
  int M, N, K;
  double alpha = 1;
  if constexpr (kMode == kApply) {
    a = pa.w, lda = pa.ld;  // op(A)(i, k) = W(k, i) = w[i * ld + k]
    b = pa.g, ldb = pa.ldg;
    c = pa.x, ldc = pa.ld;
    M = pa.f, N = pa.cols, K = pa.f;
  } else {
    const int a0 = 2 * blockIdx.y * pa.s, c0 = a0 + pa.s, nc = min(pa.s, pa.f - c0);
    M = pa.s, N = nc;
    lda = ldb = ldc = pa.ld;
    if constexpr (kMode == kRC) {
      a = pa.r + c0 * pa.ld + a0;  // R(a0 + i, c0 + k)
      b = pa.w + c0 * pa.ld + c0;  // W(c0 + k, c0 + j)
      K = nc;
    } else {
      a = pa.w + a0 * pa.ld + a0;  // W(a0 + i, a0 + k)
      b = pa.tmp + c0 * pa.ld + a0;
      K = pa.s;
      alpha = -1;
    }
    c = (kMode == kRC ? pa.tmp : pa.w) + c0 * pa.ld + a0;
  }
  const int tiles_m = (M + 63) / 64;
  const int I0 = int(blockIdx.x) % tiles_m * 64, J0 = int(blockIdx.x) / tiles_m * 64;
  if (J0 >= N) return;  // the whole cluster (it shares the tile)
  // The k range where the triangular operand can be non-zero, then this block's share of it.
  int k_first = 0, k_last = K;
  if constexpr (kMode == kRC) k_last = min(K, J0 + 64);
  if constexpr (kMode == kWT) k_first = I0;
  if constexpr (kMode == kApply) k_last = min(K, I0 + 64);
  int k_begin = 0, k_end = 0;
  split_range(k_last - k_first, 16, k_begin, k_end);
  k_begin += k_first;
  k_end += k_first;
  __shared__ double smem[64 * 64];  // the slabs, then the block's partial tile
  double* xa = smem;                // xa[k * kLdA + i] = op(A)(I0 + i, k0 + k)
  double* xb = smem + 16 * kLdA;    // xb[j * kLdB + k] = B(k0 + k, J0 + j)
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, wr = warp % 2, wc = warp / 2;
  double acc[4][2][2] = {};
  double ra[4], rb[4];
  auto fetch = [&](int k0) {
#pragma unroll
    for (int p = 0; p < 4; ++p) {
      const int e = threadIdx.x + 256 * p;
      if constexpr (kMode == kApply) {  // along k: W's columns are contiguous in k
        const int kk = e % 16, i = e / 16;
        ra[p] = I0 + i < M && k0 + kk < k_end ? a[(long long)(I0 + i) * lda + k0 + kk] : 0.0;
      } else {  // along i
        const int i = e % 64, kk = e / 64;
        ra[p] = I0 + i < M && k0 + kk < k_end ? a[(long long)(k0 + kk) * lda + I0 + i] : 0.0;
      }
      const int kk = e % 16, j = e / 16;
      rb[p] = J0 + j < N && k0 + kk < k_end ? b[(long long)(J0 + j) * ldb + k0 + kk] : 0.0;
    }
  };
  if (k_begin < k_end) fetch(k_begin);
  for (int k0 = k_begin; k0 < k_end; k0 += 16) {
#pragma unroll
    for (int p = 0; p < 4; ++p) {
      const int e = threadIdx.x + 256 * p;
      if constexpr (kMode == kApply) {
        xa[(e % 16) * kLdA + e / 16] = ra[p];
      } else {
        xa[(e / 64) * kLdA + e % 64] = ra[p];
      }
      xb[(e / 16) * kLdB + e % 16] = rb[p];
    }
    if (k0 + 16 < k_end) fetch(k0 + 16);
    __syncthreads();
    warp_mma<16, 4, 2, 1, kLdA, kLdB, 1>(xa + 32 * wr, xb + 16 * wc * kLdB, acc, lane);
    __syncthreads();
  }
  store_acc(smem, 64, 32 * wr, 16 * wc, acc, lane);
  cluster_sum(smem, 64 * 64, [&](int e, double sum) {
    const int i = I0 + e % 64, j = J0 + e / 64;
    if (i < M && j < N) c[(long long)j * ldc + i] = alpha * sum;
  });
}

template <int kMode>
void launch_product(const ProductArgs& pa, int M, int N, int K, int batches, cudaStream_t s,
                    const LllOptions& options) {
  const int tiles = ((M + 63) / 64) * ((N + 63) / 64);
  // About 8 slabs per block; the products of the level s = 128 (K = 128) 2 slabs a block (their
  // slab loop waits on its loads, so more blocks are faster there); the longer products are
  // slower with 2 slabs a block (the cluster's sums).
  const int per_block = K <= 128 ? 32 : 128;
  const int split = split_for(reinterpret_cast<const void*>(tri_product_kernel<kMode>),
                              (K + per_block - 1) / per_block, options.split_k);
  launch_split(split, tri_product_kernel<kMode>, dim3(unsigned(tiles), unsigned(batches)),
               dim3(256), s, pa);
  MIMORX_CUDA_CHECK_LAUNCH();
}

}  // namespace

static_assert(kFused == kTriInverseBlock);

void tri_inverse_enqueue(const double* r, int ld, int f, double* w, double* tmp, void* stream,
                         const int* skip, const LllOptions& options) {
  if (f <= 0) return;
  const auto s = mimorx::detail::as_stream(stream);
  MIMORX_CUDA_CHECK(cudaMemsetAsync(w, 0, std::size_t(f) * ld * sizeof(double), s));
  tri_inverse_diag_enqueue(r, ld, f, 0, w, stream, skip);
  tri_inverse_products_enqueue(r, ld, f, w, tmp, stream, skip, options);
}

int tri_inverse_diag_blocks(int f) { return (f + kFused - 1) / kFused; }

void tri_inverse_diag_enqueue(const double* r, int ld, int f, int block_begin, double* w,
                              void* stream, const int* skip) {
  const int blocks = tri_inverse_diag_blocks(f) - block_begin;
  if (blocks <= 0) return;
  mimorx::detail::raise_smem_limit(reinterpret_cast<const void*>(fused_diag_inverse_kernel));
  fused_diag_inverse_kernel<<<unsigned(blocks), kFusedThreads, kFusedSmem,
                              mimorx::detail::as_stream(stream)>>>(r, ld, f, block_begin, w, skip);
  MIMORX_CUDA_CHECK_LAUNCH();
}

void tri_inverse_products_enqueue(const double* r, int ld, int f, double* w, double* tmp,
                                  void* stream, const int* skip, const LllOptions& options) {
  if (f <= 0) return;
  const auto s = mimorx::detail::as_stream(stream);
  ProductArgs pa{};
  pa.skip = skip;
  pa.r = r;
  pa.w = w;
  pa.tmp = tmp;
  pa.ld = ld;
  pa.f = f;
  for (int sz = kFused; sz < f; sz *= 2) {
    pa.s = sz;
    const int pairs = (f - sz + 2 * sz - 1) / (2 * sz);  // pairs whose C is not empty
    launch_product<kRC>(pa, sz, sz, sz, pairs, s, options);
    launch_product<kWT>(pa, sz, sz, sz, pairs, s, options);
  }
}

void tri_apply_enqueue(const double* w, int ld, int f, int cols, const double* g, long long ldg,
                       double* x, void* stream, const LllOptions& options) {
  if (f <= 0 || cols <= 0) return;
  ProductArgs pa{};
  pa.w = const_cast<double*>(w);  // read only in this mode
  pa.g = g;
  pa.x = x;
  pa.ld = ld;
  pa.ldg = ldg;
  pa.f = f;
  pa.cols = cols;
  launch_product<kApply>(pa, f, cols, f, 1, mimorx::detail::as_stream(stream), options);
}

}  // namespace mimorx::lattice::detail

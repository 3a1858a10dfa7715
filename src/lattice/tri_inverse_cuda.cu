// The inverse W = R^{-1} of the leading f x f block of the block method's R (upper triangular,
// column-major, ld m) in float64, by recursive doubling: the 32 x 32 diagonal blocks inverted
// in parallel (one warp each), then for s = 32, 64, ...: every pair of neighbouring s-blocks A,
// C gets W_AC = -W_AA R_AC W_CC (two batched products). log2(f / 32) + 1 dependent steps
// instead of the f / 32 of a forward substitution, and none of them on the critical path: the
// block method runs it on a side stream while its block pass works, and the tail
// refactorisation's head block X = R_hh^{-T} G_ht becomes one product W^T G_ht (the forward
// substitution, 28 dependent chunk steps, took 190 us at m = 1024, f = 896 on the H200).
//
// The products: 64 x 64 output tiles of 8 warps on the float64 tensor cores (mma_f64.cuh), 16
// deep slabs, the k range of a tile cut to where its triangular operand is not zero and split
// over a cluster of blocks (split_k.cuh).
#include <cuda_runtime.h>

#include <algorithm>

#include "core/cuda_check.hpp"
#include "lattice/lll_internal.hpp"
#include "lattice/mma_f64.cuh"
#include "lattice/split_k.cuh"

namespace mimorx::lattice::detail {
namespace {

constexpr int kDiag = 32;  // the diagonal blocks inverted directly

// W's diagonal block p = 32 blockIdx.x: lane j computes column j of R_pp^{-1} by back
// substitution (a short last block padded with the identity).
__global__ void __launch_bounds__(32)
    diag_inverse_kernel(const double* r, int ld, int f, double* w, const int* skip) {
  if (skip && *skip) return;
  __shared__ double s_r[kDiag][kDiag + 1];  // s_r[i][k] = R(p + i, p + k)
  const int p = blockIdx.x * kDiag, nb = min(kDiag, f - p), j = threadIdx.x;
  for (int i = 0; i < kDiag; ++i)
    s_r[i][j] = i < nb && j < nb ? r[(long long)(p + j) * ld + p + i] : (i == j ? 1.0 : 0.0);
  __syncwarp();
  double x[kDiag];  // column j of the inverse; x[k] = 0 for k > j
#pragma unroll
  for (int i = kDiag - 1; i >= 0; --i) {
    double acc = 0;
#pragma unroll
    for (int k = i + 1; k < kDiag; ++k) acc = fma(s_r[i][k], x[k], acc);
    x[i] = i > j ? 0.0 : ((i == j ? 1.0 : 0.0) - acc) / s_r[i][i];
  }
  if (j < nb)
#pragma unroll
    for (int i = 0; i < kDiag; ++i)
      if (i < nb) w[(long long)(p + j) * ld + p + i] = x[i];
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
void launch_product(const ProductArgs& pa, int M, int N, int K, int batches, cudaStream_t s) {
  const int tiles = ((M + 63) / 64) * ((N + 63) / 64);
  // About 8 slabs per block: short products need no split.
  const int split =
      split_for(reinterpret_cast<const void*>(tri_product_kernel<kMode>), (K + 127) / 128);
  launch_split(split, tri_product_kernel<kMode>, dim3(unsigned(tiles), unsigned(batches)),
               dim3(256), s, pa);
  MIMORX_CUDA_CHECK_LAUNCH();
}

}  // namespace

void tri_inverse_enqueue(const double* r, int ld, int f, double* w, double* tmp, void* stream,
                         const int* skip) {
  if (f <= 0) return;
  const auto s = mimorx::detail::as_stream(stream);
  MIMORX_CUDA_CHECK(cudaMemsetAsync(w, 0, std::size_t(f) * ld * sizeof(double), s));
  diag_inverse_kernel<<<unsigned((f + kDiag - 1) / kDiag), kDiag, 0, s>>>(r, ld, f, w, skip);
  MIMORX_CUDA_CHECK_LAUNCH();
  ProductArgs pa{};
  pa.skip = skip;
  pa.r = r;
  pa.w = w;
  pa.tmp = tmp;
  pa.ld = ld;
  pa.f = f;
  for (int sz = kDiag; sz < f; sz *= 2) {
    pa.s = sz;
    const int pairs = (f - sz + 2 * sz - 1) / (2 * sz);  // pairs whose C is not empty
    launch_product<kRC>(pa, sz, sz, sz, pairs, s);
    launch_product<kWT>(pa, sz, sz, sz, pairs, s);
  }
}

void tri_apply_enqueue(const double* w, int ld, int f, int cols, const double* g, long long ldg,
                       double* x, void* stream) {
  if (f <= 0 || cols <= 0) return;
  ProductArgs pa{};
  pa.w = const_cast<double*>(w);  // read only in this mode
  pa.g = g;
  pa.x = x;
  pa.ld = ld;
  pa.ldg = ldg;
  pa.f = f;
  pa.cols = cols;
  launch_product<kApply>(pa, f, cols, f, 1, mimorx::detail::as_stream(stream));
}

}  // namespace mimorx::lattice::detail

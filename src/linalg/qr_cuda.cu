// Batched QR on the GPU. Small shapes (qr_fixed_shape: nr <= 4) take qr_fixed_kernel below,
// one thread per problem with the problem in registers (qr_fixed.hpp). Other shapes: a group
// of G lanes per problem (G = model rows rounded up to a power of two, at most 32). Lane l
// owns rows l, l + G, ... of A and of R (shared memory, one slice per problem); sums over rows
// are butterfly reductions with __shfl_xor_sync. The arithmetic is qr_problem(), the same
// source the CPU runs with SerialRows{G}, hence bit-identical results. (For small shapes the
// register kernel is several times faster than this one: docs/qr.md.)
#include <algorithm>
#include <atomic>
#include <string>
#include <type_traits>

#include "core/cuda_check.hpp"
#include "linalg/qr_fixed.hpp"
#include "linalg/qr_internal.hpp"
#include "mimorx/core/error.hpp"

namespace mimorx::linalg::detail {
namespace {

MIMORX_HD float shfl_xor(unsigned mask, float v, int o) {
#if defined(__CUDA_ARCH__)
  return __shfl_xor_sync(mask, v, o);
#else
  (void)mask, (void)o;
  return v;  // never used on the host
#endif
}
MIMORX_HD cf32 shfl_xor(unsigned mask, cf32 v, int o) {
  return {shfl_xor(mask, v.re, o), shfl_xor(mask, v.im, o)};
}

// Rows owned by one lane of a G-lane group; rowsum in SerialRows' order.
struct LaneRows {
  int lane = 0, g = 1;
  unsigned mask = 0xffffffffu;
  MIMORX_HD int first() const { return lane; }
  MIMORX_HD int step() const { return g; }
  MIMORX_HD bool owns(int i) const { return (i & (g - 1)) == lane; }
  template <class T, class F>
  MIMORX_HD T rowsum(int m, F f) const {
    // As SerialRows: from zero when g == 1, else from the lane's first row.
    T p = g > 1 && lane < m ? f(lane) : hd::zero<T>();
    for (int r = g > 1 && lane < m ? lane + g : lane; r < m; r += g) p = hd::add(p, f(r));
    for (int o = g >> 1; o >= 1; o >>= 1) p = hd::add(p, shfl_xor(mask, p, o));
    return p;
  }
};

// Shared-memory slice of one problem, in elements of T: padded so that the groups of a warp
// start in different banks.
MIMORX_HD int slice(int elems, int g) { return ((elems + 31) / 32) * 32 + (g < 32 ? g : 0); }

template <class T>
__global__ void __launch_bounds__(128) qr_kernel(QrArgs a, int g) {
  extern __shared__ __align__(16) unsigned char smem[];
  const int t = int(threadIdx.x);
  const int group = t / g;
  const int per_block = int(blockDim.x) / g;
  const std::int64_t c = std::int64_t(blockIdx.x) * per_block + group;
  if (c >= a.channels) return;  // whole groups leave together
  LaneRows ex;
  ex.lane = t & (g - 1);
  ex.g = g;
  ex.mask = g == 32 ? 0xffffffffu : ((1u << g) - 1u) << ((t & 31) & ~(g - 1));
  const int sa = slice(a.m * a.n, g), sr = slice(a.n * a.n, g);
  T* wa = reinterpret_cast<T*>(smem) + std::size_t(group) * sa;
  T* wr = reinterpret_cast<T*>(smem) + std::size_t(per_block) * sa + std::size_t(group) * sr;
  float* fbase =
      reinterpret_cast<float*>(reinterpret_cast<T*>(smem) + std::size_t(per_block) * (sa + sr));
  const int es = int(blockDim.x);
  float* wn = fbase + t;
  int* wp = reinterpret_cast<int*>(fbase + std::size_t(a.n) * es) + t;
  qr_problem<T>(ex, a, c, wa, wr, wp, wn, es);
}

// Fixed-size shapes (qr_fixed.hpp): one thread per problem with the problem in registers.
// A block of kFixedThreads problems loads its channels with coalesced loads into shared
// memory, each thread decomposes its own, stages Q, R and the permutation in shared memory
// (odd per-thread strides, so a warp's accesses hit distinct banks), and the block writes them
// out with coalesced stores. 8400 problems are 132 blocks of two warps: one block per SM.
// WANT_Q = false (complex problems whose caller wants R and z only, the trellis detector's
// QR): no shared memory for Q, and a register cap (kFixedBlocksNoQ blocks per SM, 24 warps
// where 91 registers give 20) that its shared memory then allows.
constexpr int kFixedThreads = 64;
constexpr int kFixedBlocksNoQ = 12;

template <class T>
__device__ __forceinline__ void put(float* p, T v) {
  if constexpr (std::is_same_v<T, cf32>) {
    p[0] = v.re;
    p[1] = v.im;
  } else {
    p[0] = v;
  }
}

// Block-wide copies of cnt * SIZE elements between global memory (problem p at
// g + (c0 + p) * stride) and shared memory (problem p at s + p * PITCH). A full block of
// contiguous problems runs a compile-time trip count with every load issued before the first
// store, so the block waits for one memory latency rather than one per iteration.
template <int SIZE, int PITCH, class E>
__device__ __forceinline__ void load_in(E* s, const E* g, std::int64_t stride, std::int64_t c0,
                                        int cnt) {
  const int t = int(threadIdx.x);
  if (cnt == kFixedThreads && stride == SIZE) {
    const E* src = g + c0 * SIZE;
    E v[SIZE];
#pragma unroll
    for (int it = 0; it < SIZE; ++it) v[it] = src[it * kFixedThreads + t];
#pragma unroll
    for (int it = 0; it < SIZE; ++it) {
      const int idx = it * kFixedThreads + t, p = idx / SIZE, e = idx - p * SIZE;
      s[p * PITCH + e] = v[it];
    }
  } else {
    for (int idx = t; idx < cnt * SIZE; idx += kFixedThreads) {
      const int p = idx / SIZE, e = idx - p * SIZE;
      s[p * PITCH + e] = g[(c0 + p) * stride + e];
    }
  }
}
template <int SIZE, int PITCH, class E>
__device__ __forceinline__ void copy_out(E* g, std::int64_t stride, std::int64_t c0, int cnt,
                                         const E* s) {
  const int t = int(threadIdx.x);
  if (cnt == kFixedThreads && stride == SIZE) {
    E* dst = g + c0 * SIZE;
    E v[SIZE];
#pragma unroll
    for (int it = 0; it < SIZE; ++it) {
      const int idx = it * kFixedThreads + t, p = idx / SIZE, e = idx - p * SIZE;
      v[it] = s[p * PITCH + e];
    }
#pragma unroll
    for (int it = 0; it < SIZE; ++it) dst[it * kFixedThreads + t] = v[it];
  } else {
    for (int idx = t; idx < cnt * SIZE; idx += kFixedThreads) {
      const int p = idx / SIZE, e = idx - p * SIZE;
      g[(c0 + p) * stride + e] = s[p * PITCH + e];
    }
  }
}

template <class T, int NR, int NT, int PATH, bool WANT_Q>
__device__ __forceinline__ void qr_fixed_block(const QrArgs& a) {
  constexpr int M = fixed_rows<T, NR>, N = fixed_rows<T, NT>;
  constexpr int W = int(sizeof(T) / sizeof(float));  // floats per element
  constexpr int HS = 2 * NR * NT, QS = M * N * W, RS = N * N * W;
  constexpr int S1 = (HS > RS ? HS : RS) | 1;  // H in, then this problem's R out
  constexpr int S2 = QS | 1, SP = N | 1;
  constexpr int P = kFixedThreads;
  __shared__ float s_hr[P * S1];
  __shared__ float s_q[WANT_Q ? P * S2 : 1];
  __shared__ int s_p[P * SP];
  const int t = int(threadIdx.x);
  const std::int64_t c0 = std::int64_t(blockIdx.x) * P;
  const int cnt = a.channels - c0 < P ? int(a.channels - c0) : P;
  load_in<HS, S1>(s_hr, reinterpret_cast<const float*>(a.h), 2 * a.h_stride, c0, cnt);
  __syncthreads();
  if (t < cnt) {
    const std::int64_t c = c0 + t;
    float* mine = s_hr + t * S1;  // only this thread touches it until the next barrier
    QrFixed<T, M, N> s;
    qr_fixed_problem<T, NR, NT, PATH>(
        a, c, [mine](int i) { return cf32(mine[2 * i], mine[2 * i + 1]); }, s);
    if (a.z) qr_fixed_qhy<T, NR>(a, c, s);
    if (a.status) a.status[c] = s.status;
    if constexpr (WANT_Q) {
      float* sq = s_q + t * S2;
#pragma unroll
      for (int j = 0; j < N; ++j) {
#pragma unroll
        for (int i = 0; i < M; ++i) put(sq + (j * M + i) * W, s.a[j][i]);
      }
    }
#pragma unroll
    for (int j = 0; j < N; ++j) {
#pragma unroll
      for (int i = 0; i < N; ++i) put(mine + (j * N + i) * W, i <= j ? s.r[j][i] : hd::zero<T>());
    }
#pragma unroll
    for (int j = 0; j < N; ++j) s_p[t * SP + j] = s.perm[j];
  }
  __syncthreads();
  if constexpr (WANT_Q) {
    if (a.q) copy_out<QS, S2>(static_cast<float*>(a.q), a.q_stride * W, c0, cnt, s_q);
  }
  if (a.r) copy_out<RS, S1>(static_cast<float*>(a.r), a.r_stride * W, c0, cnt, s_hr);
  if (a.perm) copy_out<N, SP>(a.perm, N, c0, cnt, s_p);
}
template <class T, int NR, int NT, int PATH>
__global__ void __launch_bounds__(kFixedThreads) qr_fixed_kernel(QrArgs a) {
  qr_fixed_block<T, NR, NT, PATH, true>(a);
}
template <int NR, int NT>
__global__ void __launch_bounds__(kFixedThreads, kFixedBlocksNoQ) qr_fixed_kernel_no_q(QrArgs a) {
  qr_fixed_block<cf32, NR, NT, kFixedDirect, false>(a);
}

template <class T, int NR, int NT, int PATH>
void launch_fixed(const QrArgs& a, cudaStream_t stream) {
  const std::int64_t blocks = (a.channels + kFixedThreads - 1) / kFixedThreads;
  if constexpr (std::is_same_v<T, cf32>) {
    if (!a.q) {
      qr_fixed_kernel_no_q<NR, NT><<<unsigned(blocks), kFixedThreads, 0, stream>>>(a);
      MIMORX_CUDA_CHECK_LAUNCH();
      return;
    }
  }
  qr_fixed_kernel<T, NR, NT, PATH><<<unsigned(blocks), kFixedThreads, 0, stream>>>(a);
  MIMORX_CUDA_CHECK_LAUNCH();
}

// Device attributes, cached: a run of a small batch is a few microseconds of GPU time and
// host work between the caller's timing events and the launch would count in it.
int cached_attribute(cudaDeviceAttr attr, int slot, int device) {
  static std::atomic<int> cache[2][64];
  if (device < 0 || device >= 64) {
    int v = 0;
    MIMORX_CUDA_CHECK(cudaDeviceGetAttribute(&v, attr, device));
    return v;
  }
  int v = cache[slot][device].load(std::memory_order_relaxed);
  if (v == 0) {
    MIMORX_CUDA_CHECK(cudaDeviceGetAttribute(&v, attr, device));
    cache[slot][device].store(v, std::memory_order_relaxed);
  }
  return v;
}
int optin_smem(int device) {
  return cached_attribute(cudaDevAttrMaxSharedMemoryPerBlockOptin, 0, device);
}
int sm_count(int device) { return cached_attribute(cudaDevAttrMultiProcessorCount, 1, device); }

template <class T>
void launch(const QrArgs& a, int device, cudaStream_t stream) {
  const int g = qr_group_size(a.m);
  const std::size_t per_problem =
      std::size_t(slice(a.m * a.n, g) + slice(a.n * a.n, g)) * sizeof(T) +
      std::size_t(g) * a.n * (sizeof(float) + sizeof(int));
  const std::size_t limit = std::size_t(optin_smem(device));
  int problems = int(std::min<std::size_t>(128 / g, limit / per_problem));
  if (problems < 1) {
    throw Unsupported("QrPlan: a " + std::to_string(a.m) + "x" + std::to_string(a.n) +
                      " problem needs " + std::to_string(per_problem) +
                      " bytes of shared memory, more than this GPU's " + std::to_string(limit));
  }
  // Small batches: fewer problems per block so that every SM gets blocks.
  const int sms = sm_count(device);
  while (problems * g > 32 && problems > 1 && (a.channels + problems - 1) / problems < 2 * sms)
    problems /= 2;
  const std::size_t bytes = per_problem * std::size_t(problems);
  if (bytes > 48 * 1024) {
    MIMORX_CUDA_CHECK(cudaFuncSetAttribute(
        qr_kernel<T>, cudaFuncAttributeMaxDynamicSharedMemorySize, int(bytes)));
  }
  const std::int64_t blocks = (a.channels + problems - 1) / problems;
  qr_kernel<T><<<unsigned(blocks), unsigned(problems * g), bytes, stream>>>(a, g);
  MIMORX_CUDA_CHECK_LAUNCH();
}

}  // namespace

void qr_run_cuda(const QrArgs& args, int device, void* stream) {
  MIMORX_CUDA_CHECK(cudaSetDevice(device));
  const cudaStream_t st = mimorx::detail::as_stream(stream);
  if (qr_fixed_dispatch(args, [&]<class T, int NR, int NT, int PATH>() {
        launch_fixed<T, NR, NT, PATH>(args, st);
      })) {
    return;
  }
  if (args.model == QrModel::complex) {
    launch<cf32>(args, device, mimorx::detail::as_stream(stream));
  } else {
    launch<float>(args, device, mimorx::detail::as_stream(stream));
  }
}

}  // namespace mimorx::linalg::detail

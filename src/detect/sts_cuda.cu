// StsPlan on CUDA: one thread per received vector runs sts::search (sts_math.hpp), the code of
// the CPU reference, so that LLRs, bits and node counts equal the CPU's bit for bit. That needs
// the same rounding as the CPU build (-ffp-contract=off): this file is compiled with
// --fmad=false (CMakeLists.txt), so no a * b + c becomes an FMA; division and square root are
// IEEE (nvcc's defaults without --use_fast_math) and se_enter's reciprocal is __frcp_rn.
//
// Kernels, on the given stream: (1) one thread per channel: the real model and sorted QR
// (sphere_math.hpp) in shared memory interleaved across the block's threads, Q, R and the column
// order written to the workspace, and the channel's key log2 det R; (2) a CUB radix sort of the
// channels by that key (several channels only); (3) the search, channels hardest first (smallest
// det R: the longest searches start first, as in the psd lane kernel, sphere_lane_cuda.cu).
// The search kernel either runs one thread per vector to completion, or (refill_lanes, the
// default) keeps one wave of resident threads that each take the next vector from a queue when
// their search ends: node counts per vector differ by orders of magnitude, and a thread per
// vector leaves most of a warp's lanes waiting for its longest search.
//
// Search state: the whole per-vector state (z, and per column the centre, span, partial metric,
// amplitude, path bits, up and low bounds, and lam per bit) lives in shared memory, word w of
// thread t at w * BT + t: the search indexes it by column and bit, which differ from lane to
// lane, and this layout keeps every access free of bank conflicts (local memory would split a
// warp's divergent accesses into separate transactions). The BitTable is copied to shared memory
// once per block (its lookups diverge too). The tree dimension is a template parameter where
// common (4, 8, 16) so that se_enter's interference sum unrolls.
#pragma nv_diag_suppress 554
#include <cooperative_groups.h>

#include <algorithm>
#include <climits>
#include <cub/device/device_radix_sort.cuh>
#include <string>

#include "core/cuda_check.hpp"
#include "detect/sphere_math.hpp"
#include "detect/sts_cuda.hpp"
#include "detect/sts_math.hpp"
#include "mimorx/core/error.hpp"

namespace mimorx::detect::sts {
namespace {

struct KernelArgs {
  BitTable tab;
  Modulation mod;
  int nt, nr, n, L, nbits;
  float clip, capped_llr;
  std::int64_t node_cap;
  bool sorted_qr;
  std::int64_t channels, vectors;
  int vpc;
  const cf32* h;
  std::int64_t h_stride;
  const cf32* y;
  std::int64_t y_stride;
  const float* n0;
  std::int64_t n0_size;
  std::uint8_t* bits;
  float* llrs;
  SearchStats* stats;
  float* q;                  // channels * 2nr * n
  float* r;                  // channels * n * n
  int* perm;                 // channels * n: tree column -> real column
  float* key;                // channels: log2 det R
  int* idx;                  // channels: 0..C-1
  unsigned long long* next;  // the refill kernel's queue head (zeroed before the launch)
};

struct Workspace {
  float *q = nullptr, *r = nullptr, *key_in = nullptr, *key_out = nullptr;
  int *perm = nullptr, *idx_in = nullptr, *idx_out = nullptr;
  unsigned long long* next = nullptr;
  void* temp = nullptr;
  std::size_t temp_bytes = 0, total = 0;
};

constexpr std::size_t align256(std::size_t b) { return (b + 255) / 256 * 256; }

// The workspace carved from `base` (nullptr: sizes only).
Workspace carve_workspace(int m, int n, std::int64_t channels, void* base) {
  Workspace w;
  const auto C = std::size_t(channels);
  if (channels > 1 && channels <= INT_MAX) {
    MIMORX_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(
        nullptr, w.temp_bytes, static_cast<const float*>(nullptr), static_cast<float*>(nullptr),
        static_cast<const int*>(nullptr), static_cast<int*>(nullptr), int(C)));
  }
  auto* p = static_cast<unsigned char*>(base);
  std::size_t off = 0;
  auto carve = [&](std::size_t bytes) {
    void* at = p ? p + off : nullptr;
    off += align256(bytes);
    return at;
  };
  w.q = static_cast<float*>(carve(C * std::size_t(m) * n * sizeof(float)));
  w.r = static_cast<float*>(carve(C * std::size_t(n) * n * sizeof(float)));
  w.perm = static_cast<int*>(carve(C * std::size_t(n) * sizeof(int)));
  w.key_in = static_cast<float*>(carve(C * sizeof(float)));
  w.key_out = static_cast<float*>(carve(C * sizeof(float)));
  w.idx_in = static_cast<int*>(carve(C * sizeof(int)));
  w.idx_out = static_cast<int*>(carve(C * sizeof(int)));
  w.next = static_cast<unsigned long long*>(carve(sizeof(unsigned long long)));
  w.temp = carve(w.temp_bytes);
  w.total = off;
  return w;
}

// One thread per channel: G, then Q, and R interleaved in shared memory (element e of thread t
// at e * T + t), the same arithmetic as StsPlan's CPU path (sphere_math.hpp).
__global__ void qr_kernel(const __grid_constant__ KernelArgs a) {
  extern __shared__ float qsm[];
  const int T = int(blockDim.x);
  const std::int64_t c = blockIdx.x * std::int64_t(T) + threadIdx.x;
  if (c >= a.channels) return;
  const int n = a.n, m = 2 * a.nr;
  float* g = qsm + threadIdx.x;
  float* rr = qsm + std::size_t(m) * n * T + threadIdx.x;
  int perm[sphere::kMaxReal];
  sphere::real_model(a.mod, a.h + c * a.h_stride, a.nr, a.nt, g, T);
  sphere::sorted_qr(g, m, n, rr, perm, T, T, a.sorted_qr);
  float* q = a.q + c * m * n;
  for (int e = 0; e < m * n; ++e) q[e] = g[e * T];
  float* r = a.r + c * n * n;
  float key = 0.f;
  for (int e = 0; e < n * n; ++e) r[e] = rr[e * T];
  for (int k = 0; k < n; ++k) {
    a.perm[c * n + k] = perm[k];
    key += log2f(rr[(k * n + k) * T]);
  }
  if (a.key) {
    a.key[c] = key;
    a.idx[c] = int(c);
  }
}

// The BitTable into the block's shared memory (its lookups diverge).
template <int BT>
__device__ void load_bit_table(const KernelArgs& a, BitTable& tab) {
  constexpr int words = int(sizeof(BitTable) / sizeof(std::uint64_t));
  const auto* src = reinterpret_cast<const std::uint64_t*>(&a.tab);
  auto* dst = reinterpret_cast<std::uint64_t*>(&tab);
  for (int i = int(threadIdx.x); i < words; i += BT) dst[i] = src[i];
  __syncthreads();
}

// Vector of slot s: vector i of the channel of rank s / vpc (V = C vpc, detect::validate).
__device__ void slot_vector(const KernelArgs& a, const int* order, std::int64_t s, std::int64_t& c,
                            std::int64_t& v) {
  const int vpc = a.vpc;
  const std::int64_t rank =
      a.vectors <= INT_MAX ? std::int64_t(unsigned(s) / unsigned(vpc)) : s / vpc;
  c = order ? order[rank] : rank;
  v = c * vpc + (s - rank * vpc);
}

// z = Q^T y of vector v into the state, and the search parameters of its channel c.
template <int N, int BT>
__device__ float begin_vector(const KernelArgs& a, const BitTable& tab, std::int64_t c,
                              std::int64_t v, InterleavedState<BT>& st, Params& p) {
  const int n = N > 0 ? N : a.n, nr = a.nr, m = 2 * nr;
  const cf32* y = a.y + v * a.y_stride;
  const float* q = a.q + c * m * n;
  for (int k = 0; k < n; ++k) st.zw(k) = sphere::project(q, m, nr, y, k);
  const float n0 = a.n0[a.n0_size == 1 ? 0 : v];
  p.n = n;
  p.L = a.L;
  p.nbits = a.nbits;
  p.r = a.r + c * n * n;
  p.perm = a.perm + c * n;
  p.tab = &tab;
  p.clip_n0 = a.clip * n0;
  p.node_cap = a.node_cap;
  return n0;
}

template <int BT>
__device__ void finish_vector(const KernelArgs& a, const Params& p, const Outcome& o,
                              InterleavedState<BT>& st, std::int64_t v, float n0) {
  const int per = a.nbits;
  write_outputs(p, o, st, n0, a.clip, a.capped_llr, a.bits + v * per,
                a.llrs ? a.llrs + v * per : nullptr);
  if (a.stats) a.stats[v] = SearchStats{o.nodes, o.leaves, o.updates, o.capped};
}

// One thread per vector, run to completion. N: the real dimension when known at compile time
// (0: any). order: channel of each rank (nullptr: the channels in their own order).
template <int N, int BT>
__global__ void __launch_bounds__(BT)
    sts_kernel(const __grid_constant__ KernelArgs a, const int* order) {
  extern __shared__ std::uint64_t sts_smem[];
  __shared__ BitTable tab;
  load_bit_table<BT>(a, tab);
  const std::int64_t s = blockIdx.x * std::int64_t(BT) + threadIdx.x;
  if (s >= a.vectors) return;
  std::int64_t c = 0, v = 0;
  slot_vector(a, order, s, c, v);
  InterleavedState<BT> st(sts_smem, int(threadIdx.x), N > 0 ? N : a.n);
  Params p;
  const float n0 = begin_vector<N, BT>(a, tab, c, v, st, p);
  const Outcome o = search<N>(p, st);
  finish_vector<BT>(a, p, o, st, v, n0);
}

// One wave of resident threads; a thread whose search ends takes the next slot from the queue
// (one atomic per group of threads that ask together), so that a warp's lanes stay busy while
// its longest search runs. Slots are handed out in rank order: hardest channels first.
template <int N, int BT>
__global__ void __launch_bounds__(BT)
    sts_refill_kernel(const __grid_constant__ KernelArgs a, const int* order) {
  namespace cg = cooperative_groups;
  extern __shared__ std::uint64_t sts_smem[];
  __shared__ BitTable tab;
  load_bit_table<BT>(a, tab);
  InterleavedState<BT> st(sts_smem, int(threadIdx.x), N > 0 ? N : a.n);
  Params p;
  Outcome o;
  int k = 0;
  std::int64_t v = -1;
  float n0 = 0.f;
  for (;;) {
    if (v < 0) {
      const cg::coalesced_group g = cg::coalesced_threads();
      unsigned long long base = 0;
      if (g.thread_rank() == 0) base = atomicAdd(a.next, (unsigned long long)g.size());
      base = g.shfl(base, 0);
      const std::int64_t s = std::int64_t(base + g.thread_rank());
      if (s >= a.vectors) return;
      std::int64_t c = 0;
      slot_vector(a, order, s, c, v);
      n0 = begin_vector<N, BT>(a, tab, c, v, st, p);
      start<N>(p, st, o, k);
    }
    if (step<N>(p, st, o, k)) {
      finish_vector<BT>(a, p, o, st, v, n0);
      v = -1;
    }
  }
}

template <int N, int BT>
void launch(const KernelArgs& a, const int* order, cudaStream_t st) {
  const std::size_t smem = std::size_t(state_words(a.n, a.nbits)) * BT * sizeof(float);
  const std::int64_t blocks = (a.vectors + BT - 1) / BT;
  require(blocks <= INT_MAX, "vectors",
          std::to_string(a.vectors) + " received vectors in one call; at most " +
              std::to_string(std::int64_t(INT_MAX) * BT));
  if (!a.next) {
    MIMORX_CUDA_CHECK(cudaFuncSetAttribute(sts_kernel<N, BT>,
                                           cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem)));
    sts_kernel<N, BT><<<unsigned(blocks), BT, smem, st>>>(a, order);
    MIMORX_CUDA_CHECK_LAUNCH();
    return;
  }
  auto kernel = sts_refill_kernel<N, BT>;
  MIMORX_CUDA_CHECK(
      cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem)));
  int device = 0, sms = 0, per_sm = 0;
  MIMORX_CUDA_CHECK(cudaGetDevice(&device));
  MIMORX_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  MIMORX_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, BT, smem));
  const std::int64_t wave = std::int64_t(std::max(per_sm, 1)) * sms;
  MIMORX_CUDA_CHECK(cudaMemsetAsync(a.next, 0, sizeof(unsigned long long), st));
  kernel<<<unsigned(std::min(blocks, wave)), BT, smem, st>>>(a, order);
  MIMORX_CUDA_CHECK_LAUNCH();
}

// 128 threads per block where the block's state fits in 64 KB (up to 4 blocks per SM); 64 for
// the largest states (8x8 64-QAM and up).
template <int N>
void launch_for_block(const KernelArgs& a, const int* order, cudaStream_t st) {
  if (std::size_t(state_words(a.n, a.nbits)) * 128 * sizeof(float) <= 64 * 1024)
    return launch<N, 128>(a, order, st);
  return launch<N, 64>(a, order, st);
}

}  // namespace

std::size_t sts_cuda_workspace_bytes(Modulation mod, int nt, int nr, std::int64_t channels) {
  return carve_workspace(2 * nr, sphere::real_dim(mod, nt), channels, nullptr).total;
}

void sts_run_cuda(const StsCudaArgs& a, void* stream) {
  MIMORX_CUDA_CHECK(cudaSetDevice(a.device));
  cudaStream_t st = mimorx::detail::as_stream(stream);
  const int n = sphere::real_dim(a.mod, a.nt), m = 2 * a.nr;
  const Workspace w = carve_workspace(m, n, a.channels, a.workspace);
  require(a.workspace && w.total <= a.workspace_bytes, "workspace",
          "sts workspace too small (internal error)");
  const bool sort = a.channels > 1 && a.channels <= INT_MAX;
  KernelArgs k{};
  make_bit_table(a.mod, a.nt, k.tab);
  k.mod = a.mod;
  k.nt = a.nt;
  k.nr = a.nr;
  k.n = n;
  k.L = axis_levels(a.mod);
  k.nbits = a.nt * bits_per_symbol(a.mod);
  k.clip = a.clip;
  k.capped_llr = a.capped_llr;
  k.node_cap = a.node_cap;
  k.sorted_qr = a.sorted_qr;
  k.channels = a.channels;
  k.vectors = a.vectors;
  k.vpc = a.vectors_per_channel;
  k.h = a.h;
  k.h_stride = a.h_stride;
  k.y = a.y;
  k.y_stride = a.y_stride;
  k.n0 = a.n0;
  k.n0_size = a.n0_size;
  k.bits = a.bits;
  k.llrs = a.llrs;
  k.stats = a.stats;
  k.q = w.q;
  k.r = w.r;
  k.perm = w.perm;
  k.key = sort ? w.key_in : nullptr;
  k.idx = sort ? w.idx_in : nullptr;
  k.next = a.refill_lanes ? w.next : nullptr;
  {
    const std::size_t per_thread = 4 * std::size_t(m * n + n * n);
    const int threads =
        int(std::max<std::size_t>(1, std::min<std::size_t>(48 * 1024 / per_thread, 64)));
    const std::int64_t blocks = (a.channels + threads - 1) / threads;
    require(blocks <= INT_MAX, "channels", std::to_string(a.channels) + " channels in one call");
    qr_kernel<<<unsigned(blocks), threads, per_thread * threads, st>>>(k);
    MIMORX_CUDA_CHECK_LAUNCH();
  }
  const int* order = nullptr;
  if (sort) {
    std::size_t temp_bytes = w.temp_bytes;
    MIMORX_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(
        w.temp, temp_bytes, w.key_in, w.key_out, w.idx_in, w.idx_out, int(a.channels), 0, 32, st));
    order = w.idx_out;
  }
  switch (n) {
    case 4:
      return launch_for_block<4>(k, order, st);
    case 8:
      return launch_for_block<8>(k, order, st);
    case 16:
      return launch_for_block<16>(k, order, st);
    default:
      return launch_for_block<0>(k, order, st);
  }
}

}  // namespace mimorx::detect::sts

// The PSD with one lane per received vector (SphereConfig::lanes = 1): every thread runs the
// depth-first Schnorr-Euchner search of sphere_se.hpp (an expansion on every level, one path,
// children in increasing distance by the zig-zag enumeration) on its own vector. Why: the team
// kernel (sphere_cuda.cu) spends its instructions on team bookkeeping, sorts and idle lanes, and
// visits 4-5x the nodes of a depth-first search (docs/psd.md); a lane costs a few dozen
// instructions per node.
//
// Per-thread state (z, and per column the centre, the visited span, the partial metric and the
// fixed amplitude) lives in shared memory, word w of thread t at w * BT + t: the columns differ
// from lane to lane, and this layout keeps every access free of bank conflicts whatever the
// column. One thread per vector, run to completion. Two ways of keeping a warp's lanes busy
// while its searches end at different times were measured and dropped (docs/psd.md): persistent
// warps that refill idle lanes from a queue, and passes with doubling step budgets that save
// interrupted searches and resume them compacted. Both cut the idle lanes but were slower: the
// batch time is bounded by the longest single searches, which both serialised behind the rest.
//
// Channels go hardest first: the longest searches come mostly from channels with a small det R
// (more lattice points within a radius set by the noise); the kernel takes the channels in
// increasing log det R (one sort of C keys), so that their searches start first.
#pragma nv_diag_suppress 554
#include <algorithm>
#include <climits>
#include <cub/device/device_radix_sort.cuh>

#include "core/cuda_check.hpp"
#include "detect/sphere_internal.hpp"
#include "detect/sphere_output.cuh"
#include "detect/sphere_se.hpp"

namespace mimorx::detect::sphere {
namespace {

constexpr int kDefaultLaneBlock = 128;

// Words per thread: z (n), w (n), span (n), pm (n + 1), amp (n).
__host__ __device__ constexpr int lane_words(int n) { return 5 * n + 1; }

template <int BT>
struct SharedLaneState {
  float* f;  // word 0 of this thread
  int n;
  __device__ float z(int k) const { return f[k * BT]; }
  __device__ float& zw(int k) { return f[k * BT]; }
  __device__ float& w(int k) { return f[(n + k) * BT]; }
  __device__ int& span(int k) { return reinterpret_cast<int*>(f)[(2 * n + k) * BT]; }
  __device__ float& pm(int k) { return f[(3 * n + k) * BT]; }
  __device__ float& amp(int k) { return f[(4 * n + 1 + k) * BT]; }
};

// key[c] = log2 det R of channel c (the sum of log2 R_kk), idx[c] = c.
__global__ void lane_key_kernel(const __grid_constant__ PsdCudaArgs a, float* key, int* idx) {
  const std::int64_t c = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x;
  if (c >= a.channels) return;
  const int n = a.sched.n;
  const float* r = a.r + c * n * n;
  float k = 0.f;
  for (int i = 0; i < n; ++i) k += log2f(r[i * n + i]);
  key[c] = k;
  idx[c] = int(c);
}

// The lane workspace: keys and channel indices (in and out of the sort), then CUB's storage.
struct LaneWorkspace {
  float *key_in = nullptr, *key_out = nullptr;
  int *idx_in = nullptr, *idx_out = nullptr;
  void* temp = nullptr;
  std::size_t temp_bytes = 0, total = 0;
};

constexpr std::size_t align256(std::size_t b) { return (b + 255) / 256 * 256; }

LaneWorkspace lane_workspace(std::int64_t channels, void* base) {
  LaneWorkspace w;
  const auto C = std::size_t(channels);
  MIMORX_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(
      nullptr, w.temp_bytes, static_cast<const float*>(nullptr), static_cast<float*>(nullptr),
      static_cast<const int*>(nullptr), static_cast<int*>(nullptr), int(C)));
  auto* p = static_cast<unsigned char*>(base);
  std::size_t off = 0;
  auto carve = [&](std::size_t bytes) {
    void* q = p ? p + off : nullptr;
    off += align256(bytes);
    return q;
  };
  w.key_in = static_cast<float*>(carve(C * sizeof(float)));
  w.key_out = static_cast<float*>(carve(C * sizeof(float)));
  w.idx_in = static_cast<int*>(carve(C * sizeof(int)));
  w.idx_out = static_cast<int*>(carve(C * sizeof(int)));
  w.temp = carve(w.temp_bytes);
  w.total = off;
  return w;
}

// Writes vector v's bits, symbols, metric and counters from its search outcome.
__device__ void write_output(const PsdCudaArgs& a, const unsigned char* lbits, std::int64_t v,
                             std::int64_t c, const PsdOutcome& o) {
  const bool bpsk = a.mod == Modulation::bpsk;
  const int n = a.sched.n, L = a.sched.q, nt = a.nt;
  const int* ip = a.inv_perm + c * n;
  const int mb = bits_per_symbol(a.mod);
  const float sc = qam_scale(a.mod);
  cf32 x[8];
  for (int t = 0; t < nt; ++t) {
    std::uint8_t* out = a.bits + (v * nt + t) * mb;
    const int lre = level_of(o.best, ip[t]);
    if (bpsk) {
      out[0] = std::uint8_t(lre == 0 ? 1 : 0);
      x[t] = cf32(amplitude(lre, 2) * sc, amplitude(lre, 2) * sc);
    } else {
      const int lim = level_of(o.best, ip[nt + t]);
      store_stream_bits(out, mb, lbits[lre], lbits[lim]);
      x[t] = cf32(amplitude(lre, L) * sc, amplitude(lim, L) * sc);
    }
    if (a.symbols) a.symbols[v * nt + t] = x[t];
  }
  if (a.metrics)
    a.metrics[v] = residual_metric(a.h + c * a.h_stride, a.nr, nt, a.y + v * a.y_stride, x);
  if (a.stats) a.stats[v] = SearchStats{o.nodes, o.leaves, o.updates, o.capped};
}

// N: the tree dimension when known at compile time (0: any). BT: threads per block. order:
// channel of each rank (nullptr: channels in their own order).
template <int N, int BT>
__global__ void __launch_bounds__(BT)
    psd_lane_kernel(const __grid_constant__ PsdCudaArgs a, const int* order) {
  extern __shared__ float lane_smem[];
  __shared__ unsigned char lbits[16];
  fill_level_bits(a.mod, a.sched.q, lbits);
  const int n = N > 0 ? N : a.sched.n, L = a.sched.q, nr = a.nr, m = 2 * nr;
  // Slot s serves vector i of the channel of rank s / vpc (V = C vpc, detect::validate).
  const std::int64_t s = blockIdx.x * std::int64_t(BT) + threadIdx.x;
  if (s >= a.vectors) return;
  const int vpc = a.vectors_per_channel;
  const std::int64_t rank =
      a.vectors <= INT_MAX ? std::int64_t(unsigned(s) / unsigned(vpc)) : s / vpc;
  const std::int64_t c = order ? order[rank] : rank;
  const std::int64_t v = c * vpc + (s - rank * vpc);
  SharedLaneState<BT> st{lane_smem + threadIdx.x, n};
  const float* __restrict__ r = a.r + c * n * n;
  const cf32* y = a.y + v * a.y_stride;
  for (int k = 0; k < n; ++k) st.zw(k) = project(a.q + c * n * m, m, nr, y, k);
  float d2 = inf_metric();
  std::uint64_t best = 0;
  if (a.babai) best = se_babai(r, st, n, L, &d2);
  // phases bit 3 (benchmark): the per-vector set-up and output without the search.
  const PsdOutcome o =
      a.phases & 8 ? PsdOutcome{} : schnorr_euchner<N>(r, st, n, L, d2, best, a.node_cap);
  write_output(a, lbits, v, c, o);
}

template <int N, int BT>
void launch_lanes(const PsdCudaArgs& a, const int* order, cudaStream_t st) {
  const std::size_t smem = std::size_t(lane_words(a.sched.n)) * BT * sizeof(float);
  const std::int64_t blocks = (a.vectors + BT - 1) / BT;
  require(blocks <= INT_MAX, "vectors",
          std::to_string(a.vectors) + " received vectors in one call; at most " +
              std::to_string(std::int64_t(INT_MAX) * BT));
  MIMORX_CUDA_CHECK(cudaFuncSetAttribute(psd_lane_kernel<N, BT>,
                                         cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem)));
  psd_lane_kernel<N, BT><<<unsigned(blocks), BT, smem, st>>>(a, order);
  MIMORX_CUDA_CHECK_LAUNCH();
}

template <int BT>
void launch_lanes_for(const PsdCudaArgs& a, const int* order, cudaStream_t st) {
  switch (a.sched.n) {
    case 4:
      return launch_lanes<4, BT>(a, order, st);
    case 8:
      return launch_lanes<8, BT>(a, order, st);
    default:
      return launch_lanes<0, BT>(a, order, st);
  }
}

}  // namespace

std::size_t psd_lane_workspace_bytes(std::int64_t channels) {
  // No order for one channel, nor beyond what the sort indexes (int); both are correct unordered.
  return channels > 1 && channels <= INT_MAX ? lane_workspace(channels, nullptr).total : 0;
}

void psd_run_lanes_cuda(const PsdCudaArgs& a, void* stream) {
  cudaStream_t st = mimorx::detail::as_stream(stream);
  const int* order = nullptr;
  if (a.lane_ws && a.channels > 1 && a.channels <= INT_MAX) {
    const LaneWorkspace w = lane_workspace(a.channels, a.lane_ws);
    require(w.total <= a.lane_ws_bytes, "workspace", "lane workspace too small (internal error)");
    const int threads = 256;
    lane_key_kernel<<<unsigned((a.channels + threads - 1) / threads), threads, 0, st>>>(a, w.key_in,
                                                                                        w.idx_in);
    MIMORX_CUDA_CHECK_LAUNCH();
    std::size_t temp_bytes = w.temp_bytes;
    MIMORX_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(
        w.temp, temp_bytes, w.key_in, w.key_out, w.idx_in, w.idx_out, int(a.channels), 0, 32, st));
    order = w.idx_out;
  }
  switch (a.lane_block ? a.lane_block : kDefaultLaneBlock) {
    case 64:
      return launch_lanes_for<64>(a, order, st);
    case 256:
      return launch_lanes_for<256>(a, order, st);
    default:
      return launch_lanes_for<128>(a, order, st);
  }
}

}  // namespace mimorx::detect::sphere

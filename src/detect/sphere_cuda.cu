// The Parallel Sphere Detector on CUDA (Jozsa et al., ICCS 2013). One team of TEAM threads
// (a logical warp of 8 or 32 lanes) searches one received vector at a time; several teams share
// a block. Each non-leaf expansion level keeps its sorted (metric, partial vector) buffer in the
// team's shared memory; the radius d^2 and the per-level positions (the paper's stack) are
// uniform across the team, so the control flow of psd_search (sphere_math.hpp) runs in lockstep.
// core/tensor.hpp's View<const T> -> View<const T> conversion operator (reached through
// detect/common.hpp) draws nvcc warning 554 "will not be called"; it is harmless here.
#pragma nv_diag_suppress 554
#include <algorithm>
#include <cub/cub.cuh>

#include "core/cuda_check.hpp"
#include "detect/sphere_internal.hpp"

namespace mimorx::detect::sphere {
namespace {

constexpr int kBlockThreads = 128;

__host__ __device__ constexpr std::size_t align16(std::size_t b) { return (b + 15) / 16 * 16; }

// One team's shared memory, in order: sort storage, R | z | inv_perm, then for every non-leaf
// level its vectors (uint64) and metrics (float).
template <int TEAM, int IPT>
struct Layout {
  using Sort = cub::WarpMergeSort<float, IPT, TEAM, std::uint64_t>;
  static constexpr std::size_t sort_bytes = align16(sizeof(typename Sort::TempStorage));
  static __host__ __device__ std::size_t mat_bytes(int n) {
    return align16(4 * std::size_t(n * n + 2 * n));
  }
  static __host__ __device__ std::size_t team_bytes(const PsdSchedule& s) {
    return sort_bytes + mat_bytes(s.n) + std::size_t(s.buf_bytes);
  }
};

struct MinPair {
  float m;
  std::uint64_t v;
};
struct MinPairOp {
  __device__ MinPair operator()(const MinPair& a, const MinPair& b) const {
    return (b.m < a.m || (b.m == a.m && b.v < a.v)) ? b : a;
  }
};
struct Less {
  __device__ bool operator()(float a, float b) const { return a < b; }
};

template <int TEAM, int IPT>
struct GpuTeam {
  using L = Layout<TEAM, IPT>;
  typename L::Sort::TempStorage* sort_tmp;
  const PsdSchedule* s;
  const float* r;
  const float* z;
  unsigned char* buf;  // level x: vectors at buf + buf_off[x], metrics after exp[x] of them
  unsigned mask;
  int lane;
  bool lazy;  // lazy selection instead of a full sort (docs/psd.md, "Ordering")

  __device__ float* keys(int x) const {
    return reinterpret_cast<float*>(buf + s->buf_off[x] + 8 * s->exp[x]);
  }
  __device__ std::uint64_t* vecs(int x) const {
    return reinterpret_cast<std::uint64_t*>(buf + s->buf_off[x]);
  }
  __device__ float key(int x, int i) const { return keys(x)[i]; }

  __device__ MinPair team_min(MinPair b) const {
    typename cub::WarpReduce<MinPair, TEAM>::TempStorage unused;
    b = cub::WarpReduce<MinPair, TEAM>(unused).Reduce(b, MinPairOp{});
    b.m = __shfl_sync(mask, b.m, 0, TEAM);
    b.v = __shfl_sync(mask, static_cast<unsigned long long>(b.v), 0, TEAM);
    return b;
  }

  __device__ int take(int x, int pos, int cnt, int paths, float d2) const {
    int np = 0;
    if (!lazy) {
      while (np < paths && pos + np < cnt && key(x, pos + np) < d2) ++np;
      return np;
    }
    // Lazy selection: the buffer is left unsorted and each batch's best entries are found by
    // team argmin reductions and swapped to the front, which orders exactly the prefix that the
    // search consumes before the radius prunes the rest.
    float* kx = keys(x);
    std::uint64_t* vx = vecs(x);
    for (; np < paths && pos + np < cnt; ++np) {
      const int lo = pos + np;
      MinPair b{inf_metric(), ~0ull};
      for (int i = lo + lane; i < cnt; i += TEAM)
        b = MinPairOp{}(b, MinPair{kx[i], std::uint64_t(i)});
      b = team_min(b);
      if (!(b.m < d2)) break;
      const int i = int(b.v);
      if (lane == 0 && i != lo) {
        const float tk = kx[lo];
        kx[lo] = kx[i];
        kx[i] = tk;
        const std::uint64_t tv = vx[lo];
        vx[lo] = vx[i];
        vx[i] = tv;
      }
      __syncwarp(mask);
    }
    return np;
  }

  __device__ float child(int x, int first, int y, std::int64_t c, float d2,
                         std::uint64_t* v) const {
    const int lp = x < 0 ? s->n + 1 : s->lvl[x];
    const int d = lp - s->lvl[y];
    const int p = first + int(c >> (d * s->log2q));
    const float pm = x < 0 ? 0.f : keys(x)[p];
    const std::uint64_t pv = x < 0 ? 0 : vecs(x)[p];
    const int off = int(c & (s->children_per_parent[y] - 1));
    return child_metric(r, z, s->n, s->q, s->log2q, pv, pm, lp, s->lvl[y], off, d2, v);
  }

  __device__ int expand_sort(int x, int first, int np, int y, float d2) {
    if (lazy) {
      const int nch = int(np * s->children_per_parent[y]);
      for (int c = lane; c < nch; c += TEAM) {
        std::uint64_t v;
        keys(y)[c] = child(x, first, y, c, d2, &v);
        vecs(y)[c] = v;
      }
      __syncwarp(mask);
      return nch;
    }
    float k[IPT];
    std::uint64_t v[IPT];
    const std::int64_t nch = np * s->children_per_parent[y];
#pragma unroll
    for (int i = 0; i < IPT; ++i) {
      const int c = lane * IPT + i;
      if (c < nch) {
        k[i] = child(x, first, y, c, d2, &v[i]);
      } else {
        k[i] = inf_metric();
        v[i] = 0;
      }
    }
    __syncwarp(mask);
    typename L::Sort(*sort_tmp).Sort(k, v, Less());
    int count = 0;
#pragma unroll
    for (int i = 0; i < IPT; ++i) {
      const int idx = lane * IPT + i;
      if (idx < nch) {
        keys(y)[idx] = k[i];
        vecs(y)[idx] = v[i];
      }
      count += __popc(__ballot_sync(mask, k[i] < d2) & mask);
    }
    __syncwarp(mask);
    return count;
  }

  __device__ void expand_leaves(int x, int first, int np, int y, float d2, float* m,
                                std::uint64_t* v) const {
    MinPair best{inf_metric(), 0};
    const std::int64_t nch = np * s->children_per_parent[y];
    for (std::int64_t c = lane; c < nch; c += TEAM) {
      std::uint64_t cv;
      const float cm = child(x, first, y, c, d2, &cv);
      best = MinPairOp{}(best, MinPair{cm, cv});
    }
    best = team_min(best);
    *m = best.m;
    *v = best.v;
  }
};

__global__ void qr_kernel(const __grid_constant__ PsdCudaArgs a) {
  const std::int64_t c = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x;
  if (c >= a.channels) return;
  const int n = a.sched.n, m = 2 * a.nr;
  float* q = a.q + c * m * n;
  int perm[kMaxReal];
  real_model(a.mod, a.h + c * a.h_stride, a.nr, a.nt, q);
  sorted_qr(q, m, n, a.r + c * n * n, perm);
  for (int k = 0; k < n; ++k) a.inv_perm[c * n + perm[k]] = k;
}

template <int TEAM, int IPT>
__global__ void __launch_bounds__(kBlockThreads)
    psd_kernel(const __grid_constant__ PsdCudaArgs a, std::size_t team_bytes) {
  using Ly = Layout<TEAM, IPT>;
  extern __shared__ __align__(16) unsigned char smem[];
  const int team_in_block = int(threadIdx.x) / TEAM;
  const int lane = int(threadIdx.x) % TEAM;
  const unsigned mask =
      TEAM == 32 ? 0xffffffffu : (((1u << TEAM) - 1u) << ((int(threadIdx.x) % 32) / TEAM * TEAM));
  const PsdSchedule& s = a.sched;
  const int n = s.n, nr = a.nr, nt = a.nt, m = 2 * nr, L = s.q;

  unsigned char* base = smem + team_in_block * team_bytes;
  GpuTeam<TEAM, IPT> team;
  team.sort_tmp = reinterpret_cast<typename Ly::Sort::TempStorage*>(base);
  float* R = reinterpret_cast<float*>(base + Ly::sort_bytes);
  float* z = R + n * n;
  int* ip = reinterpret_cast<int*>(z + n);
  team.buf = base + Ly::sort_bytes + Ly::mat_bytes(n);
  team.s = &s;
  team.r = R;
  team.z = z;
  team.mask = mask;
  team.lane = lane;
  team.lazy = a.lazy_select;

  PsdSearchParams p;
  p.nlev = s.nlev;
  p.lvl = s.lvl;
  p.paths = s.paths;
  p.nodes_per_parent = s.nodes_per_parent;
  p.children_per_parent = s.children_per_parent;
  p.node_cap = a.node_cap;
  const int mb = bits_per_symbol(a.mod);

  QueueCursor queue(a.vectors, a.chunk);
  for (;;) {
    // Persistent teams take chunks of vectors from a queue: the work per vector varies by orders
    // of magnitude at low SNR, and a team that finishes early starts the next chunk at once.
    // Chunks, not single vectors: one atomic per vector on one address serialised at about one
    // per clock in L2 and bounded 2x2 QPSK at ~1.1 G vectors/s (first H100 run). Strided
    // chunks (QueueCursor): contiguous ones queued a bad channel's vectors in one team and made
    // 4x4 64-QAM at 20 dB 1.5x slower (second run).
    if (queue.exhausted()) {
      int cid = 0;
      if (lane == 0) cid = atomicAdd(a.counter, 1);
      cid = __shfl_sync(mask, cid, 0, TEAM);
      if (!queue.start(cid)) break;
    }
    const std::int64_t v = queue.pop();
    const std::int64_t c = v / a.vectors_per_channel;
    const cf32* y = a.y + v * a.y_stride;
    for (int i = lane; i < n * n; i += TEAM) R[i] = a.r[c * n * n + i];
    for (int k = lane; k < n; k += TEAM) {
      z[k] = project(a.q + c * m * n, m, nr, y, k);
      ip[k] = a.inv_perm[c * n + k];
    }
    __syncwarp(mask);
    float d2 = inf_metric();
    std::uint64_t best = 0;
    if (a.babai) best = babai_point(R, z, n, L, &d2);
    const PsdOutcome o = psd_search(team, p, d2, best);
    if (lane < nt) {
      cf32 sym;
      write_stream(a.mod, nt, lane, o.best, ip, a.bits + (v * nt + lane) * mb, &sym);
      if (a.symbols) a.symbols[v * nt + lane] = sym;
    }
    if (lane == 0) {
      if (a.metrics) {
        cf32 x[8];
        for (int t = 0; t < nt; ++t) write_stream(a.mod, nt, t, o.best, ip, nullptr, &x[t]);
        a.metrics[v] = residual_metric(a.h + c * a.h_stride, nr, nt, y, x);
      }
      if (a.stats) a.stats[v] = SearchStats{o.nodes, o.leaves, o.updates, o.capped};
    }
    __syncwarp(mask);
  }
}

template <int TEAM, int IPT>
void launch(const PsdCudaArgs& a, cudaStream_t st) {
  const std::size_t team_bytes = Layout<TEAM, IPT>::team_bytes(a.sched);
  int dev_limit = 0;
  MIMORX_CUDA_CHECK(
      cudaDeviceGetAttribute(&dev_limit, cudaDevAttrMaxSharedMemoryPerBlockOptin, a.device));
  int teams = kBlockThreads / TEAM;
  while (teams > 1 && team_bytes * teams > std::size_t(dev_limit)) --teams;
  if (team_bytes > std::size_t(dev_limit)) {
    throw Unsupported("levels: the PSD needs " + std::to_string(team_bytes) +
                      " bytes of shared memory per vector; this GPU has " +
                      std::to_string(dev_limit) + " per block");
  }
  const std::size_t smem = team_bytes * teams;
  auto kernel = psd_kernel<TEAM, IPT>;
  MIMORX_CUDA_CHECK(
      cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem)));
  int per_sm = 0;
  MIMORX_CUDA_CHECK(
      cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, teams * TEAM, smem));
  int sms = 0;
  MIMORX_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, a.device));
  const std::int64_t needed = (a.vectors + teams - 1) / teams;
  const int blocks = int(std::max<std::int64_t>(
      1, std::min<std::int64_t>(needed, std::int64_t(std::max(per_sm, 1)) * sms)));
  // About four chunks per team keep the load balanced; at most 32 vectors per chunk.
  PsdCudaArgs b = a;
  b.chunk = int(std::clamp<std::int64_t>(a.vectors / (std::int64_t(blocks) * teams * 4), 1, 32));
  kernel<<<blocks, teams * TEAM, smem, st>>>(b, team_bytes);
  MIMORX_CUDA_CHECK_LAUNCH();
}

}  // namespace

void psd_run_cuda(const PsdCudaArgs& a, void* stream) {
  MIMORX_CUDA_CHECK(cudaSetDevice(a.device));
  cudaStream_t st = mimorx::detail::as_stream(stream);
  MIMORX_CUDA_CHECK(cudaMemsetAsync(a.counter, 0, sizeof(int), st));
  {
    const int threads = 64;
    const int blocks = int((a.channels + threads - 1) / threads);
    qr_kernel<<<blocks, threads, 0, st>>>(a);
    MIMORX_CUDA_CHECK_LAUNCH();
  }
  // Team width: a full warp from 16-QAM and n >= 8 up (the first H100 sweep: 4x4 16-QAM 10 dB
  // 4.8 ms with 32 lanes vs 6.7 ms with 8, 64-QAM 58 vs 112 ms), else 8 lanes so that a warp
  // serves 4 vectors (4x4 QPSK 0.67 vs 2.0 ms, 2x2 16-QAM 0.54 vs 1.15 ms). docs/psd.md.
  const int cap = a.sched.capacity;
  int team =
      a.team_override ? a.team_override : ((a.sched.q >= 4 && a.sched.n >= 8) || cap > 64 ? 32 : 8);
  if (cap > 64) team = 32;
  if (team == 8) {
    switch (std::max(cap / 8, 1)) {
      case 1:
        return launch<8, 1>(a, st);
      case 2:
        return launch<8, 2>(a, st);
      case 4:
        return launch<8, 4>(a, st);
      default:
        return launch<8, 8>(a, st);
    }
  }
  switch (std::max(cap / 32, 1)) {
    case 1:
      return launch<32, 1>(a, st);
    case 2:
      return launch<32, 2>(a, st);
    case 4:
      return launch<32, 4>(a, st);
    case 8:
      return launch<32, 8>(a, st);
    default:
      return launch<32, 16>(a, st);
  }
}

}  // namespace mimorx::detect::sphere

// The Parallel Sphere Detector on CUDA (Jozsa et al., ICCS 2013). One team of TEAM threads
// (a logical warp of 8, 16 or 32 lanes) searches one received vector at a time; several teams
// share a block. Each non-leaf expansion level keeps its sorted (metric, partial vector) buffer
// in the team's shared memory; the radius d^2 and the per-level positions (the paper's stack)
// are uniform across the team, so the control flow of psd_search (sphere_math.hpp) runs in
// lockstep. An expansion: the parents' targets (one interference sum per parent and new column,
// spread over the lanes), each lane's children (IPT per lane, a few multiply-adds per level),
// a bitonic sort of (metric, child index) in registers through warp shuffles, and the sorted
// entries stored to the level's buffer; a leaf expansion ends in a shuffle argmin instead.
// core/tensor.hpp's View<const T> -> View<const T> conversion operator (reached through
// detect/common.hpp) draws nvcc warning 554 "will not be called"; it is harmless here.
#pragma nv_diag_suppress 554
#include <algorithm>
#include <climits>

#include "core/cuda_check.hpp"
#include "detect/sphere_internal.hpp"
#include "detect/sphere_output.cuh"

namespace mimorx::detect::sphere {
namespace {

constexpr int kBlockThreads = 128;
constexpr int kDefaultMinBlocks = 8;

__host__ __device__ constexpr std::size_t align16(std::size_t b) { return (b + 15) / 16 * 16; }

// One team's shared memory, in order: R | z | inv_perm, the parents' targets of the current
// expansion, then for every non-leaf level its vectors (uint64) and metrics (float). Mirrored by
// psd_team_shared_bytes (sphere_params.cpp).
__host__ __device__ std::size_t mat_bytes(int n) { return align16(4 * std::size_t(n * n + 2 * n)); }
__host__ __device__ std::size_t tgt_bytes(const PsdSchedule& s) {
  return align16(4 * std::size_t(s.tgt_floats));
}
__host__ __device__ std::size_t team_bytes(const PsdSchedule& s) {
  return mat_bytes(s.n) + tgt_bytes(s) + std::size_t(s.buf_bytes);
}

// Sorts the team's TEAM * IPT (metric, index) pairs ascending in the order of `precedes`;
// element e = i * TEAM + lane is k[i], id[i] of lane `lane` (striped). Only the first `live`
// elements matter: the merge stages stop at the first power of two >= live, whose block 0 is
// then sorted (the elements beyond it are padding).
template <int TEAM, int IPT>
__device__ void bitonic_sort(float (&k)[IPT], int (&id)[IPT], int lane, unsigned mask, int live) {
  constexpr int N = TEAM * IPT;
#pragma unroll
  for (int size = 2; size <= N; size <<= 1) {
    if ((size >> 1) >= live) break;
#pragma unroll
    for (int j = size >> 1; j > 0; j >>= 1) {
      if (j >= TEAM) {
        const int jr = j / TEAM;
#pragma unroll
        for (int i = 0; i < IPT; ++i) {
          if ((i & jr) == 0) {
            const int i2 = i | jr;
            const bool asc = ((i * TEAM + lane) & size) == 0;
            if (precedes(k[i2], id[i2], k[i], id[i]) == asc) {
              const float tk = k[i];
              k[i] = k[i2];
              k[i2] = tk;
              const int ti = id[i];
              id[i] = id[i2];
              id[i2] = ti;
            }
          }
        }
      } else {
        const bool lower = (lane & j) == 0;
#pragma unroll
        for (int i = 0; i < IPT; ++i) {
          const float pk = __shfl_xor_sync(mask, k[i], j, TEAM);
          const int pid = __shfl_xor_sync(mask, id[i], j, TEAM);
          const bool asc = ((i * TEAM + lane) & size) == 0;
          // The lower element of a pair keeps the smaller one when ascending.
          if (precedes(pk, pid, k[i], id[i]) == (lower == asc)) {
            k[i] = pk;
            id[i] = pid;
          }
        }
      }
    }
  }
}

template <int TEAM, int IPT>
struct GpuTeam {
  const PsdSchedule* s;  // the block's copy in shared memory
  const float* r;
  const float* z;
  float* tgt;          // the parents' targets of the current expansion
  unsigned char* buf;  // level x: vectors at buf + buf_off[x], metrics after exp[x] of them
  unsigned mask;
  int lane;
  int n, L, log2L;  // s->n, s->q, s->log2q in registers
  int team_shift;   // bit of lane 0 of this team in a warp ballot
  bool lazy;        // lazy selection instead of a full sort (docs/psd.md, "Parameters")

  __device__ float* keys(int x) const {
    return reinterpret_cast<float*>(buf + s->buf_off[x] + 8 * s->exp[x]);
  }
  __device__ std::uint64_t* vecs(int x) const {
    return reinterpret_cast<std::uint64_t*>(buf + s->buf_off[x]);
  }
  __device__ unsigned ballot(bool b) const { return (__ballot_sync(mask, b) & mask) >> team_shift; }

  // Argmin over the team of (metric, index); every lane gets the result.
  __device__ void team_argmin(float& m, int& i) const {
#pragma unroll
    for (int o = TEAM / 2; o > 0; o >>= 1) {
      const float pm = __shfl_xor_sync(mask, m, o, TEAM);
      const int pi = __shfl_xor_sync(mask, i, o, TEAM);
      if (precedes(pm, pi, m, i)) {
        m = pm;
        i = pi;
      }
    }
  }

  __device__ int take(int x, int pos, int cnt, int paths, float d2) const {
    float* kx = keys(x);
    if (!lazy) {
      // Sorted: the entries of [pos, cnt) below d2 are a prefix (the radius only shrinks).
      int np = 0;
      for (int base = 0; base < paths; base += TEAM) {
        const int i = pos + base + lane;
        bool live = false;
        if (base + lane < paths && i < cnt) live = kx[i] < d2;
        const int got = __popc(ballot(live));
        np += got;
        if (got < TEAM) break;
      }
      return np;
    }
    // Lazy selection: the buffer is left unsorted and each batch's best entries are found by
    // team argmin reductions and swapped to the front, which orders exactly the prefix that the
    // search consumes before the radius prunes the rest.
    float* kw = kx;
    std::uint64_t* vx = vecs(x);
    int np = 0;
    for (; np < paths && pos + np < cnt; ++np) {
      const int lo = pos + np;
      float bm = inf_metric();
      int bi = INT_MAX;
      for (int i = lo + lane; i < cnt; i += TEAM) {
        if (precedes(kw[i], i, bm, bi)) {
          bm = kw[i];
          bi = i;
        }
      }
      team_argmin(bm, bi);
      if (!(bm < d2)) break;
      if (lane == 0 && bi != lo) {
        const float tk = kw[lo];
        kw[lo] = kw[bi];
        kw[bi] = tk;
        const std::uint64_t tv = vx[lo];
        vx[lo] = vx[bi];
        vx[bi] = tv;
      }
      __syncwarp(mask);
    }
    return np;
  }

  // The parents' targets on the new columns lo..top: tgt[p * d + (k - lo)]. vx: level x's
  // vectors (nullptr for the root).
  __device__ void targets(const std::uint64_t* vx, int first, int np, int lo, int top) const {
    const int d = top - lo + 1;
    for (int t = lane; t < np * d; t += TEAM) {
      const int p = t / d;
      const std::uint64_t pv = vx ? vx[first + p] : 0;
      tgt[t] = partial_target(r, z, n, L, pv, lo + t - p * d, top + 1);
    }
    __syncwarp(mask);
  }

  __device__ float child(const float* kx, int first, int lo, int top, int shift, int c,
                         float d2) const {
    const int p = c >> shift;
    const float pm = kx ? kx[first + p] : 0.f;
    return child_metric(r, n, L, log2L, tgt + p * (top - lo + 1), pm, lo, top,
                        c & ((1 << shift) - 1), d2);
  }
  __device__ std::uint64_t child_vec(const std::uint64_t* vx, int first, int lo, int top, int shift,
                                     int c) const {
    const std::uint64_t pv = vx ? vx[first + (c >> shift)] : 0;
    return child_vector(pv, lo, top, c & ((1 << shift) - 1), log2L, L);
  }

  __device__ int expand_sort(int x, int first, int np, int y, float d2) const {
    const int top = (x < 0 ? n + 1 : s->lvl[x]) - 2;
    const int lo = s->lvl[y] - 1;
    const int shift = (top - lo + 1) * log2L;
    const int nch = np << shift;
    const float* kx = x < 0 ? nullptr : keys(x);
    const std::uint64_t* vx = x < 0 ? nullptr : vecs(x);
    targets(vx, first, np, lo, top);
    float* ky = keys(y);
    std::uint64_t* vy = vecs(y);
    if (lazy) {
      for (int c = lane; c < nch; c += TEAM) {
        ky[c] = child(kx, first, lo, top, shift, c, d2);
        vy[c] = child_vec(vx, first, lo, top, shift, c);
      }
      __syncwarp(mask);
      return nch;
    }
    float k[IPT];
    int id[IPT];
#pragma unroll
    for (int i = 0; i < IPT; ++i) {
      const int c = i * TEAM + lane;
      id[i] = c;
      k[i] = c < nch ? child(kx, first, lo, top, shift, c, d2) : inf_metric();
    }
    bitonic_sort<TEAM, IPT>(k, id, lane, mask, nch);
    int count = 0;
#pragma unroll
    for (int i = 0; i < IPT; ++i) {
      const int e = i * TEAM + lane;
      if (e < nch) {
        ky[e] = k[i];
        vy[e] = child_vec(vx, first, lo, top, shift, id[i]);
      }
      count += __popc(ballot(k[i] < d2));
    }
    __syncwarp(mask);
    return count;
  }

  __device__ void expand_leaves(int x, int first, int np, int y, float d2, float* m,
                                std::uint64_t* v) const {
    const int top = (x < 0 ? n + 1 : s->lvl[x]) - 2;
    const int lo = s->lvl[y] - 1;
    const int shift = (top - lo + 1) * log2L;
    const int nch = np << shift;
    const float* kx = x < 0 ? nullptr : keys(x);
    const std::uint64_t* vx = x < 0 ? nullptr : vecs(x);
    targets(vx, first, np, lo, top);
    float bm = inf_metric();
    int bi = INT_MAX;
    for (int c = lane; c < nch; c += TEAM) {
      const float cm = child(kx, first, lo, top, shift, c, d2);
      if (cm < bm) {  // c grows: ties keep the smaller index
        bm = cm;
        bi = c;
      }
    }
    team_argmin(bm, bi);
    *m = bm;
    *v = bm < inf_metric() ? child_vec(vx, first, lo, top, shift, bi) : 0;
    __syncwarp(mask);
  }
};

// One thread per channel; the matrices in global memory (benchmark knob
// set_qr_mode_override(1)): every step of the sorted QR is a dependent global load or store.
__global__ void qr_kernel_global(const __grid_constant__ PsdCudaArgs a) {
  const std::int64_t c = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x;
  if (c >= a.channels) return;
  const int n = a.sched.n, m = 2 * a.nr;
  float* q = a.q + c * m * n;
  int perm[kMaxReal];
  real_model(a.mod, a.h + c * a.h_stride, a.nr, a.nt, q);
  sorted_qr(q, m, n, a.r + c * n * n, perm);
  for (int k = 0; k < n; ++k) a.inv_perm[c * n + perm[k]] = k;
}

// One thread per channel with its G (then Q) and R in shared memory, interleaved across the
// block's threads (element e of thread t at e * blockDim + t: no bank conflicts); Q and R are
// copied out at the end. Same arithmetic as qr_channel on the CPU.
__global__ void qr_kernel(const __grid_constant__ PsdCudaArgs a) {
  extern __shared__ float qsm[];
  const int T = int(blockDim.x);
  const std::int64_t c = blockIdx.x * std::int64_t(T) + threadIdx.x;
  if (c >= a.channels) return;
  const int n = a.sched.n, m = 2 * a.nr;
  float* g = qsm + threadIdx.x;
  float* rr = qsm + std::size_t(m) * n * T + threadIdx.x;
  int perm[kMaxReal];
  real_model(a.mod, a.h + c * a.h_stride, a.nr, a.nt, g, T);
  sorted_qr(g, m, n, rr, perm, T, T);
  float* q = a.q + c * m * n;
  for (int e = 0; e < m * n; ++e) q[e] = g[e * T];
  float* r = a.r + c * n * n;
  for (int e = 0; e < n * n; ++e) r[e] = rr[e * T];
  for (int k = 0; k < n; ++k) a.inv_perm[c * n + perm[k]] = k;
}

// MINB: blocks per SM the register allocation must allow (8: 64 registers, no spills; 10: 48
// registers with a few cold spills; benchmark knob set_min_blocks_override).
template <int TEAM, int IPT, int MINB>
__global__ void __launch_bounds__(kBlockThreads, MINB)
    psd_kernel(const __grid_constant__ PsdCudaArgs a, std::size_t team_bytes) {
  extern __shared__ __align__(16) unsigned char smem[];
  // The schedule is read with level indices that vary at run time: one copy per block in shared
  // memory rather than through a pointer into the kernel parameters.
  __shared__ PsdSchedule s;
  {
    constexpr int words = int(sizeof(PsdSchedule) / sizeof(int));
    static_assert(sizeof(PsdSchedule) % sizeof(int) == 0);
    const int* src = reinterpret_cast<const int*>(&a.sched);
    int* dst = reinterpret_cast<int*>(&s);
    for (int i = int(threadIdx.x); i < words; i += kBlockThreads) dst[i] = src[i];
    __syncthreads();
  }
  // Level -> axis bits of the modulation, for the output.
  __shared__ unsigned char lbits[16];
  const bool bpsk = a.mod == Modulation::bpsk;
  const float sc = qam_scale(a.mod);
  fill_level_bits(a.mod, a.sched.q, lbits);
  const int team_in_block = int(threadIdx.x) / TEAM;
  const int lane = int(threadIdx.x) % TEAM;
  const int team_shift = (int(threadIdx.x) % 32) / TEAM * TEAM;
  const unsigned mask = TEAM == 32 ? 0xffffffffu : (((1u << TEAM) - 1u) << team_shift);
  const int n = s.n, nr = a.nr, nt = a.nt, m = 2 * nr, L = s.q;

  unsigned char* base = smem + team_in_block * team_bytes;
  GpuTeam<TEAM, IPT> team;
  float* R = reinterpret_cast<float*>(base);
  float* z = R + n * n;
  int* ip = reinterpret_cast<int*>(z + n);
  team.tgt = reinterpret_cast<float*>(base + mat_bytes(n));
  team.buf = base + mat_bytes(n) + tgt_bytes(s);
  team.s = &s;
  team.r = R;
  team.z = z;
  team.mask = mask;
  team.lane = lane;
  team.n = n;
  team.L = L;
  team.log2L = s.log2q;
  team.team_shift = team_shift;
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
    // Chunks, not single vectors: one atomic per vector on one address serialises at about one
    // per clock in L2 and bounds short searches (2x2 QPSK). Strided chunks (QueueCursor):
    // contiguous ones queue a bad channel's vectors in one team (4x4 64-QAM at 20 dB: 1.5x
    // slower).
    if (queue.exhausted()) {
      int cid = 0;
      if (lane == 0) cid = atomicAdd(a.counter, 1);
      cid = __shfl_sync(mask, cid, 0, TEAM);
      if (!queue.start(cid)) break;
    }
    const std::int64_t v = queue.pop();
    const std::int64_t c = a.vectors <= INT_MAX
                               ? std::int64_t(unsigned(v) / unsigned(a.vectors_per_channel))
                               : v / a.vectors_per_channel;
    const cf32* y = a.y + v * a.y_stride;
    if ((n * n) % 4 == 0) {
      const float4* src = reinterpret_cast<const float4*>(a.r + c * n * n);
      for (int i = lane; i < n * n / 4; i += TEAM) reinterpret_cast<float4*>(R)[i] = src[i];
    } else {
      for (int i = lane; i < n * n; i += TEAM) R[i] = a.r[c * n * n + i];
    }
    for (int k = lane; k < n; k += TEAM) {
      z[k] = project(a.q + c * n * m, m, nr, y, k);
      ip[k] = a.inv_perm[c * n + k];
    }
    __syncwarp(mask);
    float d2 = inf_metric();
    std::uint64_t best = 0;
    if (a.babai) best = babai_point(R, z, n, L, &d2);
    // phases bit 3 (benchmark): the per-vector set-up and output without the search.
    const PsdOutcome o = a.phases & 8 ? PsdOutcome{} : psd_search(team, p, d2, best);
    if (lane < nt) {
      // Stream `lane`: its bits from the block's level -> bits table, stored as one word where
      // the alignment allows (what write_stream writes).
      std::uint8_t* out = a.bits + (v * nt + lane) * mb;
      const int lre = level_of(o.best, ip[lane]);
      if (bpsk) {
        out[0] = std::uint8_t(lre == 0 ? 1 : 0);
        if (a.symbols)
          a.symbols[v * nt + lane] = cf32(amplitude(lre, 2) * sc, amplitude(lre, 2) * sc);
      } else {
        const int lim = level_of(o.best, ip[nt + lane]);
        store_stream_bits(out, mb, lbits[lre], lbits[lim]);
        if (a.symbols)
          a.symbols[v * nt + lane] = cf32(amplitude(lre, L) * sc, amplitude(lim, L) * sc);
      }
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

template <int TEAM, int IPT, int MINB = kDefaultMinBlocks>
void launch(const PsdCudaArgs& a, cudaStream_t st) {
  const std::size_t tb = team_bytes(a.sched);
  int dev_limit = 0;
  MIMORX_CUDA_CHECK(
      cudaDeviceGetAttribute(&dev_limit, cudaDevAttrMaxSharedMemoryPerBlockOptin, a.device));
  // The static part (the block's copy of the schedule) counts against the same limit.
  const std::size_t limit = std::size_t(dev_limit) - sizeof(PsdSchedule);
  int teams = kBlockThreads / TEAM;
  while (teams > 1 && tb * teams > limit) --teams;
  if (tb > limit) {
    throw Unsupported("levels: the PSD needs " + std::to_string(tb + sizeof(PsdSchedule)) +
                      " bytes of shared memory per vector; this GPU has " +
                      std::to_string(dev_limit) + " per block");
  }
  const std::size_t smem = tb * teams;
  auto kernel = psd_kernel<TEAM, IPT, MINB>;
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
  kernel<<<blocks, teams * TEAM, smem, st>>>(b, tb);
  MIMORX_CUDA_CHECK_LAUNCH();
}

}  // namespace

void psd_run_cuda(const PsdCudaArgs& a, void* stream) {
  MIMORX_CUDA_CHECK(cudaSetDevice(a.device));
  cudaStream_t st = mimorx::detail::as_stream(stream);
  if (a.phases & 1) {
    if (a.qr_mode == 1) {
      const int threads = 64;
      const int blocks = int((a.channels + threads - 1) / threads);
      qr_kernel_global<<<blocks, threads, 0, st>>>(a);
    } else {
      const int m = 2 * a.nr, n = a.sched.n;
      const std::size_t per_thread = 4 * std::size_t(m * n + n * n);
      const int threads = int(std::clamp<std::size_t>(48 * 1024 / per_thread, 1, 64));
      const int blocks = int((a.channels + threads - 1) / threads);
      qr_kernel<<<blocks, threads, per_thread * threads, st>>>(a);
    }
    MIMORX_CUDA_CHECK_LAUNCH();
  }
  if (!(a.phases & 2)) return;
  const int team = psd_team_width(a.sched, a.team_override);
  if (team == 1) return psd_run_lanes_cuda(a, stream);
  MIMORX_CUDA_CHECK(cudaMemsetAsync(a.counter, 0, sizeof(int), st));
  const int cap = a.sched.capacity;
  // Items per lane: the sorted level buffers hold at most `cap` entries.
  const int ipt = std::max(cap / team, 1);
  // Register budget: 48 registers (10 blocks per SM) where a variant exists (the fourth device
  // run: 4x4 QPSK 1.10 vs 1.14 ms, 16-QAM with 32 lanes 4.73 vs 4.82 ms), else 64.
  const int minb = a.min_blocks ? a.min_blocks : (ipt <= 2 ? 10 : kDefaultMinBlocks);
  if (minb != kDefaultMinBlocks) {
    switch (minb * 10000 + team * 100 + ipt) {
      case 100801:
        return launch<8, 1, 10>(a, st);
      case 100802:
        return launch<8, 2, 10>(a, st);
      case 101601:
        return launch<16, 1, 10>(a, st);
      case 101602:
        return launch<16, 2, 10>(a, st);
      case 103201:
        return launch<32, 1, 10>(a, st);
      case 103202:
        return launch<32, 2, 10>(a, st);
      case 120801:
        return launch<8, 1, 12>(a, st);
      case 121601:
        return launch<16, 1, 12>(a, st);
      case 123201:
        return launch<32, 1, 12>(a, st);
      default:
        break;  // no such variant: the default one
    }
  }
  switch (team * 100 + ipt) {
    case 801:
      return launch<8, 1>(a, st);
    case 802:
      return launch<8, 2>(a, st);
    case 804:
      return launch<8, 4>(a, st);
    case 808:
      return launch<8, 8>(a, st);
    case 1601:
      return launch<16, 1>(a, st);
    case 1602:
      return launch<16, 2>(a, st);
    case 1604:
      return launch<16, 4>(a, st);
    case 3201:
      return launch<32, 1>(a, st);
    case 3202:
      return launch<32, 2>(a, st);
    case 3204:
      return launch<32, 4>(a, st);
    case 3208:
      return launch<32, 8>(a, st);
    case 3216:
      return launch<32, 16>(a, st);
    default:
      throw Unsupported("PSD: no kernel for team " + std::to_string(team) + " x " +
                        std::to_string(ipt) + " entries per lane");
  }
}

}  // namespace mimorx::detect::sphere

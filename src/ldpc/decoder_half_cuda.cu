// The f16x2 kernel: the paired kernel's layout (decoder_pair_cuda.cu: Z threads per codeword
// pair, thread r updates row r of every layer, APP in shared memory, full messages per edge in
// shared memory or compressed records per row in a per-block global workspace,
// decoder_half_records.cuh), but each lane of a 32-bit word an IEEE half
// (decoder_half.hpp): float channel LLRs clamped to +-16384 and rounded to half, the
// check-node minimum and sign product by min.xorsign.abs.f16x2. Bit-exact with the CPU model
// (decoder_half_cpu.cpp).
//
// Early termination is per codeword, as in the paired kernel: a word whose syndrome holds has
// its outputs written at once; its lane keeps computing, but nothing of it is written again.
#include <algorithm>
#include <string>

#include "core/cuda_check.hpp"
#include "ldpc/decoder_cuda_internal.hpp"
#include "ldpc/decoder_half.hpp"
#include "ldpc/decoder_half_records.cuh"
#include "ldpc/decoder_kernel_common.cuh"
#include "mimorx/core/error.hpp"

namespace mimorx::ldpc::detail {
namespace {

using hpair::u32;

// Edges, layer starts, the layers' message offsets (padded messages in shared memory, records
// in the global workspace) and the per-lane failure flags.
__host__ __device__ inline std::size_t half_header_bytes(int nedges, int rows, int pairs) {
  return align16(sizeof(hpair::HalfEdge) * nedges + sizeof(int) * 2 * (rows + 1) +
                 sizeof(int) * 2 * pairs);
}

// Message words of one pair and row of Z in shared memory: every row's degree padded to odd.
int padded_edges(const DecodeTables& t) {
  int n = 0;
  for (int l = 0; l < t.rows; ++l) n += hpair::padded_degree(t.row_start[l + 1] - t.row_start[l]);
  return n;
}

// Record words of one pair and row of Z in the global workspace.
int record_words(const DecodeTables& t) {
  int n = 0;
  for (int l = 0; l < t.rows; ++l) {
    const int deg = t.row_start[l + 1] - t.row_start[l];
    if (!hrec::record_degree(deg)) {
      throw Unsupported("the half decoder's records hold rows of degree 3..10 and 19, not " +
                        std::to_string(deg));
    }
    n += hrec::record_words(deg);
  }
  return n;
}

// Hard decisions of one codeword (lane of the pair): the sign bits of its halves, read as int16.
__device__ void write_half_lane(const u32* app, int lane, int cw, int r, const KParams& p) {
  write_decisions(reinterpret_cast<const std::int16_t*>(app) + lane, 2, cw, r, p);
}

// flag[0], flag[1] = 1 where codeword 2p, 2p+1 of the pair has an unsatisfied row, else 0.
// Called by every thread of the block (two barriers inside).
__device__ void flag_unsatisfied_half(const u32* app, const hpair::HalfEdge* edges, const int* rs,
                                      int rows, int r, int z, int* flag) {
  if (r == 0) flag[0] = flag[1] = 0;
  __syncthreads();
  u32 fail = 0;
  for (int l = 0; l < rows && fail != hpair::kSignBits; ++l) {
    fail |= hpair::row_parity(app, edges + rs[l], rs[l + 1] - rs[l], r, z);
  }
  if (fail & 0x8000u) flag[0] = 1;
  if (fail & 0x80000000u) flag[1] = 1;
  __syncthreads();
}

// LAYOUT: full messages in shared memory (thread r's words of a row contiguous, odd stride),
// full messages in the global workspace (edge-major, coalesced over r), or compressed records
// in the global workspace (word-major, coalesced over r).
// The 512-thread kernel keeps degree-19 rows in registers (values and APP addresses) within 80
// registers: two 384-thread blocks (one pair at Z = 384) per SM.
template <int LB, HalfLayout LAYOUT>
__global__ void __launch_bounds__(LB) __maxnreg__(LB <= 512 ? 80 : 64)
    half_kernel(KParams p, hpair::Scale sc) {
  constexpr bool kShared = LAYOUT == HalfLayout::shared_messages;
  constexpr bool kAhead = LAYOUT == HalfLayout::global_records_ahead;
  constexpr bool kRecords = LAYOUT == HalfLayout::global_records || kAhead;
  extern __shared__ __align__(16) unsigned char smem[];
  auto* s_edges = reinterpret_cast<hpair::HalfEdge*>(smem);
  int* s_rs = reinterpret_cast<int*>(s_edges + p.nedges);
  int* s_prs = s_rs + (p.rows + 1);    // message (or record) offset of each layer
  int* s_fail = s_prs + (p.rows + 1);  // per lane: a row of the pair is unsatisfied
  u32* s_app = reinterpret_cast<u32*>(smem + half_header_bytes(p.nedges, p.rows, p.np));
  u32* s_msg = s_app + std::size_t(p.n_used) * p.np;
  const int z = p.z;
  const int r = threadIdx.x;
  const int w = threadIdx.y;  // pair within the block
  const int tid = w * z + r;
  const int nthreads = z * p.np;
  for (int i = tid; i < p.nedges; i += nthreads) s_edges[i] = hpair::half_edge(p.edges[i], p.z);
  if (tid == 0) {
    s_rs[0] = s_prs[0] = 0;
    for (int l = 0; l < p.rows; ++l) {
      s_rs[l + 1] = p.row_start[l + 1];
      const int deg = p.row_start[l + 1] - p.row_start[l];
      s_prs[l + 1] = s_prs[l] + (kShared    ? hpair::padded_degree(deg)
                                 : kRecords ? hrec::record_words(deg)
                                            : deg);
    }
  }
  __syncthreads();
  u32* app = s_app + std::size_t(w) * p.n_used;
  const std::size_t msg_words = std::size_t(s_prs[p.rows]) * z;
  u32* msg =
      kShared ? s_msg + std::size_t(w) * msg_words
              : static_cast<u32*>(p.c2v_global) + (std::size_t(blockIdx.x) * p.np + w) * msg_words;
  int bad = 0;
  for (int g = blockIdx.x; g * p.np * 2 < p.num; g += gridDim.x) {
    const int cw0 = 2 * (g * p.np + w);
    const bool valid[2] = {cw0 < p.num, cw0 + 1 < p.num};
    const std::size_t base0 = std::size_t(valid[0] ? cw0 : 0) * p.n_used;
    const std::size_t base1 = std::size_t(valid[1] ? cw0 + 1 : 0) * p.n_used;
    for (int i = r; i < p.n_used; i += z) {
      const float x0 = channel_llr(p.llr + base0, valid[0], i, bad);
      const float x1 = channel_llr(p.llr + base1, valid[1], i, bad);
      app[i] = hpair::pack_halves(hpair::clamp_channel(x0), hpair::clamp_channel(x1));
    }
    for (std::size_t i = r; i < msg_words; i += z) msg[i] = 0;
    hrec::Record cur;  // kAhead: the current layer's record, loaded one layer ahead (zero here)
    bool done[2] = {!valid[0], !valid[1]};
    int iters[2] = {p.max_iters, p.max_iters};
    __syncthreads();
    for (int it = 1; it <= p.max_iters; ++it) {
      if (p.alpha_iter) sc.alpha = hpair::hsplat(p.alpha_iter[it - 1]);
      for (int l = 0; l < p.rows; ++l) {
        const int e0 = s_rs[l], deg = s_rs[l + 1] - e0;
        if constexpr (kShared) {
          hpair::row_update<(LB <= 512)>(app, msg + std::size_t(s_prs[l]) * z + r * (deg | 1), 1,
                                         s_edges + e0, deg, r, z, sc);
        } else if constexpr (kRecords) {
          u32* const rec = msg + std::size_t(s_prs[l]) * z + r;
          if constexpr (kAhead) {
            // The next layer's record (layer 0 of the next iteration after the last): never the
            // one this update writes, as a plan decodes at least 4 rows.
            const int ln = l + 1 < p.rows ? l + 1 : 0;
            const hrec::Record next =
                hrec::load_record(msg + std::size_t(s_prs[ln]) * z + r, z, s_rs[ln + 1] - s_rs[ln]);
            hrec::row_update<(LB <= 512), true>(app, rec, z, s_edges + e0, deg, r, z, sc, cur);
            cur = next;
          } else {
            hrec::row_update<(LB <= 512), false>(app, rec, z, s_edges + e0, deg, r, z, sc, cur);
          }
        } else {
          hpair::row_update<(LB <= 512), true>(app, msg + std::size_t(e0) * z + r, z, s_edges + e0,
                                               deg, r, z, sc);
        }
        __syncthreads();  // the next layer reads variables this layer's other rows wrote
      }
      if (p.early_termination) {
        flag_unsatisfied_half(app, s_edges, s_rs, p.rows, r, z, s_fail + 2 * w);
        for (int lane = 0; lane < 2; ++lane) {
          if (!done[lane] && s_fail[2 * w + lane] == 0) {
            done[lane] = true;
            iters[lane] = it;
            write_half_lane(app, lane, cw0 + lane, r, p);
            if (r == 0 && p.iterations) p.iterations[cw0 + lane] = it;
            if (r == 0 && p.syndrome_ok) p.syndrome_ok[cw0 + lane] = 1;
          }
        }
        if (__syncthreads_and(done[0] && done[1] ? 1 : 0)) break;
      }
    }
    // Words that ran all iterations. The barriers are outside any condition: the pairs of a
    // block may be in different states.
    if (p.syndrome_ok) {
      __syncthreads();
      flag_unsatisfied_half(app, s_edges, s_rs, p.rows, r, z, s_fail + 2 * w);
    }
    for (int lane = 0; lane < 2; ++lane) {
      if (done[lane]) continue;
      write_half_lane(app, lane, cw0 + lane, r, p);
      if (r == 0 && p.iterations) p.iterations[cw0 + lane] = iters[lane];
      if (r == 0 && p.syndrome_ok) p.syndrome_ok[cw0 + lane] = s_fail[2 * w + lane] ? 0 : 1;
    }
    __syncthreads();  // the next group overwrites app
  }
  if (bad && p.bad_flag) atomicOr(p.bad_flag, 1);
}

}  // namespace

std::size_t half_smem_bytes(const DecodeTables& t, int pairs, bool msg_shared) {
  const int nedges = int(t.edges.size());
  std::size_t b =
      half_header_bytes(nedges, t.rows, pairs) + sizeof(u32) * std::size_t(t.n_used) * pairs;
  if (msg_shared) b += sizeof(u32) * std::size_t(padded_edges(t)) * t.z * pairs;
  return b;
}

std::size_t half_msg_bytes_per_pair(const DecodeTables& t, HalfLayout layout) {
  switch (layout) {
    case HalfLayout::global_messages:
      return sizeof(u32) * t.edges.size() * std::size_t(t.z);
    case HalfLayout::global_records:
    case HalfLayout::global_records_ahead:
      return sizeof(u32) * std::size_t(record_words(t)) * t.z;
    default:
      return 0;  // in shared memory: no workspace
  }
}

namespace {
template <int LB>
const void* half_symbol(HalfLayout layout) {
  switch (layout) {
    case HalfLayout::shared_messages:
      return reinterpret_cast<const void*>(half_kernel<LB, HalfLayout::shared_messages>);
    case HalfLayout::global_messages:
      return reinterpret_cast<const void*>(half_kernel<LB, HalfLayout::global_messages>);
    case HalfLayout::global_records_ahead:
      return reinterpret_cast<const void*>(half_kernel<LB, HalfLayout::global_records_ahead>);
    default:
      return reinterpret_cast<const void*>(half_kernel<LB, HalfLayout::global_records>);
  }
}
template <int LB>
void launch_half_lb(const KParams& p, const hpair::Scale& sc, HalfLayout layout, int grid, int smem,
                    cudaStream_t s) {
  const dim3 block(p.z, p.np);
  switch (layout) {
    case HalfLayout::shared_messages:
      half_kernel<LB, HalfLayout::shared_messages><<<grid, block, smem, s>>>(p, sc);
      break;
    case HalfLayout::global_messages:
      half_kernel<LB, HalfLayout::global_messages><<<grid, block, smem, s>>>(p, sc);
      break;
    case HalfLayout::global_records_ahead:
      half_kernel<LB, HalfLayout::global_records_ahead><<<grid, block, smem, s>>>(p, sc);
      break;
    default:
      half_kernel<LB, HalfLayout::global_records><<<grid, block, smem, s>>>(p, sc);
  }
}
}  // namespace

const void* half_kernel_symbol(int lb, HalfLayout layout) {
  return lb == 1024 ? half_symbol<1024>(layout) : half_symbol<512>(layout);
}

void launch_half(const KParams& p, const DecodeTables& t, HalfLayout layout, int lb, int grid,
                 int smem, cudaStream_t s) {
  const hpair::Scale sc = hpair::make_scale(t.alpha, t.beta, t.offset);
  if (lb == 1024) {
    launch_half_lb<1024>(p, sc, layout, grid, smem, s);
  } else {
    launch_half_lb<512>(p, sc, layout, grid, smem, s);
  }
  MIMORX_CUDA_CHECK_LAUNCH();
}

}  // namespace mimorx::ldpc::detail

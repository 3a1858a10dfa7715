// The paired integer kernel: the layout of layered_kernel (decoder_cuda.cu; Z threads per
// codeword, thread r updates row r of every layer, APP in shared memory), but every thread
// carries two codewords, one per 16-bit lane (decoder_pair.hpp), and the messages are stored in
// full (int8 per edge and codeword) in shared memory or, when they do not fit, in a per-block
// global workspace. Bit-exact with the CPU integer decoder.
//
// Early termination is per codeword: a word whose syndrome is satisfied after an iteration has
// its outputs written at once; its lane keeps computing while the other lane of the pair runs
// on, but nothing of it is written again.
#include <algorithm>
#include <string>

#include "core/cuda_check.hpp"
#include "ldpc/decoder_cuda_internal.hpp"
#include "ldpc/decoder_kernel_common.cuh"
#include "ldpc/decoder_pair.hpp"
#include "mimorx/core/error.hpp"

namespace mimorx::ldpc::detail {
namespace {

using Word = std::uint16_t;  // an int8 pair: codeword 2p in bits 0-7, 2p+1 in bits 8-15

__host__ __device__ inline std::size_t pair_header_bytes(int nedges, int rows, int pairs) {
  return align16(sizeof(pair::PairEdge) * nedges + sizeof(int) * (rows + 1) +
                 sizeof(int) * 2 * pairs);
}

// Hard decisions of one codeword (lane of the pair): the lane's bytes of the int8 pairs.
__device__ void write_lane(const Word* app, int lane, int cw, int r, const KParams& p) {
  write_decisions(reinterpret_cast<const std::int8_t*>(app) + lane, 2, cw, r, p);
}

// Unsatisfied-row flags of the pair (bit 7 lane 0, bit 15 lane 1) for thread r's rows.
__device__ pair::u32 pair_syndrome(const Word* app, const pair::PairEdge* edges, const int* rs,
                                   int rows, int r, int z) {
  pair::u32 fail = 0;
  for (int l = 0; l < rows && fail != 0x8080u; ++l) {
    fail |= pair::row_parity(app, edges + rs[l], rs[l + 1] - rs[l], r, z);
  }
  return fail;
}

// flag[0], flag[1] = 1 where codeword 2p, 2p+1 of the pair has an unsatisfied row, else 0.
// Called by every thread of the block (two barriers inside).
__device__ void flag_unsatisfied(const Word* app, const pair::PairEdge* edges, const int* rs,
                                 int rows, int r, int z, int* flag) {
  if (r == 0) flag[0] = flag[1] = 0;
  __syncthreads();
  const pair::u32 fail = pair_syndrome(app, edges, rs, rows, r, z);
  if (fail & 0x80u) flag[0] = 1;
  if (fail & 0x8000u) flag[1] = 1;
  __syncthreads();
}

// MSG_SHARED: the messages live in shared memory (else in the global workspace); a template
// argument so that the compiler knows the address space (32-bit shared addresses, LDS/STS
// instead of generic loads).
template <int LB, bool MSG_SHARED>
__global__ void __launch_bounds__(LB) paired_kernel(KParams p, pair::Scale sc) {
  extern __shared__ __align__(16) unsigned char smem[];
  auto* s_edges = reinterpret_cast<pair::PairEdge*>(smem);
  int* s_rs = reinterpret_cast<int*>(s_edges + p.nedges);
  int* s_fail = s_rs + (p.rows + 1);  // per lane: a row of the pair is unsatisfied
  Word* s_app = reinterpret_cast<Word*>(smem + pair_header_bytes(p.nedges, p.rows, p.np));
  Word* s_msg = reinterpret_cast<Word*>(reinterpret_cast<unsigned char*>(s_app) +
                                        align16(sizeof(Word) * std::size_t(p.n_used) * p.np));
  const int z = p.z;
  const int r = threadIdx.x;
  const int w = threadIdx.y;  // pair within the block
  const int tid = w * z + r;
  const int nthreads = z * p.np;
  for (int i = tid; i < p.nedges; i += nthreads) s_edges[i] = pair::pair_edge(p.edges[i], p.z);
  for (int i = tid; i <= p.rows; i += nthreads) s_rs[i] = p.row_start[i];
  Word* app = s_app + std::size_t(w) * p.n_used;
  const std::size_t msg_words = std::size_t(p.nedges) * z;
  Word* msg = MSG_SHARED ? s_msg + std::size_t(w) * msg_words
                         : static_cast<Word*>(p.c2v_global) +
                               (std::size_t(blockIdx.x) * p.np + w) * msg_words;
  int bad = 0;
  for (int g = blockIdx.x; g * p.np * 2 < p.num; g += gridDim.x) {
    const int cw0 = 2 * (g * p.np + w);
    const bool valid[2] = {cw0 < p.num, cw0 + 1 < p.num};
    const std::size_t base0 = std::size_t(valid[0] ? cw0 : 0) * p.n_used;
    const std::size_t base1 = std::size_t(valid[1] ? cw0 + 1 : 0) * p.n_used;
    if (p.llr8) {
      for (int i = r; i < p.n_used; i += z) {
        const int q0 = channel_q8(p.llr8 + base0, valid[0], i, p.llr_limit);
        const int q1 = channel_q8(p.llr8 + base1, valid[1], i, p.llr_limit);
        app[i] = Word((unsigned(q0) & 0xffu) | ((unsigned(q1) & 0xffu) << 8));
      }
    } else {
      for (int i = r; i < p.n_used; i += z) {
        // Both loads before the quantiser's branches, so that they are in flight together.
        const float x0 = channel_llr(p.llr + base0, valid[0], i, bad);
        const float x1 = channel_llr(p.llr + base1, valid[1], i, bad);
        const int q0 = quantize_llr(x0, p.llr_scale, p.llr_limit);
        const int q1 = quantize_llr(x1, p.llr_scale, p.llr_limit);
        app[i] = Word((unsigned(q0) & 0xffu) | ((unsigned(q1) & 0xffu) << 8));
      }
    }
    for (std::size_t i = r; i < msg_words; i += z) msg[i] = 0;
    bool done[2] = {!valid[0], !valid[1]};
    int iters[2] = {p.max_iters, p.max_iters};
    __syncthreads();
    for (int it = 1; it <= p.max_iters; ++it) {
      if (p.alpha16_iter) sc.alpha16 = pair::u32(p.alpha16_iter[it - 1]);
      for (int l = 0; l < p.rows; ++l) {
        const int e0 = s_rs[l], deg = s_rs[l + 1] - e0;
        // Layer l's messages: e0 z words. In shared memory thread r's deg words are contiguous
        // (offsets known at compile time, no address registers; an odd stride for degree 19,
        // at most 2-way bank conflicts), in global memory edge-major (coalesced over r).
        if constexpr (MSG_SHARED) {
          pair::row_update<(LB <= 512)>(app, msg + std::size_t(e0) * z + r * deg, 1, s_edges + e0,
                                        deg, r, z, sc);
        } else {
          pair::row_update<(LB <= 512)>(app, msg + std::size_t(e0) * z + r, z, s_edges + e0, deg, r,
                                        z, sc);
        }
        __syncthreads();  // the next layer reads variables this layer's other rows wrote
      }
      if (p.early_termination) {
        flag_unsatisfied(app, s_edges, s_rs, p.rows, r, z, s_fail + 2 * w);
        for (int lane = 0; lane < 2; ++lane) {
          if (!done[lane] && s_fail[2 * w + lane] == 0) {
            done[lane] = true;
            iters[lane] = it;
            write_lane(app, lane, cw0 + lane, r, p);
            if (r == 0 && p.iterations) p.iterations[cw0 + lane] = it;
            if (r == 0 && p.syndrome_ok) p.syndrome_ok[cw0 + lane] = 1;
          }
        }
        if (__syncthreads_and(done[0] && done[1] ? 1 : 0)) break;
      }
    }
    // Words that ran all iterations (every word without early termination). The barriers are
    // outside any condition: the pairs of a block may be in different states.
    if (p.syndrome_ok) {
      __syncthreads();
      flag_unsatisfied(app, s_edges, s_rs, p.rows, r, z, s_fail + 2 * w);
    }
    for (int lane = 0; lane < 2; ++lane) {
      if (done[lane]) continue;
      write_lane(app, lane, cw0 + lane, r, p);
      if (r == 0 && p.iterations) p.iterations[cw0 + lane] = iters[lane];
      if (r == 0 && p.syndrome_ok) p.syndrome_ok[cw0 + lane] = s_fail[2 * w + lane] ? 0 : 1;
    }
    __syncthreads();  // the next group overwrites app
  }
  if (bad && p.bad_flag) atomicOr(p.bad_flag, 1);
}

}  // namespace

std::size_t paired_smem_bytes(const DecodeTables& t, int pairs, bool msg_shared) {
  const int nedges = int(t.edges.size());
  std::size_t b = pair_header_bytes(nedges, t.rows, pairs) +
                  align16(sizeof(Word) * std::size_t(t.n_used) * pairs);
  if (msg_shared) b += sizeof(Word) * std::size_t(nedges) * t.z * pairs;
  return b;
}

std::size_t paired_msg_bytes_per_pair(const DecodeTables& t) {
  return sizeof(Word) * t.edges.size() * std::size_t(t.z);
}

const void* paired_kernel_symbol(int lb, bool msg_shared) {
  if (msg_shared) {
    return lb == 1024 ? reinterpret_cast<const void*>(paired_kernel<1024, true>)
                      : reinterpret_cast<const void*>(paired_kernel<512, true>);
  }
  return lb == 1024 ? reinterpret_cast<const void*>(paired_kernel<1024, false>)
                    : reinterpret_cast<const void*>(paired_kernel<512, false>);
}

void launch_paired(const KParams& p, const IntArith& a, int lb, int grid, int smem,
                   cudaStream_t s) {
  const pair::Scale sc(a);
  const dim3 block(p.z, p.np);
  if (p.c2v_global == nullptr) {
    if (lb == 1024) {
      paired_kernel<1024, true><<<grid, block, smem, s>>>(p, sc);
    } else {
      paired_kernel<512, true><<<grid, block, smem, s>>>(p, sc);
    }
  } else if (lb == 1024) {
    paired_kernel<1024, false><<<grid, block, smem, s>>>(p, sc);
  } else {
    paired_kernel<512, false><<<grid, block, smem, s>>>(p, sc);
  }
  MIMORX_CUDA_CHECK_LAUNCH();
}

}  // namespace mimorx::ldpc::detail

// CUDA kernel of the trellis detector: T threads per received vector, thread t owning V
// vertices of every stage (t V .. t V + V - 1, one imaginary level): V = 4 at 16-QAM with
// nt <= 4 (T = 4, one thread per imaginary level), V = 1 otherwise (T = Q, the paper's
// mapping). G = 128 / T vectors per block for T < 128 (32 for QPSK and 16-QAM, 2 for 64-QAM;
// one vector of 256 threads for 256-QAM).
//
// Per vector, shared memory holds R' (scale * R), y^ and the slicer's scale per row (read once,
// broadcast to the vector's threads), and per stage the published state of the Q surviving
// paths: (distance, residual re, im, bit word) as one float4 (the bit word apart when it has
// 64 bits) and the path word or partial residuals. The edge reduction reads the Q incoming
// paths as broadcast float4 loads: one shared-memory instruction per incoming edge and thread,
// shared by the thread's V vertices with the imaginary part of the edge weight, where warp
// shuffles would need three (distance and both residual parts) and would not reach across
// warps for T > 32. A vector never spans a warp for T <= 32, so its barriers are __syncwarp;
// for T = 64 a named barrier of its two warps. The stage loop is unrolled for nt <= 4 (every
// residual and extension row is then a constant), and each path carries its bit word (extended
// by the bits of each vertex appended) instead of recomputing it from the vertices. The list
// paths' (distance, bit word) go to shared memory; the max-log merge finds the best list path
// (butterfly over the vector's lanes) and scans only for the counter-hypotheses, each thread
// over all list paths for its NB / T bits (T < NB) or thread (s, j) over the pairs s, s + S,
// ... for bit j. The operations are those of the CPU reference (trellis_math.hpp, same order),
// so lists, bits and LLRs are bit-identical to it.
#include <algorithm>
#include <cstdint>
#include <string>
#include <type_traits>

#include "core/cuda_check.hpp"
#include "detect/nway_math.hpp"
#include "detect/trellis_cuda.hpp"
#include "detect/trellis_math.hpp"
#include "mimorx/core/error.hpp"

namespace mimorx::detect::trellis_cuda {

namespace {

using trellis::Path;
constexpr float kInf = __builtin_huge_valf();

// Vertices per thread: a thread owns V vertices of one imaginary level (consecutive real
// levels), so that the broadcast load of an incoming path and the imaginary part of its edge
// weight serve V edges of a reduction, and the per-thread work (prologue, R' loads of the
// extension, merge set-up) is shared by V vertices. V = 4 at 16-QAM with nt <= 4 (one thread
// per imaginary level); 1 otherwise (QPSK: 2 vertices per thread measured slower; 64-QAM: 8
// vertices would need ~2x the registers; nt = 8 keeps its stage loop).
template <int NT, int L>
constexpr int vertices_per_thread() {
  return NT <= 4 && L == 4 ? 4 : 1;
}
template <int NT, int L>
constexpr int threads_per_vector() {
  return L * L / vertices_per_thread<NT, L>();
}
template <int NT, int L>
constexpr int vectors_per_block() {
  constexpr int T = threads_per_vector<NT, L>();
  return T >= 128 ? 1 : 128 / T;
}

template <int NT, int L>
struct alignas(16) VectorSmem {
  static constexpr int Q = L * L, NB = NT * 2 * nway::log2_pow2(L), NC = NT * Q;
  static constexpr int V = vertices_per_thread<NT, L>(), T = Q / V;  // threads per vector
  static constexpr int SC = T / NB > 1 ? T / NB : 1;                 // threads per bit in the merge
  static constexpr int WARPS = T > 32 ? T / 32 : 1;                  // warps per vector
  // Bits per thread in the merge when there are fewer threads than bits (else 1).
  static constexpr int BPT = SC == 1 && NB % T == 0 ? NB / T : 1;
  using Word = std::conditional_t<(NB > 32), std::uint64_t, std::uint32_t>;
  struct Cand {  // a list path: distance and bit word (8 bytes, or 16 with a 64-bit word)
    float d;
    Word w;
  };
  // Partial residuals carried per path (nt <= 4) instead of its vertices (nt = 8).
  static constexpr bool PARTIAL = NT <= 4;
  static constexpr int NP = PARTIAL && NT > 2 ? NT - 2 : 1;
  // A 32-bit path bit word rides in the published float4's fourth lane.
  static constexpr bool PB_IN_PUB = sizeof(Word) == 4;
  // V > 1, several bits per thread and at most 16 bits per vector: the list paths as two arrays,
  // distances and 16-bit words (6 bytes per path instead of 8), the merge reading four of each
  // per pair of loads.
  static constexpr bool SPLIT = V > 1 && BPT > 1 && NB <= 16;
  // (distance, residual re, residual im, bit word or unused) of the surviving paths
  float4 pub[Q];
  Path path[PARTIAL ? 1 : Q];  // their vertices (nt = 8)
  cf32 part[NP * Q];           // nt <= 4: their partial residuals of rows < i - 1, [row][path]
  // and their bits (rows > the stage's row), as path_bits() places them (64-bit words)
  Word pbits[PB_IN_PUB ? 1 : Q];
  alignas(16) Cand cand[SPLIT ? 1 : NC];  // list paths, index t * Q + vertex
  alignas(16) float cand_d[SPLIT ? NC : 4];
  alignas(16) std::uint16_t cand_w[SPLIT ? NC : 4];
  float red[SC > 1 ? NB* SC : 1];  // the merge's partial counter-hypothesis minima
  float best_d[WARPS];             // per-warp best list path (Q > 32)
  Word best_w[WARPS];
  cf32 rs[NT * NT];  // R', column-major, zero below the diagonal
  cf32 yh[NT];
  float inv_top[NT];  // the slicer's scale per row, nway::slice_scale(1 / (2 R'_ii), L)
};

// Publishes path q (distance, residual at the next row, bit word) for the reduction.
template <class S, class Word>
__device__ __forceinline__ void publish(S& s, int q, float d, cf32 u, Word pb) {
  if constexpr (S::PB_IN_PUB) {
    s.pub[q] = make_float4(d, u.re, u.im, __uint_as_float(pb));
  } else {
    s.pub[q] = make_float4(d, u.re, u.im, 0.f);
    s.pbits[q] = pb;
  }
}
template <class S>
__device__ __forceinline__ typename S::Word published_bits(const S& s, int k) {
  if constexpr (S::PB_IN_PUB) {
    return __float_as_uint(s.pub[k].w);
  } else {
    return s.pbits[k];
  }
}

// Bytes between the vectors of a block: an odd number of 16-byte units, so that the broadcast
// float4 loads of up to 8 vectors in one warp (QPSK) fall in 8 different groups of 4 banks.
template <class S>
constexpr int vector_stride() {
  constexpr int units = int((sizeof(S) + 15) / 16);
  return 16 * (units | 1);
}

// Barrier of the T threads of one vector: the warp for T <= 32 (a vector never spans warps),
// a named barrier of the vector's warps for T = 64 (two vectors per block), the block for one
// vector per block.
template <int T, int G>
__device__ __forceinline__ void vector_sync(int vl) {
  if constexpr (G == 1) {
    __syncthreads();
  } else if constexpr (T <= 32) {
    __syncwarp();
  } else {
    // Immediate barrier ids (a register id makes ptxas reserve all 16 barriers of the block).
    static_assert(G == 2, "named barriers for two vectors per block");
    if (vl == 0) {
      asm volatile("bar.sync 1, %0;" ::"n"(T) : "memory");
    } else {
      asm volatile("bar.sync 2, %0;" ::"n"(T) : "memory");
    }
  }
}

// The better of two list paths for the merge's best path: the smaller distance; a NaN
// distance loses to any other, so that the best distance is fminf over all list paths.
template <class Word>
__device__ __forceinline__ void keep_better(float od, Word ow, float* bd, Word* bw) {
  const bool take = od < *bd || *bd != *bd;
  *bd = take ? od : *bd;
  *bw = take ? ow : *bw;
}

// A list path of list L_i (the path through vertex q of row i): to the candidate output, or
// to shared memory and this thread's best list path. The symbols come from the bit word.
template <int NT, int L, class S, class Word>
__device__ __forceinline__ void emit_list_path(S& s, int q, int i, std::int64_t v, bool valid,
                                               float d, Word w, float* cand_d,
                                               std::uint8_t* cand_sym, float* bd, Word* bw) {
  constexpr int Q = L * L, m = 2 * nway::log2_pow2(L);
  if (cand_d) {
    if (valid) {
      const std::int64_t c = (v * NT + i) * Q + trellis::vertex_symbol<L>(q);
      cand_d[c] = d;
#pragma unroll
      for (int j = 0; j < NT; ++j) {
        cand_sym[c * NT + j] =
            std::uint8_t(nway::symbol_index_of_bits(m, unsigned(w >> (j * m)) & ((1u << m) - 1u)));
      }
    }
  } else {
    if constexpr (S::SPLIT) {
      s.cand_d[i * Q + q] = d;
      s.cand_w[i * Q + q] = std::uint16_t(w);
    } else {
      s.cand[i * Q + q] = typename S::Cand{d, w};
    }
    keep_better(d, w, bd, bw);
  }
}

// w | (nway::symbol_bits_fast<KA>(lr, li) << shift) for up to 4 levels per axis, where the
// row's bits of w are zero: the level picks a byte of the spread table by a byte permute (the
// other result bytes pick zero bytes), the imaginary axis from the table shifted by one (no
// entry has its top bit set), and the two disjoint bit sets are added in place.
template <int KA, class Word>
__device__ __forceinline__ Word add_symbol_bits(Word w, int lr, int li, int shift) {
  static_assert(KA <= 2, "four table bytes");
  constexpr unsigned t = unsigned(nway::spread_table(KA, 0));
  const unsigned re = __byte_perm(t, 0u, unsigned(lr) | 0x4440u);
  const unsigned im = __byte_perm(t << 1, 0u, unsigned(li) | 0x4440u);
  return w + (Word(re) << shift) + (Word(im) << shift);
}

// Edge reduction into vertex (a, b) of row i - 1 over the Q published paths.
template <int NT, int L, class S>
__device__ __forceinline__ float reduce_into(const S& s, int i, float a, float b, int* arg) {
  return trellis::reduce_vertex<L * L>(
      [&](int k, float* dk, cf32* uk) {
        const float4 e = s.pub[k];
        *dk = e.x;
        *uk = cf32(e.y, e.z);
      },
      s.rs[(i - 1) * NT + i - 1].re, a, b, arg);
}

// Edge reduction into the V vertices (a[c], b) of row i - 1 that share the imaginary level b:
// for each vertex the operations of trellis::reduce_vertex in its order (edge_weight's
// ei = b part and its square are the same value for the V vertices and computed once per
// incoming path, as is the load of the path).
template <int NT, int L, int V, class S>
__device__ __forceinline__ void reduce_into_v(const S& s, int i, const float (&a)[V], float b,
                                              float (&best)[V], int (&arg)[V]) {
  constexpr int Q = L * L;
  const float d = s.rs[(i - 1) * NT + i - 1].re;
  {
    const float4 e = s.pub[0];
    const float ei = rounding::ffma(-d, b, e.z), ei2 = rounding::fmul(ei, ei);
#pragma unroll
    for (int c = 0; c < V; ++c) {
      const float er = rounding::ffma(-d, a[c], e.y);
      best[c] = rounding::fadd(e.x, rounding::ffma(er, er, ei2));
      arg[c] = 0;
    }
  }
#pragma unroll
  for (int k = 1; k < Q; ++k) {
    const float4 e = s.pub[k];
    const float ei = rounding::ffma(-d, b, e.z), ei2 = rounding::fmul(ei, ei);
#pragma unroll
    for (int c = 0; c < V; ++c) {
      const float er = rounding::ffma(-d, a[c], e.y);
      const float t = rounding::fadd(e.x, rounding::ffma(er, er, ei2));
      const bool better = t < best[c];
      best[c] = better ? t : best[c];
      arg[c] = better ? k : arg[c];
    }
  }
}

// The stages for nt <= 4 (unrolled: every row index is a constant), for the V vertices
// q0 .. q0 + V - 1 of this thread (one imaginary level b). Each path carries its partial
// residuals part[r] for the rows r < i below its last row i: y^_r minus the terms of the rows it
// has decided, applied in residual()'s order (last row first), so that the residual of a row is
// a sub_term away instead of a sum over the path's vertices (no vertex unpacking, no vertex
// word). The extension applies each row's term to the rows below it as it decides the row; a
// path taken over by the reduction into row i - 1 brings its partials (shared memory) and gets
// the term of its new vertex. The V paths of a thread are independent; each gets the CPU's
// operations in the CPU's order.
template <int NT, int L, int V, class S, class Word>
__device__ __forceinline__ void stages_partial(S& s, int q0, int vl, std::int64_t v, bool valid,
                                               const float (&a)[V], float b, const Word (&qbits)[V],
                                               float (&dist)[V], Word (&pb)[V], float* cand_d,
                                               std::uint8_t* cand_sym, float* bd, Word* bw) {
  constexpr int Q = L * L, T = Q / V, G = vectors_per_block<NT, L>(), KA = nway::log2_pow2(L);
  constexpr int m = 2 * KA, NR = NT - 1;
  cf32 part[V][NR];
#pragma unroll
  for (int r = 0; r < NR; ++r) {
    const cf32 y = s.yh[r], rr = s.rs[(NT - 1) * NT + r];
#pragma unroll
    for (int c = 0; c < V; ++c) part[c][r] = trellis::sub_term(y, rr, a[c], b);
  }
#pragma unroll
  for (int i = NT - 1; i >= 0; --i) {
    // Path q ends at vertex q of row i; its residual at row i-1, part[i - 1], serves the
    // extension of list L_i and the reduction into row i-1 (the paper's shared delta_k).
    if (i > 0) {
#pragma unroll
      for (int c = 0; c < V; ++c) {
        publish(s, q0 + c, dist[c], part[c][i - 1], pb[c]);
#pragma unroll
        for (int r = 0; r < i - 1; ++r) s.part[r * Q + q0 + c] = part[c][r];
      }
    }
    {
      // Extension (trellis::extend's operations, in its order, per path).
      float d[V];
      Word w[V];
      cf32 e[V][NR];
#pragma unroll
      for (int c = 0; c < V; ++c) {
        d[c] = dist[c];
        w[c] = pb[c];
#pragma unroll
        for (int r = 0; r < NR; ++r) e[c][r] = part[c][r];
      }
#pragma unroll
      for (int r = i - 1; r >= 0; --r) {
        const float inv = s.inv_top[r], dr = s.rs[r * NT + r].re;
        cf32 rc[NR];
#pragma unroll
        for (int rr = 0; rr < r; ++rr) rc[rr] = s.rs[r * NT + rr];
#pragma unroll
        for (int c = 0; c < V; ++c) {
          int lr, li;
          const float ea = nway::slice_amplitude_scaled(e[c][r].re, inv, L, &lr);
          const float eb = nway::slice_amplitude_scaled(e[c][r].im, inv, L, &li);
          d[c] = rounding::fadd(d[c], trellis::edge_weight(e[c][r], dr, ea, eb));
          if constexpr (V > 1 && KA <= 2) {
            w[c] = add_symbol_bits<KA>(w[c], lr, li, r * m);
          } else {
            w[c] |= Word(nway::symbol_bits_fast<KA>(lr, li)) << (r * m);
          }
#pragma unroll
          for (int rr = 0; rr < r; ++rr) e[c][rr] = trellis::sub_term(e[c][rr], rc[rr], ea, eb);
        }
      }
#pragma unroll
      for (int c = 0; c < V; ++c) {
        emit_list_path<NT, L>(s, q0 + c, i, v, valid, d[c], w[c], cand_d, cand_sym, bd, bw);
      }
    }
    if (i == 0) break;
    vector_sync<T, G>(vl);
    float nd[V];
    int arg[V];
    if constexpr (V == 1) {
      nd[0] = reduce_into<NT, L>(s, i, a[0], b, &arg[0]);
    } else {
      reduce_into_v<NT, L, V>(s, i, a, b, nd, arg);
    }
    Word npb[V];
    cf32 np[V][NR];
#pragma unroll
    for (int c = 0; c < V; ++c) npb[c] = published_bits(s, arg[c]) | (qbits[c] << ((i - 1) * m));
#pragma unroll
    for (int r = 0; r < i - 1; ++r) {
      const cf32 rr = s.rs[(i - 1) * NT + r];
#pragma unroll
      for (int c = 0; c < V; ++c) np[c][r] = trellis::sub_term(s.part[r * Q + arg[c]], rr, a[c], b);
    }
    vector_sync<T, G>(vl);  // every thread has read the published state before it is overwritten
#pragma unroll
    for (int c = 0; c < V; ++c) {
      dist[c] = nd[c];
      pb[c] = npb[c];
#pragma unroll
      for (int r = 0; r < i - 1; ++r) part[c][r] = np[c][r];
    }
  }
}

// The stages for nt = 8 (a loop: each path carries its vertex word; residuals are summed over
// its vertices).
template <int NT, int L, class S, class Word>
__device__ __forceinline__ void stages_path(S& s, int q, int vl, std::int64_t v, bool valid,
                                            float a, float b, Word qbits, float dist, Word pb,
                                            float* cand_d, std::uint8_t* cand_sym, float* bd,
                                            Word* bw) {
  constexpr int Q = L * L, G = vectors_per_block<NT, L>(), m = 2 * nway::log2_pow2(L);
  static_assert(vertices_per_thread<NT, L>() == 1, "one vertex per thread");
  Path p = trellis::with_vertex(0, NT - 1, q);
#pragma unroll 1
  for (int i = NT - 1; i >= 0; --i) {
    cf32 u(0.f, 0.f);
    if (i > 0) {
      u = trellis::residual<NT, L>(s.rs, s.yh[i - 1], i - 1, p);
      publish(s, q, dist, u, pb);
      s.path[q] = p;
    }
    {
      float d = dist;
      Path pp = p;
      Word w = pb;
      if (i > 0) trellis::extend<NT, L, Word>(s.rs, s.yh, s.inv_top, i - 1, u, &d, &pp, &w);
      emit_list_path<NT, L>(s, q, i, v, valid, d, w, cand_d, cand_sym, bd, bw);
    }
    if (i == 0) break;
    vector_sync<Q, G>(vl);
    int arg = 0;
    const float nd = reduce_into<NT, L>(s, i, a, b, &arg);
    const Path np = trellis::with_vertex(s.path[arg], i - 1, q);
    const Word npb = published_bits(s, arg) | (qbits << ((i - 1) * m));
    vector_sync<Q, G>(vl);  // every thread has read the published state before it is overwritten
    dist = nd;
    p = np;
    pb = npb;
  }
}

template <int NT, int L>
__global__ void __launch_bounds__(vectors_per_block<NT, L>() * threads_per_vector<NT, L>())
    trellis_kernel(const cf32* __restrict__ r, std::int64_t r_stride, const cf32* __restrict__ z,
                   std::int64_t z_stride, std::int64_t vectors, int vpc, float scale,
                   const float* __restrict__ n0, std::int64_t n0_size, float clip,
                   std::uint8_t* __restrict__ bits, float* __restrict__ llrs,
                   float* __restrict__ cand_d, std::uint8_t* __restrict__ cand_sym) {
  using S = VectorSmem<NT, L>;
  using Word = typename S::Word;
  using Cand = typename S::Cand;
  constexpr int NB = S::NB, NC = S::NC, SC = S::SC, V = S::V, T = S::T;
  constexpr int G = vectors_per_block<NT, L>();
  constexpr int kStride = vector_stride<S>();
  // Raw storage: cf32's member initialisers make S non-trivially constructible.
  __shared__ __align__(16) unsigned char raw[kStride * G];
  const int vl = int(threadIdx.x) / T, t = int(threadIdx.x) - vl * T;
  S& s = *reinterpret_cast<S*>(raw + vl * kStride);
  const std::int64_t v = std::int64_t(blockIdx.x) * G + vl;
  const bool valid = v < vectors;
  // Threads of a vector past the end compute on zeros (no NaN arises) and write nothing; they
  // take part in every barrier.
  {
    // One channel per vector (vpc = 1, uniform) skips the 64-bit division's subroutine.
    const std::int64_t ch = vpc == 1 ? v : v / vpc;
    const cf32* rv = r + (valid ? ch * r_stride : 0);
    auto load_r = [&](int idx) {
      const int j = idx / NT, i = idx - j * NT;
      s.rs[idx] = (valid && i <= j) ? trellis::scaled(rv[idx], scale) : cf32(0.f, 0.f);
    };
    if constexpr (T >= NT * NT) {
      if (t < NT * NT) load_r(t);
    } else if constexpr (NT % T == 0) {
      // Whole columns per thread: the row of each entry is a constant.
#pragma unroll
      for (int k = 0; k < NT * NT / T; ++k) load_r(t * (NT * NT / T) + k);
    } else {
      for (int idx = t; idx < NT * NT; idx += T) load_r(idx);
    }
    if constexpr (T >= NT) {
      if (t < NT) s.yh[t] = valid ? z[v * z_stride + t] : cf32(0.f, 0.f);
    } else {
#pragma unroll
      for (int idx = t; idx < NT; idx += T)
        s.yh[idx] = valid ? z[v * z_stride + idx] : cf32(0.f, 0.f);
    }
  }
  vector_sync<T, G>(vl);
  // nway::slice_scale(x, L) = fmul(x, fdiv(1, L - 1)); the quotient is a correctly rounded
  // constant, folded here.
  constexpr float kInvTop = 1.f / float(L - 1);
  if constexpr (T >= NT) {
    if (t < NT) s.inv_top[t] = rounding::fmul(trellis::inv_half(s.rs[t * NT + t].re), kInvTop);
  } else {
    for (int idx = t; idx < NT; idx += T)
      s.inv_top[idx] = rounding::fmul(trellis::inv_half(s.rs[idx * NT + idx].re), kInvTop);
  }
  vector_sync<T, G>(vl);

  // This thread's vertices q0 .. q0 + V - 1: one imaginary level, consecutive real levels.
  const int q0 = t * V;
  constexpr int m = 2 * nway::log2_pow2(L);
  const float b = trellis::amp_im<L>(q0);
  float a[V], dist[V];
  Word qbits[V], pb[V];
  {
    const cf32 y = s.yh[NT - 1];
    const float d = s.rs[(NT - 1) * NT + NT - 1].re;
#pragma unroll
    for (int c = 0; c < V; ++c) {
      a[c] = trellis::amp_re<L>(q0 + c);
      dist[c] = trellis::edge_weight(y, d, a[c], b);
      // Bits of the surviving path, carried along instead of recomputed from its vertices (the
      // same word as path_bits(p)); qbits: the bits of the vertex.
      qbits[c] = trellis::vertex_bits<L>(q0 + c);
      pb[c] = qbits[c] << ((NT - 1) * m);
    }
  }
  // The best of this thread's list paths (a NaN start loses to any distance).
  float bd = __int_as_float(0x7fffffff);
  Word bw = 0;
  if constexpr (S::PARTIAL) {
    stages_partial<NT, L, V>(s, q0, vl, v, valid, a, b, qbits, dist, pb, cand_d, cand_sym, &bd,
                             &bw);
  } else {
    stages_path<NT, L>(s, q0, vl, v, valid, a[0], b, qbits[0], dist[0], pb[0], cand_d, cand_sym,
                       &bd, &bw);
  }
  if (cand_d) return;  // uniform over the grid: no barrier follows

  // Max-log merge over the union of the nt lists, by best path and counter-hypothesis: with
  // d* = min over all list paths (fminf) and x its bits, min_{b_j = x_j} d = d*, and only
  // min_{b_j != x_j} d needs a scan. The minima are those of the CPU reference's two-minima
  // scan (fminf is exact and order-free; a tie at d* gives d* on both sides either way).
  // Best path of the vector: butterfly over its lanes, then over its warps (T > 32).
  {
    constexpr int W = T < 32 ? T : 32;
#pragma unroll
    for (int off = W / 2; off > 0; off >>= 1) {
      const float od = __shfl_xor_sync(0xffffffffu, bd, off);
      const Word ow = __shfl_xor_sync(0xffffffffu, bw, off);
      keep_better(od, ow, &bd, &bw);
    }
    if constexpr (S::WARPS > 1) {
      if ((t & 31) == 0) {
        s.best_d[t >> 5] = bd;
        s.best_w[t >> 5] = bw;
      }
    }
  }
  vector_sync<T, G>(vl);  // the list paths (and the per-warp bests) are published
  if constexpr (S::WARPS > 1) {
#pragma unroll
    for (int k = 0; k < S::WARPS; ++k) keep_better(s.best_d[k], s.best_w[k], &bd, &bw);
  }
  const float inv_n0 = valid ? rounding::fdiv(1.f, n0[n0_size == 1 ? 0 : v]) : 0.f;
  auto emit = [&](int j, float counter) {
    const bool one = (bw >> j) & 1u;  // the best path's bit j
    const float m0 = one ? counter : bd, m1 = one ? bd : counter;
    const std::int64_t o = v * NB + j;
    bits[o] = nway::hard_of_minima(m0, m1);
    if (llrs) llrs[o] = nway::llr_of_minima(m0, m1, inv_n0, clip);
  };
  // Fewer threads than bits (V > 1): thread t scans every list path for its BPT bits
  // t * BPT .. t * BPT + BPT - 1, one shared-memory load per two list paths for all of them.
  constexpr int BPT = S::BPT;
  if constexpr (BPT > 1) {
    Word mask[BPT];
    float cm[BPT];
#pragma unroll
    for (int k = 0; k < BPT; ++k) {
      mask[k] = Word(1) << (t * BPT + k);
      cm[k] = kInf;
    }
    if constexpr (S::SPLIT) {
      // Four list paths per pair of loads: distances (float4) and 16-bit words (two per
      // 32-bit lane, tested against the best path's word in both halves).
      const float4* d4 = reinterpret_cast<const float4*>(s.cand_d);
      const uint2* w4 = reinterpret_cast<const uint2*>(s.cand_w);
      const unsigned bw2 = unsigned(bw) | (unsigned(bw) << 16);
      auto scan_groups = [&](int g0, int count) {
#pragma unroll
        for (int g = 0; g < count; ++g) {
          const float4 d = d4[g0 + g];
          const uint2 w = w4[g0 + g];
          const unsigned x0 = w.x ^ bw2, x1 = w.y ^ bw2;
#pragma unroll
          for (int k = 0; k < BPT; ++k) {
            const unsigned lo = unsigned(mask[k]), hi = lo << 16;
            if (x0 & lo) cm[k] = rounding::fmin_num(cm[k], d.x);
            if (x0 & hi) cm[k] = rounding::fmin_num(cm[k], d.y);
            if (x1 & lo) cm[k] = rounding::fmin_num(cm[k], d.z);
            if (x1 & hi) cm[k] = rounding::fmin_num(cm[k], d.w);
          }
        }
      };
      constexpr int Q = S::Q, m = 2 * nway::log2_pow2(L);
      if constexpr (BPT == m && T == NT) {
        // Thread t owns the bits of stream t, and path q of its own list L_t has the bits of
        // vertex q there: that list splits by each bit at compile time (two minima per bit,
        // no tests), the other lists are scanned.
        const float4* own = d4 + t * (Q / 4);
        float dq[Q];
#pragma unroll
        for (int g = 0; g < Q / 4; ++g) {
          const float4 d = own[g];
          dq[4 * g] = d.x;
          dq[4 * g + 1] = d.y;
          dq[4 * g + 2] = d.z;
          dq[4 * g + 3] = d.w;
        }
#pragma unroll
        for (int k = 0; k < BPT; ++k) {
          float m0 = kInf, m1 = kInf;
#pragma unroll
          for (int q = 0; q < Q; ++q) {
            if ((trellis::vertex_bits<L>(q) >> k) & 1u) {
              m1 = rounding::fmin_num(m1, dq[q]);
            } else {
              m0 = rounding::fmin_num(m0, dq[q]);
            }
          }
          cm[k] = (bw & mask[k]) ? m0 : m1;
        }
#pragma unroll
        for (int o = 1; o < NT; ++o) scan_groups(((t + o) & (NT - 1)) * (Q / 4), Q / 4);
      } else {
        scan_groups(0, NC / 4);
      }
    } else {
      static_assert(sizeof(Cand) == 8, "two list paths per load");
      const uint4* pairs = reinterpret_cast<const uint4*>(s.cand);
#pragma unroll(NC / 2 <= 32 ? NC / 2 : 4)
      for (int pr = 0; pr < NC / 2; ++pr) {
        const uint4 e = pairs[pr];
#pragma unroll
        for (int k = 0; k < BPT; ++k) {
          if ((e.y ^ bw) & mask[k]) cm[k] = rounding::fmin_num(cm[k], __uint_as_float(e.x));
          if ((e.w ^ bw) & mask[k]) cm[k] = rounding::fmin_num(cm[k], __uint_as_float(e.z));
        }
      }
    }
    if (valid) {
#pragma unroll
      for (int k = 0; k < BPT; ++k) emit(t * BPT + k, cm[k]);
    }
    return;
  }
  // Thread (sub, j): counter-hypothesis minimum of bit j over the list paths of pairs sub,
  // sub + SC, ... (two list paths per shared-memory load with 8-byte list entries).
  // Compile-time trip counts where SC divides the number of pairs, fully unrolled up to 32.
  constexpr int ITEMS = (NB * SC + T - 1) / T;
#pragma unroll 1
  for (int it = 0; it < ITEMS; ++it) {
    const int item = t + it * T;
    if (NB * SC % T != 0 && item >= NB * SC) break;
    const int sub = item / NB, j = item - sub * NB;
    const Word mask = Word(1) << j;
    float cm = kInf;
    if constexpr (sizeof(Cand) == 8 && NC / 2 % SC == 0) {
      constexpr int TRIPS = NC / 2 / SC;
      const uint4* pairs = reinterpret_cast<const uint4*>(s.cand);
#pragma unroll(TRIPS <= 32 ? TRIPS : 4)
      for (int tr = 0; tr < TRIPS; ++tr) {
        const uint4 e = pairs[sub + tr * SC];
        if ((e.y ^ bw) & mask) cm = rounding::fmin_num(cm, __uint_as_float(e.x));
        if ((e.w ^ bw) & mask) cm = rounding::fmin_num(cm, __uint_as_float(e.z));
      }
    } else if constexpr (sizeof(Cand) == 8) {
      const uint4* pairs = reinterpret_cast<const uint4*>(s.cand);
#pragma unroll 4
      for (int pr = sub; pr < NC / 2; pr += SC) {
        const uint4 e = pairs[pr];
        if ((e.y ^ bw) & mask) cm = rounding::fmin_num(cm, __uint_as_float(e.x));
        if ((e.w ^ bw) & mask) cm = rounding::fmin_num(cm, __uint_as_float(e.z));
      }
    } else {
#pragma unroll 4
      for (int c = sub; c < NC; c += SC) {
        const Cand e = s.cand[c];
        if ((e.w ^ bw) & mask) cm = rounding::fmin_num(cm, e.d);
      }
    }
    if constexpr (SC == 1) {
      if (valid) emit(j, cm);
    } else {
      s.red[item] = cm;
    }
  }
  if constexpr (SC > 1) {
    vector_sync<T, G>(vl);
    if (valid && t < NB) {
      float cm = kInf;
      for (int sub = 0; sub < SC; ++sub) cm = rounding::fmin_num(cm, s.red[sub * NB + t]);
      emit(t, cm);
    }
  }
}

template <int NT, int L>
void launch(const cf32* r, std::int64_t r_stride, const cf32* z, std::int64_t z_stride,
            std::int64_t vectors, int vpc, const float* n0, std::int64_t n0_size, float clip,
            std::uint8_t* bits, float* llrs, float* cand_d, std::uint8_t* cand_sym,
            cudaStream_t stream) {
  constexpr int G = vectors_per_block<NT, L>(), threads = G * threads_per_vector<NT, L>();
  static_assert(vector_stride<VectorSmem<NT, L>>() * G <= 48 * 1024,
                "static shared memory over 48 KB");
  const float scale = qam_scale(Modulation(2 * nway::log2_pow2(L)));
  const std::int64_t blocks = (vectors + G - 1) / G;
  trellis_kernel<NT, L><<<unsigned(blocks), threads, 0, stream>>>(r, r_stride, z, z_stride, vectors,
                                                                  vpc, scale, n0, n0_size, clip,
                                                                  bits, llrs, cand_d, cand_sym);
  MIMORX_CUDA_CHECK_LAUNCH();
}

template <int NT>
void launch_l(int levels, const cf32* r, std::int64_t r_stride, const cf32* z,
              std::int64_t z_stride, std::int64_t vectors, int vpc, const float* n0,
              std::int64_t n0_size, float clip, std::uint8_t* bits, float* llrs, float* cand_d,
              std::uint8_t* cand_sym, cudaStream_t s) {
  switch (levels) {
    case 2:
      return launch<NT, 2>(r, r_stride, z, z_stride, vectors, vpc, n0, n0_size, clip, bits, llrs,
                           cand_d, cand_sym, s);
    case 4:
      return launch<NT, 4>(r, r_stride, z, z_stride, vectors, vpc, n0, n0_size, clip, bits, llrs,
                           cand_d, cand_sym, s);
    case 8:
      return launch<NT, 8>(r, r_stride, z, z_stride, vectors, vpc, n0, n0_size, clip, bits, llrs,
                           cand_d, cand_sym, s);
    case 16:
      return launch<NT, 16>(r, r_stride, z, z_stride, vectors, vpc, n0, n0_size, clip, bits, llrs,
                            cand_d, cand_sym, s);
  }
  throw Unsupported("mod: " + std::to_string(levels) + " levels per axis");
}

}  // namespace

void search(const cf32* r, std::int64_t r_stride, const cf32* z, std::int64_t z_stride,
            std::int64_t vectors, int vectors_per_channel, int nt, Modulation mod, const float* n0,
            std::int64_t n0_size, float clip, std::uint8_t* bits, float* llrs, float* cand_d,
            std::uint8_t* cand_sym, int device, void* stream) {
  if (vectors == 0) return;
  MIMORX_CUDA_CHECK(cudaSetDevice(device));
  const cudaStream_t s = detail::as_stream(stream);
  const int levels = axis_levels(mod), vpc = vectors_per_channel;
  switch (nt) {
    case 2:
      return launch_l<2>(levels, r, r_stride, z, z_stride, vectors, vpc, n0, n0_size, clip, bits,
                         llrs, cand_d, cand_sym, s);
    case 4:
      return launch_l<4>(levels, r, r_stride, z, z_stride, vectors, vpc, n0, n0_size, clip, bits,
                         llrs, cand_d, cand_sym, s);
    case 8:
      return launch_l<8>(levels, r, r_stride, z, z_stride, vectors, vpc, n0, n0_size, clip, bits,
                         llrs, cand_d, cand_sym, s);
  }
  throw Unsupported("nt: " + std::to_string(nt));
}

}  // namespace mimorx::detect::trellis_cuda

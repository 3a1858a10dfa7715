// CUDA K-best detector, one warp per received vector (docs/kbest.md, GPU mapping). Paths live
// in registers, packed (level index of real level c at bits c*B, B = log2 sqrt(M)): kept path
// r in lane r % 32 of register r / 32. Per level every path's interference-cancelled
// observation (kbest::parent_z's order of operations), the children c = p*L + i in slot c, and
// the K best by the warp network (kbest_warp_network.cuh) on keys (distance bits << 32 | c),
// which orders exactly as the CPU reference's stable sort by distance. The per-bit minima come
// from bit masks over the sorted list: the first listed path with a bit value has its minimum.
#include <cstdint>
#include <type_traits>

#include "core/cuda_check.hpp"
#include "detect/kbest_cuda.hpp"
#include "detect/kbest_math.hpp"
#include "detect/kbest_warp_network.cuh"
#include "detect/nway_fast_math.hpp"
#include "detect/nway_math.hpp"
#include "mimorx/core/rounding.hpp"

namespace mimorx::detect::kbest_cuda {

namespace {

using warp::Key;
using warp::kFull;
using warp::kPad;

constexpr float kInf = __builtin_huge_valf();
// Warps (vectors) per block and blocks per SM asked of the register allocator (a thread's
// registers at most 65536 / (blocks * 32 * warps), in steps of 8). The network's chains of
// dependent shuffles need warps to hide their latency, and more warps win over the spills that
// fewer registers cost, except for 256-QAM and the 8-stream trees with K >= 16. Chosen per shape
// from measurements on an H200 (docs/kbest.md, GPU mapping).
struct Occupancy {
  int warps, blocks;
};
template <int NT, int L, int KP>
constexpr Occupancy occupancy() {
  if (L == 16) return {4, 8};              // 64 registers, 32 warps
  if (L * KP >= 256) return {4, 16};       // 32 registers, 64 warps
  if (NT == 8 && KP >= 16) return {8, 4};  // 64 registers, 32 warps
  if (L * KP <= 64) return {4, 12};        // 40 registers, 48 warps
  return {4, 10};                          // 48 registers, 40 warps
}

constexpr int kMaxEs = nway::Layout(8).es;

// kbest::parent_z of level l on a packed path: the same ffma sequence, so the same rounding.
template <int NT, int L, int l>
__device__ __forceinline__ float packed_parent_z(const float* e, unsigned path) {
  constexpr int B = nway::log2_pow2(L);
  constexpr nway::Layout lay(NT);
  float z = e[lay.yhat(l)];
#pragma unroll
  for (int c = lay.d - 1; c > l; --c) {
    const int i = int((path >> (c * B)) & unsigned(L - 1));
    z = rounding::ffma(-e[lay.r(l, c)], float(2 * i - (L - 1)), z);
  }
  return z;
}

// The level indices of a packed path, indexed by real coordinate.
template <int L>
struct PackedLevels {
  unsigned path;
  __device__ int operator[](int c) const {
    return int((path >> (c * nway::log2_pow2(L))) & unsigned(L - 1));
  }
};

// Bits of a packed full path (bit t*m + k = b_k of stream t), as kbest::path_bits.
template <int NT, int L>
__device__ __forceinline__ unsigned packed_path_bits(unsigned path) {
  constexpr int B = nway::log2_pow2(L);
  unsigned w = 0;
#pragma unroll
  for (int p = 0; p < NT; ++p) {
    const int ir = int((path >> (2 * p * B)) & unsigned(L - 1));
    const int ii = int((path >> ((2 * p + 1) * B)) & unsigned(L - 1));
    w |= nway::symbol_bits_fast<B>(ir, ii) << (p * 2 * B);
  }
  return w;
}

// Distance of the first listed path (lowest slot) whose bit is set in mask; +inf if none.
// Every lane calls it (the shuffles are warp-wide). A shuffle reads only the low 5 bits of its
// source lane (PTX shfl.sync), so lane indices here and below pass unmasked (-1 reads lane 31).
template <int PR>
__device__ __forceinline__ float first_distance(const unsigned (&mask)[PR],
                                                const float (&dist)[PR]) {
  float out = kInf;
#pragma unroll
  for (int q = PR - 1; q >= 0; --q) {
    const float dq = __shfl_sync(kFull, dist[q], __ffs(int(mask[q])) - 1);
    if (mask[q] != 0u) out = dq;
  }
  return out;
}

// The 32 x 32 bit matrix whose row l is lane l's w, transposed: bit l of lane x's result is bit
// x of lane l's w (what __ballot_sync of bit x gives lane x), in 5 butterfly stages instead of
// one ballot per bit. Stage s swaps bit s of the row and the column index: lanes l and l ^ s
// exchange the blocks of s columns where their bit s differs (a byte permutation for s >= 8, a
// rotation and a masked merge below).
__device__ __forceinline__ unsigned transpose_bits(unsigned w, int lane) {
  const bool up16 = (lane & 16) != 0, up8 = (lane & 8) != 0;
  w = __byte_perm(w, __shfl_xor_sync(kFull, w, 16), up16 ? 0x3276u : 0x5410u);
  w = __byte_perm(w, __shfl_xor_sync(kFull, w, 8), up8 ? 0x3715u : 0x6240u);
#pragma unroll
  for (int s = 4; s >= 1; s >>= 1) {
    const unsigned lo = s == 4 ? 0x0f0f0f0fu : s == 2 ? 0x33333333u : 0x55555555u;
    const bool up = (lane & s) != 0;
    const unsigned o = __shfl_xor_sync(kFull, w, s);
    const unsigned rot = __funnelshift_l(o, o, up ? 32 - s : s);
    const unsigned keep = up ? ~lo : lo;  // columns with the lane's bit s value
    w = (w & keep) | (rot & ~keep);
  }
  return w;
}

// Packed path -> the complement of its axis bits: TS 38.211's axis bits c_0..c_(B-1) of level i
// are the complement of the bit-reversed Gray code of i (checked at compile time in
// nway_fast_math.hpp), so within every B-bit field bit B-1-jj is ~c_jj.
template <int NT, int L>
__device__ __forceinline__ unsigned packed_gray(unsigned path) {
  constexpr int B = nway::log2_pow2(L);
  unsigned tops = 0;
  for (int f = 0; f < 2 * NT; ++f) tops |= 1u << (B * f + B - 1);
  return path ^ ((path >> 1) & ~tops);
}
// Where bit j of the vector (b_b of stream t) sits in packed_gray: axis field 2t + (b & 1), bit
// B - 1 - (b >> 1).
template <int L>
__device__ __forceinline__ int gray_position(int j) {
  constexpr int B = nway::log2_pow2(L);
  const int t = j / (2 * B), b = j - t * 2 * B;
  return B * (2 * t + (b & 1)) + (B - 1 - (b >> 1));
}

// nway::flip_level(log2 L, ib, jj, value) for every argument, a nibble each (index
// (value B + jj) L + ib), in 64-bit words that are selected without an indexed array.
template <int L>
struct FlipTable {
  static constexpr int B = nway::log2_pow2(L), kWords = (2 * B * L + 15) / 16;
  unsigned long long w[kWords] = {};
  constexpr FlipTable() {
    for (unsigned v = 0; v < 2; ++v)
      for (int jj = 0; jj < B; ++jj)
        for (int ib = 0; ib < L; ++ib) {
          const int x = (int(v) * B + jj) * L + ib;
          w[x / 16] |= (unsigned long long)(nway::flip_level(B, ib, jj, v)) << (x % 16 * 4);
        }
  }
};
template <int L>
__device__ __forceinline__ int flip_level_of(int ib, int jj, unsigned value) {
  constexpr FlipTable<L> kTab;
  constexpr int B = nway::log2_pow2(L);
  const int x = (int(value) * B + jj) * L + ib;
  unsigned long long word = kTab.w[0];
#pragma unroll
  for (int k = 1; k < FlipTable<L>::kWords; ++k) word = x / 16 == k ? kTab.w[k] : word;
  return int((word >> (x % 16 * 4)) & 15u);
}

// nway::complete_minima for bit j = lane of the list whose best path is `best` (packed), with
// the work shared by the warp: lane i < 2NT computes the best path's error e_i once
// (nway::path_errors' operations), and each lane missing a counter-hypothesis takes e_0..e_p by
// shuffles into nway::flip_metric's sums, in its order. Every lane calls it.
template <int NT, int L>
__device__ __forceinline__ void warp_complete_minima(const float* e, unsigned best, int lane,
                                                     bool active, float& min0, float& min1) {
  constexpr int B = nway::log2_pow2(L), D = 2 * NT;
  constexpr nway::Layout lay(NT);
  constexpr float kInf = __builtin_huge_valf();
  const PackedLevels<L> lev{best};
  const bool miss0 = min0 == kInf, miss1 = min1 == kInf;
  const bool need = active && miss0 != miss1;
  if (!__any_sync(kFull, need)) return;
  const int i = lane < D ? lane : D - 1;
  float z = e[lay.yhat(i)];
#pragma unroll
  for (int c = D - 1; c > 0; --c) {
    const float a = float(nway::level_amplitude(L, lev[c]));
    if (c > i) z = rounding::ffma(-e[lay.r(i, c)], a, z);
  }
  const float err = rounding::ffma(-e[lay.r(i, i)], float(nway::level_amplitude(L, lev[i])), z);
  const int m = 2 * B, t = lane / m, b = lane - t * m;
  const int p = (2 * t + (b & 1)) & (D - 1);
  float sum_r2 = 0.f, sum_re = 0.f;
#pragma unroll
  for (int k = 0; k < D; ++k) {
    const float ek = __shfl_sync(kFull, err, k);
    if (k <= p) {
      const float rkp = e[lay.r(k, p)];
      sum_r2 = rounding::ffma(rkp, rkp, sum_r2);
      sum_re = rounding::ffma(rkp, ek, sum_re);
    }
  }
  if (!need) return;
  const int to = flip_level_of<L>(lev[p], b >> 1, miss0 ? 0u : 1u);
  const float delta = float(2 * (to - lev[p]));
  const float d_b = miss0 ? min1 : min0;
  const float d = rounding::fadd(
      d_b, rounding::fmul(delta, rounding::ffma(delta, sum_r2, rounding::fmul(-2.f, sum_re))));
  if (miss0) {
    min0 = d;
  } else {
    min1 = d;
  }
}

// Per-lane state of one vector's kept paths: path r in lane r % 32 of register r / 32.
template <int PR>
struct Paths {
  unsigned path[PR];
  float dist[PR];
  // With incremental_z: the path's observation of every level below the last fixed one, its
  // multiply-adds over the fixed levels done (kbest::parent_z's order: level c's term is added
  // when c is fixed, from the top down).
  float zr[16];
};

// Whether the kept paths carry their partial observations (one register per remaining level,
// moved with the path by a shuffle and one multiply-add per level) instead of recomputing
// kbest::parent_z from the packed levels on every level (a level index extracted and converted
// per fixed level): where one register holds the paths (no instantiation spills).
template <int NT, int L, int KP>
constexpr bool incremental_z() {
  return KP <= 32;
}

// Slot `slot` of a per-slot quantity held in registers x[0..PR) (slot s: register s / 32, lane
// s % 32, the shuffle's low 5 bits of s); every lane calls it (the shuffles are warp-wide).
template <int PR, class T, int M>
__device__ __forceinline__ T gather(const T (&x)[M], unsigned slot) {
  static_assert(PR <= M);
  T out = __shfl_sync(kFull, x[0], int(slot));
#pragma unroll
  for (int q = 1; q < PR; ++q) {
    const T t = __shfl_sync(kFull, x[q], int(slot));
    out = (slot >> 5) == unsigned(q) ? t : out;
  }
  return out;
}

// The 64-bit selection of a level with (near-)ties: out of line, one copy per shape instead of
// one per level (the keys pass through local memory on this rare path).
template <int C, int R>
__device__ __noinline__ void select_exact(Key (&v)[R], int lane) {
  warp::select_smallest<C>(v, lane);
}

// One level: the children of the `count` kept paths in RA registers of slots (child c in slot
// c), the K best of them as the new kept paths; CH (compile time) bounds the children. The
// selection runs on 32-bit keys (distance bits with the low log2(32 RA) bits replaced by c),
// which order like (distance, c) unless two children agree in all the other bits. A parent's L
// children are V-shaped in distance (the error z - R'_ll a is monotone in the level a, rounding
// included), so the network starts from bitonic L-chunks; where keys tie or a near-tie breaks
// that shape, its result may be wrong, and a check that does not trust the network decides: the
// kept keys' prefixes strictly increase and exactly nc children have a prefix at most the last
// kept one's. Then the kept children are exactly those nearer than every dropped one, in
// distance order. Otherwise (ties, rare near-ties) the level is selected again on 64-bit keys
// (distance bits << 32 | c) from any input order. Above the last level, where every child is
// kept, nothing is selected: the list keeps child order.
template <int NT, int L, int KP, int RA, int CH, int l, int PR>
__device__ __forceinline__ void expand(const float* e, int count, int kk, int lane,
                                       const float (&z)[PR], Paths<PR>& st) {
  constexpr int B = nway::log2_pow2(L);
  constexpr nway::Layout lay(NT);
  constexpr int CA = KP < RA * 32 ? KP : RA * 32;  // kept slots of the selection
  constexpr unsigned kIdx = RA * 32 - 1u;          // child-index bits of a 32-bit key
  constexpr int SQ = (CA + 31) / 32;               // registers holding kept slots
  // With at most KP children every one is kept: the first CS slots are sorted instead.
  constexpr bool kAll = CH <= KP;
  constexpr int CS = kAll ? (CH <= 2 ? 2 : 1 << nway::log2_pow2(2 * CH - 1)) : CA;
  constexpr int NQ = (CS + 31) / 32;  // registers holding the slots that can be kept
  // CH = KP L: count is kk (search_levels), so kk of the kk L children are kept.
  const int children = count * L, nc = CH == KP * L || children >= kk ? kk : children;
  float cd[RA];
  unsigned key[RA], sel[RA];
#pragma unroll
  for (int r = 0; r < RA; ++r) {
    const int c = r * 32 + lane;
    float zp = z[0], dp = st.dist[0];  // one parent: the same in every lane
    if constexpr (CH > L) {
      // Parent p = c / L sits in register r / L of lane p % 32.
      constexpr int kLast = PR - 1;
      const int pq = r / L < kLast ? r / L : kLast;
      zp = __shfl_sync(kFull, z[pq], c >> B);
      dp = __shfl_sync(kFull, st.dist[pq], c >> B);
    }
    cd[r] = kbest::child_distance(e, lay, l, L, zp, c & (L - 1), dp);
    key[r] = (kbest::key_of(cd[r]) & ~kIdx) | (c < children ? unsigned(c) : ~0u);
    sel[r] = key[r];
  }
  static_assert(!kAll || NQ <= RA);
  unsigned kept_c[NQ];
  float kept_d[NQ];
  // Above the last level a list that keeps every child keeps them in child order (the CPU
  // reference's order too): the next level's selection takes any order, and only the final
  // list is sorted.
  bool in_order = false;
  if constexpr (kAll && l > 0) in_order = children <= kk;
  if (in_order) {
#pragma unroll
    for (int q = 0; q < NQ; ++q) {
      kept_c[q] = unsigned(q * 32 + lane);
      kept_d[q] = cd[q];
    }
  } else {
    if constexpr (kAll) {
      warp::sort_first<CS, L>(sel, lane);
    } else {
      warp::select_smallest<CA, L>(sel, lane);
    }
    bool bad = false;
#pragma unroll
    for (int q = 0; q < NQ; ++q) {
      const unsigned up = __shfl_up_sync(kFull, sel[q], 1);
      const unsigned wrap = __shfl_sync(kFull, sel[q > 0 ? q - 1 : 0], 31);
      const unsigned prev = q > 0 && lane == 0 ? wrap : up;
      const int r = q * 32 + lane;
      bad |= r >= 1 && r < nc && (prev | kIdx) >= sel[q];
    }
    // Padding keys (~0u) exceed every child's key; a padding key kept as the last makes the
    // count all 32 RA slots, which differs from nc unless there is no padding. Where every one
    // of the CS sorted slots is a kept child (kAll, nc = CS: no padding, and the sort permutes
    // just these slots), the prefix check alone decides and the count is skipped.
    bool exact = !__any_sync(kFull, bad);
    if (!(kAll && nc == CS)) {
      const unsigned last = gather<NQ>(sel, unsigned(nc - 1)) | kIdx;
      int below = 0;
#pragma unroll
      for (int r = 0; r < RA; ++r) below += __popc(__ballot_sync(kFull, key[r] <= last));
      exact = exact && below == nc;
    }
    if (exact) {
#pragma unroll
      for (int q = 0; q < NQ; ++q) {
        kept_c[q] = sel[q] & kIdx;
        kept_d[q] = gather<RA>(cd, kept_c[q]);
      }
    } else {
      Key exact[RA];
#pragma unroll
      for (int r = 0; r < RA; ++r) {
        const int c = r * 32 + lane;
        exact[r] = c < children ? (Key(kbest::key_of(cd[r])) << 32) | unsigned(c) : kPad;
      }
      select_exact<CA>(exact, lane);
#pragma unroll
      for (int q = 0; q < NQ; ++q) {
        kept_c[q] = unsigned(exact[q]);
        kept_d[q] = kbest::distance_of_key(unsigned(exact[q] >> 32));
      }
    }
  }
  static_assert(NQ <= SQ);
  unsigned kept_path[NQ];  // every parent read before any path is replaced
#pragma unroll
  for (int q = 0; q < NQ; ++q) {
    const unsigned parent = gather<PR>(st.path, kept_c[q] >> B);
    kept_path[q] = parent | ((kept_c[q] & unsigned(L - 1)) << (l * B));
  }
  if constexpr (incremental_z<NT, L, KP>()) {
    static_assert(PR == 1 && NQ == 1);
    const float a = float(2 * int(kept_c[0] & unsigned(L - 1)) - (L - 1));
#pragma unroll
    for (int lp = 0; lp < l; ++lp) {
      float zp = st.zr[lp];  // one parent: the same in every lane
      if constexpr (CH > L) zp = __shfl_sync(kFull, st.zr[lp], int(kept_c[0] >> B));
      st.zr[lp] = rounding::ffma(-e[lay.r(lp, l)], a, zp);
    }
  }
  // Registers NQ..SQ-1 hold no kept path yet (at most CS <= 32 children): left as they are.
#pragma unroll
  for (int q = 0; q < NQ; ++q) {
    st.path[q] = kept_path[q];
    st.dist[q] = kept_d[q];
  }
}

// At most how many children level l of a 2NT-level tree has with KP paths kept: the slot
// registers it needs.
template <int NT, int L, int KP, int l>
constexpr int level_children() {
  int paths = 1;
  for (int i = 2 * NT - 1; i > l && paths < KP; --i) paths *= L;
  return (paths < KP ? paths : KP) * L;
}
template <int NT, int L, int KP, int l>
constexpr int level_registers() {
  int regs = 1;
  while (regs * 32 < level_children<NT, L, KP, l>()) regs *= 2;
  return regs;
}

// Levels l, l-1, ..., 0 (compile-time level: constant shared-memory offsets and shifts) with
// `count` paths kept above level l; returns the final list size, min(k, L^(2NT)).
template <int NT, int L, int KP, int l, int PR>
__device__ __forceinline__ int search_levels(const float* e, int count, int kk, int lane,
                                             Paths<PR>& st) {
  float z[PR];
#pragma unroll
  for (int q = 0; q < PR; ++q) {
    if constexpr (incremental_z<NT, L, KP>()) {
      z[q] = st.zr[l];
    } else {
      z[q] = packed_parent_z<NT, L, l>(e, st.path[q]);
    }
  }
  // With at least KP >= kk paths above level l exactly kk are kept: the same count on every such
  // level, so what depends on it (the padding slots) is computed once.
  const int above = level_children<NT, L, KP, l>() == KP * L ? kk : count;
  expand<NT, L, KP, level_registers<NT, L, KP, l>(), level_children<NT, L, KP, l>(), l>(
      e, above, kk, lane, z, st);
  const int kept = above * L < kk ? above * L : kk;
  if constexpr (l > 0) {
    return search_levels<NT, L, KP, l - 1>(e, kept, kk, lane, st);
  } else {
    return kept;
  }
}

// One vector's ES floats of E from global into shared memory: in 16- or 8-byte pieces where the
// size and the address allow (kMaxEs is a multiple of 4, so every warp's copy is aligned), else
// float by float.
template <int ES>
__device__ __forceinline__ void load_e(const float* __restrict__ src, float* dst, int lane) {
  constexpr int W = ES % 4 == 0 ? 4 : ES % 2 == 0 ? 2 : 1;
  static_assert(kMaxEs % 4 == 0);
  if constexpr (W > 1) {
    using Vec = std::conditional_t<W == 4, float4, float2>;
    if ((reinterpret_cast<std::uintptr_t>(src) & (sizeof(Vec) - 1)) == 0) {
      for (int i = lane; i < ES / W; i += 32) {
        reinterpret_cast<Vec*>(dst)[i] = reinterpret_cast<const Vec*>(src)[i];
      }
      return;
    }
  }
  for (int i = lane; i < ES; i += 32) dst[i] = src[i];
}

// NT streams, L levels per real dimension, KP >= k (a power of two) paths kept per level.
template <int NT, int L, int KP>
__global__ void __launch_bounds__(occupancy<NT, L, KP>().warps * 32, occupancy<NT, L, KP>().blocks)
    kbest_warp_kernel(const float* __restrict__ e_in, std::int64_t vectors, int kk,
                      const float* __restrict__ n0, std::int64_t n0_size, float clip,
                      std::uint8_t* __restrict__ bits, float* __restrict__ llrs,
                      float* __restrict__ cand_d, std::uint8_t* __restrict__ cand_sym) {
  constexpr int B = nway::log2_pow2(L);
  constexpr int PR = KP > 32 ? KP / 32 : 1;  // path registers per lane
  constexpr nway::Layout lay(NT);
  constexpr int nt = NT;
  constexpr int kWarps = occupancy<NT, L, KP>().warps;
  __shared__ float4 es_all[kWarps][kMaxEs / 4];  // float4: 16-byte aligned copies
  const int lane = int(threadIdx.x) & 31, wid = int(threadIdx.x) >> 5;
  const std::int64_t v = std::int64_t(blockIdx.x) * kWarps + wid;
  if (v >= vectors) return;  // a whole warp leaves together
  float* e = reinterpret_cast<float*>(es_all[wid]);
  load_e<lay.es>(e_in + v * lay.es, e, lane);
  __syncwarp();

  Paths<PR> st;
#pragma unroll
  for (int q = 0; q < PR; ++q) {
    st.path[q] = 0u;
    st.dist[q] = 0.f;
  }
#pragma unroll
  for (int i = 0; i < 2 * NT; ++i) st.zr[i] = e[lay.yhat(i)];
  const int count = search_levels<NT, L, KP, 2 * NT - 1>(e, 1, kk, lane, st);
  auto& path = st.path;
  auto& dist = st.dist;

  const int m = 2 * B, nb = nt * m;
  if (cand_d) {
#pragma unroll
    for (int q = 0; q < PR; ++q) {
      const int r = q * 32 + lane;
      if (r >= kk) continue;
      const std::int64_t c = v * kk + r;
      const bool listed = r < count;
      cand_d[c] = listed ? dist[q] : kInf;
      const unsigned w = listed ? packed_path_bits<NT, L>(path[q]) : 0u;
      for (int t = 0; t < nt; ++t) {
        cand_sym[c * nt + t] =
            listed ? std::uint8_t(nway::symbol_index_of_bits(m, (w >> (t * m)) & ((1u << m) - 1)))
                   : std::uint8_t(0);
      }
    }
    return;
  }
  // Lane j (< nb) gathers bit j: masks over the list of the paths with the bit set (a bit
  // transpose of the paths' Gray words), and of the listed paths with a non-NaN distance
  // (fmin_num skips NaN; NaN keys sort last).
  unsigned valid[PR], ones[PR];
#pragma unroll
  for (int q = 0; q < PR; ++q) {
    const int r = q * 32 + lane;
    valid[q] = __ballot_sync(kFull, r < count && dist[q] == dist[q]);
    const unsigned gray = transpose_bits(packed_gray<NT, L>(path[q]), lane);
    ones[q] = ~__shfl_sync(kFull, gray, gray_position<L>(lane));
  }
  unsigned with1[PR], with0[PR];
#pragma unroll
  for (int q = 0; q < PR; ++q) {
    with1[q] = ones[q] & valid[q];
    with0[q] = ~ones[q] & valid[q];
  }
  float m1 = first_distance(with1, dist), m0 = first_distance(with0, dist);
  const unsigned best = __shfl_sync(kFull, path[0], 0);
  // Path 0 of the sorted list is the best candidate (nway::complete_minima).
  warp_complete_minima<NT, L>(e, best, lane, lane < nb, m0, m1);
  if (lane >= nb) return;
  bits[v * nb + lane] = nway::hard_of_minima(m0, m1);
  if (llrs) {
    const float inv_n0 = rounding::fdiv(1.f, n0[n0_size == 1 ? 0 : v]);
    llrs[v * nb + lane] = nway::llr_of_minima(m0, m1, inv_n0, clip);
  }
}

template <int NT, int L, int KP>
void launch_nt(const float* e, std::int64_t vectors, int k, const float* n0, std::int64_t n0_size,
               float clip, std::uint8_t* bits, float* llrs, float* cand_d, std::uint8_t* cand_sym,
               cudaStream_t s) {
  constexpr int kWarps = occupancy<NT, L, KP>().warps;
  const std::int64_t blocks = (vectors + kWarps - 1) / kWarps;
  kbest_warp_kernel<NT, L, KP><<<unsigned(blocks), kWarps * 32, 0, s>>>(
      e, vectors, k, n0, n0_size, clip, bits, llrs, cand_d, cand_sym);
  MIMORX_CUDA_CHECK_LAUNCH();
}

// Packed paths: 2nt levels of log2(L) bits in 32 bits.
constexpr bool packs(int nt, int levels) { return 2 * nt * nway::log2_pow2(levels) <= 32; }

template <int L, int KP>
void launch(const float* e, std::int64_t vectors, int nt, int k, const float* n0,
            std::int64_t n0_size, float clip, std::uint8_t* bits, float* llrs, float* cand_d,
            std::uint8_t* cand_sym, cudaStream_t s) {
  if (nt == 2) {
    launch_nt<2, L, KP>(e, vectors, k, n0, n0_size, clip, bits, llrs, cand_d, cand_sym, s);
  } else if (nt == 4) {
    launch_nt<4, L, KP>(e, vectors, k, n0, n0_size, clip, bits, llrs, cand_d, cand_sym, s);
  } else if constexpr (packs(8, L)) {
    launch_nt<8, L, KP>(e, vectors, k, n0, n0_size, clip, bits, llrs, cand_d, cand_sym, s);
  }
}

// The instantiated (L, KP): L * KP <= 256 child slots (8 key registers) and KP <= 64.
template <int L>
bool launch_kp(int kp, const float* e, std::int64_t vectors, int nt, int k, const float* n0,
               std::int64_t n0_size, float clip, std::uint8_t* bits, float* llrs, float* cand_d,
               std::uint8_t* cand_sym, cudaStream_t s) {
  switch (kp) {
    case 8:
      launch<L, 8>(e, vectors, nt, k, n0, n0_size, clip, bits, llrs, cand_d, cand_sym, s);
      return true;
    case 16:
      launch<L, 16>(e, vectors, nt, k, n0, n0_size, clip, bits, llrs, cand_d, cand_sym, s);
      return true;
    case 32:
      if constexpr (L <= 8) {
        launch<L, 32>(e, vectors, nt, k, n0, n0_size, clip, bits, llrs, cand_d, cand_sym, s);
        return true;
      }
      return false;
    case 64:
      if constexpr (L <= 4) {
        launch<L, 64>(e, vectors, nt, k, n0, n0_size, clip, bits, llrs, cand_d, cand_sym, s);
        return true;
      }
      return false;
    default:
      return false;
  }
}

}  // namespace

bool search_warp(const float* e, std::int64_t vectors, int nt, Modulation mod, int k,
                 const float* n0, std::int64_t n0_size, float clip, std::uint8_t* bits, float* llrs,
                 float* cand_d, std::uint8_t* cand_sym, void* stream) {
  if (!warp_kernel_fits(nt, mod, k)) return false;
  const cudaStream_t s = detail::as_stream(stream);
  const int kp = warp_width(k);
  switch (axis_levels(mod)) {
    case 2:
      return launch_kp<2>(kp, e, vectors, nt, k, n0, n0_size, clip, bits, llrs, cand_d, cand_sym,
                          s);
    case 4:
      return launch_kp<4>(kp, e, vectors, nt, k, n0, n0_size, clip, bits, llrs, cand_d, cand_sym,
                          s);
    case 8:
      return launch_kp<8>(kp, e, vectors, nt, k, n0, n0_size, clip, bits, llrs, cand_d, cand_sym,
                          s);
    case 16:
      return launch_kp<16>(kp, e, vectors, nt, k, n0, n0_size, clip, bits, llrs, cand_d, cand_sym,
                           s);
    default:
      return false;
  }
}

}  // namespace mimorx::detect::kbest_cuda

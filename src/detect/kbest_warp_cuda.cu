// CUDA K-best detector, one warp per received vector (docs/kbest.md, GPU mapping). Paths live
// in registers, packed (level index of real level c at bits c*B, B = log2 sqrt(M)): kept path
// r in lane r % 32 of register r / 32. Per level every path's interference-cancelled
// observation (kbest::parent_z's order of operations), the children c = p*L + i in slot c, and
// the K best by the warp network (kbest_warp_network.cuh) on keys (distance bits << 32 | c),
// which orders exactly as the CPU reference's stable sort by distance. The per-bit minima come
// from ballots over the sorted list: the first listed path with a bit value has its minimum.
#include <cstdint>

#include "core/cuda_check.hpp"
#include "detect/kbest_cuda.hpp"
#include "detect/kbest_math.hpp"
#include "detect/kbest_warp_network.cuh"
#include "detect/nway_math.hpp"
#include "mimorx/core/rounding.hpp"

namespace mimorx::detect::kbest_cuda {

namespace {

using warp::Key;
using warp::kFull;
using warp::kPad;

constexpr float kInf = __builtin_huge_valf();
constexpr int kWarps = 8;  // vectors (warps) per block
constexpr int kMaxEs = nway::Layout(8).es;

// kbest::parent_z on a packed path: the same ffma sequence, so the same rounding.
template <int L>
__device__ __forceinline__ float packed_parent_z(const float* e, const nway::Layout& lay, int l,
                                                 unsigned path) {
  constexpr int B = nway::log2_pow2(L);
  float z = e[lay.yhat(l)];
  for (int c = lay.d - 1; c > l; --c) {
    const int i = int((path >> (c * B)) & unsigned(L - 1));
    z = rounding::ffma(-e[lay.r(l, c)], float(2 * i - (L - 1)), z);
  }
  return z;
}

// Bits of a packed full path (bit t*m + k = b_k of stream t), as kbest::path_bits.
template <int L>
__device__ __forceinline__ unsigned packed_path_bits(unsigned path, int nt) {
  constexpr int B = nway::log2_pow2(L);
  unsigned w = 0;
  for (int p = 0; p < nt; ++p) {
    const int ir = int((path >> (2 * p * B)) & unsigned(L - 1));
    const int ii = int((path >> ((2 * p + 1) * B)) & unsigned(L - 1));
    w |= nway::symbol_bits_fast<B>(ir, ii) << (p * 2 * B);
  }
  return w;
}

// Distance of the first listed path (lowest slot) whose bit is set in mask; +inf if none.
// Every lane calls it (the shuffles are warp-wide).
template <int PR>
__device__ __forceinline__ float first_distance(const unsigned (&mask)[PR],
                                                const float (&dist)[PR]) {
  float out = kInf;
#pragma unroll
  for (int q = PR - 1; q >= 0; --q) {
    const float dq = __shfl_sync(kFull, dist[q], (__ffs(int(mask[q])) - 1) & 31);
    if (mask[q] != 0u) out = dq;
  }
  return out;
}

// L levels per real dimension, KP >= k (a power of two) paths kept per level.
template <int L, int KP>
__global__ void __launch_bounds__(kWarps * 32)
    kbest_warp_kernel(const float* __restrict__ e_in, std::int64_t vectors, int nt, int kk,
                      const float* __restrict__ n0, std::int64_t n0_size, float clip,
                      std::uint8_t* __restrict__ bits, float* __restrict__ llrs,
                      float* __restrict__ cand_d, std::uint8_t* __restrict__ cand_sym) {
  constexpr int B = nway::log2_pow2(L);
  constexpr int N = KP * L > 32 ? KP * L : 32;  // child slots, padded to a whole register
  constexpr int R = N / 32;                     // key registers per lane
  constexpr int PR = KP > 32 ? KP / 32 : 1;     // path registers per lane
  __shared__ float es_all[kWarps][kMaxEs];
  const int lane = int(threadIdx.x) & 31, wid = int(threadIdx.x) >> 5;
  const std::int64_t v = std::int64_t(blockIdx.x) * kWarps + wid;
  if (v >= vectors) return;  // a whole warp leaves together
  const nway::Layout lay(nt);
  float* e = es_all[wid];
  for (int i = lane; i < lay.es; i += 32) e[i] = e_in[v * lay.es + i];
  __syncwarp();

  unsigned path[PR];
  float dist[PR];
#pragma unroll
  for (int q = 0; q < PR; ++q) {
    path[q] = 0u;
    dist[q] = 0.f;
  }
  int count = 1;
#pragma unroll 1
  for (int l = lay.d - 1; l >= 0; --l) {
    float z[PR];
#pragma unroll
    for (int q = 0; q < PR; ++q) z[q] = packed_parent_z<L>(e, lay, l, path[q]);
    Key key[R];
    const int children = count * L;
#pragma unroll
    for (int r = 0; r < R; ++r) {
      const int c = r * 32 + lane, p = c >> B;
      // Parent p sits in register p / 32 = r / L of lane p % 32.
      constexpr int kLast = PR - 1;
      const int pq = r / L < kLast ? r / L : kLast;
      const float zp = __shfl_sync(kFull, z[pq], p & 31);
      const float dp = __shfl_sync(kFull, dist[pq], p & 31);
      const float cd = kbest::child_distance(e, lay, l, L, zp, c & (L - 1), dp);
      key[r] = c < children ? (Key(kbest::key_of(cd)) << 32) | unsigned(c) : kPad;
    }
    warp::select_smallest<KP>(key, lane);
#pragma unroll
    for (int q = 0; q < PR; ++q) {
      const unsigned c = unsigned(key[q]), p = c >> B;
      unsigned parent = __shfl_sync(kFull, path[0], int(p & 31u));
      if constexpr (PR > 1) {
        const unsigned hi = __shfl_sync(kFull, path[1], int(p & 31u));
        parent = p >= 32u ? hi : parent;
      }
      path[q] = parent | ((c & unsigned(L - 1)) << (l * B));
      dist[q] = kbest::distance_of_key(unsigned(key[q] >> 32));
    }
    count = children < kk ? children : kk;
  }

  const int m = 2 * B, nb = nt * m;
  if (cand_d) {
#pragma unroll
    for (int q = 0; q < PR; ++q) {
      const int r = q * 32 + lane;
      if (r >= kk) continue;
      const std::int64_t c = v * kk + r;
      const bool listed = r < count;
      cand_d[c] = listed ? dist[q] : kInf;
      const unsigned w = listed ? packed_path_bits<L>(path[q], nt) : 0u;
      for (int t = 0; t < nt; ++t) {
        cand_sym[c * nt + t] =
            listed ? std::uint8_t(nway::symbol_index_of_bits(m, (w >> (t * m)) & ((1u << m) - 1)))
                   : std::uint8_t(0);
      }
    }
    return;
  }
  // Lane j (< nb) gathers bit j: masks over the list of the paths with the bit set, and of the
  // listed paths with a non-NaN distance (fmin_num skips NaN; NaN keys sort last).
  unsigned valid[PR], ones[PR], w[PR];
#pragma unroll
  for (int q = 0; q < PR; ++q) {
    const int r = q * 32 + lane;
    valid[q] = __ballot_sync(kFull, r < count && dist[q] == dist[q]);
    w[q] = packed_path_bits<L>(path[q], nt);
    ones[q] = 0u;
  }
  for (int j = 0; j < nb; ++j) {
#pragma unroll
    for (int q = 0; q < PR; ++q) {
      const unsigned b = __ballot_sync(kFull, (w[q] >> j) & 1u);
      if (lane == j) ones[q] = b;
    }
  }
  unsigned with1[PR], with0[PR];
#pragma unroll
  for (int q = 0; q < PR; ++q) {
    with1[q] = ones[q] & valid[q];
    with0[q] = ~ones[q] & valid[q];
  }
  float m1 = first_distance(with1, dist), m0 = first_distance(with0, dist);
  const unsigned best = __shfl_sync(kFull, path[0], 0);
  if (lane >= nb) return;
  std::uint8_t lev[16];
  for (int c = 0; c < lay.d; ++c) lev[c] = std::uint8_t((best >> (c * B)) & unsigned(L - 1));
  // Path 0 of the sorted list is the best candidate (nway::complete_minima).
  nway::PathErrors pe;
  nway::complete_minima(e, lay, B, nt, 0, lev, lane, &m0, &m1, pe);
  bits[v * nb + lane] = nway::hard_of_minima(m0, m1);
  if (llrs) {
    const float inv_n0 = rounding::fdiv(1.f, n0[n0_size == 1 ? 0 : v]);
    llrs[v * nb + lane] = nway::llr_of_minima(m0, m1, inv_n0, clip);
  }
}

template <int L, int KP>
void launch(const float* e, std::int64_t vectors, int nt, int k, const float* n0,
            std::int64_t n0_size, float clip, std::uint8_t* bits, float* llrs, float* cand_d,
            std::uint8_t* cand_sym, cudaStream_t s) {
  const std::int64_t blocks = (vectors + kWarps - 1) / kWarps;
  kbest_warp_kernel<L, KP><<<unsigned(blocks), kWarps * 32, 0, s>>>(
      e, vectors, nt, k, n0, n0_size, clip, bits, llrs, cand_d, cand_sym);
  MIMORX_CUDA_CHECK_LAUNCH();
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

// The list width the warp kernel runs for k: the next power of two, at least 8.
int warp_width(int k) {
  int kp = 8;
  while (kp < k) kp *= 2;
  return kp;
}

}  // namespace

bool warp_kernel_fits(int nt, Modulation mod, int k) {
  const int levels = axis_levels(mod), kp = warp_width(k);
  // Packed paths: 2nt levels of log2(L) bits in 32 bits.
  if (2 * nt * axis_bits(mod) > 32) return false;
  return kp <= 64 && kp * levels <= 256;
}

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

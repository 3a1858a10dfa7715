// The batched CPU layered decoders (decoder_batch_cpu.hpp): kCpuBatch codewords in the lanes of
// one GNU vector (int16 lanes for the integer path, float lanes for the float path);
// `target_clones` builds an AVX2 and a baseline (SSE2) version of the hot functions and picks
// one at load time.
//
// Per row, as IntArith / FloatArith (decoder_quant.hpp) and the paired CUDA kernel
// (decoder_pair.hpp):
//   q_j = L_v - R_j (integer: saturated at +-127), m1 <= m2 the two smallest |q_j| (127 or 3e38
//   if larger), total sign = product of the signs (q < 0),
//   |R_j| = scale(m2) where |q_j| == m1 else scale(m1) (a second edge with |q_j| == m1 means
//   m2 == m1, so this equals the reference's "scale(m2) at the first minimum only"),
//   sign R_j = total ^ sign q_j, L_v = q_j + R_j (integer: saturated).
// The float operations are the reference's, single rounded, in the same order per lane (the
// build has no contraction), so the lanes reproduce it bit for bit. Messages are kept in full
// (one value per edge, row and lane) instead of compressed records.
#include "ldpc/decoder_batch_cpu.hpp"

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <type_traits>

#include "mimorx/core/error.hpp"

namespace mimorx::ldpc::detail {
namespace {

constexpr int W = kCpuBatch;
constexpr int kMaxDegree = 32;  // TS 38.212 rows have at most 19 edges
using i16 = std::int16_t;

std::atomic<bool> g_batch_enabled{true};

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && \
    !defined(__SANITIZE_ADDRESS__)
#define MIMORX_LANE_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define MIMORX_LANE_CLONES
#endif
#define MIMORX_LANE_INLINE inline __attribute__((always_inline))

// The lanes as GNU vectors (16 x int16 = 256 bits, one AVX2 register, for all kCpuBatch lanes;
// 8 x float, two vectors per batch). Explicit vectors instead of loops over the lanes: the
// compiler then needs no aliasing checks and keeps a row's minima in registers. No vector crosses
// a non-inlined function boundary (that would change the calling convention between the clones).
// (Explicit specialisations: GCC takes vector attributes only on non-dependent types. Loads,
// stores and broadcasts are macros, not functions: a function returning a vector would be
// compiled for the baseline ABI in the AVX2 clone too.)
template <class T>
struct Lanes;
using vec_i16 = i16 __attribute__((vector_size(W * sizeof(i16))));
// float: 8 lanes (one AVX2 register), two vectors per batch; GCC scalarises the conditionals of
// a 16-float vector on AVX2.
using vec_f32 = float __attribute__((vector_size(8 * sizeof(float))));
template <>
struct Lanes<i16> {
  using vec = vec_i16;
  using vec_u = vec_i16 __attribute__((aligned(alignof(i16))));  // unaligned access
};
template <>
struct Lanes<float> {
  using vec = vec_f32;
  using vec_u = vec_f32 __attribute__((aligned(alignof(float))));
};
#define MIMORX_LOAD(L, p) (*reinterpret_cast<const typename L::vec_u*>(p))
#define MIMORX_STORE(L, p) (*reinterpret_cast<typename L::vec_u*>(p))

// One row r of one layer for the lanes of one vector (from app and msg on: the caller offsets
// them to the first lane). msg: the layer's messages (edge j of the layer, row r, lane w at
// msg[(j z + r) W + w]); q: deg vectors of scratch. P: the arithmetic's parameters
// (IntArith or FloatArith with the iteration's alpha).
template <class T, class P>
MIMORX_LANE_INLINE void row_update(T* app, T* msg, const DecEdge* e, int deg, int r, int z,
                                   const P& a, typename Lanes<T>::vec* q) {
  using L = Lanes<T>;
  using vec = typename L::vec;
  constexpr bool integer = std::is_same_v<T, i16>;
  const vec zero = vec{};
  const vec hi = vec{} + (integer ? T(127) : T(3.0e38f)), lo = vec{} + T(-127);
  vec m1 = hi, m2 = hi;
  auto neg = zero < zero;  // lane masks: all false
  for (int j = 0; j < deg; ++j) {
    const vec l = MIMORX_LOAD(L, app + std::size_t(e[j].colz + wrap_index(r, e[j].shift, z)) * W);
    const vec rj = MIMORX_LOAD(L, msg + (std::size_t(j) * z + r) * W);
    vec x = l - rj;  // integer: |l| <= 127, |rj| <= msg_max, no overflow in int16
    if constexpr (integer) {
      x = x > hi ? hi : x;
      x = x < lo ? lo : x;
    }
    q[j] = x;
    const vec ab = x < zero ? -x : x;
    const vec big = m1 < ab ? ab : m1;
    m1 = m1 < ab ? m1 : ab;
    m2 = m2 < big ? m2 : big;
    neg ^= x < zero;
  }
  vec s1, s2;
  if constexpr (integer) {
    const vec cap = vec{} + T(a.msg_max);
    if (a.offset) {
      const vec beta = vec{} + T(a.beta_q);
      s1 = m1 > beta ? m1 - beta : zero;
      s2 = m2 > beta ? m2 - beta : zero;
    } else {
      s1 = (m1 * T(a.alpha16)) >> 4;  // m <= 127, alpha16 <= 16: fits int16
      s2 = (m2 * T(a.alpha16)) >> 4;
    }
    s1 = s1 < cap ? s1 : cap;
    s2 = s2 < cap ? s2 : cap;
  } else if (a.offset) {
    const vec beta = vec{} + a.beta;
    s1 = m1 > beta ? m1 - beta : zero;
    s2 = m2 > beta ? m2 - beta : zero;
  } else {
    s1 = m1 * a.alpha;
    s2 = m2 * a.alpha;
  }
  for (int j = 0; j < deg; ++j) {
    T* l = app + std::size_t(e[j].colz + wrap_index(r, e[j].shift, z)) * W;
    const vec x = q[j];
    const vec ab = x < zero ? -x : x;
    const vec mag = ab == m1 ? s2 : s1;
    const vec rn = ((x < zero) ^ neg) ? -mag : mag;
    vec y = x + rn;
    if constexpr (integer) {
      y = y > hi ? hi : y;
      y = y < lo ? lo : y;
    }
    MIMORX_STORE(L, l) = y;
    MIMORX_STORE(L, msg + (std::size_t(j) * z + r) * W) = rn;
  }
}

// fail[w] = 1 where lane w (of one vector, from app on) has an unsatisfied row, else 0.
template <class T>
MIMORX_LANE_INLINE void syndrome(const T* app, const DecodeTables& t, bool* fail) {
  using L = Lanes<T>;
  using vec = typename L::vec;
  const vec zero = vec{};
  auto any = zero < zero;
  for (int l = 0; l < t.rows; ++l) {
    const DecEdge* e = t.edges.data() + t.row_start[l];
    const int deg = t.row_start[l + 1] - t.row_start[l];
    for (int r = 0; r < t.z; ++r) {
      auto p = zero < zero;  // the row's parity of the hard decisions (negative = bit 1)
      for (int j = 0; j < deg; ++j)
        p ^= MIMORX_LOAD(L, app + std::size_t(e[j].colz + wrap_index(r, e[j].shift, t.z)) * W) <
             zero;
      any |= p;
    }
  }
  for (int w = 0; w < int(sizeof(vec) / sizeof(T)); ++w) fail[w] = any[w] != 0;
}

template <class T, class A, class Out>
MIMORX_LANE_INLINE void run_batch(const DecodeTables& t, A a, int count, Out* const* app_out,
                                  int* iters, T* app, T* msg) {
  using vec = typename Lanes<T>::vec;
  constexpr int VL = int(sizeof(vec) / sizeof(T));  // lanes per vector: W or W / 2
  const int n = t.n_used, z = t.z;
  int max_deg = 0;
  for (int l = 0; l < t.rows; ++l) max_deg = std::max(max_deg, t.row_start[l + 1] - t.row_start[l]);
  if (max_deg > kMaxDegree) throw InvalidArgument("rows: a row longer than 32 edges");
  vec q[kMaxDegree];
  bool done[W] = {};
  for (int w = count; w < W; ++w) done[w] = true;  // padding lanes
  auto copy_out = [&](int w) {
    Out* o = app_out[w];
    for (int i = 0; i < n; ++i) o[i] = Out(app[std::size_t(i) * W + w]);
  };
  const float* alpha_iter = t.alpha_iter.empty() ? nullptr : t.alpha_iter.data();
  const int* alpha16_iter = t.alpha16_iter.empty() ? nullptr : t.alpha16_iter.data();
  for (int it = 1; it <= t.max_iters; ++it) {
    set_iteration_alpha(a, alpha_iter, alpha16_iter, it);
    for (int l = 0; l < t.rows; ++l) {
      const int e0 = t.row_start[l], deg = t.row_start[l + 1] - e0;
      const DecEdge* e = t.edges.data() + e0;
      T* lm = msg + std::size_t(e0) * z * W;
      for (int r = 0; r < z; ++r)
        for (int h = 0; h < W; h += VL) row_update<T>(app + h, lm + h, e, deg, r, z, a, q);
    }
    if (!t.early_termination) continue;
    bool fail[W];
    for (int h = 0; h < W; h += VL) syndrome<T>(app + h, t, fail + h);
    bool all = true;
    for (int w = 0; w < W; ++w) {
      if (!done[w] && !fail[w]) {
        done[w] = true;
        iters[w] = it;
        copy_out(w);
      }
      all = all && done[w];
    }
    if (all) return;
  }
  for (int w = 0; w < count; ++w) {
    if (done[w]) continue;
    iters[w] = t.max_iters;
    copy_out(w);
  }
}

MIMORX_LANE_CLONES
void run_batch_int(const DecodeTables& t, const IntArith& a, int count, std::int8_t* const* app_out,
                   int* iters, i16* app, i16* msg) {
  run_batch<i16>(t, a, count, app_out, iters, app, msg);
}

MIMORX_LANE_CLONES
void run_batch_float(const DecodeTables& t, const FloatArith& a, int count, float* const* app_out,
                     int* iters, float* app, float* msg) {
  run_batch<float>(t, a, count, app_out, iters, app, msg);
}

// Lane-interleaved copies of the channel values, zero messages.
template <class T, class In>
void load_lanes(const DecodeTables& t, const In* const* channel, int count, std::vector<T>& app,
                std::vector<T>& msg) {
  const std::size_t n = std::size_t(t.n_used);
  app.assign(n * W, T(0));
  msg.assign(t.edges.size() * std::size_t(t.z) * W, T(0));
  for (int w = 0; w < count; ++w)
    for (std::size_t i = 0; i < n; ++i) app[i * W + w] = T(channel[w][i]);
}

}  // namespace

void layered_int_batch(const DecodeTables& t, const IntArith& a, const std::int8_t* const* channel,
                       int count, std::int8_t* const* app_out, int* iters, CpuBatchScratch& s) {
  load_lanes(t, channel, count, s.app, s.msg);
  run_batch_int(t, a, count, app_out, iters, s.app.data(), s.msg.data());
}

void layered_float_batch(const DecodeTables& t, const FloatArith& a, const float* const* channel,
                         int count, float* const* app_out, int* iters, CpuBatchScratch& s) {
  load_lanes(t, channel, count, s.fapp, s.fmsg);
  run_batch_float(t, a, count, app_out, iters, s.fapp.data(), s.fmsg.data());
}

void set_cpu_batch_enabled(bool enabled) { g_batch_enabled = enabled; }
bool cpu_batch_enabled() { return g_batch_enabled; }

}  // namespace mimorx::ldpc::detail

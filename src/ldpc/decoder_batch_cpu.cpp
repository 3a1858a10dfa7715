// The batched CPU integer decoder (decoder_batch_cpu.hpp): kCpuBatch codewords in the int16
// lanes of one GNU vector; `target_clones` builds an AVX2 and a baseline (SSE2) version of the
// hot function and picks one at load time.
//
// Per row, as IntArith (decoder_quant.hpp) and the paired CUDA kernel (decoder_pair.hpp):
//   q_j = sat127(L_v - R_j), m1 <= m2 the two smallest |q_j| (127 if larger), total sign = xor,
//   |R_j| = scale(m2) where |q_j| == m1 else scale(m1) (a second edge with |q_j| == m1 means
//   m2 == m1, so this equals the reference's "scale(m2) at the first minimum only"),
//   sign R_j = total ^ sign q_j, L_v = sat127(q_j + R_j).
// Messages are kept in full (one int16 per edge, row and lane) instead of compressed records.
#include "ldpc/decoder_batch_cpu.hpp"

#include <algorithm>
#include <atomic>
#include <cstddef>

#include "mimorx/core/error.hpp"

namespace mimorx::ldpc::detail {
namespace {

constexpr int W = kCpuBatch;
using i16 = std::int16_t;

std::atomic<bool> g_batch_enabled{true};

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && \
    !defined(__SANITIZE_ADDRESS__)
#define MIMORX_LANE_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define MIMORX_LANE_CLONES
#endif

// All kCpuBatch lanes as one GNU vector (16 x int16 = 256 bits: one AVX2 register, two SSE2
// ones in the baseline clone). Explicit vectors instead of loops over the lanes: the compiler
// then needs no aliasing checks and keeps the row's minima in registers. No vector crosses a
// function boundary (that would change the calling convention between the clones).
using vec = i16 __attribute__((vector_size(W * sizeof(i16))));
using vec_u = vec __attribute__((aligned(alignof(i16))));  // for unaligned access
static_assert(sizeof(vec) == W * sizeof(i16));

#define MIMORX_LOAD(p) (*reinterpret_cast<const vec_u*>(p))
#define MIMORX_STORE(p) (*reinterpret_cast<vec_u*>(p))
constexpr int kMaxDegree = 32;  // TS 38.212 rows have at most 19 edges

// One row r of one layer for all lanes. msg: the layer's messages (edge j of the layer, row r,
// lane w at msg[(j z + r) W + w]); q: deg vectors of scratch.
inline void row_update(i16* app, i16* msg, const DecEdge* e, int deg, int r, int z, int alpha16,
                       int beta_q, bool offset, int msg_max, vec* q) {
  const vec hi = vec{} + i16(127), lo = vec{} - i16(127), zero = vec{};
  vec m1 = hi, m2 = hi, sx = zero;
  for (int j = 0; j < deg; ++j) {
    const vec l = MIMORX_LOAD(app + std::size_t(e[j].colz + wrap_index(r, e[j].shift, z)) * W);
    const vec rj = MIMORX_LOAD(msg + (std::size_t(j) * z + r) * W);
    vec x = l - rj;  // |l| <= 127, |rj| <= msg_max: no overflow in int16
    x = x > hi ? hi : x;
    x = x < lo ? lo : x;
    q[j] = x;
    const vec ab = x < zero ? -x : x;
    const vec big = m1 < ab ? ab : m1;
    m1 = m1 < ab ? m1 : ab;
    m2 = m2 < big ? m2 : big;
    sx ^= x;
  }
  vec s1, s2;
  const vec cap = vec{} + i16(msg_max);
  if (offset) {
    const vec beta = vec{} + i16(beta_q);
    s1 = m1 > beta ? m1 - beta : zero;
    s2 = m2 > beta ? m2 - beta : zero;
  } else {
    s1 = (m1 * i16(alpha16)) >> 4;  // m <= 127, alpha16 <= 16: fits int16
    s2 = (m2 * i16(alpha16)) >> 4;
  }
  s1 = s1 < cap ? s1 : cap;
  s2 = s2 < cap ? s2 : cap;
  for (int j = 0; j < deg; ++j) {
    i16* l = app + std::size_t(e[j].colz + wrap_index(r, e[j].shift, z)) * W;
    const vec x = q[j];
    const vec ab = x < zero ? -x : x;
    const vec mag = ab == m1 ? s2 : s1;
    const vec rn = (x ^ sx) < zero ? -mag : mag;
    vec y = x + rn;
    y = y > hi ? hi : y;
    y = y < lo ? lo : y;
    MIMORX_STORE(l) = y;
    MIMORX_STORE(msg + (std::size_t(j) * z + r) * W) = rn;
  }
}

// Lanes with an unsatisfied row after the iteration: fail[w] != 0.
inline void syndrome(const i16* app, const DecodeTables& t, i16* fail) {
  vec any = vec{};
  for (int l = 0; l < t.rows; ++l) {
    const DecEdge* e = t.edges.data() + t.row_start[l];
    const int deg = t.row_start[l + 1] - t.row_start[l];
    for (int r = 0; r < t.z; ++r) {
      vec p = vec{};
      for (int j = 0; j < deg; ++j)
        p ^= MIMORX_LOAD(app + std::size_t(e[j].colz + wrap_index(r, e[j].shift, t.z)) * W);
      any |= p;  // the sign bit: the row's parity of the hard decisions
    }
  }
  const vec f = any < vec{} ? vec{} + i16(1) : vec{};
  MIMORX_STORE(fail) = f;
}

MIMORX_LANE_CLONES
void run_batch(const DecodeTables& t, const IntArith& a, int count, std::int8_t* const* app_out,
               int* iters, i16* app, i16* msg) {
  const int n = t.n_used, z = t.z;
  int max_deg = 0;
  for (int l = 0; l < t.rows; ++l) max_deg = std::max(max_deg, t.row_start[l + 1] - t.row_start[l]);
  vec q[kMaxDegree];
  if (max_deg > kMaxDegree) throw InvalidArgument("rows: a row longer than 32 edges");
  bool done[W] = {};
  for (int w = count; w < W; ++w) done[w] = true;  // padding lanes
  auto copy_out = [&](int w) {
    std::int8_t* o = app_out[w];
    for (int i = 0; i < n; ++i) o[i] = std::int8_t(app[std::size_t(i) * W + w]);
  };
  for (int it = 1; it <= t.max_iters; ++it) {
    const int alpha16 = t.alpha16_iter.empty() ? a.alpha16 : t.alpha16_iter[it - 1];
    for (int l = 0; l < t.rows; ++l) {
      const int e0 = t.row_start[l], deg = t.row_start[l + 1] - e0;
      const DecEdge* e = t.edges.data() + e0;
      i16* lm = msg + std::size_t(e0) * z * W;
      for (int r = 0; r < z; ++r)
        row_update(app, lm, e, deg, r, z, alpha16, a.beta_q, a.offset, a.msg_max, q);
    }
    if (!t.early_termination) continue;
    alignas(64) i16 fail[W];
    syndrome(app, t, fail);
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

}  // namespace

void layered_int_batch(const DecodeTables& t, const IntArith& a, const std::int8_t* const* channel,
                       int count, std::int8_t* const* app_out, int* iters, CpuBatchScratch& s) {
  const std::size_t n = std::size_t(t.n_used);
  s.app.assign(n * W, 0);
  s.msg.assign(t.edges.size() * std::size_t(t.z) * W, 0);
  for (int w = 0; w < count; ++w)
    for (std::size_t i = 0; i < n; ++i) s.app[i * W + w] = channel[w][i];
  run_batch(t, a, count, app_out, iters, s.app.data(), s.msg.data());
}

void set_cpu_batch_enabled(bool enabled) { g_batch_enabled = enabled; }
bool cpu_batch_enabled() { return g_batch_enabled; }

}  // namespace mimorx::ldpc::detail

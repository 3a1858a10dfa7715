#pragma once
// Arithmetic shared by the CPU layered decoders and the CUDA kernel (MIMORX_HD): one row of one
// layer of layered min-sum, the syndrome of one row, the channel-LLR quantiser. The CPU
// reference and the kernel call these same functions, so the integer path is bit-exact between
// them, and the float path is too (every float operation is a single rounded operation of
// core/rounding.hpp, which no compiler contracts into FMAs).
//
// Check-to-variable (C2V) messages are kept compressed per check row (the paper's "compressed
// messages"): the two smallest |q| already scaled by alpha (NMS) or offset by beta (OMS), the
// position of the smallest, the product of the signs and one sign bit per edge (degree <= 19 in
// BG1, <= 10 in BG2, so 32 bits suffice). Message j of the row is then
//   R_j = (-1)^(total ^ sign_j) * (j == idx ? min2 : min1).
#include <cstdint>

#include "mimorx/core/hd.hpp"
#include "mimorx/core/rounding.hpp"

namespace mimorx::ldpc::detail {

// One non-zero Z x Z block of a decoded base row: variable of row r is colz + (r + shift) % Z.
struct DecEdge {
  int colz;   // column * Z
  int shift;  // P(i, j) in [0, Z)
};

MIMORX_HD int wrap_index(int r, int shift, int z) {
  const int t = r + shift;
  return t >= z ? t - z : t;
}

// ---- integer arithmetic: int8 APP and messages, saturating at +-127 ----
struct IntRec {
  std::uint32_t meta;   // min1 (bits 0-7), min2 (8-15), idx (16-23), total sign (24)
  std::uint32_t signs;  // sign of q_j at bit j
};

struct IntArith {
  using T = std::int8_t;
  using Rec = IntRec;
  int alpha16 = 12;  // NMS: R = (m * alpha16) >> 4, 12 = 0.75 (the paper's *3>>2)
  int beta_q = 1;    // OMS: R = max(m - beta_q, 0), beta in channel-LLR units
  bool offset = false;
  // Message magnitudes saturate at 47, well below the APP's 127. With larger messages an APP
  // saturated at 127 loses evidence on every round trip (q = L - R_old, L = sat(q + R_new)) until
  // the whole word collapses and flips to a far codeword: measured on BG2 Z=40 at Eb/N0 1.2 dB, OMS
  // decoded correctly by iteration 8 and then ended 1480 bits away by iteration 15 with a cap of 63
  // or 127; caps of 15, 31 and 47 stayed put for 30 iterations (tests/ldpc/test_decoder.cpp,
  // EarlyTermination test). The cap must also exceed the channel limit (31 with the default 6
  // bits): a degree-1 parity bit hears one check only, and with a cap equal to the limit a
  // saturated wrong channel value met a saturated correct message in a tie (APP 0, decided as bit
  // 0). At the default channel step 1/4 a cap of 31 left 9 of 64 random BG1 Z=384 words at 5 dB
  // with a wrong parity bit after 20 iterations, a cap of 47 none.
  int msg_max = 47;

  MIMORX_HD static int sat(int x) { return x > 127 ? 127 : (x < -127 ? -127 : x); }
  MIMORX_HD static int big() { return 127; }
  MIMORX_HD static int load(T v) { return int(v); }
  MIMORX_HD static T store(int v) { return T(v); }
  MIMORX_HD static int sub(int l, int r) { return sat(l - r); }
  MIMORX_HD static int add(int q, int r) { return sat(q + r); }
  MIMORX_HD static int mag(int q) { return q < 0 ? -q : q; }
  MIMORX_HD static bool negative(int q) { return q < 0; }
  MIMORX_HD int scale(int m) const {
    const int s = offset ? (m > beta_q ? m - beta_q : 0) : (m * alpha16) >> 4;
    return s < msg_max ? s : msg_max;
  }
  MIMORX_HD static Rec zero_rec() { return Rec{0u, 0u}; }
  MIMORX_HD static Rec make_rec(int n1, int n2, int idx, std::uint32_t total, std::uint32_t signs) {
    return Rec{
        std::uint32_t(n1) | (std::uint32_t(n2) << 8) | (std::uint32_t(idx) << 16) | (total << 24),
        signs};
  }
  MIMORX_HD static int message(const Rec& rec, int j) {
    const int idx = int((rec.meta >> 16) & 0xff);
    const int m = j == idx ? int((rec.meta >> 8) & 0xff) : int(rec.meta & 0xff);
    const std::uint32_t s = ((rec.meta >> 24) ^ (rec.signs >> j)) & 1u;
    return s ? -m : m;
  }
};

// ---- float arithmetic ----
struct FloatRec {
  float min1, min2;
  std::uint32_t meta;  // idx (bits 0-7), total sign (8)
  std::uint32_t signs;
};

using rounding::fadd;
using rounding::fmul;
using rounding::fsub;

struct FloatArith {
  using T = float;
  using Rec = FloatRec;
  float alpha = 0.75f;
  float beta = 0.5f;
  bool offset = false;

  MIMORX_HD static float big() { return 3.0e38f; }
  MIMORX_HD static float load(T v) { return v; }
  MIMORX_HD static T store(float v) { return v; }
  MIMORX_HD static float sub(float l, float r) { return fsub(l, r); }
  MIMORX_HD static float add(float q, float r) { return fadd(q, r); }
  MIMORX_HD static float mag(float q) { return q < 0.f ? -q : q; }
  MIMORX_HD static bool negative(float q) { return q < 0.f; }
  MIMORX_HD float scale(float m) const {
    if (offset) return m > beta ? fsub(m, beta) : 0.f;
    return fmul(m, alpha);
  }
  MIMORX_HD static Rec zero_rec() { return Rec{0.f, 0.f, 0u, 0u}; }
  MIMORX_HD static Rec make_rec(float n1, float n2, int idx, std::uint32_t total,
                                std::uint32_t signs) {
    return Rec{n1, n2, std::uint32_t(idx) | (total << 8), signs};
  }
  MIMORX_HD static float message(const Rec& rec, int j) {
    const int idx = int(rec.meta & 0xff);
    const float m = j == idx ? rec.min2 : rec.min1;
    const std::uint32_t s = ((rec.meta >> 8) ^ (rec.signs >> j)) & 1u;
    return s ? -m : m;
  }
};

// Iteration t's NMS factor (1-based) from the per-iteration tables (null: alpha is constant).
MIMORX_HD void set_iteration_alpha(FloatArith& a, const float* alpha_iter, const int*, int t) {
  if (alpha_iter) a.alpha = alpha_iter[t - 1];
}
MIMORX_HD void set_iteration_alpha(IntArith& a, const float*, const int* alpha16_iter, int t) {
  if (alpha16_iter) a.alpha16 = alpha16_iter[t - 1];
}

#if defined(__CUDA_ARCH__)
#define MIMORX_LDPC_UNROLL _Pragma("unroll")
#else
#define MIMORX_LDPC_UNROLL
#endif

// One row r of one layer (block row) of layered min-sum, in place on the APP array:
//   q_j = L_v - R_j(old), R_j(new) = scale(min_{i != j} |q_i|) * prod_{i != j} sign q_i,
//   L_v = q_j + R_j(new).
// Within a layer every variable belongs to exactly one row (one shift per Z x Z block), so the
// rows of a layer can run in parallel. The loops are unrolled to MAXDEG (>= the row degree) so
// that addresses and q_j stay in registers between the two passes (storing q_j in the APP slot
// and reloading it halves the registers but not the time); the arithmetic and so the results
// are the same either way.
template <int MAXDEG, class A>
MIMORX_HD void layer_row(typename A::T* app, const DecEdge* e, int deg, int r, int z,
                         typename A::Rec& rec, const A& a) {
  using V = decltype(A::load(app[0]));
  int v[MAXDEG];
  V q[MAXDEG];
  V m1 = A::big();
  V m2 = A::big();
  int idx = 0;
  std::uint32_t signs = 0, total = 0;
  MIMORX_LDPC_UNROLL
  for (int j = 0; j < MAXDEG; ++j) {
    if (j < deg) {
      v[j] = e[j].colz + wrap_index(r, e[j].shift, z);
      q[j] = A::sub(A::load(app[v[j]]), A::message(rec, j));
      const V m = A::mag(q[j]);
      if (m < m1) {
        m2 = m1;
        m1 = m;
        idx = j;
      } else if (m < m2) {
        m2 = m;
      }
      const std::uint32_t s = A::negative(q[j]) ? 1u : 0u;
      signs |= s << j;
      total ^= s;
    }
  }
  rec = A::make_rec(a.scale(m1), a.scale(m2), idx, total, signs);
  MIMORX_LDPC_UNROLL
  for (int j = 0; j < MAXDEG; ++j) {
    if (j < deg) app[v[j]] = A::store(A::add(q[j], A::message(rec, j)));
  }
}

// The same update without register arrays: q_j goes to the APP slot in the first pass and is
// read back in the second (within a layer no other row touches that variable). Used for the
// degree-19 rows of BG1 (rows 0-3), whose arrays would not fit in 64 registers per thread.
template <class A>
MIMORX_HD void layer_row_inplace(typename A::T* app, const DecEdge* e, int deg, int r, int z,
                                 typename A::Rec& rec, const A& a) {
  auto m1 = A::big();
  auto m2 = A::big();
  int idx = 0;
  std::uint32_t signs = 0, total = 0;
  for (int j = 0; j < deg; ++j) {
    const int v = e[j].colz + wrap_index(r, e[j].shift, z);
    const auto q = A::sub(A::load(app[v]), A::message(rec, j));
    app[v] = A::store(q);
    const auto m = A::mag(q);
    if (m < m1) {
      m2 = m1;
      m1 = m;
      idx = j;
    } else if (m < m2) {
      m2 = m;
    }
    const std::uint32_t s = A::negative(q) ? 1u : 0u;
    signs |= s << j;
    total ^= s;
  }
  rec = A::make_rec(a.scale(m1), a.scale(m2), idx, total, signs);
  for (int j = 0; j < deg; ++j) {
    const int v = e[j].colz + wrap_index(r, e[j].shift, z);
    app[v] = A::store(A::add(A::load(app[v]), A::message(rec, j)));
  }
}

// Rows of degree <= 10 (all of BG2, BG1 rows >= 4) keep q_j in registers; longer rows update
// in place. Both compute the same numbers.
template <class A>
MIMORX_HD void layer_row(typename A::T* app, const DecEdge* e, int deg, int r, int z,
                         typename A::Rec& rec, const A& a) {
  if (deg <= 10) {
    layer_row<10>(app, e, deg, r, z, rec, a);
  } else {
    layer_row_inplace(app, e, deg, r, z, rec, a);
  }
}

// Parity of the hard decisions (negative APP = bit 1) on row r of a layer: 0 when satisfied.
template <class T>
MIMORX_HD int row_parity(const T* app, const DecEdge* e, int deg, int r, int z) {
  int p = 0;
  for (int j = 0; j < deg; ++j) {
    p ^= app[e[j].colz + wrap_index(r, e[j].shift, z)] < T(0) ? 1 : 0;
  }
  return p;
}

// Channel LLR -> integer in units of 1/scale, rounded half away from zero, saturated at
// +-(2^(bits-1) - 1). The clamp comes before the rounding so huge values cannot overflow.
MIMORX_HD int quantize_llr(float llr, float scale, int limit) {
  const float t = fmul(llr, scale);
  const float lim = float(limit);
  if (t >= lim) return limit;
  if (t <= -lim) return -limit;
  return t >= 0.f ? int(fadd(t, 0.5f)) : -int(fadd(-t, 0.5f));
}

// A pre-quantised channel value saturated to +-limit (DecoderPlan's int8 LLR input).
MIMORX_HD int clamp_llr(int q, int limit) { return q > limit ? limit : (q < -limit ? -limit : q); }

}  // namespace mimorx::ldpc::detail

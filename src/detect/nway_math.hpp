#pragma once
// Arithmetic shared by the CPU reference and the CUDA kernels of the N-way (SSFE) and K-best
// detectors. Every rounding is explicit (core/rounding.hpp: fused multiply-adds written as ffma,
// products that are later added written as fmul, which nvcc does not contract) so that the CPU
// and the GPU compute bit-identical QR factors, distances and candidate lists.
//
// Real-valued model, modified real-valued decomposition (MRVD): complex column p of the (rotated)
// channel becomes real columns 2p (real part of x_p) and 2p+1 (imaginary part); complex row i
// becomes real rows 2i and 2i+1:
//   [Re h  -Im h]
//   [Im h   Re h]
// The two real columns of one symbol are orthogonal with equal norms, also after projecting out
// earlier pairs, so R has 2x2 diagonal blocks r I: the real and imaginary parts of a symbol
// decouple once the symbols below it are fixed, and slicing each is exact for that symbol.
#include <cmath>
#include <cstdint>

#include "mimorx/core/complex.hpp"
#include "mimorx/core/hd.hpp"
#include "mimorx/core/rounding.hpp"
#include "mimorx/modem/modulation.hpp"

namespace mimorx::detect::nway {

// ---- rounding-explicit float operations (core/rounding.hpp) ----------------------------------
using rounding::fadd;
using rounding::fdiv;
using rounding::ffma;
using rounding::fmin_num;
using rounding::fmul;
using rounding::fsqrt;
using rounding::fsub;

// ---- workspace layout per (vector, pass) problem -----------------------------------------
// [packed R' row by row, R' = qam_scale * R, upper triangle][Q^T y (D)][1 / (2 R'_ll) (D)],
// D = 2 nt. With R' the search works on integer PAM amplitudes a (x = qam_scale * a).
struct Layout {
  int d = 0;       // 2 nt
  int rcount = 0;  // D (D + 1) / 2
  int es = 0;      // floats per problem
  MIMORX_HD constexpr explicit Layout(int nt)
      : d(2 * nt), rcount(nt * (2 * nt + 1)), es(rcount + 4 * nt) {}
  MIMORX_HD int row(int l) const { return l * d - (l * (l - 1)) / 2; }  // R'(l, l)
  MIMORX_HD int r(int l, int c) const { return row(l) + (c - l); }
  MIMORX_HD int yhat(int l) const { return rcount + l; }
  MIMORX_HD int inv(int l) const { return rcount + d + l; }
};
// log2 of a power of two (bits per PAM axis of L levels).
MIMORX_HD constexpr int log2_pow2(int x) { return x <= 1 ? 0 : 1 + log2_pow2(x / 2); }

template <int D>
MIMORX_HD constexpr int packed_row(int l) {
  return l * D - (l * (l - 1)) / 2;
}

// ---- PAM levels (ascending level i <-> integer amplitude 2i - (L-1)) ------------------------
MIMORX_HD int level_amplitude(int levels, int i) { return 2 * i - (levels - 1); }

// The axis bits c_0 .. c_(k-1) (bit j of the result is c_j) of level i of a 2^k-PAM axis under
// the TS 38.211 mapping (modulation.hpp, pam_amplitude): |a| = 2^(k-1) -+ (2^(k-2) -+ ...).
MIMORX_HD constexpr unsigned level_axis_bits(int k, int i) {
  int a = 2 * i - ((1 << k) - 1);
  unsigned c = 0;
  if (a < 0) {
    c = 1u;
    a = -a;
  }
  for (int j = 1; j < k; ++j) {
    const int h = 1 << (k - j);
    if (a > h) {
      c |= 1u << j;
      a -= h;
    } else {
      a = h - a;
    }
  }
  return c;
}

// Symbol bits (bit k of the result = b_k of 38.211) of the point with real level ir and
// imaginary level ii: the real axis carries b0 b2 b4 ..., the imaginary axis b1 b3 b5 ...
MIMORX_HD unsigned symbol_bits_of_levels(int k, int ir, int ii) {
  const unsigned cr = level_axis_bits(k, ir), ci = level_axis_bits(k, ii);
  unsigned b = 0;
  for (int j = 0; j < k; ++j)
    b |= (((cr >> j) & 1u) << (2 * j)) | (((ci >> j) & 1u) << (2 * j + 1));
  return b;
}
// The same bits from a compile-time table: entry i (8 bits) holds the axis bits of level i
// spread to the even symbol-bit positions (c_j at bit 2j). Replaces the per-level loops in the
// kernels' hot path (estimated from the PTX: the loops were ~15% of the search kernel).
constexpr std::uint64_t spread_table(int k, int first) {
  std::uint64_t t = 0;
  for (int i = first; i < first + 8 && i < (1 << k); ++i) {
    const unsigned c = level_axis_bits(k, i);
    std::uint64_t sp = 0;
    for (int j = 0; j < k; ++j) sp |= std::uint64_t((c >> j) & 1u) << (2 * j);
    t |= sp << (8 * (i - first));
  }
  return t;
}
template <int KA>
MIMORX_HD unsigned spread_bits(int i) {
  constexpr std::uint64_t lo = spread_table(KA, 0), hi = spread_table(KA, 8);
  const std::uint64_t t = (KA == 4 && i >= 8) ? hi : lo;
  return unsigned(t >> (8 * (i & 7))) & 0xffu;
}
template <int KA>
MIMORX_HD unsigned symbol_bits_fast(int ir, int ii) {
  return spread_bits<KA>(ir) | (spread_bits<KA>(ii) << 1);
}

// Constellation index sum_k b_k << (m-1-k) of those bits (modulation.hpp's numbering).
MIMORX_HD unsigned symbol_index_of_bits(int m, unsigned b) {
  unsigned s = 0;
  for (int j = 0; j < m; ++j) s |= ((b >> j) & 1u) << (m - 1 - j);
  return s;
}

// Round-and-clip slicing (Algorithm 2): the level nearest to z / R'_ll. With inv_half =
// 1 / (2 R'_ll) (stored in E) and top = L - 1, u = z inv_half / top + 1/2 is the level
// coordinate over [0, 1], clipped there by a saturating FMA (NaN -> 0; on the CPU
// fmin(fmax(.)), the same values), and u top is rounded to nearest, ties to even, by adding
// 1.5 * 2^23 in the same FMA: the sum has no fraction bits, so the addition itself rounds, and
// the integer sits in the low mantissa bits (1.5 * 2^23 is a multiple of 16). The clip and the
// rounding cost no compare, min/max or conversion instructions, which issue at a half or a
// quarter of the FMA rate on the GPU. Returns the integer amplitude 2 i - (L-1) as a float
// (exact) and the level i. inv_top = fmul(inv_half, 1 / top) (slice_scale) may be computed once
// per level and reused for every candidate.
MIMORX_HD float slice_scale(float inv_half, int levels) {
  return fmul(inv_half, fdiv(1.f, float(levels - 1)));
}
MIMORX_HD float fsat(float x) {
#if defined(__CUDA_ARCH__)
  return __saturatef(x);
#else
  return std::fmin(std::fmax(x, 0.f), 1.f);
#endif
}
MIMORX_HD float slice_amplitude_scaled(float z, float inv_top, int levels, int* level) {
  constexpr float kRound = 12582912.f;  // 1.5 * 2^23
  const float top = float(levels - 1);
  const float u = fsat(ffma(z, inv_top, 0.5f));
  const float shifted = ffma(u, top, kRound);
  const float r = fsub(shifted, kRound);
  const std::uint32_t bits = rounding::bits_of_float(shifted);
  *level = int(bits & std::uint32_t(levels - 1));
  return ffma(2.f, r, -top);
}
MIMORX_HD float slice_amplitude(float z, float inv_half, int levels, int* level) {
  return slice_amplitude_scaled(z, slice_scale(inv_half, levels), levels, level);
}

// ---- Algorithm 1: MGS on the extended real matrix V = [H~ | y~] ------------------------------
// V is row-major with row stride `stride` (rows = 2 nr, even). Step k of modified Gram-Schmidt
// without forming q_k: s_kt = v_k . v_t for every t >= k (in parallel on the GPU), then
// r_kk = sqrt(s_kk), r_kt = s_kt / r_kk and v_t -= (r_kt / r_kk) v_k, so that no thread
// normalises a column alone while the others wait. Two accumulators halve the dependent FMA
// chain of the dot product; every thread evaluates sqrt and 1/r itself. This shared-memory form
// is far from the memory floor; the fixed-shape path (nway_qr_fixed.hpp) replaces it for
// nt = 2, 4 (docs/nway.md).
MIMORX_HD float mgs_dot(const float* v, int stride, int rows, int k, int t) {
  float s0 = 0.f, s1 = 0.f;
  for (int i = 0; i < rows; i += 2) {
    s0 = ffma(v[i * stride + k], v[i * stride + t], s0);
    s1 = ffma(v[(i + 1) * stride + k], v[(i + 1) * stride + t], s1);
  }
  return fadd(s0, s1);
}
// r = sqrt(s_kk) and 1/r (0 for a zero column: the search then slices that level to a fixed
// level and the column's R entries are 0).
MIMORX_HD float mgs_inv_norm(float s_kk, float* r) {
  *r = fsqrt(s_kk);
  return *r > 0.f ? fdiv(1.f, *r) : 0.f;
}
// Returns r_kt and applies v_t -= (r_kt / r_kk) v_k.
MIMORX_HD float mgs_update(float* v, int stride, int rows, int k, int t, float s_kt, float inv) {
  const float r = fmul(s_kt, inv);
  const float c = fmul(r, inv);
  for (int i = 0; i < rows; ++i) v[i * stride + t] = ffma(-c, v[i * stride + k], v[i * stride + t]);
  return r;
}
// Writes element (row i, column t) of V for pass n: complex column p = t / 2 of the rotated
// channel is original column (p + n) mod nt. h is column-major nr x nt.
MIMORX_HD void load_extended_column(const cf32* h, const cf32* y, int nr, int nt, int n, int t,
                                    float* v, int stride) {
  const int d = 2 * nt;
  if (t < d) {
    const int j = (t / 2 + n) % nt;
    for (int i = 0; i < nr; ++i) {
      const cf32 x = h[j * nr + i];
      if ((t & 1) == 0) {
        v[(2 * i) * stride + t] = x.re;
        v[(2 * i + 1) * stride + t] = x.im;
      } else {
        v[(2 * i) * stride + t] = -x.im;
        v[(2 * i + 1) * stride + t] = x.re;
      }
    }
  } else {
    for (int i = 0; i < nr; ++i) {
      v[(2 * i) * stride + d] = y[i].re;
      v[(2 * i + 1) * stride + d] = y[i].im;
    }
  }
}
// Output of one MGS step value: R(l, c) for c < D, or (Q^T y)_l for c == D.
MIMORX_HD void store_r(const Layout& lay, float scale, int l, int c, float r, float* e) {
  if (c == lay.d) {
    e[lay.yhat(l)] = r;
  } else {
    const float rs = fmul(r, scale);
    e[lay.r(l, c)] = rs;
    if (c == l) e[lay.inv(l)] = rs > 0.f ? fdiv(0.5f, rs) : 0.f;
  }
}

// The whole of Algorithm 1 for one problem, sequentially, in exactly the order of operations
// of the kernel (thread t owns column t, thread k also y at step k; all dot products of a step
// read columns that the step does not change). v: scratch 2nr x (2nt+1), row stride 2nt+1.
MIMORX_HD void qr_problem(const cf32* h, const cf32* y, int nr, int nt, int n, float scale,
                          float* v, float* e) {
  const Layout lay(nt);
  const int d = lay.d, stride = d + 1, rows = 2 * nr;
  for (int t = 0; t <= d; ++t) load_extended_column(h, y, nr, nt, n, t, v, stride);
  for (int k = 0; k < d; ++k) {
    float r = 0.f;
    const float inv = mgs_inv_norm(mgs_dot(v, stride, rows, k, k), &r);
    store_r(lay, scale, k, k, r, e);
    for (int t = k + 1; t <= d; ++t) {
      const float s_kt = mgs_dot(v, stride, rows, k, t);
      store_r(lay, scale, k, t, mgs_update(v, stride, rows, k, t, s_kt, inv), e);
    }
  }
}

// ---- Algorithm 2: one greedy path ----------------------------------------------------------
// Candidate k of a pass: the first complex symbol (real levels D-1 = imaginary part and D-2 =
// real part of the last rotated column) is fixed to point k (imaginary level k / L, real level
// k % L); every lower level keeps only its best child by slicing. Returns the distance and the
// level indices lev[0..D).
template <int D, int L>
MIMORX_HD float search_path(const float* e, int k, int* lev) {
  constexpr int kRc = D * (D + 1) / 2;
  const float* yh = e + kRc;
  const float* inv = e + kRc + D;
  float a[D];
  lev[D - 1] = k / L;
  lev[D - 2] = k % L;
  a[D - 1] = float(2 * lev[D - 1] - (L - 1));
  a[D - 2] = float(2 * lev[D - 2] - (L - 1));
  float err = ffma(-e[packed_row<D>(D - 1)], a[D - 1], yh[D - 1]);
  float dist = fmul(err, err);
  float z = ffma(-e[packed_row<D>(D - 2) + 1], a[D - 1], yh[D - 2]);
  err = ffma(-e[packed_row<D>(D - 2)], a[D - 2], z);
  dist = ffma(err, err, dist);
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
  for (int l = D - 3; l >= 0; --l) {
    const float* row = e + packed_row<D>(l);
    z = yh[l];
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
    for (int c = D - 1; c > l; --c) z = ffma(-row[c - l], a[c], z);
    a[l] = slice_amplitude(z, inv[l], L, &lev[l]);
    err = ffma(-row[0], a[l], z);
    dist = ffma(err, err, dist);
  }
  return dist;
}

// The bits of a path (bit t*m + k = b_k of transmit stream t), undoing the rotation of pass n.
template <int NT, int KA, class Word = std::uint64_t>
MIMORX_HD Word path_bits(const int* lev, int n) {
  constexpr int m = 2 * KA;
  Word w = 0;
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
  for (int p = 0; p < NT; ++p) {
    int t = p + n;
    t = t >= NT ? t - NT : t;
    w |= Word(symbol_bits_fast<KA>(lev[2 * p], lev[2 * p + 1])) << (t * m);
  }
  return w;
}

// ---- Algorithm 3: LLR from the hypothesis / counter-hypothesis minima ----------------------
MIMORX_HD float llr_of_minima(float min0, float min1, float inv_n0, float clip) {
  // min = +inf when no hypothesis has that bit value: the difference is +-inf and the clip
  // turns it into +-clip (complete_minima supplies a list's missing minimum first).
  const float l = fmul(fsub(min1, min0), inv_n0);
  return l > clip ? clip : (l < -clip ? -clip : l);
}
MIMORX_HD std::uint8_t hard_of_minima(float min0, float min1) { return min1 < min0 ? 1 : 0; }

// ---- missing counter-hypotheses: single-coordinate flips of the best candidate --------------
// A bit whose value is the same in every list member has no counter-hypothesis in the list.
// The list is augmented by x', the best candidate x_b with only the real coordinate p that
// carries the bit moved to the nearest level whose axis bit is the counter value; its metric
// d' (>= the true counter-hypothesis minimum, so the LLR's magnitude never exceeds the exact
// max-log one by more than the clip rule's) is that bit's minimum. docs/kbest.md states the
// rule and its accuracy.

// Sort key of a candidate (metric d, index c) for the best-candidate choice: metrics are never
// -0, so the bit patterns of non-negative metrics order like the metrics (NaN after +inf); ties
// go to the lower index. A total order: every backend picks the same best candidate.
MIMORX_HD std::uint64_t candidate_key(float d, unsigned c) {
  return (std::uint64_t(rounding::bits_of_float(d)) << 32) | c;
}
MIMORX_HD float key_metric(std::uint64_t key) {
  return rounding::float_of_bits(std::uint32_t(key >> 32));
}

// The level of a 2^ka-PAM axis nearest to level ib whose axis bit c_jj is `value`; of two at
// the same distance, the lower one.
MIMORX_HD constexpr int flip_level(int ka, int ib, int jj, unsigned value) {
  const int levels = 1 << ka;
  for (int s = 1; s < levels; ++s) {
    if (ib - s >= 0 && ((level_axis_bits(ka, ib - s) >> jj) & 1u) == value) return ib - s;
    if (ib + s < levels && ((level_axis_bits(ka, ib + s) >> jj) & 1u) == value) return ib + s;
  }
  return ib;  // unreachable for ka >= 1: both values of every axis bit occur
}

// The errors of the path `lev` (levels of the real coordinates 0..D-1 of E), computed as
// search_path computes them: e_i = yhat_i - sum_{c >= i} R'_ic a_c. Filled once per list (the
// first bit that needs a flip) and shared by all its bits.
struct PathErrors {
  float err[16];
  bool ready = false;
};
// Levels: anything indexable by coordinate giving a level index (an array of level indices, a
// packed path's accessor).
template <class Levels>
MIMORX_HD void path_errors(const float* e, const Layout& lay, int levels, const Levels& lev,
                           PathErrors& pe) {
  for (int i = 0; i < lay.d; ++i) {
    float z = e[lay.yhat(i)];
    for (int c = lay.d - 1; c > i; --c) {
      z = ffma(-e[lay.r(i, c)], float(level_amplitude(levels, int(lev[c]))), z);
    }
    pe.err[i] = ffma(-e[lay.r(i, i)], float(level_amplitude(levels, int(lev[i]))), z);
  }
  pe.ready = true;
}

// The tree metric of the path `lev` (metric d_b, errors pe) with coordinate p moved to level
// `to`, delta the amplitude change:
//   d' = d_b + delta^2 sum_{i<=p} R'_ip^2 - 2 delta sum_{i<=p} R'_ip e_i.
template <class Levels>
MIMORX_HD float flip_metric(const float* e, const Layout& lay, const PathErrors& pe,
                            const Levels& lev, float d_b, int p, int to) {
  float s = 0.f, t = 0.f;
  for (int i = 0; i <= p; ++i) {
    const float rip = e[lay.r(i, p)];
    s = ffma(rip, rip, s);
    t = ffma(rip, pe.err[i], t);
  }
  const float delta = float(2 * (to - int(lev[p])));
  return fadd(d_b, fmul(delta, ffma(delta, s, fmul(-2.f, t))));
}

// Bit j (b_(j mod m) of stream j / m) of a list whose best candidate is the path `lev` of pass
// n (rotated column q of the pass is stream (q + n) mod nt; n = 0: natural order): where one of
// min0 / min1 is +inf and the other is not, the missing one becomes the flip metric of the bit
// (the present one is the best candidate's metric d_b). pe: the path's errors, filled here on
// first use; pass the same PathErrors for every bit of one list.
template <class Levels>
MIMORX_HD void complete_minima(const float* e, const Layout& lay, int ka, int nt, int n,
                               const Levels& lev, int j, float* min0, float* min1, PathErrors& pe) {
  constexpr float kInf = __builtin_huge_valf();
  const bool miss0 = *min0 == kInf, miss1 = *min1 == kInf;
  if (miss0 == miss1) return;
  if (!pe.ready) path_errors(e, lay, 1 << ka, lev, pe);
  const int m = 2 * ka, t = j / m, b = j - t * m;
  const int q = t - n < 0 ? t - n + nt : t - n;
  const int p = 2 * q + (b & 1);
  const int to = flip_level(ka, int(lev[p]), b >> 1, miss0 ? 0u : 1u);
  const float d = flip_metric(e, lay, pe, lev, miss0 ? *min1 : *min0, p, to);
  *(miss0 ? min0 : min1) = d;
}

// The per-bit minima of a candidate list (the list-based detectors' CPU merge): a candidate of
// metric d whose bits are the word w (bit j of the vector at bit j) lowers min1[j] where its
// bit is 1 and min0[j] where it is 0. Start both at +inf.
MIMORX_HD void fold_minima(std::uint64_t w, float d, int nb, float* min0, float* min1) {
  for (int j = 0; j < nb; ++j) {
    if ((w >> j) & 1u) {
      min1[j] = fmin_num(min1[j], d);
    } else {
      min0[j] = fmin_num(min0[j], d);
    }
  }
}
// One vector's hard bits and (llrs not null) clipped LLRs from its per-bit minima.
MIMORX_HD void write_minima(const float* min0, const float* min1, int nb, float inv_n0, float clip,
                            std::uint8_t* bits, float* llrs) {
  for (int j = 0; j < nb; ++j) {
    bits[j] = hard_of_minima(min0[j], min1[j]);
    if (llrs) llrs[j] = llr_of_minima(min0[j], min1[j], inv_n0, clip);
  }
}

}  // namespace mimorx::detect::nway

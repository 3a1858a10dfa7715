#pragma once
// Per-thread arithmetic of the exhaustive ML search (include/mimorx/detect/ml.hpp), shared by
// the OpenMP reference and the CUDA kernel.
//
// Work split for one received vector: chunk c in [0, T), T = M^(nt-2) (1 when nt <= 2), fixes
// the symbols of columns 1..nt-2 (digit t-1 of c in base M); the chunk enumerates column 0's M
// symbols and slices the last column, with O(nr) work per chunk and O(1) per column-0 symbol
// (the algebra is described above VecConsts). Symbols are indexed q = level_re * L + level_im for
// QAM (levels ascending, demap.hpp) and q = b0 for BPSK. Hard result key: (float bits of the
// metric) << 32 | code with code = (c*M + q0)*M + q_last; metrics are >= 0, so the unsigned order
// of the key is the order of (metric, code): the smallest code wins ties, identically on both
// backends.
#include <cstdint>

#include "mimorx/core/complex.hpp"
#include "mimorx/core/hd.hpp"
#include "mimorx/core/rounding.hpp"
#include "mimorx/modem/demap.hpp"
#include "mimorx/modem/modulation.hpp"

// Loops over register arrays must be unrolled so that their indices are constants.
#if defined(__CUDA_ARCH__)
#define MIMORX_ML_UNROLL _Pragma("unroll")
#elif defined(__CUDACC__)
#define MIMORX_ML_UNROLL
#else
#define MIMORX_ML_UNROLL _Pragma("GCC unroll 8")
#endif

namespace mimorx::detect::ml {

constexpr int kMaxBits = 24;     // nt * m <= 24 since M^nt <= 2^24
constexpr float kBig = 3.0e38f;  // below the 0x7F7F7F7F (3.39e38) the device slots start from

struct ModParams {
  Modulation mod;
  int m;             // bits per symbol
  int size;          // M
  int levels;        // L per axis (QAM)
  float s;           // qam_scale
  float half_inv_s;  // 0.5 / s and 0.5 L: the slicer's t = v * half_inv_s + half_levels
  float half_levels;
  bool bpsk;
  // Axis bits of every PAM level, 4 bits per level (bit j = c_j): a register-resident table that
  // replaces the pam_level_bits() loops in the soft inner loop (with the loops the soft kernel
  // is an order of magnitude slower than the hard one).
  unsigned long long level_masks;
};

MIMORX_HD ModParams mod_params_base(Modulation mod) {
  return {mod,
          bits_per_symbol(mod),
          constellation_size(mod),
          axis_levels(mod),
          qam_scale(mod),
          0.5f / qam_scale(mod),
          0.5f * float(axis_levels(mod)),
          mod == Modulation::bpsk,
          0ull};
}

MIMORX_HD ModParams mod_params(Modulation mod) {
  ModParams p = mod_params_base(mod);
  if (!p.bpsk) {
    for (int l = 0; l < p.levels; ++l) {
      std::uint8_t c[4] = {0, 0, 0, 0};
      pam_level_bits(mod, l, c);
      for (int j = 0; j < p.m / 2; ++j) p.level_masks |= (unsigned long long)(c[j]) << (4 * l + j);
    }
  }
  return p;
}

MIMORX_HD unsigned level_mask(const ModParams& p, int l) {
  return unsigned(p.level_masks >> (4 * l)) & 0xfu;
}

MIMORX_HD float level_amp(const ModParams& p, int l) { return float(2 * l - (p.levels - 1)) * p.s; }

// Bit k of symbol q, as bit k of the returned mask.
MIMORX_HD unsigned symbol_mask(const ModParams& p, int q) {
  if (p.bpsk) return unsigned(q);
  const unsigned re = level_mask(p, q / p.levels), im = level_mask(p, q % p.levels);
  unsigned mask = 0;
  MIMORX_ML_UNROLL
  for (int j = 0; j < 4; ++j)
    mask |= (((re >> j) & 1u) << (2 * j)) | (((im >> j) & 1u) << (2 * j + 1));
  return mask;
}

MIMORX_HD float clamp0(float x) { return x > 0.f ? x : 0.f; }

// Per-thread result.
struct Acc {
  // Hard: the smallest metric so far and its code. Codes grow along a thread's enumeration, so
  // keeping the first of equal metrics keeps the smallest code, as the key order requires.
  float best_m = kBig;
  float best_code = 0.f;  // as a float: codes < 2^24 are exact, and the inner loop stays FP32
  float tmin = kBig;      // soft: smallest metric of the chunk
  float c0[2][8];         // soft: column-0 bit minima [bit value][k]
  float cl[2][8];         // soft: last-column bit minima
  MIMORX_HD unsigned long long key() const {
    // clamp0 maps a -0 (not produced by the search, see run_chunk) to +0 for the integer order.
    return (static_cast<unsigned long long>(rounding::bits_of_float(clamp0(best_m))) << 32) |
           static_cast<unsigned>(best_code);
  }
  MIMORX_HD void reset() {
    best_m = kBig;
    best_code = 0.f;
    tmin = kBig;
    for (int k = 0; k < 8; ++k) c0[0][k] = c0[1][k] = cl[0][k] = cl[1][k] = kBig;
  }
};

// Per-axis minima of (u - l)^2, u in level units (below), over the levels l whose axis bit j is
// 0 (d0) or 1 (d1).
MIMORX_HD void axis_minima(const ModParams& p, float u, float* d0, float* d1) {
  const int k = p.m / 2;
  MIMORX_ML_UNROLL
  for (int j = 0; j < 4; ++j) d0[j] = d1[j] = kBig;
  for (int l = 0; l < p.levels; ++l) {
    const float e = u - float(l);
    const float d = e * e;
    const unsigned c = level_mask(p, l);
    MIMORX_ML_UNROLL
    for (int j = 0; j < 4; ++j) {
      if (j < k) {
        const bool one = ((c >> j) & 1u) != 0;
        d1[j] = (one && d < d1[j]) ? d : d1[j];
        d0[j] = (!one && d < d0[j]) ? d : d0[j];
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------
// The search in closed form over the last column and in orthogonal coordinates for column 0.
//
// Chunk quantities: rb = y - sum_{t=1}^{nt-2} h_t x_t (middle symbols fixed), h0 column 0, hl
// the last column, g = ||hl||^2. Split h0 = w + a hl with a = hl^H h0 / g, so w is orthogonal to
// hl, s0 = ||w||^2. With zb = hl^H rb / g, u0 = w^H rb / s0 and p = rb - hl zb - w u0 (orthogonal
// to both hl and w),
//     rb - h0 x0 - hl xl = p + w (u0 - x0) + hl (z - xl),   z = zb - a x0,
// three mutually orthogonal terms, so
//     ||rb - h0 x0 - hl xl||^2 = e + s0 |x0 - u0|^2 + g |xl - z|^2,   e = ||p||^2.
// Per chunk the O(nr) work is hl^H rb, w^H rb and e (an explicit vector norm); per column-0
// hypothesis only O(1) remains: z is affine in x0 and the metric is a sum of three
// non-negative terms. This replaces recomputing r = rb - h0 x0, hl^H r and ||r||^2 (8 nr FP32
// operations) for every hypothesis.
//
// Numerics: nothing is formed as a difference of large energies (an expansion such as
// ||r||^2 = ||rb||^2 - 2 Re(conj(x0) h0^H rb) + |x0|^2 ||h0||^2 would lose ulp(||rb||^2), which
// is large for wrong middle symbols, in every metric). What the split needs is w orthogonal to
// hl relative to |w| (the cross terms it drops are |hl^H w| |u0 - x0| |z - xl| etc., and u0 grows
// like |rb| / |w|): vec_consts orthogonalises twice and zeroes a w that is only rounding noise.
// A large u0 (h0 nearly parallel to hl) still costs about eps ||rb||^2 absolutely in
// s0 |x0 - u0|^2, within the tests' 1e-6 (1 + ||y||^2 + ||H||_F^2). Every metric is a
// sum of non-negative products (no clamp needed: it is >= +0, never -0; Acc::key() clamps anyway).
// 1/g and 1/s0 are 0 for energies below kTiny (a zero column): then zb or u0 is 0 and the
// cross term dropped is below 2 |x| sqrt(kTiny) ||rb||, far below float resolution.
//
// Level units: on each axis a QAM symbol is (2l - (L-1)) s = 2s (l - hh), hh = (L-1)/2, l =
// 0..L-1; BPSK is x = 2s (l - 1/2)(1 + j), l = 1 - b (L = 2). Scaling z and u0 by 1/(2s) and
// shifting by hh(1 + j) makes the slicer "round to the nearest integer in [0, L-1]" and the
// metric e + s4 |l0 - v0|^2 + g4 |lz - zu|^2 with g4 = 4 s^2 g, s4 = 4 s^2 s0, where l0, lz are
// the level pairs of x0, xl, v0 = u0/(2s) + hh(1+j) and zu = zb/(2s) + hh(1+j)(1+a) - a l0.
// ---------------------------------------------------------------------------------------------
constexpr float kTiny = 1e-30f;

// acc - a b and acc + conj(a) b written so that nvcc contracts them into 4 FMAs (the cf32
// operators round the product first: FMUL, FFMA, FADD per component).
MIMORX_HD cf32 sub_mul(cf32 acc, cf32 a, cf32 b) {
  return {acc.re - a.re * b.re + a.im * b.im, acc.im - a.re * b.im - a.im * b.re};
}
MIMORX_HD cf32 add_mul_conj(cf32 acc, cf32 a, cf32 b) {
  return {acc.re + a.re * b.re + a.im * b.im, acc.im + a.re * b.im - a.im * b.re};
}

// Per-vector constants, computed once per vector and thread.
template <int NR>
struct VecConsts {
  cf32 hl[NR];   // last column
  cf32 w[NR];    // column 0 minus its projection on hl (0 when nt == 1)
  cf32 a;        // hl^H h0 / g (0 when nt == 1)
  cf32 kz;       // hh (1 + j)(1 + a)
  float inv_g;   // 1/g
  float inv_s0;  // 1/s0
  float g4;      // 4 s^2 g
  float s4;      // 4 s^2 s0
  float hh;      // (L-1)/2
};

template <int NR>
MIMORX_HD VecConsts<NR> vec_consts(const ModParams& p, int nt, const cf32* h) {
  VecConsts<NR> k;
  float g = 0.f;
  MIMORX_ML_UNROLL
  for (int i = 0; i < NR; ++i) {
    k.hl[i] = h[(nt - 1) * NR + i];
    g += norm2(k.hl[i]);
  }
  k.inv_g = g > kTiny ? 1.f / g : 0.f;
  // w by Gram-Schmidt with a second pass ("twice is enough", Kahan-Parlett): the split in
  // run_chunk needs w orthogonal to hl relative to |w|, not only to |h0|; one pass leaves
  // |hl^H w| ~ eps |hl| |h0|, which for h0 nearly parallel to hl (|w| << |h0|) is not small against
  // |w| and, multiplied by the large u0, broke exactness (DegenerateChannelsStayExact). When the
  // second pass removes more than half of w, w is rounding noise in span(hl) (always so for nr = 1
  // or h0 = c hl): it is set to 0, which changes the metrics by O(eps |h0| |x0|).
  cf32 a{0.f, 0.f};
  float s0 = 0.f;
  MIMORX_ML_UNROLL
  for (int i = 0; i < NR; ++i) k.w[i] = nt >= 2 ? h[i] : cf32{0.f, 0.f};
  if (nt >= 2) {
    float s1 = 0.f;
    MIMORX_ML_UNROLL
    for (int pass = 0; pass < 2; ++pass) {
      cf32 c{0.f, 0.f};
      MIMORX_ML_UNROLL
      for (int i = 0; i < NR; ++i) c = add_mul_conj(c, k.hl[i], k.w[i]);
      c = c * k.inv_g;
      a += c;
      s1 = s0;
      s0 = 0.f;
      MIMORX_ML_UNROLL
      for (int i = 0; i < NR; ++i) {
        k.w[i] = sub_mul(k.w[i], k.hl[i], c);
        s0 += norm2(k.w[i]);
      }
    }
    if (!(s0 > 0.25f * s1) || !(s0 > kTiny)) {
      MIMORX_ML_UNROLL
      for (int i = 0; i < NR; ++i) k.w[i] = {0.f, 0.f};
      s0 = 0.f;
    }
  }
  k.a = a;
  k.inv_s0 = s0 > 0.f ? 1.f / s0 : 0.f;
  const float q = 4.f * p.s * p.s;
  k.g4 = q * g;
  k.s4 = q * s0;
  k.hh = 0.5f * float(p.levels - 1);
  k.kz = {k.hh * (1.f + a.re - a.im), k.hh * (1.f + a.re + a.im)};
  return k;
}

// Nearest integer level to u in [0, L-1] (as a float; NaN gives 0). Adding and subtracting
// 1.5 * 2^23 rounds to the nearest integer (ties to even: equidistant levels, equal metrics)
// with two FP32 additions instead of a float-to-int conversion.
MIMORX_HD float nearest_level(float u, float top) {
  const float c = u > 0.f ? u : 0.f;
  const float t = c < top ? c : top;
  return (t + 12582912.f) - 12582912.f;
}

// Hard: minimum over the last column's symbol for one column-0 hypothesis. base = e + s4|..|^2,
// (ur, ui) = zu, code_base = (prefix * M) as a float (codes < 2^24 are exact).
template <int LV>
MIMORX_HD void eval_hard(const ModParams& p, float base, float ur, float ui, float g4,
                         float code_base, Acc& acc) {
  float metric, code;
  if (LV == 0 && p.bpsk) {
    // l = 1 is b = 0 (q = 0), l = 0 is b = 1; a tie keeps q = 0.
    const float er = ur - 1.f, ei = ui - 1.f;
    const float d0 = er * er + ei * ei, d1 = ur * ur + ui * ui;
    const bool one = d1 < d0;
    metric = base + g4 * (one ? d1 : d0);
    code = code_base + (one ? 1.f : 0.f);
  } else {
    const int L = LV > 0 ? LV : p.levels;
    const float top = float(L - 1);
    const float kr = nearest_level(ur, top), ki = nearest_level(ui, top);
    const float er = ur - kr, ei = ui - ki;
    metric = base + g4 * (er * er + ei * ei);
    code = code_base + (kr * float(L) + ki);
  }
  if (metric < acc.best_m) {
    acc.best_m = metric;
    acc.best_code = code;
  }
}

// Soft: the minima over last symbols with b_k = 0/1 for one column-0 hypothesis, folded into acc.
// mask0 = bits of column 0's symbol (when has_col0).
MIMORX_HD void eval_soft(const ModParams& p, float base, float ur, float ui, float g4,
                         bool has_col0, unsigned mask0, Acc& acc) {
  float lo[2][8];  // [bit value][k]: minimum over last symbols with b_k = value
  MIMORX_ML_UNROLL
  for (int k = 0; k < 8; ++k) lo[0][k] = lo[1][k] = kBig;
  float best;
  if (p.bpsk) {
    const float er = ur - 1.f, ei = ui - 1.f;
    lo[0][0] = clamp0(base + g4 * (er * er + ei * ei));
    lo[1][0] = clamp0(base + g4 * (ur * ur + ui * ui));
    best = lo[0][0] < lo[1][0] ? lo[0][0] : lo[1][0];
  } else {
    float r0[4], r1[4], i0[4], i1[4];
    axis_minima(p, ur, r0, r1);
    axis_minima(p, ui, i0, i1);
    const float rmin = r0[0] < r1[0] ? r0[0] : r1[0];
    const float imin = i0[0] < i1[0] ? i0[0] : i1[0];
    best = clamp0(base + g4 * (rmin + imin));
    MIMORX_ML_UNROLL
    for (int j = 0; j < 4; ++j) {
      if (j >= p.m / 2) break;
      lo[0][2 * j] = clamp0(base + g4 * (r0[j] + imin));
      lo[1][2 * j] = clamp0(base + g4 * (r1[j] + imin));
      lo[0][2 * j + 1] = clamp0(base + g4 * (rmin + i0[j]));
      lo[1][2 * j + 1] = clamp0(base + g4 * (rmin + i1[j]));
    }
  }
  acc.tmin = best < acc.tmin ? best : acc.tmin;
  MIMORX_ML_UNROLL
  for (int k = 0; k < 8; ++k) {
    if (k < p.m) {
      acc.cl[0][k] = lo[0][k] < acc.cl[0][k] ? lo[0][k] : acc.cl[0][k];
      acc.cl[1][k] = lo[1][k] < acc.cl[1][k] ? lo[1][k] : acc.cl[1][k];
      if (has_col0) {
        // Selects instead of acc.c0[bit][k]: a register array indexed at run time would be
        // demoted to local memory.
        const bool one = ((mask0 >> k) & 1u) != 0;
        acc.c0[0][k] = (!one && best < acc.c0[0][k]) ? best : acc.c0[0][k];
        acc.c0[1][k] = (one && best < acc.c0[1][k]) ? best : acc.c0[1][k];
      }
    }
  }
}

// Runs chunk c of one vector: h is the nr x nt matrix (column-major, nr == NR), y the vector, k
// its vec_consts. LV = levels per axis known at compile time (2, 4, 8: QAM only, loops fully
// unrolled), or 0 (any modulation, p.levels at run time).
template <int NR, bool SOFT, int LV = 0>
MIMORX_HD void run_chunk(const ModParams& p, int nt, const cf32* h, const cf32* y,
                         const VecConsts<NR>& k, std::int64_t chunk, Acc& acc) {
  cf32 rb[NR];
  MIMORX_ML_UNROLL
  for (int i = 0; i < NR; ++i) rb[i] = y[i];
  // M = 2^m and L = 2^(m/2): digits and levels by shifts and masks.
  const unsigned msk = unsigned(p.size) - 1u, lsh = unsigned(p.m / 2);
  unsigned rest = unsigned(chunk);  // < 2^24
  for (int t = 1; t < nt - 1; ++t) {
    const unsigned q = rest & msk;
    rest >>= unsigned(p.m);
    cf32 x;
    if (p.bpsk) {
      const float a = float(1 - 2 * int(q)) * p.s;
      x = {a, a};
    } else {
      x = {level_amp(p, int(q >> lsh)), level_amp(p, int(q & ((1u << lsh) - 1u)))};
    }
    MIMORX_ML_UNROLL
    for (int i = 0; i < NR; ++i) rb[i] = sub_mul(rb[i], h[t * NR + i], x);
  }
  cf32 cb = cmul_conj(k.hl[0], rb[0]), wb = cmul_conj(k.w[0], rb[0]);
  MIMORX_ML_UNROLL
  for (int i = 1; i < NR; ++i) {
    cb = add_mul_conj(cb, k.hl[i], rb[i]);
    wb = add_mul_conj(wb, k.w[i], rb[i]);
  }
  const cf32 zb = cb * k.inv_g, u0 = wb * k.inv_s0;
  float e = 0.f;
  MIMORX_ML_UNROLL
  for (int i = 0; i < NR; ++i) {
    const cf32 pi = sub_mul(sub_mul(rb[i], k.hl[i], zb), k.w[i], u0);
    e = i == 0 ? pi.re * pi.re + pi.im * pi.im : e + pi.re * pi.re + pi.im * pi.im;
  }
  const float inv2s = p.half_inv_s;
  const cf32 zu0{zb.re * inv2s + k.kz.re, zb.im * inv2s + k.kz.im};  // zu at l0 = (0, 0)
  if (nt == 1) {
    if constexpr (SOFT) {
      eval_soft(p, e, zu0.re, zu0.im, k.g4, false, 0u, acc);
    } else {
      eval_hard<LV>(p, e, zu0.re, zu0.im, k.g4, 0.f, acc);
    }
    return;
  }
  const cf32 v0{u0.re * inv2s + k.hh, u0.im * inv2s + k.hh};
  const float fsize = float(p.size);
  const float prefix = float(unsigned(chunk) * unsigned(p.size));  // chunk * M < 2^24
  if (LV == 0 && p.bpsk) {
    // x0 = 2s (l - 1/2)(1 + j), l = 1 - q0.
    for (int q0 = 0; q0 < 2; ++q0) {
      const float l = float(1 - q0);
      const float ur = zu0.re - (k.a.re - k.a.im) * l, ui = zu0.im - (k.a.re + k.a.im) * l;
      const float dr = l - v0.re, di = l - v0.im;
      const float base = e + k.s4 * (dr * dr + di * di);
      if constexpr (SOFT) {
        eval_soft(p, base, ur, ui, k.g4, true, unsigned(q0), acc);
      } else {
        eval_hard<LV>(p, base, ur, ui, k.g4, (prefix + float(q0)) * fsize, acc);
      }
    }
    return;
  }
  // Column 0 as two PAM axes: zu = zu0 - a (lr + j li).
  float code_base = prefix * fsize;  // ((chunk * M + q0) * M), q0 = lr * L + li
  if constexpr (LV > 0) {
    float bi[LV];  // s4 (li - v0.im)^2
    MIMORX_ML_UNROLL
    for (int li = 0; li < LV; ++li) {
      const float di = float(li) - v0.im;
      bi[li] = k.s4 * (di * di);
    }
    MIMORX_ML_UNROLL
    for (int lr = 0; lr < LV; ++lr) {
      const float fr = float(lr);
      const float zr = zu0.re - k.a.re * fr, zi = zu0.im - k.a.im * fr;
      const float dr = fr - v0.re;
      const float br = e + k.s4 * (dr * dr);
      MIMORX_ML_UNROLL
      for (int li = 0; li < LV; ++li) {
        const float fi = float(li);
        const float ur = zr + k.a.im * fi, ui = zi - k.a.re * fi;
        if constexpr (SOFT) {
          eval_soft(p, br + bi[li], ur, ui, k.g4, true, symbol_mask(p, lr * LV + li), acc);
        } else {
          eval_hard<LV>(p, br + bi[li], ur, ui, k.g4, code_base, acc);
        }
        code_base += fsize;
      }
    }
  } else {
    const int L = p.levels;
    for (int lr = 0; lr < L; ++lr) {
      const float fr = float(lr);
      const float zr = zu0.re - k.a.re * fr, zi = zu0.im - k.a.im * fr;
      const float dr = fr - v0.re;
      const float br = e + k.s4 * (dr * dr);
      for (int li = 0; li < L; ++li) {
        const float fi = float(li);
        const float ur = zr + k.a.im * fi, ui = zi - k.a.re * fi;
        const float di = fi - v0.im;
        const float base = br + k.s4 * (di * di);
        if constexpr (SOFT) {
          eval_soft(p, base, ur, ui, k.g4, true, symbol_mask(p, lr * L + li), acc);
        } else {
          eval_hard<LV>(p, base, ur, ui, k.g4, code_base, acc);
        }
        code_base += fsize;
      }
    }
  }
}

// Soft: the chunk's candidate for output slot ((t * m + k) * 2 + b), the minimum over its
// hypotheses with bit k of column t equal to b.
MIMORX_HD float soft_slot(const ModParams& p, int nt, std::int64_t chunk, const Acc& acc,
                          int slot) {
  const int b = slot & 1, k = (slot >> 1) % p.m, t = (slot >> 1) / p.m;
  if (t == 0 || t == nt - 1) {
    // Constant indices only: a run-time index would move acc's arrays to local memory.
    const bool last = t == nt - 1;
    float out = kBig;
    MIMORX_ML_UNROLL
    for (int kk = 0; kk < 8; ++kk) {
      if (kk == k) {
        out = last ? (b ? acc.cl[1][kk] : acc.cl[0][kk]) : (b ? acc.c0[1][kk] : acc.c0[0][kk]);
      }
    }
    return out;
  }
  std::int64_t rest = chunk;
  for (int u = 1; u < t; ++u) rest /= p.size;
  const int q = int(rest % p.size);
  return int((symbol_mask(p, q) >> k) & 1u) == b ? acc.tmin : kBig;
}

// Bits of hypothesis `code` (hard key's low word) into out[t*m + k].
MIMORX_HD void decode_code(const ModParams& p, int nt, unsigned code, std::uint8_t* out) {
  const unsigned size = unsigned(p.size);
  const int q_last = int(code % size);
  code /= size;
  int qs[8];
  qs[nt - 1] = q_last;
  if (nt >= 2) {
    qs[0] = int(code % size);
    code /= size;
    for (int t = 1; t < nt - 1; ++t) {
      qs[t] = int(code % size);
      code /= size;
    }
  }
  for (int t = 0; t < nt; ++t) {
    const unsigned mask = symbol_mask(p, qs[t]);
    for (int k = 0; k < p.m; ++k) out[t * p.m + k] = std::uint8_t((mask >> k) & 1u);
  }
}

}  // namespace mimorx::detect::ml

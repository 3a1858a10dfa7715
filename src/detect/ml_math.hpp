#pragma once
// Per-thread arithmetic of the exhaustive ML search (include/mimorx/detect/ml.hpp), shared by
// the OpenMP reference and the CUDA kernel.
//
// Work split for one received vector: chunk c in [0, T), T = M^(nt-2) (1 when nt <= 2), fixes
// the symbols of columns 1..nt-2 (digit t-1 of c in base M); the chunk enumerates column 0's M
// symbols and slices the last column. Symbols are indexed q = level_re * L + level_im for QAM
// (levels ascending, demap.hpp) and q = b0 for BPSK.
// Hard result key: (float bits of the metric) << 32 | code with code = (c*M + q0)*M + q_last;
// metrics are >= 0, so the unsigned order of the key is the order of (metric, code): the
// smallest code wins ties, identically on both backends.
#include <cstdint>

#include "mimorx/core/complex.hpp"
#include "mimorx/core/hd.hpp"
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
  // replaces the pam_level_bits() loops in the soft inner loop (with them the soft kernel ran
  // 13x slower than the hard one on the H100, 4x4 16-QAM).
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

// slice_pam of demap.hpp with the parameters hoisted out of the hot loop.
MIMORX_HD int slice_level(const ModParams& p, float v) {
  const float t = v * p.half_inv_s + p.half_levels;
  if (!(t >= 1.f)) return 0;
  if (t >= float(p.levels - 1)) return p.levels - 1;
  return int(t);
}

MIMORX_HD cf32 point_of(const ModParams& p, int q) {
  if (p.bpsk) {
    const float a = float(1 - 2 * q) * p.s;
    return {a, a};
  }
  return {level_amp(p, q / p.levels), level_amp(p, q % p.levels)};
}

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

MIMORX_HD std::uint32_t float_bits(float x) {
#if MIMORX_DEVICE_CODE && defined(__CUDA_ARCH__)
  return __float_as_uint(x);
#else
  return __builtin_bit_cast(std::uint32_t, x);
#endif
}

MIMORX_HD float clamp0(float x) { return x > 0.f ? x : 0.f; }

// Per-thread result.
struct Acc {
  // Hard: the smallest metric so far and its code. Codes grow along a thread's enumeration, so
  // keeping the first of equal metrics keeps the smallest code, as the key order requires.
  float best_m = kBig;
  unsigned best_code = 0;
  float tmin = kBig;  // soft: smallest metric of the chunk
  float c0[2][8];     // soft: column-0 bit minima [bit value][k]
  float cl[2][8];     // soft: last-column bit minima
  MIMORX_HD unsigned long long key() const {
    return (static_cast<unsigned long long>(float_bits(best_m)) << 32) | best_code;
  }
  MIMORX_HD void reset() {
    best_m = kBig;
    best_code = 0;
    tmin = kBig;
    for (int k = 0; k < 8; ++k) c0[0][k] = c0[1][k] = cl[0][k] = cl[1][k] = kBig;
  }
};

// Per-axis minima of (v - a_l)^2 over the levels whose axis bit j is 0 (d0) or 1 (d1).
MIMORX_HD void axis_minima(const ModParams& p, float v, float* d0, float* d1) {
  const int k = p.m / 2;
  MIMORX_ML_UNROLL
  for (int j = 0; j < 4; ++j) d0[j] = d1[j] = kBig;
  for (int l = 0; l < p.levels; ++l) {
    const float e = v - level_amp(p, l);
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

// Minimises over the last column's symbol for residual r (see ml.hpp) and folds the result into
// acc. prefix = c*M + q0 (hard code prefix); mask0 = bits of column 0's symbol (soft, nt >= 2).
template <int NR, bool SOFT>
MIMORX_HD void eval_last(const ModParams& p, const cf32 (&r)[NR], const cf32 (&hl)[NR], float g,
                         float inv_g, bool has_col0, unsigned prefix, unsigned mask0, Acc& acc) {
  cf32 c{0.f, 0.f};
  float rr = 0.f;
  MIMORX_ML_UNROLL
  for (int i = 0; i < NR; ++i) {
    c += cmul_conj(hl[i], r[i]);
    rr += norm2(r[i]);
  }
  const cf32 z = c * inv_g;
  const float base = rr - norm2(c) * inv_g;
  if constexpr (!SOFT) {
    int q;
    float d;
    if (p.bpsk) {
      const cf32 pt{p.s, p.s};
      const float dp = norm2(z - pt), dn = norm2(z + pt);
      q = dn < dp ? 1 : 0;
      d = dn < dp ? dn : dp;
    } else {
      const int lre = slice_level(p, z.re), lim = slice_level(p, z.im);
      const float er = z.re - level_amp(p, lre), ei = z.im - level_amp(p, lim);
      q = lre * p.levels + lim;
      d = er * er + ei * ei;
    }
    const float metric = clamp0(base + g * d);
    if (metric < acc.best_m) {
      acc.best_m = metric;
      acc.best_code = prefix * unsigned(p.size) + unsigned(q);
    }
  } else {
    float lo[2][8];  // [bit value][k]: minimum over last symbols with b_k = value
    MIMORX_ML_UNROLL
    for (int k = 0; k < 8; ++k) lo[0][k] = lo[1][k] = kBig;
    float best;
    if (p.bpsk) {
      const cf32 pt{p.s, p.s};
      lo[0][0] = clamp0(base + g * norm2(z - pt));
      lo[1][0] = clamp0(base + g * norm2(z + pt));
      best = lo[0][0] < lo[1][0] ? lo[0][0] : lo[1][0];
    } else {
      float r0[4], r1[4], i0[4], i1[4];
      axis_minima(p, z.re, r0, r1);
      axis_minima(p, z.im, i0, i1);
      const float rmin = r0[0] < r1[0] ? r0[0] : r1[0];
      const float imin = i0[0] < i1[0] ? i0[0] : i1[0];
      best = clamp0(base + g * (rmin + imin));
      MIMORX_ML_UNROLL
      for (int j = 0; j < 4; ++j) {
        if (j >= p.m / 2) break;
        lo[0][2 * j] = clamp0(base + g * (r0[j] + imin));
        lo[1][2 * j] = clamp0(base + g * (r1[j] + imin));
        lo[0][2 * j + 1] = clamp0(base + g * (rmin + i0[j]));
        lo[1][2 * j + 1] = clamp0(base + g * (rmin + i1[j]));
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
}

// Runs chunk c of one vector: h is the nr x nt matrix (column-major, nr == NR), y the vector.
template <int NR, bool SOFT>
MIMORX_HD void run_chunk(const ModParams& p, int nt, const cf32* h, const cf32* y, float g,
                         float inv_g, std::int64_t chunk, Acc& acc) {
  cf32 rb[NR], hl[NR];
  MIMORX_ML_UNROLL
  for (int i = 0; i < NR; ++i) {
    rb[i] = y[i];
    hl[i] = h[(nt - 1) * NR + i];
  }
  if (nt == 1) {
    eval_last<NR, SOFT>(p, rb, hl, g, inv_g, false, 0u, 0u, acc);
    return;
  }
  unsigned rest = unsigned(chunk);  // < 2^24
  for (int t = 1; t < nt - 1; ++t) {
    const int q = int(rest % unsigned(p.size));
    rest /= unsigned(p.size);
    const cf32 x = point_of(p, q);
    MIMORX_ML_UNROLL
    for (int i = 0; i < NR; ++i) rb[i] -= h[t * NR + i] * x;
  }
  cf32 h0[NR];
  MIMORX_ML_UNROLL
  for (int i = 0; i < NR; ++i) h0[i] = h[i];
  const unsigned prefix_base = unsigned(chunk) * unsigned(p.size);
  cf32 r[NR];
  if (p.bpsk) {
    for (int q0 = 0; q0 < 2; ++q0) {
      const cf32 x = point_of(p, q0);
      MIMORX_ML_UNROLL
      for (int i = 0; i < NR; ++i) r[i] = rb[i] - h0[i] * x;
      eval_last<NR, SOFT>(p, r, hl, g, inv_g, true, prefix_base + unsigned(q0), unsigned(q0), acc);
    }
    return;
  }
  // Column 0 as two PAM axes: the real level moves r along h0, the imaginary one along j h0.
  for (int lre = 0; lre < p.levels; ++lre) {
    const float ar = level_amp(p, lre);
    cf32 rr[NR];
    MIMORX_ML_UNROLL
    for (int i = 0; i < NR; ++i) rr[i] = rb[i] - h0[i] * ar;
    for (int lim = 0; lim < p.levels; ++lim) {
      const float ai = level_amp(p, lim);
      MIMORX_ML_UNROLL
      for (int i = 0; i < NR; ++i) r[i] = {rr[i].re + h0[i].im * ai, rr[i].im - h0[i].re * ai};
      const int q0 = lre * p.levels + lim;
      eval_last<NR, SOFT>(p, r, hl, g, inv_g, true, prefix_base + unsigned(q0),
                          SOFT ? symbol_mask(p, q0) : 0u, acc);
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

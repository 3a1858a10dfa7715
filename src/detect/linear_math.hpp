#pragma once
// ZF / MMSE arithmetic shared by the CPU reference and the CUDA kernels. All float operations
// are the correctly rounded helpers of linalg/qr_math.hpp, so both backends compute identical
// estimates and hence identical hard decisions.
#include <cstdint>

#include "mimorx/core/complex.hpp"
#include "mimorx/core/hd.hpp"
#include "mimorx/linalg/qr_math.hpp"
#include "mimorx/modem/demap.hpp"
#include "mimorx/modem/modulation.hpp"

namespace mimorx::detect::detail {

// Estimates are clipped to this magnitude per axis before demapping: far outside any
// unit-energy constellation, small enough that squared distances cannot overflow.
inline constexpr float kLinearClip = 64.f;
inline constexpr float kLinearMinVar = 1e-30f;
// MMSE error 1 - mu_k is kept below this so that mu_k > 0 in float.
inline constexpr float kLinearMaxErr = 0.999999f;

// Floats of per-thread work for one channel (element stride es applies to each array).
MIMORX_HD int linear_work_cf32(bool mmse, int nr, int nt) {
  return (mmse ? nr + nt : nr) * nt + 2 * nt * nt;
}

// Equaliser of one channel: w (nt x nr, row k = stream k, stride 1: w[k * nr + j]) and
// d (nt): ZF: W and [(H^H H)^-1]_kk (multiply by N0 per vector); MMSE: W / mu_k and the
// effective noise variance (1 - mu_k) / mu_k for this n0.
// Work: wk cf32 of linear_work_cf32(), nrm nt floats, perm nt ints, all with stride es.
MIMORX_HD void linear_prepare(bool mmse, const cf32* h, int nr, int nt, float n0, cf32* wk,
                              float* nrm, int* perm, int es, cf32* w, float* d) {
  using namespace linalg::hd;
  const int m = mmse ? nr + nt : nr;
  cf32* a = wk;                        // m x nt, becomes Q
  cf32* r = wk + m * nt * es;          // nt x nt
  cf32* ri = wk + (m + nt) * nt * es;  // nt x nt, R^-1
  const float sn0 = fsqrt(n0);
  float big = 0.f;
  MIMORX_UNROLL
  for (int j = 0; j < nt; ++j) {
    float s = 0.f;
    MIMORX_UNROLL
    for (int i = 0; i < nr; ++i) {
      const cf32 v = h[j * nr + i];
      a[(j * m + i) * es] = v;
      s = fadd(s, abs2(v));
    }
    if (mmse) {
      MIMORX_UNROLL
      for (int i = 0; i < nt; ++i) a[(j * m + nr + i) * es] = cf32(i == j ? sn0 : 0.f, 0.f);
      s = fadd(s, n0);
    }
    big = s > big ? s : big;
    perm[j * es] = j;
  }
  linalg::mgs_qr(a, m, nt, es, r, es, perm, es, nrm, es, false, linalg::kQrRankTolerance);
  // Pivot floor (documented in detect/linear.hpp): keeps R^-1 finite for singular channels.
  const float floor = fmul(linalg::kQrRankTolerance, fsqrt(big));
  // R^-1 by back substitution, column by column.
  MIMORX_UNROLL
  for (int j = 0; j < nt; ++j) {
    MIMORX_UNROLL
    for (int i = 0; i < nt; ++i) ri[(j * nt + i) * es] = cf32(0.f, 0.f);
    MIMORX_UNROLL
    for (int i = j; i >= 0; --i) {
      float rii = r[(i * nt + i) * es].re;
      rii = rii > floor ? rii : floor;
      cf32 s = cf32(i == j ? 1.f : 0.f, 0.f);
      MIMORX_UNROLL
      for (int l = i + 1; l <= j; ++l) s = sub(s, mul(r[(l * nt + i) * es], ri[(j * nt + l) * es]));
      ri[(j * nt + i) * es] = scale(s, fdiv(1.f, rii));
    }
  }
  MIMORX_UNROLL
  for (int k = 0; k < nt; ++k) {
    float dk = 0.f;
    MIMORX_UNROLL
    for (int l = k; l < nt; ++l) dk = fadd(dk, abs2(ri[(l * nt + k) * es]));
    float g = 1.f;
    if (mmse) {
      float e = fmul(n0, dk);
      e = e < kLinearMaxErr ? e : kLinearMaxErr;
      const float mu = fsub(1.f, e);
      g = fdiv(1.f, mu);
      dk = fdiv(e, mu);
    }
    // Row k of W = R^-1 Q1^H: W_kj = sum_{l >= k} Rinv_kl conj(Q_jl).
    MIMORX_UNROLL
    for (int j = 0; j < nr; ++j) {
      cf32 s(0.f, 0.f);
      MIMORX_UNROLL
      for (int l = k; l < nt; ++l)
        s = add(s, mul(ri[(l * nt + k) * es], conj(a[(l * m + j) * es])));
      w[k * nr + j] = scale(s, g);
    }
    d[k] = dk;
  }
}

// Equalises and demaps one received vector with a prepared equaliser. n0 is this vector's
// noise variance (used by ZF). bits/llrs: nt * bits_per_symbol entries, either may be null.
MIMORX_HD void linear_vector(bool mmse, Modulation mod, const cf32* w, const float* d,
                             const cf32* y, int nr, int nt, float n0, std::uint8_t* bits,
                             float* llrs) {
  using namespace linalg::hd;
  const int mb = bits_per_symbol(mod);
  MIMORX_UNROLL
  for (int k = 0; k < nt; ++k) {
    cf32 x(0.f, 0.f);
    MIMORX_UNROLL
    for (int j = 0; j < nr; ++j) x = add(x, mul(w[k * nr + j], y[j]));
    x.re = x.re > kLinearClip ? kLinearClip : (x.re < -kLinearClip ? -kLinearClip : x.re);
    x.im = x.im > kLinearClip ? kLinearClip : (x.im < -kLinearClip ? -kLinearClip : x.im);
    if (bits) hard_bits(mod, x, bits + k * mb);
    if (llrs) {
      float var = mmse ? d[k] : fmul(n0, d[k]);
      var = var > kLinearMinVar ? var : kLinearMinVar;
      maxlog_llrs(mod, x, var, llrs + k * mb);
    }
  }
}

}  // namespace mimorx::detect::detail

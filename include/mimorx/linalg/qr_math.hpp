#pragma once
// Per-problem QR arithmetic shared by the CPU reference and the CUDA kernels (MIMORX_HD), and
// usable by other detectors' kernels that want one QR per thread.
//
// Every floating-point operation goes through the correctly rounded operations of
// core/rounding.hpp, which no compiler contracts into FMAs, so the CPU and the GPU compute
// bit-identical results. That makes the SQRD column choices and the detectors' hard decisions
// identical across backends.
//
// Layouts: a problem's matrices are column-major, element (i, j) of an m x n matrix at
// p[(j * m + i) * es], with an element stride `es` (1 on the CPU; the number of threads of a
// block when a kernel interleaves per-thread matrices in shared memory so that a warp's
// accesses to the same element fall into different banks).
#include <cstdint>

#include "mimorx/core/complex.hpp"
#include "mimorx/core/hd.hpp"
#include "mimorx/core/rounding.hpp"

namespace mimorx::linalg {

// How the complex model y = H x + n is presented to the QR.
//  complex: H itself, nr x nt complex.
//  rvd:  [Re H, -Im H; Im H, Re H] (2nr x 2nt real), x_r = [Re x; Im x], y_r = [Re y; Im y].
//  mrvd: real and imaginary part of each symbol adjacent: row/column 2i = Re, 2i+1 = Im, so
//        every complex entry h becomes the 2x2 block [Re h, -Im h; Im h, Re h]; y_r is the
//        interleaved (re, im) float array of y itself.
enum class QrModel : int { complex = 0, rvd = 1, mrvd = 2 };

// Per-channel outcome of a QR.
enum QrStatus : int {
  qr_ok = 0,
  qr_rank_deficient = 1,  // some r_kk fell below the rank threshold; that q_k is zero
  qr_non_finite = 2,      // H (or y) held NaN/Inf; outputs of this channel are zero
  qr_bad_order = 3,       // the given column order was no permutation (checked on the GPU)
};

namespace hd {

// The correctly rounded operations of core/rounding.hpp, and below them the scalar operations
// the QR templates use on float (real models) and cf32 (complex model).
using rounding::fadd;
using rounding::fdiv;
using rounding::fmul;
using rounding::fsqrt;
using rounding::fsub;
MIMORX_HD bool finite(float x) { return rounding::is_finite(x); }

MIMORX_HD float add(float a, float b) { return fadd(a, b); }
MIMORX_HD cf32 add(cf32 a, cf32 b) { return rounding::cadd(a, b); }
MIMORX_HD float sub(float a, float b) { return fsub(a, b); }
MIMORX_HD cf32 sub(cf32 a, cf32 b) { return rounding::csub(a, b); }
MIMORX_HD float mul(float a, float b) { return fmul(a, b); }
MIMORX_HD cf32 mul(cf32 a, cf32 b) { return rounding::cmul(a, b); }
// conj(a) * b
MIMORX_HD float mulc(float a, float b) { return fmul(a, b); }
MIMORX_HD cf32 mulc(cf32 a, cf32 b) { return rounding::cmul_conj(a, b); }
MIMORX_HD float scale(float a, float s) { return fmul(a, s); }
MIMORX_HD cf32 scale(cf32 a, float s) { return rounding::cscale(a, s); }
MIMORX_HD float abs2(float a) { return fmul(a, a); }
MIMORX_HD float abs2(cf32 a) { return fadd(fmul(a.re, a.re), fmul(a.im, a.im)); }
MIMORX_HD bool finite(cf32 a) { return finite(a.re) && finite(a.im); }
template <class T>
MIMORX_HD T zero() {
  return T(0.f);
}
template <class T>
MIMORX_HD T from_real(float x) {
  return T(x);
}

}  // namespace hd

// Rows and columns of the model matrix of an nr x nt complex channel.
MIMORX_HD constexpr int model_rows(QrModel m, int nr) {
  return m == QrModel::complex ? nr : 2 * nr;
}
MIMORX_HD constexpr int model_cols(QrModel m, int nt) {
  return m == QrModel::complex ? nt : 2 * nt;
}

// Entry (i, c) of the real model matrix of H (column-major nr x nt, element stride 1).
MIMORX_HD float real_model_entry(QrModel m, const cf32* h, int nr, int nt, int i, int c) {
  if (m == QrModel::rvd) {
    const bool lower = i >= nr, right = c >= nt;
    const cf32 v = h[(right ? c - nt : c) * nr + (lower ? i - nr : i)];
    // [Re, -Im; Im, Re]
    return lower ? (right ? v.re : v.im) : (right ? -v.im : v.re);
  }
  const cf32 v = h[(c >> 1) * nr + (i >> 1)];
  const int bi = i & 1, bc = c & 1;
  return bi == 0 ? (bc == 0 ? v.re : -v.im) : (bc == 0 ? v.im : v.re);
}
// Entry i of the real model vector of y (nr complex).
MIMORX_HD float real_model_y(QrModel m, const cf32* y, int nr, int i) {
  if (m == QrModel::rvd) return i < nr ? y[i].re : y[i - nr].im;
  return (i & 1) ? y[i >> 1].im : y[i >> 1].re;
}

// Who computes which rows of one problem. The CPU (and one-thread-per-problem kernels) own
// all rows; a GPU group of G lanes owns rows lane, lane + G, ... and sums over rows are
// reduced across the group by a butterfly. SerialRows reproduces that reduction order with G
// virtual lanes (partial sums of rows r = l mod G in increasing r, starting from row l itself
// or from zero for a lane without rows, then pairwise from stride G/2 down to 1), so a CPU
// reference with G = the kernel's group size gives identical bits. G = 1 is the plain
// sequential sum from zero.
struct SerialRows {
  int groups = 1;  // power of two, <= 32
  MIMORX_HD int first() const { return 0; }
  MIMORX_HD int step() const { return 1; }
  MIMORX_HD bool owns(int) const { return true; }
  template <class T, class F>
  MIMORX_HD T rowsum(int m, F f) const {
    if (groups == 1) {
      T s = hd::zero<T>();
      MIMORX_UNROLL
      for (int r = 0; r < m; ++r) s = hd::add(s, f(r));
      return s;
    }
    T part[32];
    for (int l = 0; l < groups; ++l) part[l] = l < m ? f(l) : hd::zero<T>();
    for (int r = groups; r < m; ++r) part[r & (groups - 1)] = hd::add(part[r & (groups - 1)], f(r));
    for (int o = groups >> 1; o >= 1; o >>= 1)
      for (int l = 0; l < o; ++l) part[l] = hd::add(part[l], part[l + o]);
    return part[0];
  }
};

// Loads column perm[j] of the model matrix into column j of `a` (m x n, element stride es),
// the rows `ex` owns. Returns false when H holds a non-finite value (agreed by the group).
template <class Rows>
MIMORX_HD bool load_model(const Rows& ex, QrModel model, const cf32* h, int nr, int nt,
                          const int* perm, int ps, cf32* a, int es) {
  (void)model;
  for (int j = 0; j < nt; ++j) {
    const int c = perm[j * ps];
    for (int i = ex.first(); i < nr; i += ex.step()) a[(j * nr + i) * es] = h[c * nr + i];
  }
  const float bad = ex.template rowsum<float>(nr, [&](int i) {
    bool ok = true;
    for (int j = 0; j < nt; ++j) ok = ok && hd::finite(a[(j * nr + i) * es]);
    return ok ? 0.f : 1.f;
  });
  return bad == 0.f;
}
template <class Rows>
MIMORX_HD bool load_model(const Rows& ex, QrModel model, const cf32* h, int nr, int nt,
                          const int* perm, int ps, float* a, int es) {
  const int m = 2 * nr, n = 2 * nt;
  for (int j = 0; j < n; ++j) {
    const int c = perm[j * ps];
    for (int i = ex.first(); i < m; i += ex.step())
      a[(j * m + i) * es] = real_model_entry(model, h, nr, nt, i, c);
  }
  const float bad = ex.template rowsum<float>(m, [&](int i) {
    bool ok = true;
    for (int j = 0; j < n; ++j) ok = ok && hd::finite(a[(j * m + i) * es]);
    return ok ? 0.f : 1.f;
  });
  return bad == 0.f;
}

// Modified Gram-Schmidt QR of the m x n matrix `a` (m >= n) in place: on return `a` holds Q
// (orthonormal columns) and r (n x n, element stride rs, lower triangle zeroed) holds R with a
// real non-negative diagonal, so that A_in[:, perm] = Q R.
//
// Right-looking MGS as in Wubben et al., "Efficient algorithm for decoding layered space-time
// codes" (Electronics Letters 2001, the SQRD of Table 1): step k normalises column k and
// removes its direction from every later column, downdating the later columns' squared norms.
// With `sorted` step k first swaps in the remaining column of minimum (downdated) norm, the
// SQRD order that detects the strongest streams first (they are the last rows of R).
// One deviation: column k is projected once more against q_0..q_{k-1} before it is
// normalised ("twice is enough", Giraud, Langou, Rozloznik 2005) and its norm is recomputed.
// Plain MGS in float loses orthogonality like eps * cond(H); the second pass keeps
// |Q^H Q - I| below 1e-5 on Rayleigh channels (tests/linalg/test_qr.cpp).
//
// `perm` (n ints, stride ps) enters as the column order used to load `a` and is permuted along
// with the columns. `nrm` is n floats of scratch (stride ns). A column whose remaining squared
// norm is <= tol2 is declared dependent: r_kk = 0, q_k = 0 and the result is qr_rank_deficient.
// `ex` says which rows of `a` and `r` this thread touches; perm and nrm are private to it.
template <class T, class Rows>
MIMORX_HD int mgs_qr(const Rows& ex, T* a, int m, int n, int es, T* r, int rs, int* perm, int ps,
                     float* nrm, int ns, bool sorted, float tol_rel) {
  using namespace hd;
  const int r0 = ex.first(), dr = ex.step();
  float big = 0.f;
  MIMORX_UNROLL
  for (int j = 0; j < n; ++j) {
    const float s = ex.template rowsum<float>(m, [&](int i) { return abs2(a[(j * m + i) * es]); });
    nrm[j * ns] = s;
    big = s > big ? s : big;
  }
  MIMORX_UNROLL
  for (int j = 0; j < n; ++j) {
    MIMORX_UNROLL
    for (int i = r0; i < n; i += dr) r[(j * n + i) * rs] = zero<T>();
  }
  const float tol2 = fmul(fmul(tol_rel, tol_rel), big);
  int status = qr_ok;
  MIMORX_UNROLL
  for (int k = 0; k < n; ++k) {
    if (sorted) {
      int p = k;
      MIMORX_UNROLL
      for (int l = k + 1; l < n; ++l)
        if (nrm[l * ns] < nrm[p * ns]) p = l;
      if (p != k) {
        MIMORX_UNROLL
        for (int i = r0; i < m; i += dr) {
          const T t = a[(k * m + i) * es];
          a[(k * m + i) * es] = a[(p * m + i) * es];
          a[(p * m + i) * es] = t;
        }
        MIMORX_UNROLL
        for (int i = r0; i < k; i += dr) {
          const T t = r[(k * n + i) * rs];
          r[(k * n + i) * rs] = r[(p * n + i) * rs];
          r[(p * n + i) * rs] = t;
        }
        const float tn = nrm[k * ns];
        nrm[k * ns] = nrm[p * ns];
        nrm[p * ns] = tn;
        const int tp = perm[k * ps];
        perm[k * ps] = perm[p * ps];
        perm[p * ps] = tp;
      }
    }
    // Second Gram-Schmidt pass of column k against the finished columns.
    MIMORX_UNROLL
    for (int i = 0; i < k; ++i) {
      const T c = ex.template rowsum<T>(
          m, [&](int t) { return mulc(a[(i * m + t) * es], a[(k * m + t) * es]); });
      MIMORX_UNROLL
      for (int t = r0; t < m; t += dr)
        a[(k * m + t) * es] = sub(a[(k * m + t) * es], mul(a[(i * m + t) * es], c));
      if (ex.owns(i)) r[(k * n + i) * rs] = add(r[(k * n + i) * rs], c);
    }
    const float s = ex.template rowsum<float>(m, [&](int t) { return abs2(a[(k * m + t) * es]); });
    if (!(s > tol2)) {
      status = qr_rank_deficient;
      MIMORX_UNROLL
      for (int t = r0; t < m; t += dr) a[(k * m + t) * es] = zero<T>();
      continue;  // q_k = 0: projecting on it changes nothing
    }
    const float rkk = fsqrt(s);
    if (ex.owns(k)) r[(k * n + k) * rs] = from_real<T>(rkk);
    const float inv = fdiv(1.f, rkk);
    MIMORX_UNROLL
    for (int t = r0; t < m; t += dr) a[(k * m + t) * es] = scale(a[(k * m + t) * es], inv);
    MIMORX_UNROLL
    for (int l = k + 1; l < n; ++l) {
      const T c = ex.template rowsum<T>(
          m, [&](int t) { return mulc(a[(k * m + t) * es], a[(l * m + t) * es]); });
      if (ex.owns(k)) r[(l * n + k) * rs] = c;
      MIMORX_UNROLL
      for (int t = r0; t < m; t += dr)
        a[(l * m + t) * es] = sub(a[(l * m + t) * es], mul(a[(k * m + t) * es], c));
      nrm[l * ns] = fsub(nrm[l * ns], abs2(c));
    }
  }
  return status;
}

// The sequential version (one thread owns the whole problem).
template <class T>
MIMORX_HD int mgs_qr(T* a, int m, int n, int es, T* r, int rs, int* perm, int ps, float* nrm,
                     int ns, bool sorted, float tol_rel) {
  return mgs_qr(SerialRows{1}, a, m, n, es, r, rs, perm, ps, nrm, ns, sorted, tol_rel);
}

// z = Q^H y for one vector (Q m x n with element stride es; y m entries, stride ys).
template <class T>
MIMORX_HD void apply_qh(const T* q, int m, int n, int es, const T* y, int ys, T* z, int zs) {
  using namespace hd;
  for (int j = 0; j < n; ++j) {
    T c = zero<T>();
    for (int t = 0; t < m; ++t) c = add(c, mulc(q[(j * m + t) * es], y[t * ys]));
    z[j * zs] = c;
  }
}

// Relative rank threshold: r_kk^2 <= (tol * max column norm)^2 means dependent. Float
// Gram-Schmidt leaves residuals of a few eps * ||h||; 64 eps keeps exactly dependent columns
// (residual ~1e-7 relative) flagged while accepting condition numbers up to ~1e5.
inline constexpr float kQrRankTolerance = 64.f * 1.1920929e-7f;

}  // namespace mimorx::linalg

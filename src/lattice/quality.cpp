// Verification of LLL output (lattice/quality.hpp): Gram-Schmidt recomputed from B' in long
// double, exact determinant of T by Bareiss elimination.
#include "mimorx/lattice/quality.hpp"

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <complex>
#include <string>
#include <vector>

#include "mimorx/core/error.hpp"

namespace mimorx::lattice {

namespace {

using ld = long double;

inline ld abs2(ld x) { return x * x; }
inline ld abs2(std::complex<ld> x) { return std::norm(x); }
inline ld conj_s(ld x) { return x; }
inline std::complex<ld> conj_s(std::complex<ld> x) { return std::conj(x); }
inline ld max_part(ld x) { return std::abs(x); }
inline ld max_part(std::complex<ld> x) { return std::max(std::abs(x.real()), std::abs(x.imag())); }

// S = ld or complex<ld>; b already converted.
template <class S>
QualityReport check_impl(int n, int m, const std::vector<S>& b, const CheckOptions& opt) {
  require(n >= 1 && m >= 1 && m <= n, "m",
          std::to_string(m) + " vectors in dimension " + std::to_string(n) + "; need 1 <= m <= n");
  QualityReport rep;
  for (const S& x : b) {
    if (!std::isfinite(double(std::real(x))) || !std::isfinite(double(std::imag(x)))) {
      rep.finite = false;
      rep.message = "the basis contains NaN or Inf";
      return rep;
    }
  }
  // Modified Gram-Schmidt: r(i, j) = <q_i, b_j>, bn = ||b*_j||^2.
  std::vector<S> q(b);
  std::vector<S> r(std::size_t(m) * m, S(0));
  std::vector<ld> bn(m), len(m);
  for (int j = 0; j < m; ++j) {
    ld l2 = 0;
    for (int i = 0; i < n; ++i) l2 += abs2(b[std::size_t(j) * n + i]);
    len[j] = std::sqrt(l2);
  }
  for (int j = 0; j < m; ++j) {
    S* qj = &q[std::size_t(j) * n];
    ld nn = 0;
    for (int i = 0; i < n; ++i) nn += abs2(qj[i]);
    bn[j] = nn;
    if (!(nn > 0)) {
      rep.message = "vector " + std::to_string(j) + " is dependent on the previous ones";
      rep.lovasz = rep.size_reduced = false;
      return rep;
    }
    const ld rn = std::sqrt(nn);
    for (int i = 0; i < n; ++i) qj[i] /= rn;
    r[std::size_t(j) * m + j] = S(rn);
    for (int k = j + 1; k < m; ++k) {
      S* qk = &q[std::size_t(k) * n];
      S d = 0;
      for (int i = 0; i < n; ++i) d += conj_s(qj[i]) * qk[i];
      r[std::size_t(k) * m + j] = d;
      for (int i = 0; i < n; ++i) qk[i] -= d * qj[i];
    }
  }
  // Size reduction: mu_jk = r_jk / r_jj.
  rep.size_reduced = true;
  const ld eta = 0.5L + ld(opt.eps_mu);
  for (int k = 1; k < m; ++k) {
    for (int j = 0; j < k; ++j) {
      const S mu = r[std::size_t(k) * m + j] / std::sqrt(bn[j]);
      const ld a = max_part(mu);
      if (a > rep.max_mu) rep.max_mu = double(a);
      if (a > eta && rep.size_reduced) {
        rep.size_reduced = false;
        rep.message = "not size-reduced: |mu(" + std::to_string(j) + ", " + std::to_string(k) +
                      ")| = " + std::to_string(double(a)) + " > " + std::to_string(double(eta));
      }
    }
  }
  // Lovasz: (|r_{k-1,k}|^2 + r_kk^2) / r_{k-1,k-1}^2 >= delta.
  rep.lovasz = true;
  rep.lovasz_ratio = m > 1 ? 1e300 : 1.0;
  const ld dcheck = ld(opt.delta) - ld(opt.eps_delta);
  for (int k = 1; k < m; ++k) {
    const ld ratio = (abs2(r[std::size_t(k) * m + k - 1]) + bn[k]) / bn[k - 1];
    if (double(ratio) < rep.lovasz_ratio) {
      rep.lovasz_ratio = double(ratio);
      rep.worst_lovasz_index = k;
    }
    if (ratio < dcheck && rep.lovasz) {
      rep.lovasz = false;
      if (rep.message.empty() || rep.size_reduced)
        rep.message = "Lovasz condition fails at k = " + std::to_string(k) + ": ratio " +
                      std::to_string(double(ratio)) + " < delta " + std::to_string(double(dcheck));
    }
  }
  ld logvol = 0, loglen = 0;
  for (int j = 0; j < m; ++j) {
    logvol += 0.5L * std::log(bn[j]);
    loglen += std::log(len[j]);
  }
  rep.log_volume = double(logvol);
  rep.orthogonality_defect = double(std::exp(loglen - logvol));
  rep.hermite_factor = double(std::exp(std::log(len[0]) - logvol / m));
  if (opt.condition_number) {
    Eigen::MatrixXcd B(n, m);
    for (int j = 0; j < m; ++j)
      for (int i = 0; i < n; ++i) {
        const S x = b[std::size_t(j) * n + i];
        B(i, j) = std::complex<double>(double(std::real(x)), double(std::imag(x)));
      }
    Eigen::BDCSVD<Eigen::MatrixXcd> svd(B);
    const auto& s = svd.singularValues();
    rep.condition_number = s(s.size() - 1) > 0 ? s(0) / s(s.size() - 1) : INFINITY;
  }
  return rep;
}

}  // namespace

QualityReport check_lll(int n, int m, const double* b, const CheckOptions& opt) {
  std::vector<ld> v(b, b + std::size_t(n) * m);
  return check_impl(n, m, v, opt);
}
QualityReport check_lll(int n, int m, const float* b, const CheckOptions& opt) {
  std::vector<ld> v(b, b + std::size_t(n) * m);
  return check_impl(n, m, v, opt);
}
QualityReport check_clll(int n, int m, const std::complex<double>* b, const CheckOptions& opt) {
  std::vector<std::complex<ld>> v(std::size_t(n) * m);
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = std::complex<ld>(b[i].real(), b[i].imag());
  return check_impl(n, m, v, opt);
}

bool exact_det(int m, const std::int64_t* a, double* det) {
  // Bareiss: every intermediate is a minor of A, so the divisions are exact.
  __extension__ typedef __int128 i128;
  std::vector<i128> M(a, a + std::size_t(m) * m);
  auto at = [&](int i, int j) -> i128& { return M[std::size_t(j) * m + i]; };
  i128 prev = 1;
  int sign = 1;
  for (int k = 0; k < m - 1; ++k) {
    if (at(k, k) == 0) {
      int p = k + 1;
      while (p < m && at(p, k) == 0) ++p;
      if (p == m) {
        *det = 0;
        return true;
      }
      for (int j = 0; j < m; ++j) std::swap(at(k, j), at(p, j));
      sign = -sign;
    }
    for (int i = k + 1; i < m; ++i) {
      for (int j = k + 1; j < m; ++j) {
        i128 x, y, d;
        if (__builtin_mul_overflow(at(i, j), at(k, k), &x)) return false;
        if (__builtin_mul_overflow(at(i, k), at(k, j), &y)) return false;
        if (__builtin_sub_overflow(x, y, &d)) return false;
        at(i, j) = d / prev;
      }
    }
    prev = at(k, k);
  }
  *det = double(sign * at(m - 1, m - 1));
  return true;
}

namespace {
template <class S, class TS>
TransformReport transform_impl(int n, int m, const S* b, const S* br, const TS* t, double tol) {
  TransformReport rep;
  rep.integer = true;
  for (std::size_t i = 0; i < std::size_t(m) * m; ++i) {
    const double re = double(std::real(t[i])), im = double(std::imag(t[i]));
    if (re != std::floor(re) || im != std::floor(im) || !std::isfinite(re) || !std::isfinite(im))
      rep.integer = false;
  }
  if (!rep.integer) rep.message = "T has a non-integer entry";
  // B T - B' in long double.
  ld maxb = 0, maxt = 0, res = 0;
  for (std::size_t i = 0; i < std::size_t(n) * m; ++i) maxb = std::max(maxb, ld(std::abs(b[i])));
  for (std::size_t i = 0; i < std::size_t(m) * m; ++i) maxt = std::max(maxt, ld(std::abs(t[i])));
  for (int j = 0; j < m; ++j)
    for (int i = 0; i < n; ++i) {
      std::complex<ld> s = 0;
      for (int k = 0; k < m; ++k) {
        const auto x = b[std::size_t(k) * n + i];
        const auto y = t[std::size_t(j) * m + k];
        s += std::complex<ld>(std::real(x), std::imag(x)) *
             std::complex<ld>(ld(std::real(y)), ld(std::imag(y)));
      }
      const auto z = br[std::size_t(j) * n + i];
      res = std::max(res, std::abs(s - std::complex<ld>(std::real(z), std::imag(z))));
    }
  const ld scale = std::max(ld(1), maxb * maxt * m);
  rep.residual = double(res / scale);
  rep.consistent = rep.residual <= tol;
  if (!rep.consistent && rep.message.empty())
    rep.message = "B T differs from B' by " + std::to_string(rep.residual) + " (relative)";
  return rep;
}

// |det| of a complex or real matrix by LU in long double.
template <class TS>
ld lu_abs_det(int m, const TS* t) {
  Eigen::Matrix<std::complex<ld>, Eigen::Dynamic, Eigen::Dynamic> A(m, m);
  for (int j = 0; j < m; ++j)
    for (int i = 0; i < m; ++i) {
      const auto x = t[std::size_t(j) * m + i];
      A(i, j) = std::complex<ld>(ld(std::real(x)), ld(std::imag(x)));
    }
  return std::abs(A.partialPivLu().determinant());
}
}  // namespace

TransformReport check_transform(int n, int m, const double* b, const double* b_reduced,
                                const std::int64_t* t, double tol) {
  auto rep = transform_impl(n, m, b, b_reduced, t, tol);
  double d = 0;
  if (m <= 24 && exact_det(m, t, &d)) {
    rep.exact_det = true;
    rep.det = d;
    rep.unimodular = std::abs(d) == 1.0;
  } else {
    rep.det = double(lu_abs_det(m, t));
    rep.unimodular = std::abs(std::abs(rep.det) - 1.0) <= 1e-6;
  }
  if (!rep.unimodular && rep.message.empty())
    rep.message = "det T = " + std::to_string(rep.det) + ", not +-1";
  return rep;
}

TransformReport check_ctransform(int n, int m, const std::complex<double>* b,
                                 const std::complex<double>* b_reduced,
                                 const std::complex<double>* t, double tol) {
  auto rep = transform_impl(n, m, b, b_reduced, t, tol);
  // |det T| = 1 for a Gaussian-integer T means det T is a unit (+-1, +-j).
  rep.det = double(lu_abs_det(m, t));
  rep.unimodular = std::abs(rep.det - 1.0) <= 1e-6;
  if (!rep.unimodular && rep.message.empty())
    rep.message = "|det T| = " + std::to_string(rep.det) + ", not 1";
  return rep;
}

}  // namespace mimorx::lattice

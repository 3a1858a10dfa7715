#include "lll_exact.hpp"

#include <fmt/format.h>
#include <gmpxx.h>

#include <cmath>

namespace mimorx::cli {

namespace {

using Matrix = std::vector<mpz_class>;  // column-major, as the bases

Matrix to_mpz(const std::vector<double>& v) {
  Matrix out(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) out[i] = v[i];  // exact for integer-valued doubles
  return out;
}

bool all_integer(const std::vector<double>& v) {
  for (double x : v)
    if (!std::isfinite(x) || x != std::trunc(x)) return false;
  return true;
}

// det of the m x m integer matrix a (Bareiss' fraction-free elimination, every division exact).
mpz_class determinant(int m, Matrix a) {
  auto at = [&](int r, int c) -> mpz_class& { return a[std::size_t(c) * m + r]; };
  mpz_class prev = 1;
  int sign = 1;
  for (int k = 0; k < m - 1; ++k) {
    int p = k;
    while (p < m && at(p, k) == 0) ++p;
    if (p == m) return 0;
    if (p != k) {
      for (int c = 0; c < m; ++c) swap(at(p, c), at(k, c));
      sign = -sign;
    }
    for (int i = k + 1; i < m; ++i) {
      for (int j = k + 1; j < m; ++j) {
        at(i, j) = at(i, j) * at(k, k) - at(i, k) * at(k, j);
        mpz_divexact(at(i, j).get_mpz_t(), at(i, j).get_mpz_t(), prev.get_mpz_t());
      }
    }
    prev = at(k, k);
  }
  return sign * at(m - 1, m - 1);
}

// The integral Gram-Schmidt data of the columns of b (Cohen, Algorithm 2.6.7):
// d[k + 1] = det of the Gram matrix of b_0..b_k (d[0] = 1), lambda(k, j) = d[j + 1] mu_kj.
struct IntegralGs {
  std::vector<mpz_class> d;
  Matrix lambda;  // m x m, lambda[k * m + j] for j < k
  int m = 0;
  const mpz_class& lam(int k, int j) const { return lambda[std::size_t(k) * m + j]; }
};

// Returns false (and stops) at the first dependent column.
bool integral_gs(int n, int m, const Matrix& b, IntegralGs& gs) {
  gs.m = m;
  gs.d.assign(m + 1, 0);
  gs.d[0] = 1;
  gs.lambda.assign(std::size_t(m) * m, 0);
  for (int k = 0; k < m; ++k) {
    for (int j = 0; j <= k; ++j) {
      mpz_class u = 0;
      for (int i = 0; i < n; ++i) u += b[std::size_t(k) * n + i] * b[std::size_t(j) * n + i];
      for (int i = 0; i < j; ++i) {
        u = gs.d[i + 1] * u - gs.lam(k, i) * gs.lam(j, i);
        mpz_divexact(u.get_mpz_t(), u.get_mpz_t(), gs.d[i].get_mpz_t());
      }
      if (j < k) {
        gs.lambda[std::size_t(k) * m + j] = u;
      } else {
        if (u == 0) return false;
        gs.d[k + 1] = u;
      }
    }
  }
  return true;
}

}  // namespace

std::string lattice_violation(int n, int m, const std::vector<double>& b,
                              const std::vector<double>& b_reduced,
                              const std::vector<std::int64_t>& t) {
  if (!all_integer(b_reduced)) return "the result has entries that are not integers";
  const Matrix bb = to_mpz(b), br = to_mpz(b_reduced);
  Matrix tt(t.size());
  for (std::size_t i = 0; i < t.size(); ++i) tt[i] = static_cast<long>(t[i]);
  for (int j = 0; j < m; ++j) {
    for (int i = 0; i < n; ++i) {
      mpz_class s = 0;
      for (int k = 0; k < m; ++k) s += bb[std::size_t(k) * n + i] * tt[std::size_t(j) * m + k];
      if (s != br[std::size_t(j) * n + i])
        return fmt::format("output vector {} is not U times the input (entry {} differs)", j, i);
    }
  }
  const mpz_class det = determinant(m, tt);
  if (abs(det) != 1)
    return "det U = " + det.get_str().substr(0, 40) + ", not +-1 (U is not unimodular)";
  return "";
}

bool independent(int n, int m, const std::vector<double>& b) {
  IntegralGs gs;
  return integral_gs(n, m, to_mpz(b), gs);
}

std::string lll_violation(int n, int m, const std::vector<double>& b, double delta, double eta) {
  IntegralGs gs;
  if (!integral_gs(n, m, to_mpz(b), gs)) return "the vectors are linearly dependent";
  const mpq_class e(eta), dl(delta);  // exact binary fractions of the doubles
  for (int k = 1; k < m; ++k) {
    for (int j = 0; j < k; ++j) {
      if (mpq_class(abs(gs.lam(k, j))) > e * gs.d[j + 1])
        return fmt::format("not size-reduced: |mu({}, {})| > {}", k, j, eta);
    }
    // delta d_k^2 <= d_{k+1} d_{k-1} + lambda(k, k-1)^2 (indices of d shifted by one).
    const mpq_class lhs = dl * gs.d[k] * gs.d[k];
    const mpz_class rhs = gs.d[k + 1] * gs.d[k - 1] + gs.lam(k, k - 1) * gs.lam(k, k - 1);
    if (lhs > rhs) return fmt::format("the Lovasz condition fails at k = {} (delta {})", k, delta);
  }
  return "";
}

}  // namespace mimorx::cli

// CPU LLL: the textbook reference (Schnorr-Euchner floating-point LLL, real and complex) and
// CR-AS-LLL with OpenMP (Jozsa et al. 2014, Algorithm 1).
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <limits>
#include <string>
#include <vector>

#include "lattice/lll_internal.hpp"
#include "lattice/lll_math.hpp"
#include "mimorx/core/error.hpp"

namespace mimorx::lattice {

const char* to_string(LllStatus s) {
  switch (s) {
    case LllStatus::reduced:
      return "reduced";
    case LllStatus::not_converged:
      return "not converged (sweep limit reached)";
    case LllStatus::precision_loss:
      return "precision loss (the final Gram-Schmidt check failed)";
    case LllStatus::singular:
      return "singular (dependent vectors, zero vector or non-finite values)";
  }
  return "unknown";
}

const char* to_string(LllMethod m) {
  switch (m) {
    case LllMethod::automatic:
      return "auto";
    case LllMethod::sequential:
      return "sequential";
    case LllMethod::all_swap:
      return "all-swap";
    case LllMethod::block:
      return "block";
  }
  return "unknown";
}

LllMethod parse_lll_method(const std::string& name) {
  if (name == "auto") return LllMethod::automatic;
  if (name == "sequential" || name == "textbook") return LllMethod::sequential;
  if (name == "all-swap" || name == "all_swap" || name == "as") return LllMethod::all_swap;
  if (name == "block" || name == "mb") return LllMethod::block;
  throw InvalidArgument("method: '" + name + "'; allowed: auto, sequential, all-swap, block");
}

namespace detail {

long default_max_iter(int m) { return 100000L + 400L * m * m; }

void check_eta(double eta, double delta) {
  // eta^2 < delta keeps the lazy rule's Lovasz test able to pass (fplll's condition); 1/2 is
  // the textbook bound and valid with every delta.
  require(eta == 0.5 || (eta > 0.5 && eta * eta < delta), "eta",
          std::to_string(eta) +
              "; need eta = 0.5 or 0.5 < eta < sqrt(delta) = " + std::to_string(std::sqrt(delta)));
}

namespace {

inline double abs2(double x) { return x * x; }
inline double abs2(std::complex<double> x) { return std::norm(x); }
inline double conj_s(double x) { return x; }
inline std::complex<double> conj_s(std::complex<double> x) { return std::conj(x); }
// Multipliers within 1/2 + 1e-9 are left alone: a recomputed mu near +-1/2 carries rounding
// noise, and rounding it would flip the vector back and forth forever.
inline double round_s(double x) { return std::abs(x) <= 0.5 + 1e-9 ? 0.0 : round_nearest(x); }
inline std::complex<double> round_s(std::complex<double> x) {
  return {round_s(x.real()), round_s(x.imag())};
}
// The lazy rule's rounding (fplll's rint): nearest integer, ties to even.
inline double round_even(double x) { return std::nearbyint(x); }
inline std::complex<double> round_even(std::complex<double> x) {
  return {round_even(x.real()), round_even(x.imag())};
}
inline double max_part(double x) { return std::abs(x); }
inline double max_part(std::complex<double> x) {
  return std::max(std::abs(x.real()), std::abs(x.imag()));
}
inline std::int64_t to_int(double x) { return std::int64_t(x); }

template <class S>
void check_input(int n, int m, const S* b, double delta, bool complex_lll) {
  require(n >= 1, "n", std::to_string(n) + " rows; need at least 1");
  require(m >= 1 && m <= n, "m",
          std::to_string(m) + " basis vectors in dimension " + std::to_string(n) +
              "; need 1 <= m <= n (more vectors than the dimension are linearly dependent)");
  if (complex_lll) {
    require(delta > 0.5 && delta < 1.0, "delta",
            std::to_string(delta) + "; complex LLL needs delta in (0.5, 1)");
  } else {
    require(delta >= 0.25 && delta < 1.0, "delta",
            std::to_string(delta) + "; LLL needs delta in [0.25, 1)");
  }
  for (std::int64_t i = 0; i < std::int64_t(n) * m; ++i) {
    require(std::isfinite(std::real(b[i])) && std::isfinite(std::imag(b[i])), "basis",
            "entry (" + std::to_string(i % n) + ", " + std::to_string(i / n) +
                ") is NaN or Inf; every entry must be finite");
  }
}

// Schnorr-Euchner LLL: row k of mu is recomputed from the vectors on every visit (Schnorr &
// Euchner 1994, Sec. 3). We keep the Gram-Schmidt vectors b*_j explicitly and project b_k by
// modified Gram-Schmidt, so ||b*_k||^2 is a sum of squares, not ||b_k||^2 - sum mu^2 ||b*_j||^2
// (that difference cancels catastrophically on knapsack-like bases). The visit repeats until a
// size-reduction pass changes nothing, so mu and b*_k belong to the final b_k.
// eta > 1/2 selects fplll's lazy rule: b_k is size-reduced only when some |mu_kj| > eta, and then
// every multiplier is rounded (ties to even); the Lovasz test takes mu_{k,k-1} as it is. With
// the same delta and eta this takes fplll's path: the same swaps and the same basis wherever
// the float64 multipliers round as fplll's do (docs/lll.md, "mimorx lll and fplll").
// S = double (real LLL) or std::complex<double> (complex LLL, Gan et al. 2009).
// t holds T in S (exact integers / Gaussian integers) or is null.
template <class S>
LllStats se_lll(int n, int m, S* b, S* t, double delta, double eta = 0.5) {
  const bool lazy = eta > 0.5;
  LllStats st;
  std::vector<S> mu(std::size_t(m) * m), bs(std::size_t(n) * m);
  std::vector<double> bn(m);
  auto col = [&](int j) { return b + std::size_t(j) * n; };
  auto star = [&](int j) { return &bs[std::size_t(j) * n]; };
  auto norm2 = [&](const S* x) {
    double s = 0;
    for (int i = 0; i < n; ++i) s += abs2(x[i]);
    return s;
  };
  if (t) {
    std::fill(t, t + std::size_t(m) * m, S(0));
    for (int i = 0; i < m; ++i) t[std::size_t(i) * m + i] = S(1);
  }
  const double tiny = 1e-28;  // (1e-14)^2: b*_k below 1e-14 ||b_k|| is zero to float64
  auto set_first = [&]() {
    std::copy(col(0), col(0) + n, star(0));
    bn[0] = norm2(col(0));
    return bn[0] > 0 && std::isfinite(bn[0]);
  };
  if (!set_first()) {
    st.status = LllStatus::singular;
    return st;
  }
  const long max_iter = default_max_iter(m);
  int k = 1;
  while (k < m) {
    if (++st.iterations > max_iter) {
      st.status = LllStatus::not_converged;
      return st;
    }
    S* muk = &mu[std::size_t(k) * m];
    S* v = star(k);
    for (int pass = 0;; ++pass) {
      if (pass > 64) {
        st.status = LllStatus::precision_loss;
        return st;
      }
      std::copy(col(k), col(k) + n, v);
      for (int j = 0; j < k; ++j) {
        const S* w = star(j);
        S d = 0;
        for (int i = 0; i < n; ++i) d += conj_s(w[i]) * v[i];
        muk[j] = d / bn[j];
        for (int i = 0; i < n; ++i) v[i] -= muk[j] * w[i];
      }
      if (lazy) {
        double top = 0;
        for (int j = 0; j < k; ++j) top = std::max(top, max_part(muk[j]));
        if (!(top > eta)) break;
      }
      bool changed = false;
      for (int j = k - 1; j >= 0; --j) {
        const S q = lazy ? round_even(muk[j]) : round_s(muk[j]);
        if (q == S(0)) continue;
        changed = true;
        S* bk = col(k);
        const S* bj = col(j);
        for (int i = 0; i < n; ++i) bk[i] -= q * bj[i];
        if (t) {
          S* tk = t + std::size_t(k) * m;
          const S* tj = t + std::size_t(j) * m;
          for (int i = 0; i < m; ++i) tk[i] -= q * tj[i];
        }
        const S* muj = &mu[std::size_t(j) * m];
        muk[j] -= q;
        for (int i = 0; i < j; ++i) muk[i] -= q * muj[i];
      }
      if (!changed) break;
    }
    const double bk = norm2(v);
    if (!(bk > tiny * norm2(col(k))) || !std::isfinite(bk)) {
      st.status = LllStatus::singular;
      return st;
    }
    if (delta * bn[k - 1] > bk + abs2(muk[k - 1]) * bn[k - 1]) {
      std::swap_ranges(col(k - 1), col(k - 1) + n, col(k));
      if (t) {
        std::swap_ranges(t + std::size_t(k - 1) * m, t + std::size_t(k) * m,
                         t + std::size_t(k) * m);
      }
      ++st.swaps;
      if (k == 1) {
        set_first();
      } else {
        --k;
      }
    } else {
      bn[k] = bk;
      ++k;
    }
  }
  return st;
}

bool linearly_dependent(int n, int m, const double* b) {
  // Modified Gram-Schmidt in long double with a relative threshold: a quick rank test that
  // turns dependent input into a clear InvalidArgument instead of a singular status.
  std::vector<long double> q(b, b + std::size_t(n) * m);
  for (int j = 0; j < m; ++j) {
    long double* qj = &q[std::size_t(j) * n];
    long double orig = 0, nn = 0;
    for (int i = 0; i < n; ++i)
      orig += (long double)b[std::size_t(j) * n + i] * b[std::size_t(j) * n + i];
    for (int i = 0; i < n; ++i) nn += qj[i] * qj[i];
    if (!(nn > orig * 1e-26L) || nn == 0) return true;
    const long double rn = std::sqrt(nn);
    for (int i = 0; i < n; ++i) qj[i] /= rn;
    for (int k = j + 1; k < m; ++k) {
      long double* qk = &q[std::size_t(k) * n];
      long double d = 0;
      for (int i = 0; i < n; ++i) d += qj[i] * qk[i];
      for (int i = 0; i < n; ++i) qk[i] -= d * qj[i];
    }
  }
  return false;
}

}  // namespace

LllStats se_lll_double(int n, int m, double* b, double* t, double delta, double eta) {
  return se_lll<double>(n, m, b, t, delta, eta);
}
}  // namespace detail

LllStats lll_reference(int n, int m, double* b, std::int64_t* t, double delta, double eta) {
  detail::check_input(n, m, b, delta, false);
  detail::check_eta(eta, delta);
  require(!detail::linearly_dependent(n, m, b), "basis",
          "the " + std::to_string(m) +
              " vectors are linearly dependent (or a vector is zero); LLL needs a basis");
  std::vector<double> td(t ? std::size_t(m) * m : 0);
  LllStats st = detail::se_lll<double>(n, m, b, t ? td.data() : nullptr, delta, eta);
  if (t) {
    for (std::size_t i = 0; i < td.size(); ++i) {
      if (std::abs(td[i]) >= 9.2e18) {
        st.status = LllStatus::precision_loss;  // T no longer fits int64
        break;
      }
      t[i] = detail::to_int(td[i]);
    }
  }
  return st;
}

LllStats clll_reference(int n, int m, std::complex<double>* b, std::complex<double>* t,
                        double delta) {
  detail::check_input(n, m, b, delta, true);
  {
    // Rank test on the real 2n x 2m representation [Re -Im; Im Re].
    std::vector<double> rb(std::size_t(4) * n * m);
    for (int j = 0; j < m; ++j) {
      for (int i = 0; i < n; ++i) {
        const auto z = b[std::size_t(j) * n + i];
        rb[std::size_t(j) * 2 * n + i] = z.real();
        rb[std::size_t(j) * 2 * n + n + i] = z.imag();
        rb[std::size_t(m + j) * 2 * n + i] = -z.imag();
        rb[std::size_t(m + j) * 2 * n + n + i] = z.real();
      }
    }
    require(!detail::linearly_dependent(2 * n, 2 * m, rb.data()), "basis",
            "the " + std::to_string(m) +
                " complex vectors are linearly dependent (or a vector is zero); LLL needs a basis");
  }
  return detail::se_lll<std::complex<double>>(n, m, b, t, delta);
}

// ---------------------------------------------------------------------------------------------
// CR-AS-LLL on the CPU (Algorithm 1 of Jozsa et al.): the same phases as the CUDA kernel.
namespace detail {

// float32 reductions keep T within int32, as the CUDA kernel does (lll_cuda.cu: an entry of
// 2^31 or more leaves no bit of a float32 entry of B' = B T; the reduction ends in
// precision_loss), so that both backends return the same status.
template <class F>
bool t_in_range(std::int64_t v) {
  return sizeof(F) == 8 || v == std::int64_t(std::int32_t(v));
}

template <class F>
LllStats all_swap_cpu(int n, int m, F* b, std::int64_t* t, double delta_d, long max_iter,
                      int threads) {
  LllStats st;
  const F delta = F(delta_d);
  std::vector<F> R(std::size_t(m) * m, F(0)), Q(std::size_t(n) * m);
  std::vector<char> swp(m, 0);
  auto Rc = [&](int i, int j) -> F& { return R[std::size_t(j) * m + i]; };
  if (t) {
    std::fill(t, t + std::size_t(m) * m, 0);
    for (int i = 0; i < m; ++i) t[std::size_t(i) * m + i] = 1;
  }
  // Shared state of the team (written in `single` blocks, read after their barriers).
  bool singular = false, big = false, done = false, overflow = false;
  long iter = 0;
  int quiet = 0, checks = 0;
  std::int64_t swaps_total = 0;
  std::int64_t phase_swaps = 0;
  int violations = 0;
  LllStatus status = LllStatus::not_converged;
  threads = std::max(1, threads);

#pragma omp parallel num_threads(threads) if (threads > 1)
  {
    // Right-looking modified Gram-Schmidt: R = Q^T B column by column (the GS coefficients).
    auto qr = [&]() {
#pragma omp for schedule(static)
      for (std::int64_t i = 0; i < std::int64_t(n) * m; ++i) Q[i] = b[i];
      for (int j = 0; j < m; ++j) {
        const F* qj = &Q[std::size_t(j) * n];
#pragma omp single
        {
          F s = 0, o = 0;
          for (int i = 0; i < n; ++i) s += qj[i] * qj[i];
          for (int i = 0; i < n; ++i) o += b[std::size_t(j) * n + i] * b[std::size_t(j) * n + i];
          const F rjj = std::sqrt(s);
          if (!(rjj > singular_fraction<F>() * std::sqrt(o)) || !std::isfinite(rjj))
            singular = true;
          Rc(j, j) = rjj;
          for (int i = j + 1; i < m; ++i) Rc(i, j) = 0;
        }
        if (singular) break;
        const F rjj = Rc(j, j);
#pragma omp for schedule(static)
        for (int k = j + 1; k < m; ++k) {
          F* qk = &Q[std::size_t(k) * n];
          F d = 0;
          for (int i = 0; i < n; ++i) d += qj[i] * qk[i];
          const F rjk = d / rjj;
          Rc(j, k) = rjk;
          const F f = rjk / rjj;
          for (int i = 0; i < n; ++i) qk[i] -= f * qj[i];
        }
      }
    };
    // SimpleSizeReduce for all columns: step j (descending) reduces every column k > j against
    // column j, which no step before j has changed, so the columns are independent.
    auto size_reduce = [&]() {
      for (int j = m - 2; j >= 0; --j) {
        const F rjj = Rc(j, j);
#pragma omp for schedule(static)
        for (int k = j + 1; k < m; ++k) {
          const F q = round_nearest(Rc(j, k) / rjj);
          if (q == F(0)) continue;
          if (std::abs(q) > big_quotient<F>()) {
#pragma omp atomic write
            big = true;
          }
          for (int i = 0; i <= j; ++i) Rc(i, k) -= q * Rc(i, j);
          F* bk = b + std::size_t(k) * n;
          const F* bj = b + std::size_t(j) * n;
          for (int i = 0; i < n; ++i) bk[i] -= q * bj[i];
          if (t) {
            if (!(std::abs(q) < F(4.0e18))) {
#pragma omp atomic write
              overflow = true;
              continue;
            }
            const std::int64_t qi = std::int64_t(q);
            std::int64_t* tk = t + std::size_t(k) * m;
            const std::int64_t* tj = t + std::size_t(j) * m;
            for (int i = 0; i < m; ++i) {
              std::int64_t p = 0, s = 0;
              if (__builtin_mul_overflow(qi, tj[i], &p) || __builtin_sub_overflow(tk[i], p, &s) ||
                  !t_in_range<F>(s)) {
#pragma omp atomic write
                overflow = true;
              }
              tk[i] = s;
            }
          }
        }
      }
    };
    // SimpleSwap for every pair (k-1, k) of one parity, then the Givens rotations that make R
    // triangular again (rows k-1, k; disjoint across pairs).
    auto swap_phase = [&](int parity) {
      const int first = parity == 0 ? 1 : 2;
      std::int64_t local = 0;
#pragma omp for schedule(static)
      for (int k = first; k < m; k += 2) {
        // Pair size reduction (as the CUDA kernel): only mu_{k,k-1} enters the test.
        const F q = round_nearest(Rc(k - 1, k) / Rc(k - 1, k - 1));
        if (q != F(0)) {
          if (std::abs(q) > big_quotient<F>()) {
#pragma omp atomic write
            big = true;
          }
          for (int i = 0; i < k; ++i) Rc(i, k) -= q * Rc(i, k - 1);
          F* bk = b + std::size_t(k) * n;
          const F* bj = b + std::size_t(k - 1) * n;
          for (int i = 0; i < n; ++i) bk[i] -= q * bj[i];
          if (t) {
            if (!(std::abs(q) < F(4.0e18))) {
#pragma omp atomic write
              overflow = true;
            } else {
              const std::int64_t qi = std::int64_t(q);
              std::int64_t* tk = t + std::size_t(k) * m;
              const std::int64_t* tj = t + std::size_t(k - 1) * m;
              for (int i = 0; i < m; ++i) {
                std::int64_t p = 0, s2 = 0;
                if (__builtin_mul_overflow(qi, tj[i], &p) ||
                    __builtin_sub_overflow(tk[i], p, &s2) || !t_in_range<F>(s2)) {
#pragma omp atomic write
                  overflow = true;
                }
                tk[i] = s2;
              }
            }
          }
        }
        const bool s = lovasz_violated(delta, Rc(k - 1, k - 1), Rc(k - 1, k), Rc(k, k));
        swp[k] = s;
        if (!s) continue;
        ++local;
        std::swap_ranges(b + std::size_t(k - 1) * n, b + std::size_t(k) * n,
                         b + std::size_t(k) * n);
        if (t) {
          std::swap_ranges(t + std::size_t(k - 1) * m, t + std::size_t(k) * m,
                           t + std::size_t(k) * m);
        }
        for (int i = 0; i <= k; ++i) std::swap(Rc(i, k - 1), Rc(i, k));
      }
#pragma omp atomic
      phase_swaps += local;
#pragma omp for schedule(static)
      for (int k = first; k < m; k += 2) {
        if (!swp[k]) continue;
        F c, s;
        givens(Rc(k - 1, k - 1), Rc(k, k - 1), &c, &s);
        for (int j = k - 1; j < m; ++j) {
          const F x = Rc(k - 1, j), y = Rc(k, j);
          Rc(k - 1, j) = c * x + s * y;
          Rc(k, j) = -s * x + c * y;
        }
        Rc(k, k - 1) = 0;
      }
    };

    qr();
    while (!singular) {
      if (iter % kFullReductionEvery == 0) size_reduce();
#pragma omp barrier
      if (big) {
#pragma omp barrier
#pragma omp single
        big = false;
        qr();
        if (singular) break;
        size_reduce();
      }
#pragma omp single
      phase_swaps = 0;
      swap_phase(int(iter & 1));
#pragma omp barrier
      bool check = false;
#pragma omp single
      {
        swaps_total += phase_swaps;
        quiet = phase_swaps ? 0 : quiet + 1;
        ++iter;
      }
      check = quiet >= 2;
      if (check) {
        // Two quiet phases in a row: recompute the GS data from B and test every pair.
        qr();
        if (singular) break;
        size_reduce();
#pragma omp barrier
#pragma omp single
        {
          violations = 0;
          for (int k = 1; k < m; ++k) {
            if (lovasz_violated(delta, Rc(k - 1, k - 1), Rc(k - 1, k), Rc(k, k))) ++violations;
          }
          // A multiplier above big_quotient in this size reduction left R imprecise (seen on one
          // Gaussian 64x64 float32 basis of 8192: |mu| = 0.60 accepted): not reduced yet; the
          // next iteration recomputes R.
          if (violations == 0 && !big) {
            status = LllStatus::reduced;
            done = true;
          } else {
            quiet = 0;
            if (++checks > 16) {
              status = LllStatus::precision_loss;
              done = true;
            }
          }
        }
      }
#pragma omp single
      {
        if (iter >= max_iter) done = true;
        if (overflow) {
          status = LllStatus::precision_loss;
          done = true;
        }
      }
      if (done) break;
    }
  }
  st.swaps = swaps_total;
  st.iterations = iter;
  st.status = singular ? LllStatus::singular : status;
  if (m == 1 && !singular) st.status = LllStatus::reduced;
  return st;
}

template LllStats all_swap_cpu<float>(int, int, float*, std::int64_t*, double, long, int);
template LllStats all_swap_cpu<double>(int, int, double*, std::int64_t*, double, long, int);

}  // namespace detail
}  // namespace mimorx::lattice

// CR-MB-LLL on one host basis (detail::block_lll, lll_internal.hpp): the global size reduction
// and the GSC-Update on the CPU, the block reductions by the caller's BlockReducer (all-swap on
// CPU threads, or the GPU's kernel for the CPU+GPU scheduler).
#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "lattice/lll_internal.hpp"
#include "lattice/lll_math.hpp"

namespace mimorx::lattice::detail {

namespace {

// Size reduction of all columns against the float64 R (m x m, upper), applied to B and T.
// Every column k is reduced against the columns j < k as they were on entry (a snapshot of R,
// B and T): those are lattice vectors with the same r_jj, so the result is size-reduced, and
// the columns are independent, with no barrier between the m - 1 steps of the in-place form
// (whose barriers dominate at large m). Columns whose multipliers are all zero (most of them
// after the first pass) cost one pass over their column of R.
template <class F>
bool size_reduce_global(int n, int m, Eigen::MatrixXd& R, F* b, std::int64_t* t, int threads) {
  const Eigen::MatrixXd R0 = R;
  const std::vector<F> b0(b, b + std::size_t(n) * m);
  std::vector<std::int64_t> t0;
  if (t) t0.assign(t, t + std::size_t(m) * m);
  bool overflow = false;
#pragma omp parallel for num_threads(threads) schedule(dynamic, 8) if (threads > 1 && m >= 128)
  for (int k = 1; k < m; ++k) {
    F* bk = b + std::size_t(k) * n;
    std::int64_t* tk = t ? t + std::size_t(k) * m : nullptr;
    for (int j = k - 1; j >= 0; --j) {
      const double q = round_nearest(R(j, k) / R0(j, j));
      if (q == 0) continue;
      for (int i = 0; i <= j; ++i) R(i, k) -= q * R0(i, j);
      const F* bj = b0.data() + std::size_t(j) * n;
      for (int i = 0; i < n; ++i) bk[i] -= F(q) * bj[i];
      if (tk) {
        if (!(std::abs(q) < 4.0e18)) {
#pragma omp atomic write
          overflow = true;
          continue;
        }
        const auto qi = std::int64_t(q);
        const std::int64_t* tj = t0.data() + std::size_t(j) * m;
        for (int i = 0; i < m; ++i) {
          std::int64_t p = 0, s = 0;
          if (__builtin_mul_overflow(qi, tj[i], &p) || __builtin_sub_overflow(tk[i], p, &s)) {
#pragma omp atomic write
            overflow = true;
          }
          tk[i] = s;
        }
      }
    }
  }
  return !overflow;
}

// GSC-Update: the R factor of B in float64 (Householder QR); false when a column is zero to
// working precision.
template <class F>
bool gs_update(int n, int m, const F* b, Eigen::MatrixXd& R, const GramFactor<F>& gram) {
  auto basis = [&] {
    Eigen::MatrixXd B(n, m);
    for (int j = 0; j < m; ++j)
      for (int i = 0; i < n; ++i) B(i, j) = double(b[std::size_t(j) * n + i]);
    return B;
  };
  auto accurate = [&] {
    const double cmin = R.diagonal().cwiseAbs().minCoeff(),
                 cmax = R.diagonal().cwiseAbs().maxCoeff();
    return cmin >
           1e-6 * cmax;  // diag ratio as a cheap conditioning proxy (eps^(1/2) of float64 ~ 1e-8)
  };
  bool ok = false;
  if (gram) {
    // The same Gram matrix and Cholesky factor, on the GPU.
    R.resize(m, m);
    ok = gram(b, n, m, R.data()) && R.allFinite() && accurate();
  } else {
    // R from the Cholesky factor of the Gram matrix: one GEMM (multi-threaded in Eigen) and an
    // m^3/3 factorisation, which use the cores better than Householder QR's column-by-column
    // reflections. Its error grows with cond(B)^2, harmless for the bases LLL produces (cond ~
    // 1e2..1e4 here); when the factorisation fails or loses accuracy, Householder QR takes over.
    const Eigen::MatrixXd B = basis();
    Eigen::MatrixXd G(m, m);
    G.noalias() = B.transpose() * B;
    Eigen::LLT<Eigen::MatrixXd> llt(G);
    ok = llt.info() == Eigen::Success;
    if (ok) {
      R = llt.matrixU();
      ok = accurate();
    }
  }
  if (!ok) {
    Eigen::HouseholderQR<Eigen::MatrixXd> qr(basis());
    R = qr.matrixQR().topRows(m).triangularView<Eigen::Upper>();
  }
  for (int j = 0; j < m; ++j) {
    double nj = 0;
    for (int i = 0; i < n; ++i)
      nj += double(b[std::size_t(j) * n + i]) * double(b[std::size_t(j) * n + i]);
    nj = std::sqrt(nj);
    if (!(std::abs(R(j, j)) > double(singular_fraction<F>()) * nj) || !std::isfinite(R(j, j)))
      return false;
  }
  return true;
}

}  // namespace

template <class F>
LllStats block_lll(int n, int m, F* b, std::int64_t* t, double delta, int l, long max_passes,
                   int threads, const BlockReducer<F>& reduce, const GramFactor<F>& gram) {
  LllStats st;
  if (t) {
    std::fill(t, t + std::size_t(m) * m, 0);
    for (int i = 0; i < m; ++i) t[std::size_t(i) * m + i] = 1;
  }
  // float32 blocks see R rounded to float: the final float64 check allows that rounding.
  const double delta_check = sizeof(F) == 4 ? delta * (1 - 1e-5) : delta * (1 - 1e-12);
  Eigen::MatrixXd R;
  std::vector<F> blocks;
  std::vector<std::int64_t> U;
  std::vector<LllStatus> bstat;
  int quiet = 0, checks = 0;
  long last_full = 0;
  constexpr long kFullQrEvery = 8;
  for (long pass = 0;; ++pass) {
    if (pass >= max_passes) {
      st.status = LllStatus::not_converged;
      return st;
    }
    st.iterations = pass + 1;
    // Full recomputation of R (Householder, O(n m^2)) at the start, every kFullQrEvery passes
    // against drift, and before the final check; otherwise R follows the block reductions
    // through the GSC-Update below (O(m^2 l)).
    if (pass == 0 || quiet >= 2 || pass - last_full >= kFullQrEvery) {
      if (!gs_update(n, m, b, R, gram)) {
        st.status = LllStatus::singular;
        return st;
      }
      last_full = pass;
    }
    if (!size_reduce_global(n, m, R, b, t, threads)) {
      st.status = LllStatus::precision_loss;
      return st;
    }
    if (quiet >= 2) {
      // Both block offsets made no swap: every adjacent pair lay inside some block. Confirm on
      // fresh float64 GS data of the size-reduced basis.
      bool ok = true;
      for (int k = 1; k < m && ok; ++k)
        ok = !lovasz_violated(delta_check, R(k - 1, k - 1), R(k - 1, k), R(k, k));
      if (ok) {
        st.status = LllStatus::reduced;
        return st;
      }
      quiet = 0;
      if (++checks > 16) {
        st.status = LllStatus::precision_loss;
        return st;
      }
    }
    std::int64_t swaps = 0;
    // The pass's diagonal blocks, one reducer call (one kernel launch) per group.
    for (const BlockGroup& g : block_groups(m, l, pass)) {
      if (g.count == 0) continue;
      const int sz = g.size, cnt = g.count;
      std::vector<int> starts(cnt);
      for (int c = 0; c < cnt; ++c) starts[c] = g.start + c * g.stride;
      const std::size_t bs = std::size_t(sz) * sz;
      blocks.assign(bs * cnt, F(0));
      U.assign(bs * cnt, 0);
      bstat.assign(cnt, LllStatus::reduced);
      for (int c = 0; c < cnt; ++c)
        for (int j = 0; j < sz; ++j)
          for (int i = 0; i <= j; ++i)
            blocks[c * bs + std::size_t(j) * sz + i] = F(R(starts[c] + i, starts[c] + j));
      swaps += reduce(blocks.data(), U.data(), bstat.data(), cnt, sz);
      for (int c = 0; c < cnt; ++c) {
        if (bstat[c] != LllStatus::reduced) {
          st.status = bstat[c];
          return st;
        }
      }
      // B[:, s:s+sz] <- B[:, s:s+sz] U, T likewise (exact in int64, overflow checked).
      bool overflow = false;
#pragma omp parallel for num_threads(threads) schedule(static) if (threads > 1)
      for (int c = 0; c < cnt; ++c) {
        const int s0 = starts[c];
        const std::int64_t* u = &U[c * bs];
        std::vector<double> tmp(std::size_t(n) * sz);
        for (int j = 0; j < sz; ++j)
          for (int kk = 0; kk < sz; ++kk) {
            const double f = double(u[std::size_t(j) * sz + kk]);
            if (f == 0) continue;
            const F* src = b + std::size_t(s0 + kk) * n;
            for (int i = 0; i < n; ++i) tmp[std::size_t(j) * n + i] += f * double(src[i]);
          }
        for (std::size_t i = 0; i < tmp.size(); ++i) b[std::size_t(s0) * n + i] = F(tmp[i]);
        if (t) {
          std::vector<std::int64_t> tt(std::size_t(m) * sz, 0);
          bool ov = false;
          for (int j = 0; j < sz; ++j)
            for (int kk = 0; kk < sz; ++kk) {
              const std::int64_t f = u[std::size_t(j) * sz + kk];
              if (f == 0) continue;
              const std::int64_t* src = t + std::size_t(s0 + kk) * m;
              for (int i = 0; i < m; ++i) {
                std::int64_t p;
                ov |= __builtin_mul_overflow(f, src[i], &p);
                ov |= __builtin_add_overflow(tt[std::size_t(j) * m + i], p,
                                             &tt[std::size_t(j) * m + i]);
              }
            }
          std::copy(tt.begin(), tt.end(), t + std::size_t(s0) * m);
          if (ov) {
#pragma omp atomic write
            overflow = true;
          }
        }
      }
      if (overflow) {
        st.status = LllStatus::precision_loss;
        return st;
      }
      // GSC-Update (Jozsa et al., CR-MB-LLL): R <- Q^T R U with U = diag(U_c) and
      // Q = diag(Q_c), Q_c R~_c = R_cc U_c. First every block's columns (R U), then every
      // block's rows (Q_c^T); the second touches rows only, disjoint across blocks.
#pragma omp parallel for num_threads(threads) schedule(static) if (threads > 1)
      for (int c = 0; c < cnt; ++c) {
        const int s0 = starts[c];
        Eigen::Map<const Eigen::Matrix<std::int64_t, Eigen::Dynamic, Eigen::Dynamic>> u(&U[c * bs],
                                                                                        sz, sz);
        const Eigen::MatrixXd cols = R.block(0, s0, s0 + sz, sz) * u.cast<double>();
        R.block(0, s0, s0 + sz, sz) = cols;
      }
#pragma omp parallel for num_threads(threads) schedule(static) if (threads > 1)
      for (int c = 0; c < cnt; ++c) {
        const int s0 = starts[c];
        Eigen::HouseholderQR<Eigen::MatrixXd> qr(R.block(s0, s0, sz, sz));
        const Eigen::MatrixXd rows = qr.householderQ().adjoint() * R.block(s0, s0, sz, m - s0);
        R.block(s0, s0, sz, m - s0) = rows;
        for (int j = 0; j < sz; ++j)
          for (int i = j + 1; i < sz; ++i) R(s0 + i, s0 + j) = 0;
      }
    }
    st.swaps += swaps;
    quiet = swaps == 0 ? quiet + 1 : 0;
  }
}

template LllStats block_lll<float>(int, int, float*, std::int64_t*, double, int, long, int,
                                   const BlockReducer<float>&, const GramFactor<float>&);
template LllStats block_lll<double>(int, int, double*, std::int64_t*, double, int, long, int,
                                    const BlockReducer<double>&, const GramFactor<double>&);

}  // namespace mimorx::lattice::detail

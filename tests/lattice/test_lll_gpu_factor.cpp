// The GPU-resident block method's R factor: the global size reduction, the Gram-Cholesky
// factorisation, its refactorisation from a column (tail, kept head rows, lookahead kernel) and
// the inverse of R's head.
#include <gtest/gtest.h>

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "lattice/column_warp_lll.hpp"
#include "lattice/lll_internal.hpp"
#include "lattice/lll_math.hpp"
#include "mimorx/core/buffer.hpp"
#include "mimorx/lattice/lll.hpp"
#include "mimorx/lattice/quality.hpp"
#include "support/gpu.hpp"
#include "support/lll_gpu_support.hpp"
#include "support/lll_inputs.hpp"
#include "support/lll_support.hpp"

using namespace mimorx;
using namespace mimorx::lattice;

#if MIMORX_HAS_CUDA
// The block method's float64 R on the GPU (Gram matrix + blocked Cholesky) against Eigen's
// Cholesky factor of the same Gram matrix, for sizes around the 32-column panels and 64-wide
// tiles; a zero column makes the factorisation fail (the caller then uses Householder QR).
template <class F>
void gram_case(std::mt19937_64& g, int n, int m) {
  auto b = test::gaussian_basis(g, n, m);
  std::vector<F> bf(b.begin(), b.end());
  Eigen::MatrixXd B(n, m);
  for (int j = 0; j < m; ++j)
    for (int i = 0; i < n; ++i) B(i, j) = double(bf[std::size_t(j) * n + i]);
  const Eigen::MatrixXd G = B.transpose() * B;
  const Eigen::MatrixXd want = Eigen::LLT<Eigen::MatrixXd>(G).matrixU();
  lattice::detail::GramWorkspace<F> ws;
  Eigen::MatrixXd got(m, m);
  ASSERT_TRUE(lattice::detail::gram_cholesky_cuda<F>(bf.data(), n, m, got.data(), ws, nullptr, 0))
      << n << "x" << m;
  // Backward error, independent of the conditioning: R^T R = G up to a few unit roundoffs a term.
  const double eps = std::numeric_limits<double>::epsilon();
  const double bwd = (got.transpose() * got - G).cwiseAbs().maxCoeff() / G.cwiseAbs().maxCoeff();
  EXPECT_LT(bwd, (8.0 * m + 16.0) * eps) << n << "x" << m;
  // Forward error against Eigen's factor: two backward-stable factorisations differ by up to
  // about eps kappa(G) (kappa(G) = kappa(R)^2); a square Gaussian basis can have kappa(B) ~ 1e5
  // (MIMORX_TEST_SEED=12644105017366574611: 300 x 300, kappa 1.5e5, 1.2e-10 from Eigen's R,
  // while Eigen's and a left-looking Cholesky differ by 1.9e-11 on the CPU).
  const Eigen::BDCSVD<Eigen::MatrixXd> svd(want);
  const auto& sv = svd.singularValues();
  const double kappa_g = (sv(0) / sv(sv.size() - 1)) * (sv(0) / sv(sv.size() - 1));
  const double err = (got - want).cwiseAbs().maxCoeff() / want.cwiseAbs().maxCoeff();
  EXPECT_LT(err, std::max(1e-10, 100 * eps * kappa_g)) << n << "x" << m << " kappa(G) " << kappa_g;
  for (int j = 0; j < m; ++j)
    for (int i = j + 1; i < m; ++i) ASSERT_EQ(got(i, j), 0.0) << "below the diagonal";
  // A zero column: pivot 0, reported as a failure.
  for (int i = 0; i < n; ++i) bf[std::size_t(m / 2) * n + i] = F(0);
  EXPECT_FALSE(lattice::detail::gram_cholesky_cuda<F>(bf.data(), n, m, got.data(), ws, nullptr, 0))
      << n << "x" << m;
}

namespace {
// The GPU size reduction (size_reduce_enqueue) against a host model of the same arithmetic:
// rows descending, q = round(x * (1 / r_jj)), one fused multiply-add per update; results equal
// to the last bit. The snapshot R0 has small off-diagonal entries (so that multipliers stay
// moderate over thousands of rows); the columns of R to reduce are R0's (no multiplier), large
// (dense multipliers), or large in their lower half. gated: called with a gate of three ints
// {0, gate, 0} (closed where gate != 0: R unchanged and no column marked).
void size_reduce_case(std::mt19937_64& g, int m, int first_col = 0, bool gated = false,
                      int gate = 0, bool prepared = false) {
  const bool closed = gated && gate != 0;
  const std::size_t mm = std::size_t(m) * m;
  std::vector<double> r0(mm, 0.0), d(m);
  std::normal_distribution<double> nd;
  std::uniform_real_distribution<double> ud(0.5, 2.0), small(-0.05, 0.05);
  for (int j = 0; j < m; ++j) d[j] = r0[std::size_t(j) * m + j] = ud(g);
  for (int k = 0; k < m; ++k)
    for (int i = 0; i < k; ++i) r0[std::size_t(k) * m + i] = small(g) * d[i];
  std::vector<double> r = r0;
  for (int k = 0; k < m; ++k) {
    const int kind = k % 3;
    if (kind == 1) continue;
    for (int i = kind == 0 ? 0 : k / 2; i < k; ++i) r[std::size_t(k) * m + i] = nd(g) * 50 * d[i];
  }
  // Host model.
  std::vector<double> want = r, wmult(mm, 0.0);
  std::vector<int> wcol(m, 0);
  const int from = first_col / 8 * 8;  // the first column of first_col's tile
  for (int k = std::max(1, from); k < m && !closed; ++k) {
    double* x = want.data() + std::size_t(k) * m;
    for (int j = k - 1; j >= 0; --j) {
      // the product rounded on its own (no fused + 0.5), as on the GPU
      const double q = lattice::detail::round_nearest(std::fma(x[j], 1.0 / d[j], 0.0));
      if (q == 0) continue;
      for (int i = 0; i < j; ++i) x[i] = std::fma(-q, r0[std::size_t(j) * m + i], x[i]);
      x[j] = std::fma(-q, d[j], x[j]);
      wmult[std::size_t(k) * m + j] = q;
      wcol[k] = 1;
    }
  }
  auto dr = Buffer<double>::device(mm), dr0 = Buffer<double>::device(mm),
       dmult = Buffer<double>::device(mm);
  auto dcol = Buffer<int>::device(m);
  auto dsync = Buffer<int>::device(lattice::detail::size_reduce_sync_size(m));
  dr.copy_from_host(r.data(), mm);
  dr0.copy_from_host(r0.data(), mm);
  dmult.fill_bytes(0x7F);  // garbage: the function zeroes it (from column `from` on)
  dcol.fill_bytes(0x7F);
  dsync.fill_bytes(0x11);
  auto dgate = Buffer<int>::device(3);
  const int hgate[3] = {0, gate, 0};
  dgate.copy_from_host(hgate, 3);
  if (prepared)  // the initialisation enqueued on its own first (the block method's snapshot)
    lattice::detail::size_reduce_prepare(m, dmult.data(), dcol.data(), dsync.data(), nullptr,
                                         first_col);
  lattice::detail::size_reduce_enqueue(m, dr.data(), dr0.data(), dmult.data(), dcol.data(),
                                       dsync.data(), nullptr, first_col,
                                       gated ? dgate.data() : nullptr, gated ? 3 : 0, prepared);
  std::vector<double> got(mm), gmult(mm);
  std::vector<int> gcol(m);
  dr.copy_to_host(got.data(), mm);
  dmult.copy_to_host(gmult.data(), mm);
  dcol.copy_to_host(gcol.data(), m);
  int bad = 0;
  for (std::size_t e = 0; e < mm && bad < 5; ++e) {
    if (got[e] != want[e]) {
      ADD_FAILURE() << "m=" << m << " R(" << e % m << ", " << e / m << ") = " << got[e]
                    << ", model " << want[e];
      ++bad;
    }
    if (!closed && e >= std::size_t(from) * m && gmult[e] != wmult[e]) {
      ADD_FAILURE() << "m=" << m << " M(" << e % m << ", " << e / m << ") = " << gmult[e]
                    << ", model " << wmult[e];
      ++bad;
    }
  }
  for (int k = 1; k < m; ++k) EXPECT_EQ(gcol[k], wcol[k]) << "m=" << m << " column " << k;
}
}  // namespace

TEST(LllGpu, SizeReductionMatchesHostModel) {
  MIMORX_REQUIRE_GPU();
  MIMORX_SEEDED_GENERATOR(g);
  // Around the tile (8 columns), chunk (32 rows) and stripe (128 rows) edges, up to 2600 (the
  // kernel takes up to 4096); then only the columns from a tile on, as the block method's
  // window asks.
  for (int m : {2, 3, 8, 9, 31, 32, 33, 40, 64, 65, 100, 128, 129, 137, 257, 1024, 2600}) {
    size_reduce_case(g, m);
    if (::testing::Test::HasFailure()) return;
  }
  for (auto [m, first] : std::vector<std::pair<int, int>>{{100, 50}, {300, 129}, {1024, 896}}) {
    size_reduce_case(g, m, first);
    if (::testing::Test::HasFailure()) return;
  }
  // The gate (the block method enqueues the final reduction before it reads the check that
  // decides it): open, the same numbers; closed, nothing changes.
  for (int gate : {0, 1, -7}) {
    size_reduce_case(g, 300, 0, true, gate);
    size_reduce_case(g, 1024, 896, true, gate);
    if (::testing::Test::HasFailure()) return;
  }
  // Prepared beforehand (size_reduce_prepare), whole and from a column, gated open.
  size_reduce_case(g, 129, 0, false, 0, true);
  size_reduce_case(g, 1024, 896, true, 0, true);
}

TEST(LllGpu, GramCholeskyMatchesEigen) {
  MIMORX_REQUIRE_GPU();
  MIMORX_SEEDED_GENERATOR(g);
  for (int m : {1, 2, 31, 32, 33, 64, 65, 100, 300}) {
    gram_case<float>(g, m + 7, m);
    gram_case<double>(g, m, m);
    if (::testing::Test::HasFatalFailure()) return;
  }
}

// A refactorisation test's device buffers: B (n x m), R and its squared norms from a full
// factorisation of b, the factorisation's scratch and fail flag.
struct Refactorisation {
  int n, m;
  Buffer<double> db, dr, ddiag, dn;
  Buffer<int> dfail;
  Refactorisation(const std::vector<double>& b, int n_, int m_)
      : n(n_),
        m(m_),
        db(Buffer<double>::device(std::size_t(n_) * m_)),
        dr(Buffer<double>::device(std::size_t(m_) * m_)),
        ddiag(Buffer<double>::device(lattice::detail::diag_scratch_size(m_))),
        dn(Buffer<double>::device(m_)),
        dfail(Buffer<int>::device(1)) {
    dfail.fill_bytes(0);
    db.copy_from_host(b.data(), b.size());
    lattice::detail::gram_cholesky_enqueue<double>(db.data(), n, m, dr.data(), ddiag.data(),
                                                   dfail.data(), dn.data(), nullptr);
  }
};

// R of a refactorisation (f.dr; its squared norms in f.dn) against a full factorisation of the
// basis now in f.db: the largest difference, overall and by region (the head's columns, the
// head's rows of the tail, the tail block), R's largest entry, the norms' largest relative
// difference from column norm_from on, and the fail flag after both.
struct FactorDiff {
  double err = 0, big = 0, region[3] = {0, 0, 0}, norm_err = 0;
  int fail = 1;
};

FactorDiff diff_against_full(Refactorisation& f, int first, int norm_from) {
  const int n = f.n, m = f.m;
  Buffer<double>&db = f.db, &dr = f.dr, &ddiag = f.ddiag, &dn = f.dn;
  Buffer<int>& dfail = f.dfail;
  const std::size_t mm = std::size_t(m) * m;
  auto dfull = Buffer<double>::device(mm), dn2 = Buffer<double>::device(m);
  lattice::detail::gram_cholesky_enqueue<double>(db.data(), n, m, dfull.data(), ddiag.data(),
                                                 dfail.data(), dn2.data(), nullptr);
  std::vector<double> got(mm), want(mm), gn(m), wn(m);
  FactorDiff d;
  dr.copy_to_host(got.data(), mm);
  dfull.copy_to_host(want.data(), mm);
  dn.copy_to_host(gn.data(), m);
  dn2.copy_to_host(wn.data(), m);
  dfail.copy_to_host(&d.fail, 1);
  for (std::size_t e = 0; e < mm; ++e) {
    const int i = int(e % m), k = int(e / m);
    const double diff = std::abs(got[e] - want[e]);
    d.err = std::max(d.err, diff);
    d.big = std::max(d.big, std::abs(want[e]));
    double& reg = d.region[k < first ? 0 : i < first ? 1 : 2];
    reg = std::max(reg, diff);
  }
  for (int j = norm_from; j < m; ++j)
    d.norm_err = std::max(d.norm_err,
                          std::abs(gn[std::size_t(j)] - wn[std::size_t(j)]) / wn[std::size_t(j)]);
  return d;
}

// The block method's refactorisation of its window: columns from `first` replaced, their R
// recomputed against the kept R of the columns before; equal to a full factorisation of the new
// basis up to rounding. With the Schur complement's k range split over a cluster and without
// (600 / 320: a cluster of 5 blocks, which does not divide a tile's 1024 entries), and with the
// head's block rows from the inverse of R's head (tri_inverse_enqueue) instead of the forward
// substitution.
TEST(LllGpu, TailCholeskyMatchesFullFactorisation) {
  MIMORX_REQUIRE_GPU();
  MIMORX_SEEDED_GENERATOR(g);
  for (int mode = 0; mode < 3; ++mode)  // split head solve, unsplit, split with the head inverse
    for (auto [m, first] : std::vector<std::pair<int, int>>{{40, 32},
                                                            {100, 33},
                                                            {300, 0},
                                                            {300, 96},
                                                            {300, 299},
                                                            {600, 320},
                                                            {1024, 896},
                                                            {1030, 500},
                                                            {1030, 992}}) {
      const bool split = mode != 1, inverse = mode == 2;
      LllOptions options;
      options.split_k = split;
      const int n = m + 2;
      const std::size_t nm = std::size_t(n) * m, mm = std::size_t(m) * m;
      auto b = test::gaussian_basis(g, n, m);
      std::vector<double> b2 = b;
      const auto fresh = test::gaussian_basis(g, n, m);
      std::copy(fresh.begin() + std::ptrdiff_t(first) * n, fresh.end(),
                b2.begin() + std::ptrdiff_t(first) * n);
      Refactorisation f(b, n, m);
      auto &db = f.db, &dr = f.dr, &ddiag = f.ddiag, &dn = f.dn;
      auto& dfail = f.dfail;
      db.copy_from_host(b2.data(), nm);
      const int head = first / 32 * 32;
      auto dw = Buffer<double>::device(inverse ? mm : 0), dtmp = Buffer<double>::device(mm);
      if (inverse) {  // from a copy of R, as the block method does
        auto dcopy = Buffer<double>::device(mm);
        dcopy.copy_from(dr);
        lattice::detail::tri_inverse_enqueue(dcopy.data(), m, head, dw.data(), dtmp.data(), nullptr,
                                             nullptr, options);
      }
      lattice::detail::tail_cholesky_enqueue<double>(
          db.data(), n, m, first, dr.data(), ddiag.data(), dfail.data(), dn.data(), nullptr,
          inverse ? dw.data() : nullptr, head, dtmp.data(), nullptr, nullptr, false, options);
      const FactorDiff d = diff_against_full(f, first, 0);
      EXPECT_EQ(d.fail, 0) << "m=" << m;
      EXPECT_LT(d.err, 1e-10 * d.big)
          << "m=" << m << " first=" << first << " split " << split << " inverse " << inverse;
      EXPECT_LE(d.norm_err, 1e-10) << "norm2 m=" << m;
      if (::testing::Test::HasFailure()) return;
    }
}

// The refactorisation with the head's block rows kept (head_rows_kept: the block method's small
// window, whose head rows are the fresh ones times the block pass's U): B's columns from `first`
// replaced by B U for an integer unimodular U acting on them, R's head rows of those columns by
// X U on the host; equal to a full factorisation of B U up to rounding. U is well conditioned, as
// an LLL block's is: disjoint 2 x 2 shears (1 c; 0 1), c in -2..2 (a unit bidiagonal U with such
// entries all along has a condition number up to ~2^m, and no two factorisations of B U then
// agree: errors up to 1e-3 at 600 x 600).
TEST(LllGpu, TailCholeskyWithKeptHeadRows) {
  MIMORX_REQUIRE_GPU();
  MIMORX_SEEDED_GENERATOR(g);
  std::uniform_int_distribution<int> coef(-2, 2);
  for (auto [m, first] :
       std::vector<std::pair<int, int>>{{300, 256}, {600, 320}, {1024, 896}, {1030, 992}}) {
    const int n = m + 2;
    const std::size_t nm = std::size_t(n) * m, mm = std::size_t(m) * m;
    const auto b = test::gaussian_basis(g, n, m);
    std::vector<int> c(m, 0);  // U(k - 1, k) = c[k] for every third k > first, else the identity
    for (int k = first + 1; k < m; k += 3) c[k] = coef(g);
    std::vector<double> b2 = b;
    for (int k = first + 1; k < m; ++k)
      for (int i = 0; i < n; ++i)
        b2[std::size_t(k) * n + i] += c[k] * b[std::size_t(k - 1) * n + i];
    Refactorisation f(b, n, m);
    auto &db = f.db, &dr = f.dr, &ddiag = f.ddiag, &dn = f.dn;
    auto& dfail = f.dfail;
    std::vector<double> r(mm);
    dr.copy_to_host(r.data(), mm);
    std::vector<double> rk = r;  // X U in the head rows (exact integer coefficients)
    for (int k = first + 1; k < m; ++k)
      for (int i = 0; i < first; ++i)
        rk[std::size_t(k) * m + i] =
            std::fma(double(c[k]), r[std::size_t(k - 1) * m + i], r[std::size_t(k) * m + i]);
    dr.copy_from_host(rk.data(), mm);
    db.copy_from_host(b2.data(), nm);
    lattice::detail::tail_cholesky_enqueue<double>(db.data(), n, m, first, dr.data(), ddiag.data(),
                                                   dfail.data(), dn.data(), nullptr, nullptr, 0,
                                                   nullptr, nullptr, nullptr, true);
    const FactorDiff d = diff_against_full(f, first, first);
    EXPECT_EQ(d.fail, 0) << "m=" << m;
    EXPECT_LT(d.err, 1e-10 * d.big)
        << "m=" << m << " first=" << first << "; errors: head columns " << d.region[0]
        << ", head rows " << d.region[1] << ", tail block " << d.region[2];
    EXPECT_LE(d.norm_err, 1e-10) << "norm2 m=" << m;
    if (::testing::Test::HasFailure()) return;
  }
}

// The persistent lookahead factorisation (cholesky_lookahead_enqueue) against the chain of
// panel kernels: the same steps but for the lookahead's update of the next diagonal block on the
// tensor cores, so the same R to rounding (1e-10 of R's largest entry, as for the tail's
// refactorisation) and the same pivot failure; the lookahead stopped at a column and resumed
// (FactorSplit) gives its R to the last bit. Full factorisations and refactorisations from a
// column, sizes around the 32-column panels, up to 1030 columns (the most phases, a short last
// panel). A zero column must be reported by all.
TEST(LllGpu, LookaheadCholeskyMatchesChain) {
  MIMORX_REQUIRE_GPU();
  MIMORX_SEEDED_GENERATOR(g);
  for (auto [m, first] : std::vector<std::pair<int, int>>{{33, 0},
                                                          {64, 0},
                                                          {65, 0},
                                                          {97, 32},
                                                          {300, 0},
                                                          {300, 96},
                                                          {512, 0},
                                                          {1024, 0},
                                                          {1024, 700},
                                                          {1030, 0}}) {
    for (bool zero_column : {false, true}) {
      const int n = m + 2;
      const std::size_t nm = std::size_t(n) * m, mm = std::size_t(m) * m;
      auto b = test::gaussian_basis(g, n, m);
      if (zero_column)
        std::fill(b.begin() + std::ptrdiff_t(m - 5) * n, b.begin() + std::ptrdiff_t(m - 4) * n,
                  0.0);
      auto db = Buffer<double>::device(nm),
           ddiag = Buffer<double>::device(lattice::detail::diag_scratch_size(m));
      db.copy_from_host(b.data(), nm);
      std::vector<double> got[3];
      int fail[3] = {0, 0, 0};
      // The chain, the lookahead kernel, and the lookahead kernel stopped at a column and resumed
      // (FactorSplit: the start's split at the head inverse's last block, or a panel after
      // `first`), its hook called once in between.
      const int split_col = (m - 1) / 128 * 128 > first ? (m - 1) / 128 * 128 : first + 32;
      int hooked = 0;
      for (int way = 0; way < 3; ++way) {
        LllOptions options;
        options.lookahead_factorisation = way >= 1;
        auto dr = Buffer<double>::device(mm);
        auto dfail = Buffer<int>::device(1);
        dfail.fill_bytes(0);
        lattice::detail::FactorSplit split;
        split.col = split_col;
        split.reserve = 4;
        split.at = [&] { ++hooked; };
        const auto* sp = way == 2 ? &split : nullptr;
        lattice::detail::tail_cholesky_enqueue<double>(
            db.data(), n, m, 0, dr.data(), ddiag.data(), dfail.data(), nullptr, nullptr, nullptr, 0,
            nullptr, nullptr, first > 0 ? nullptr : sp, false, options);
        if (first > 0)  // refactorise from `first` over the kept head
          lattice::detail::tail_cholesky_enqueue<double>(
              db.data(), n, m, first, dr.data(), ddiag.data(), dfail.data(), nullptr, nullptr,
              nullptr, 0, nullptr, nullptr, sp, false, options);
        got[way].resize(mm);
        dr.copy_to_host(got[way].data(), mm);
        dfail.copy_to_host(&fail[way], 1);
      }
      EXPECT_EQ(hooked, 1) << "m=" << m << " first=" << first;
      for (int way = 0; way < 3; ++way)
        EXPECT_EQ(fail[way], int(zero_column)) << "way " << way << ", m=" << m;
      if (!zero_column) {  // (with a zero column the rest of R is not meaningful)
        double err = 0, big = 0;
        for (std::size_t e = 0; e < mm; ++e) {
          err = std::max(err, std::abs(got[0][e] - got[1][e]));
          big = std::max(big, std::abs(got[0][e]));
        }
        EXPECT_LE(err, 1e-10 * big) << "lookahead against the chain, m=" << m << " first=" << first;
      }
      std::size_t differ = 0;
      for (std::size_t e = 0; e < mm; ++e)
        if (std::memcmp(&got[1][e], &got[2][e], sizeof(double)) != 0) ++differ;
      EXPECT_EQ(differ, 0u) << "entries of R that differ between the lookahead and its split at "
                            << split_col << ", m=" << m << " first=" << first << " zero column "
                            << zero_column;
      if (::testing::Test::HasFailure()) return;
    }
  }
}

// The inverse of R's leading f x f block by recursive doubling (tri_inverse_cuda.cu): W R = I
// to rounding, zero below the diagonal, the columns from f on untouched; f not a multiple of
// the 128-column diagonal blocks (and their 32-column steps) or of the doubling's powers of two.
TEST(LllGpu, TriangularInverseOfTheHead) {
  MIMORX_REQUIRE_GPU();
  MIMORX_SEEDED_GENERATOR(g);
  for (auto [m, f] : std::vector<std::pair<int, int>>{{40, 32},
                                                      {40, 33},
                                                      {100, 100},
                                                      {130, 128},
                                                      {130, 129},
                                                      {300, 250},
                                                      {300, 256},
                                                      {1024, 896},
                                                      {1030, 1030}}) {
    const std::size_t mm = std::size_t(m) * m;
    const auto b = test::gaussian_basis(g, m + 3, m);
    auto db = Buffer<double>::device(b.size()), dr = Buffer<double>::device(mm),
         ddiag = Buffer<double>::device(lattice::detail::diag_scratch_size(m)),
         dw = Buffer<double>::device(mm), dtmp = Buffer<double>::device(mm);
    auto dfail = Buffer<int>::device(1);
    dfail.fill_bytes(0);
    db.copy_from_host(b.data(), b.size());
    lattice::detail::gram_cholesky_enqueue<double>(db.data(), m + 3, m, dr.data(), ddiag.data(),
                                                   dfail.data(), nullptr, nullptr);
    const std::vector<double> marker(mm, 7.0);
    dw.copy_from_host(marker.data(), mm);
    lattice::detail::tri_inverse_enqueue(dr.data(), m, f, dw.data(), dtmp.data(), nullptr);
    std::vector<double> r(mm), w(mm);
    dr.copy_to_host(r.data(), mm);
    dw.copy_to_host(w.data(), mm);
    double err = 0;
    for (int j = 0; j < f; ++j)
      for (int i = 0; i < f; ++i) {
        double sum = 0;  // (W R)(i, j)
        for (int k = 0; k < f; ++k) sum += w[std::size_t(k) * m + i] * r[std::size_t(j) * m + k];
        err = std::max(err, std::abs(sum - (i == j ? 1.0 : 0.0)));
        if (i > j) {
          ASSERT_EQ(w[std::size_t(j) * m + i], 0.0) << "below the diagonal, f=" << f;
        }
      }
    EXPECT_LT(err, 1e-9) << "m=" << m << " f=" << f;
    for (std::size_t e = std::size_t(f) * m; e < mm; ++e)
      ASSERT_EQ(w[e], 7.0) << "column " << e / m << " beyond f=" << f;
  }
}

#endif

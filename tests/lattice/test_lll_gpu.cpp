// CR-AS-LLL (CUDA kernel) and the CPU+GPU block method: every output passes the independent
// verification; the CPU and GPU results may differ, both must be reduced.
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
#include "support/lll_inputs.hpp"
#include "support/lll_support.hpp"

using namespace mimorx;
using namespace mimorx::lattice;

namespace {

template <class F>
void gpu_case(std::mt19937_64& g, int n, int m, int batch, LllMethod method, bool transform,
              int block = 0, const LllOptions& options = {}) {
  LllConfig cfg;
  cfg.n = n;
  cfg.m = m;
  cfg.method = method;
  cfg.transform = transform;
  cfg.block = block;
  cfg.max_sweeps = 20000;  // a kernel that loops shows up as not_converged within seconds
  LllPlan plan(cfg, Backend::cuda(), options);
  const std::size_t nm = std::size_t(n) * m, mm = std::size_t(m) * m;
  std::vector<double> b0;
  for (int k = 0; k < batch; ++k) {
    auto b = test::gaussian_basis(g, n, m);
    for (auto& x : b) x = double(F(x));
    b0.insert(b0.end(), b.begin(), b.end());
  }
  std::vector<F> hb(b0.begin(), b0.end());
  auto db = Buffer<F>::device(hb.size());
  db.copy_from_host(hb.data(), hb.size());
  auto dt = Buffer<std::int64_t>::device(transform ? mm * batch : 0);
  dt.fill_bytes(0xFF);
  std::vector<LllStatus> st(batch, LllStatus::not_converged);
  plan.run(
      MatrixBatch<F>::over(db, batch, n, m),
      transform ? MatrixBatch<std::int64_t>::over(dt, batch, m, m) : MatrixBatch<std::int64_t>(),
      View<LllStatus>(st.data(), batch, Memory::host));
  db.copy_to_host(hb.data(), hb.size());
  std::vector<std::int64_t> ht(dt.size());
  if (transform) dt.copy_to_host(ht.data(), ht.size());
  const bool f32 = sizeof(F) == 4;
  for (int k = 0; k < batch; ++k) {
    ASSERT_EQ(st[k], LllStatus::reduced)
        << "n=" << n << " m=" << m << " basis " << k << " f32=" << f32 << ": " << to_string(st[k]);
    std::vector<double> in(b0.begin() + k * nm, b0.begin() + (k + 1) * nm);
    std::vector<F> out(hb.begin() + k * nm, hb.begin() + (k + 1) * nm);
    std::vector<std::int64_t> tk(transform ? ht.begin() + k * mm : ht.begin(),
                                 transform ? ht.begin() + (k + 1) * mm : ht.begin());
    test::expect_reduced(n, m, in, out, transform ? &tk : nullptr, 0.75, f32,
                         f32 ? "gpu float" : "gpu double");
    if (::testing::Test::HasFailure()) return;
  }
}

}  // namespace

TEST(LllGpu, AllSwapBatchedSizesBothPrecisions) {
  MIMORX_REQUIRE_GPU();
  std::mt19937_64 g(test::fresh_seed());
  for (int n : {4, 8, 16, 32, 48, 64}) {
    const int batch = n <= 16 ? 64 : 12;
    gpu_case<float>(g, n, n, batch, LllMethod::all_swap, true);
    gpu_case<double>(g, n, n, batch, LllMethod::all_swap, true);
  }
  gpu_case<float>(g, 8, 8, 1000, LllMethod::all_swap, false);
}

#if MIMORX_HAS_CUDA
// The fixed-shape kernels (square 4..64, unrolled loops, Gram-Schmidt columns in registers)
// must compute exactly what the generic kernel computes: same bases, transforms and statuses,
// bit for bit, including a dependent basis (singular) in the batch.
template <class F>
void fixed_vs_generic(std::mt19937_64& g, int n, int batch, bool transform, bool presort) {
  const std::size_t nm = std::size_t(n) * n;
  std::vector<F> h;
  for (int k = 0; k < batch; ++k) {
    auto b = test::gaussian_basis(g, n, n);
    if (k == 1)
      for (int i = 0; i < n; ++i) b[std::size_t(n - 1) * n + i] = 2 * b[i];  // dependent
    h.insert(h.end(), b.begin(), b.end());
  }
  struct Out {
    std::vector<F> b;
    std::vector<std::int64_t> t;
    std::vector<std::int32_t> st;
  };
  auto run = [&](bool generic_only) {
    LllOptions options;
    options.all_swap_generic_only = generic_only;
    auto db = Buffer<F>::device(h.size());
    db.copy_from_host(h.data(), h.size());
    auto dt = Buffer<std::int64_t>::device(transform ? nm * batch : 1);
    auto ds = Buffer<std::int32_t>::device(batch);
    lattice::detail::all_swap_cuda<F>(db.data(), transform ? dt.data() : nullptr, ds.data(), batch,
                                      n, n, std::int64_t(nm), std::int64_t(nm), 0.75,
                                      lattice::detail::default_max_iter(n), nullptr, 0, presort,
                                      nullptr, options);
    Out o{std::vector<F>(h.size()), std::vector<std::int64_t>(transform ? nm * batch : 0),
          std::vector<std::int32_t>(batch)};
    db.copy_to_host(o.b.data(), o.b.size());
    if (transform) dt.copy_to_host(o.t.data(), o.t.size());
    ds.copy_to_host(o.st.data(), o.st.size());
    return o;
  };
  const Out gen = run(true), fix = run(false);
  int reduced = 0;
  for (int k = 0; k < batch; ++k) {
    reduced += gen.st[k] == std::int32_t(LllStatus::reduced);
    ASSERT_EQ(gen.st[k], fix.st[k]) << "n=" << n << " basis " << k;
    ASSERT_EQ(0, std::memcmp(gen.b.data() + k * nm, fix.b.data() + k * nm, nm * sizeof(F)))
        << "n=" << n << " basis " << k << " differs";
    if (transform) {
      ASSERT_EQ(
          0, std::memcmp(gen.t.data() + k * nm, fix.t.data() + k * nm, nm * sizeof(std::int64_t)))
          << "n=" << n << " basis " << k << " transform differs";
    }
  }
  EXPECT_EQ(gen.st[1], std::int32_t(LllStatus::singular)) << "n=" << n;
  EXPECT_GE(reduced, batch - 2) << "n=" << n;  // Gaussian bases: all but the dependent one
}

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
  std::mt19937_64 g(test::fresh_seed());
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
  std::mt19937_64 g(test::fresh_seed());
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
  std::mt19937_64 g(test::fresh_seed());
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
  std::mt19937_64 g(test::fresh_seed());
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
  std::mt19937_64 g(test::fresh_seed());
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

TEST(LllGpu, FixedShapeKernelsMatchGenericBitForBit) {
  MIMORX_REQUIRE_GPU();
  std::mt19937_64 g(test::fresh_seed());
  for (int n : {4, 8, 16, 32, 64}) {
    const int batch = n <= 16 ? 300 : 60;
    for (bool presort : {false, true}) {
      fixed_vs_generic<float>(g, n, batch, false, presort);
      fixed_vs_generic<float>(g, n, batch, true, presort);
      fixed_vs_generic<double>(g, n, batch, false, presort);
      fixed_vs_generic<double>(g, n, batch, true, presort);
    }
    if (::testing::Test::HasFatalFailure()) return;
  }
}
#endif

// One basis through a CUDA plan (with T when cfg.transform): status reduced and verified.
template <class F>
void reduce_one_on_gpu(const LllConfig& cfg, const std::vector<double>& b0, const char* what,
                       std::vector<double>* reduced = nullptr, const LllOptions& options = {}) {
  const int n = cfg.n, m = cfg.m;
  std::vector<F> hb(b0.begin(), b0.end());
  const std::vector<double> in(hb.begin(), hb.end());
  auto db = Buffer<F>::device(hb.size());
  db.copy_from_host(hb.data(), hb.size());
  auto dt = Buffer<std::int64_t>::device(std::size_t(m) * m);
  LllStatus st = LllStatus::not_converged;
  LllPlan(cfg, Backend::cuda(), options)
      .run(MatrixBatch<F>::over(db, 1, n, m),
           cfg.transform ? MatrixBatch<std::int64_t>::over(dt, 1, m, m)
                         : MatrixBatch<std::int64_t>(),
           View<LllStatus>(&st, 1, Memory::host));
  ASSERT_EQ(st, LllStatus::reduced) << what;
  std::vector<F> out(hb.size());
  db.copy_to_host(out.data(), out.size());
  std::vector<std::int64_t> t(std::size_t(m) * m);
  if (cfg.transform) dt.copy_to_host(t.data(), t.size());
  test::expect_reduced(n, m, in, out, cfg.transform ? &t : nullptr, cfg.delta, sizeof(F) == 4,
                       what);
  if (reduced) reduced->assign(out.begin(), out.end());
}

TEST(LllGpu, Float32BigMultiplierInTheFinalCheckIsNotAccepted) {
  // The basis on which the kernel's final check accepted |mu| = 0.60 (see support/lll_support.hpp).
  MIMORX_REQUIRE_GPU();
  const int n = 64;
  for (bool transform : {false, true}) {
    LllConfig cfg{n, n};
    cfg.method = LllMethod::all_swap;
    cfg.transform = transform;
    reduce_one_on_gpu<float>(cfg, test::big_final_multiplier_basis(), "gpu float32");
  }
}

// The float32 all-swap kernel with T on ill-conditioned bases: the rebuild of B' from B T
// (rebuild_cuda.cu, then the host's re-check) keeps every basis reported reduced on the input
// lattice; without it some are off (test::ill_conditioned_float32).
TEST(LllGpu, AllSwapFloat32IllConditionedStaysOnTheLattice) {
  MIMORX_REQUIRE_GPU();
  const std::uint64_t seed = test::fresh_seed();
  int off_total = 0;
  for (int rep = 0; rep < 4; ++rep) {
    const auto off = test::ill_conditioned_float32(seed + rep, LllMethod::all_swap, Backend::cuda(),
                                                   1e-2, true, false);
    // The bases that fail the device's re-check: polished on the device (default) or all on
    // the host (odd repetitions).
    LllOptions options;
    options.device_polish = rep % 2 == 0;
    const auto on = test::ill_conditioned_float32(seed + rep, LllMethod::all_swap, Backend::cuda(),
                                                  1e-2, true, true, options);
    std::printf(
        "[ ill-cond ] gpu all-swap: without the rebuild %d of %d reduced bases off B T, "
        "with it %d of %d (largest |T| %.0f)\n",
        off.off_lattice, off.reduced, on.off_lattice, on.reduced, on.largest_t);
    off_total += off.off_lattice;
    EXPECT_EQ(on.off_lattice, 0);
    EXPECT_GT(on.reduced, 0);
    // Closer to dependent: precision_loss allowed, singular not, reduced ones on the lattice.
    const auto hard =
        test::ill_conditioned_float32(seed + rep, LllMethod::all_swap, Backend::cuda(), 1e-3);
    std::printf(
        "[ ill-cond ] gpu all-swap, noise 1e-3: %d reduced (%d off B T), %d "
        "precision_loss\n",
        hard.reduced, hard.off_lattice, hard.precision_loss);
    EXPECT_EQ(hard.off_lattice, 0);
  }
  EXPECT_GT(off_total, 0) << "the inputs did not need the rebuild";
}

#if MIMORX_HAS_CUDA
// float32 without the caller's T on the GPU (all-swap kernel, block method device-resident and
// host-side): the plan tracks T itself and checks B' against B T (LllConfig::lattice_check), so
// every basis reported reduced is on the input lattice by the test's own oracle (T solved for by
// a full-pivoting LU, exact determinant); with the check off some are not.
TEST(LllGpu, Float32WithoutTransformStaysOnTheLattice) {
  MIMORX_REQUIRE_GPU();
  const std::uint64_t seed = test::fresh_seed();
  struct Path {
    LllMethod method;
    bool device_resident;
    const char* name;
  };
  for (const Path& p : {Path{LllMethod::all_swap, true, "all-swap"},
                        Path{LllMethod::block, true, "block, device-resident enabled"},
                        Path{LllMethod::block, false, "block, host-side"}}) {
    LllOptions options;
    options.block_device = p.device_resident;
    int off_total = 0, on_off = 0, on_reduced = 0;
    for (int rep = 0; rep < 4; ++rep) {
      const auto off = test::ill_conditioned_float32(seed + rep, p.method, Backend::cuda(), 1e-2,
                                                     false, false, options);
      const auto on = test::ill_conditioned_float32(seed + rep, p.method, Backend::cuda(), 1e-2,
                                                    false, true, options);
      const auto hard = test::ill_conditioned_float32(seed + rep, p.method, Backend::cuda(), 1e-3,
                                                      false, true, options);
      off_total += off.off_lattice;
      on_off += on.off_lattice + hard.off_lattice;
      on_reduced += on.reduced;
    }
    std::printf(
        "[ ill-cond ] gpu %s, no T: check off %d bases off the lattice, check on %d (%d reduced "
        "at noise 1e-2)\n",
        p.name, off_total, on_off, on_reduced);
    EXPECT_EQ(on_off, 0) << p.name;
    EXPECT_GT(on_reduced, 0) << p.name;
    // The host-side path rounds more (every pass through the host), the device-resident one
    // and the kernel less: the inputs must show the check is needed on at least one of them.
    if (!p.device_resident) {
      EXPECT_GT(off_total, 0) << p.name << ": the inputs did not need it";
    }
  }
}

// The block method on the GPU (device-resident and host-side paths) with T on the same
// ill-conditioned float32 inputs: every basis reported reduced is B T (float32 rounding). The
// device-resident path compares B' with B T on the device (next test), the host-side path on
// the host.
TEST(LllGpu, BlockFloat32IllConditionedStaysOnTheLattice) {
  MIMORX_REQUIRE_GPU();
  const std::uint64_t seed = test::fresh_seed();
  for (bool device_path : {true, false}) {
    LllOptions options;
    options.block_device = device_path;
    int off_total = 0;
    for (int rep = 0; rep < 4; ++rep) {
      const auto off = test::ill_conditioned_float32(seed + rep, LllMethod::block, Backend::cuda(),
                                                     1e-2, true, false, options);
      const auto on = test::ill_conditioned_float32(seed + rep, LllMethod::block, Backend::cuda(),
                                                    1e-2, true, true, options);
      std::printf(
          "[ ill-cond ] gpu block (%s): without the rebuild %d of %d reduced bases off B T, "
          "with it %d of %d (largest |T| %.0f)\n",
          device_path ? "device-resident enabled" : "host-side", off.off_lattice, off.reduced,
          on.off_lattice, on.reduced, on.largest_t);
      off_total += off.off_lattice;
      EXPECT_EQ(on.off_lattice, 0);
    }
    std::printf("[ ill-cond ] gpu block (%s): %d bases off B T without the rebuild in all\n",
                device_path ? "device-resident enabled" : "host-side", off_total);
  }
}

// The GPU-resident block method updates T in float64 where every partial sum stays below 2^53
// (a running bound of |T| times the multipliers' column sums) and in 128-bit integers
// otherwise: both give the same B' and T, bit for bit (float32 and float64 bases, with and
// without presort, 160x128 and 200x200).
TEST(LllGpu, BlockTransformFloat64ProductsMatchInteger) {
  MIMORX_REQUIRE_GPU();
  std::mt19937_64 g(test::fresh_seed());
  auto run = [](int n, int m, const std::vector<double>& in, bool dbl, bool presort,
                std::vector<std::int64_t>& t, bool t_float64) {
    LllConfig cfg;
    cfg.n = n;
    cfg.m = m;
    cfg.method = LllMethod::block;
    cfg.block = 16;
    cfg.transform = true;
    cfg.presort = presort;
    LllOptions options;
    options.block_t_float64 = t_float64;
    LllPlan plan(cfg, Backend::cuda(), options);
    auto dt = Buffer<std::int64_t>::device(std::size_t(m) * m);
    LllStatus st = LllStatus::not_converged;
    std::vector<double> out(in.size());
    if (dbl) {
      auto db = Buffer<double>::device(in.size());
      db.copy_from_host(in.data(), in.size());
      plan.run(MatrixBatch<double>::over(db, 1, n, m), MatrixBatch<std::int64_t>::over(dt, 1, m, m),
               View<LllStatus>(&st, 1, Memory::host));
      db.copy_to_host(out.data(), out.size());
    } else {
      std::vector<float> f(in.begin(), in.end());
      auto db = Buffer<float>::device(f.size());
      db.copy_from_host(f.data(), f.size());
      plan.run(MatrixBatch<float>::over(db, 1, n, m), MatrixBatch<std::int64_t>::over(dt, 1, m, m),
               View<LllStatus>(&st, 1, Memory::host));
      db.copy_to_host(f.data(), f.size());
      out.assign(f.begin(), f.end());
    }
    t.resize(std::size_t(m) * m);
    dt.copy_to_host(t.data(), t.size());
    EXPECT_EQ(st, LllStatus::reduced);
    return out;
  };
  for (const auto& [n, m] : std::vector<std::pair<int, int>>{{160, 128}, {200, 200}}) {
    const auto in = test::gaussian_basis(g, n, m);
    for (bool dbl : {false, true})
      for (bool presort : {true, false}) {
        std::vector<std::int64_t> t_fast, t_wide;
        const auto fast = run(n, m, in, dbl, presort, t_fast, true);
        const auto wide = run(n, m, in, dbl, presort, t_wide, false);
        EXPECT_EQ(fast, wide) << n << "x" << m << (dbl ? " double" : " float");
        EXPECT_EQ(t_fast, t_wide) << n << "x" << m << (dbl ? " double" : " float");
        const auto tr = lattice::check_transform(n, m, in.data(), fast.data(), t_fast.data(),
                                                 dbl ? 1e-9 : 1e-4);
        EXPECT_TRUE(tr.ok()) << tr.message;
      }
  }
}

// The inverse of R's leading f x f block by recursive doubling (tri_inverse_cuda.cu): W R = I
// to rounding, zero below the diagonal, the columns from f on untouched; f not a multiple of
// the 128-column diagonal blocks (and their 32-column steps) or of the doubling's powers of two.
TEST(LllGpu, TriangularInverseOfTheHead) {
  MIMORX_REQUIRE_GPU();
  std::mt19937_64 g(test::fresh_seed());
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

// The block method's products with the size-reduction multipliers (B -= B0 M, T -= T0 M) with
// their k range split over a cluster of blocks (split_k.cuh) and with one block per tile: both
// reduced and on the input lattice; the same T and float32 B' where the float64 sums' last bits
// do not cross a float32 rounding (the usual case); float64 bases agree to rounding.
TEST(LllGpu, BlockSplitProductsMatchUnsplit) {
  MIMORX_REQUIRE_GPU();
  std::mt19937_64 g(test::fresh_seed());
  for (int n : {200, 512}) {
    const auto in = test::gaussian_basis(g, n, n);
    for (bool dbl : {false, true}) {
      std::vector<double> out[2];
      std::vector<std::int64_t> t[2];
      LllStatus st[2] = {LllStatus::not_converged, LllStatus::not_converged};
      for (int split = 0; split < 2; ++split) {
        LllOptions options;
        options.split_k = split == 1;
        LllConfig cfg{n, n};
        cfg.method = LllMethod::block;
        cfg.transform = true;
        LllPlan plan(cfg, Backend::cuda(), options);
        auto dt = Buffer<std::int64_t>::device(std::size_t(n) * n);
        out[split].resize(in.size());
        if (dbl) {
          auto db = Buffer<double>::device(in.size());
          db.copy_from_host(in.data(), in.size());
          plan.run(MatrixBatch<double>::over(db, 1, n, n),
                   MatrixBatch<std::int64_t>::over(dt, 1, n, n),
                   View<LllStatus>(&st[split], 1, Memory::host));
          db.copy_to_host(out[split].data(), in.size());
        } else {
          std::vector<float> f(in.begin(), in.end());
          auto db = Buffer<float>::device(f.size());
          db.copy_from_host(f.data(), f.size());
          plan.run(MatrixBatch<float>::over(db, 1, n, n),
                   MatrixBatch<std::int64_t>::over(dt, 1, n, n),
                   View<LllStatus>(&st[split], 1, Memory::host));
          db.copy_to_host(f.data(), f.size());
          out[split].assign(f.begin(), f.end());
        }
        t[split].resize(std::size_t(n) * n);
        dt.copy_to_host(t[split].data(), t[split].size());
      }
      const std::string what = std::to_string(n) + (dbl ? " double" : " float");
      EXPECT_EQ(st[0], LllStatus::reduced) << what;
      EXPECT_EQ(st[1], LllStatus::reduced) << what;
      for (int split = 0; split < 2; ++split) {
        const auto tr = lattice::check_transform(n, n, in.data(), out[split].data(),
                                                 t[split].data(), dbl ? 1e-9 : 1e-4);
        EXPECT_TRUE(tr.ok()) << what << " split " << split << ": " << tr.message;
      }
      if (!dbl) {
        // Equal unless a float32 rounding boundary falls between the two float64 sums of some
        // entry (odds of order 1e-3 per run where the size reduction cancels heavily); then the
        // runs may take different paths, and both were verified above.
        if (out[1] == out[0]) {
          EXPECT_EQ(t[1], t[0]) << what;
        } else {
          std::printf("[ note     ] %s: split and unsplit float32 outputs differ\n", what.c_str());
        }
      } else if (t[1] == t[0]) {
        double err = 0, big = 0;
        for (std::size_t e = 0; e < in.size(); ++e) {
          err = std::max(err, std::abs(out[1][e] - out[0][e]));
          big = std::max(big, std::abs(out[0][e]));
        }
        EXPECT_LT(err, 1e-12 * big) << what;
      }
    }
  }
}

// The all-swap lattice check's device re-check (rebuild_cuda.cu): bases that drifted from B T
// are rebuilt (here T = I, so the rebuilt basis is the input) and their LLL conditions checked
// in float64 on the device. Reduced ones pass (status reduced); one that is not size-reduced
// (|mu| = 0.6) or breaks Lovasz (|b_1*|^2 = 1/4 |b_0*|^2) keeps kStatusRecheck for the host.
// Shapes 4x4 (hand-made) and 40x24 (a reference-reduced Gaussian basis, which also spans
// several warps' rows and columns, and the same with its two last columns swapped).
TEST(LllGpu, DeviceRecheckOfRebuiltBases) {
  MIMORX_REQUIRE_GPU();
  std::mt19937_64 g(test::fresh_seed());
  // Every case through the fixed-shape kernels of square 8..64 bases and through the general
  // kernels (LllOptions::square_check_kernel; other shapes take the general kernels either way), in
  // the check and in the re-check alone.
  auto run = [](int n, int m, const std::vector<std::vector<double>>& bases, bool square) {
    const std::size_t nm = std::size_t(n) * m, mm = std::size_t(m) * m;
    const std::int64_t batch = std::int64_t(bases.size());
    std::vector<float> in, drifted;
    std::vector<std::int64_t> t;
    for (const auto& b : bases) {
      std::vector<float> f(b.begin(), b.end());
      in.insert(in.end(), f.begin(), f.end());
      f[0] += 1e-3f * (std::abs(f[0]) + 1);  // far beyond float32 rounding: rebuilt
      drifted.insert(drifted.end(), f.begin(), f.end());
      for (std::size_t e = 0; e < mm; ++e) t.push_back(e % (m + 1) == 0 ? 1 : 0);
    }
    auto din = Buffer<float>::device(in.size());
    auto db = Buffer<float>::device(in.size());
    auto dt = Buffer<std::int64_t>::device(t.size());
    auto ds = Buffer<std::int32_t>::device(std::size_t(batch));
    din.copy_from_host(in.data(), in.size());
    db.copy_from_host(drifted.data(), drifted.size());
    dt.copy_from_host(t.data(), t.size());
    std::vector<std::int32_t> st(std::size_t(batch), std::int32_t(LllStatus::reduced));
    ds.copy_from_host(st.data(), st.size());
    LllOptions options;
    options.square_check_kernel = square;
    lattice::detail::rebuild_from_transform_cuda(din.data(), db.data(), dt.data(), ds.data(), batch,
                                                 n, m, std::int64_t(nm), std::int64_t(mm), 0.75,
                                                 nullptr, 0, options);
    ds.copy_to_host(st.data(), st.size());
    // The re-check alone (the device polish's last step) on the same bases gives the same
    // statuses.
    std::vector<std::int32_t> alone(st.size(), lattice::detail::kStatusRecheck);
    ds.copy_from_host(alone.data(), alone.size());
    lattice::detail::recheck_float64_cuda(din.data(), ds.data(), batch, n, m, 0.75, nullptr, 0,
                                          options);
    ds.copy_to_host(alone.data(), alone.size());
    EXPECT_EQ(alone, st) << "recheck_float64_cuda, " << n << "x" << m << " square kernel "
                         << square;
    std::vector<float> out(in.size());
    db.copy_to_host(out.data(), out.size());
    EXPECT_EQ(out, in) << "the rebuilt bases are B T = B (" << n << "x" << m << ")";
    return st;
  };
  const std::int32_t ok = std::int32_t(LllStatus::reduced), host = lattice::detail::kStatusRecheck;
  // The host's criteria (float64 Householder R of the float32-rounded basis, |mu| <= 0.51,
  // Lovasz with 0.749) over every pair.
  auto passes = [](int n, int m, const std::vector<double>& bd) {
    Eigen::MatrixXd a(n, m);
    for (int j = 0; j < m; ++j)
      for (int i = 0; i < n; ++i) a(i, j) = double(float(bd[std::size_t(j) * n + i]));
    const Eigen::MatrixXd r = a.householderQr().matrixQR();
    for (int k = 0; k < m; ++k) {
      for (int j = 0; j < k; ++j)
        if (!(std::abs(r(j, k) / r(j, j)) <= 0.51)) return false;
      if (k > 0 && !(r(k - 1, k) * r(k - 1, k) + r(k, k) * r(k, k) >=
                     0.749 * r(k - 1, k - 1) * r(k - 1, k - 1)))
        return false;
    }
    return true;
  };
  for (bool square : {true, false}) {
    for (int n : {4, 8}) {  // 4: the general kernels either way
      std::vector<double> identity(std::size_t(n) * n, 0.0);
      for (int i = 0; i < n; ++i) identity[std::size_t(i) * n + i] = 1;
      auto not_size_reduced = identity;
      not_size_reduced[std::size_t(n)] = 0.6;  // b_1 = 0.6 e_0 + e_1
      auto lovasz = identity;
      lovasz[0] = 2;  // |b_0| = 2, |b_1| = 1
      EXPECT_EQ(run(n, n, {identity, not_size_reduced, lovasz}, square),
                (std::vector<std::int32_t>{ok, host, host}))
          << n << "x" << n << " square kernel " << square;
    }
    // A reference-reduced basis with and without its last two columns swapped: the swap breaks
    // a Lovasz or size condition of the pairs it touches unless the lengths happen to allow it.
    for (auto [n, m] :
         {std::pair{40, 24}, std::pair{16, 16}, std::pair{32, 32}, std::pair{64, 64}}) {
      auto b = test::gaussian_basis(g, n, m);
      lll_reference(n, m, b.data(), nullptr, 0.75);
      auto swapped = b;
      for (int i = 0; i < n; ++i)
        std::swap(swapped[std::size_t(m - 2) * n + i], swapped[std::size_t(m - 1) * n + i]);
      ASSERT_TRUE(passes(n, m, b));
      const bool swap_breaks = !passes(n, m, swapped);
      const auto st = run(n, m, {b, swapped}, square);
      EXPECT_EQ(st[0], ok) << n << "x" << m << " square kernel " << square;
      EXPECT_EQ(st[1], swap_breaks ? host : ok) << n << "x" << m << " square kernel " << square;
    }
  }
}

namespace {

// A batch of square float32 bases through the all-swap kernel with T (presort on, no check):
// Gaussian, and near-dependent ones (the last column the sum of the others plus 1e-2 noise) at
// the odd indices, or everywhere with all_near_dependent. The inputs stay on the host (in) and
// packed on the device (din); B', T and the statuses are on the device.
struct SwapBatch {
  int n = 0, batch = 0;
  std::size_t nn = 0;
  std::vector<float> in;
  Buffer<float> din, db;
  Buffer<std::int64_t> dt;
  Buffer<std::int32_t> ds;
};

SwapBatch all_swap_with_t(std::mt19937_64& g, int n, int batch, bool all_near_dependent) {
  std::normal_distribution<double> nd;
  SwapBatch r;
  r.n = n;
  r.batch = batch;
  r.nn = std::size_t(n) * n;
  for (int k = 0; k < batch; ++k) {
    auto b = test::gaussian_basis(g, n, n);
    if (all_near_dependent || k % 2) {
      for (int i = 0; i < n; ++i) {
        double s = 0;
        for (int j = 0; j + 1 < n; ++j) s += b[std::size_t(j) * n + i];
        b[std::size_t(n - 1) * n + i] = s + 1e-2 * nd(g);
      }
    }
    r.in.insert(r.in.end(), b.begin(), b.end());
  }
  r.din = Buffer<float>::device(r.in.size());
  r.db = Buffer<float>::device(r.in.size());
  r.dt = Buffer<std::int64_t>::device(r.nn * batch);
  r.ds = Buffer<std::int32_t>::device(std::size_t(batch));
  r.din.copy_from_host(r.in.data(), r.in.size());
  r.db.copy_from_host(r.in.data(), r.in.size());
  lattice::detail::all_swap_cuda<float>(r.db.data(), r.dt.data(), r.ds.data(), batch, n, n,
                                        std::int64_t(r.nn), std::int64_t(r.nn), 0.75,
                                        lattice::detail::default_max_iter(n), nullptr, 0, true);
  return r;
}

// The plan's check on such a batch (rebuild_from_transform_cuda).
void check_swap_batch(SwapBatch& r, const LllOptions& options = {}) {
  lattice::detail::rebuild_from_transform_cuda(r.din.data(), r.db.data(), r.dt.data(), r.ds.data(),
                                               r.batch, r.n, r.n, std::int64_t(r.nn),
                                               std::int64_t(r.nn), 0.75, nullptr, 0, options);
}

}  // namespace

// The lattice check of square 8..64 float32 batches (one-pass kernel, rebuild_cuda.cu) gives
// the same B' bits and statuses as the two general kernels, on all-swap outputs of Gaussian and
// near-dependent bases (most drift and are rebuilt, some near-dependent ones fail the re-check
// and go to the host).
TEST(LllGpu, SquareCheckKernelMatchesTheGeneralKernels) {
  MIMORX_REQUIRE_GPU();
  std::mt19937_64 g(test::fresh_seed());
  for (int n : {8, 16, 32, 64}) {
    const int batch = n <= 16 ? 256 : 64;
    auto sb = all_swap_with_t(g, n, batch, false);
    const std::size_t nn = sb.nn;
    auto& db = sb.db;
    auto& ds = sb.ds;
    std::vector<float> reduced(sb.in.size());
    std::vector<std::int32_t> st0(batch);
    db.copy_to_host(reduced.data(), reduced.size());
    ds.copy_to_host(st0.data(), st0.size());
    std::vector<float> out[2];
    std::vector<std::int32_t> st[2];
    for (int square : {1, 0}) {
      db.copy_from_host(reduced.data(), reduced.size());
      ds.copy_from_host(st0.data(), st0.size());
      LllOptions options;
      options.square_check_kernel = square;
      check_swap_batch(sb, options);
      out[square].resize(reduced.size());
      st[square].resize(batch);
      db.copy_to_host(out[square].data(), reduced.size());
      ds.copy_to_host(st[square].data(), batch);
    }
    int rebuilt = 0, handed = 0, was_reduced = 0;
    for (int k = 0; k < batch; ++k) {
      was_reduced += st0[k] == std::int32_t(LllStatus::reduced);
      rebuilt += !std::equal(out[1].begin() + k * nn, out[1].begin() + (k + 1) * nn,
                             reduced.begin() + k * nn);
      handed += st[1][k] == lattice::detail::kStatusRecheck;
    }
    std::printf(
        "[ square check ] %dx%d: %d of %d reduced by the kernel, %d rebuilt, %d to the host\n", n,
        n, was_reduced, batch, rebuilt, handed);
    EXPECT_EQ(out[1], out[0]) << n << "x" << n;
    EXPECT_EQ(st[1], st[0]) << n << "x" << n;
    EXPECT_GT(rebuilt, 0) << n << "x" << n << ": nothing drifted, the check was not exercised";
    if (::testing::Test::HasFailure()) return;
  }
}

// The device's float64 polish (polish_float64_cuda) of the float32 bases whose rebuilt B' fails
// the re-check: near-dependent bases through the all-swap kernel with T and the lattice check,
// the failures packed and polished; every one it reports reduced passes the float32 criteria,
// is B T for its new T (unimodular), and the ones it leaves for the host are untouched.
TEST(LllGpu, DevicePolishOfBasesThatFailTheRecheck) {
  MIMORX_REQUIRE_GPU();
  std::mt19937_64 g(test::fresh_seed());
  int polished = 0, failures = 0;
  for (int round = 0; round < 8 && polished < 3; ++round) {
    for (int n : {16, 32, 64}) {
      const int batch = 128;
      auto sb = all_swap_with_t(g, n, batch, true);
      check_swap_batch(sb);
      const std::size_t nn = sb.nn;
      const std::vector<float>& in = sb.in;
      auto& db = sb.db;
      auto& dt = sb.dt;
      auto& ds = sb.ds;
      std::vector<std::int32_t> st(batch);
      std::vector<float> hb(in.size());
      std::vector<std::int64_t> ht(nn * batch);
      ds.copy_to_host(st.data(), st.size());
      db.copy_to_host(hb.data(), hb.size());
      dt.copy_to_host(ht.data(), ht.size());
      // Pack the failures as the plan does.
      std::vector<int> idx;
      std::vector<float> pin, pb;
      std::vector<std::int64_t> pt;
      for (int k = 0; k < batch; ++k) {
        if (st[k] != lattice::detail::kStatusRecheck) continue;
        idx.push_back(k);
        pin.insert(pin.end(), in.begin() + k * nn, in.begin() + (k + 1) * nn);
        pb.insert(pb.end(), hb.begin() + k * nn, hb.begin() + (k + 1) * nn);
        pt.insert(pt.end(), ht.begin() + k * nn, ht.begin() + (k + 1) * nn);
      }
      const int nf = int(idx.size());
      failures += nf;
      if (nf == 0) continue;
      ASSERT_TRUE(lattice::detail::polish_fits_cuda(n, n, 0));
      auto qin = Buffer<float>::device(pin.size());
      auto qb = Buffer<float>::device(pb.size());
      auto qt = Buffer<std::int64_t>::device(pt.size());
      auto qs = Buffer<std::int32_t>::device(std::size_t(nf));
      qin.copy_from_host(pin.data(), pin.size());
      qb.copy_from_host(pb.data(), pb.size());
      qt.copy_from_host(pt.data(), pt.size());
      std::vector<std::int32_t> ps(nf, lattice::detail::kStatusRecheck);
      qs.copy_from_host(ps.data(), ps.size());
      lattice::detail::PolishWorkspace ws;
      lattice::detail::polish_float64_cuda(qin.data(), qb.data(), qt.data(), qs.data(), nf, n, n,
                                           0.75, ws, nullptr, 0);
      std::vector<float> ob(pb.size());
      std::vector<std::int64_t> ot(pt.size());
      qs.copy_to_host(ps.data(), ps.size());
      qb.copy_to_host(ob.data(), ob.size());
      qt.copy_to_host(ot.data(), ot.size());
      for (int c = 0; c < nf; ++c) {
        const auto b_of = [&](const std::vector<float>& v) {
          return std::vector<float>(v.begin() + c * nn, v.begin() + (c + 1) * nn);
        };
        const auto t_of = [&](const std::vector<std::int64_t>& v) {
          return std::vector<std::int64_t>(v.begin() + c * nn, v.begin() + (c + 1) * nn);
        };
        const std::vector<float> bin = b_of(pin);
        const std::vector<double> b0(bin.begin(), bin.end());
        if (ps[c] == std::int32_t(LllStatus::reduced)) {
          ++polished;
          const auto tc = t_of(ot);
          test::expect_reduced(n, n, b0, b_of(ob), &tc, 0.75, true, "device polish");
        } else if (ps[c] == lattice::detail::kStatusHost) {
          EXPECT_EQ(b_of(ob), b_of(pb)) << "a basis left for the host keeps its B'";
          EXPECT_EQ(t_of(ot), t_of(pt)) << "a basis left for the host keeps its T";
        } else {
          EXPECT_EQ(ps[c], lattice::detail::kStatusRecheck) << "status " << ps[c];
        }
      }
      if (::testing::Test::HasFailure()) return;
    }
  }
  std::printf("[ polish   ] %d bases failed the device re-check, %d polished to reduced\n",
              failures, polished);
  EXPECT_GT(polished, 0) << "no basis was polished on the device";
}

// float32 keeps T in int32 (lll_cuda.cu, and the CPU all-swap alike): a reduction that needs an
// entry of 2^31 or more ends in precision_loss; float64 reduces the same basis.
TEST(LllGpu, Float32TransformBeyondInt32IsPrecisionLoss) {
  MIMORX_REQUIRE_GPU();
  const int n = 4;
  std::vector<double> b0(n * n, 0.0);
  for (int i = 0; i < n; ++i) b0[std::size_t(i) * n + i] = 1;
  // b_1 = 3e9 e_0 + 1e4 e_1: exact in float32, multiplier 3e9, and its part orthogonal to b_0
  // above float32's dependence threshold (1e-6 of its length), so not flagged singular first.
  b0[std::size_t(n)] = 3e9;
  b0[std::size_t(n) + 1] = 1e4;
  for (bool transform : {false, true}) {
    LllConfig cfg{n, n};
    cfg.method = LllMethod::all_swap;
    cfg.transform = transform;
    for (bool dbl : {false, true}) {
      LllStatus st = LllStatus::not_converged;
      auto dt = Buffer<std::int64_t>::device(std::size_t(n) * n);
      auto t =
          transform ? MatrixBatch<std::int64_t>::over(dt, 1, n, n) : MatrixBatch<std::int64_t>();
      if (dbl) {
        auto db = Buffer<double>::device(b0.size());
        db.copy_from_host(b0.data(), b0.size());
        LllPlan(cfg, Backend::cuda())
            .run(MatrixBatch<double>::over(db, 1, n, n), t, View<LllStatus>(&st, 1, Memory::host));
      } else {
        std::vector<float> f(b0.begin(), b0.end());
        auto db = Buffer<float>::device(f.size());
        db.copy_from_host(f.data(), f.size());
        LllPlan(cfg, Backend::cuda())
            .run(MatrixBatch<float>::over(db, 1, n, n), t, View<LllStatus>(&st, 1, Memory::host));
      }
      EXPECT_EQ(st, dbl ? LllStatus::reduced : LllStatus::precision_loss)
          << "float64 " << dbl << " transform " << transform << ": " << to_string(st);
    }
  }
}

// The float32 kernel's int32 T (lll_cuda.cu, sub_column; 64x64, the shape that tracks column
// bounds): the unchecked updates that its bounds allow give the same B', T and statuses as
// checking every update, on Gaussian bases and on block-Toeplitz ones, whose T grows past the
// bounds' limit (some end in precision_loss).
TEST(LllGpu, Int32TransformFastPathChangesNothing) {
  MIMORX_REQUIRE_GPU();
  std::mt19937_64 g(test::fresh_seed());
  std::normal_distribution<double> nd;
  for (const auto& [n, m] : std::vector<std::pair<int, int>>{{64, 64}}) {
    const int batch = 512;
    const std::size_t nm = std::size_t(n) * m, mm = std::size_t(m) * m;
    std::vector<float> in;
    for (int k = 0; k < batch; ++k) {
      std::vector<double> b(nm, 0.0);
      if (k % 2 == 0) {
        b = test::gaussian_basis(g, n, m);
      } else {
        // Column block j, row block i (2 x 2 each) holds tap i - j of a 4-tap channel.
        double taps[4][4];
        for (auto& tap : taps)
          for (double& x : tap) x = nd(g);
        for (int bj = 0; bj < m / 2; ++bj)
          for (int bi = bj; bi < std::min(n / 2, bj + 4); ++bi)
            for (int r = 0; r < 2; ++r)
              for (int c = 0; c < 2; ++c)
                b[std::size_t(2 * bj + c) * n + 2 * bi + r] = taps[bi - bj][c * 2 + r];
      }
      in.insert(in.end(), b.begin(), b.end());
    }
    std::vector<float> out[2];
    std::vector<std::int64_t> t[2];
    std::vector<std::int32_t> st[2];
    for (int fast : {1, 0}) {
      auto db = Buffer<float>::device(in.size());
      auto dt = Buffer<std::int64_t>::device(mm * batch);
      auto ds = Buffer<std::int32_t>::device(batch);
      db.copy_from_host(in.data(), in.size());
      LllOptions options;
      options.int32_transform_fast_path = fast;
      lattice::detail::all_swap_cuda<float>(
          db.data(), dt.data(), ds.data(), batch, n, m, std::int64_t(nm), std::int64_t(mm), 0.75,
          lattice::detail::default_max_iter(m), nullptr, 0, true, nullptr, options);
      out[fast].resize(in.size());
      t[fast].resize(mm * batch);
      st[fast].resize(batch);
      db.copy_to_host(out[fast].data(), out[fast].size());
      dt.copy_to_host(t[fast].data(), t[fast].size());
      ds.copy_to_host(st[fast].data(), st[fast].size());
    }
    std::int64_t tmax = 0;
    for (std::int64_t v : t[1]) tmax = std::max<std::int64_t>(tmax, v < 0 ? -v : v);
    const auto lost =
        std::count(st[1].begin(), st[1].end(), std::int32_t(LllStatus::precision_loss));
    std::printf("[ int32 T  ] %dx%d: largest |T| %lld, %lld of %d precision_loss\n", n, m,
                static_cast<long long>(tmax), static_cast<long long>(lost), batch);
    EXPECT_EQ(st[1], st[0]) << n << "x" << m;
    EXPECT_EQ(t[1], t[0]) << n << "x" << m;
    EXPECT_EQ(out[1], out[0]) << n << "x" << m;
    if (::testing::Test::HasFailure()) return;
  }
}

// The device-resident block method's lattice check: B' = B T rounded to float32 passes, and so
// does B' with every entry moved by 1e-7 of itself; B' with one entry moved by 2e-6 of the
// largest entry, or every entry by 1e-4 of itself, is replaced by the rounded B T.
// window: T as a block method run leaves it, the identity but for its last columns (dense,
// from every column) and a few head columns (two unit columns swapped, one -e_j, one 2 e_j):
// the check takes the unit columns' tiles without the product (unit_tile_kernel).
TEST(LllGpu, TransformDriftCheck) {
  MIMORX_REQUIRE_GPU();
  std::mt19937_64 g(test::fresh_seed());
  struct Case {
    int n, m;
    bool window;
  };
  for (const Case c :
       {Case{200, 200, false}, Case{64, 40, false}, Case{7, 7, false}, Case{1024, 1024, false},
        Case{1024, 1024, true}, Case{200, 200, true}, Case{130, 130, true}}) {
    const int n = c.n, m = c.m;
    std::vector<double> b = test::gaussian_basis(g, n, m);
    // T: identity with random integer multiples of other columns added, |T| up to ~1e3 (in the
    // window case only to its last columns).
    std::vector<std::int64_t> t(std::size_t(m) * m, 0);
    for (int j = 0; j < m; ++j) t[std::size_t(j) * m + j] = 1;
    const int first = c.window ? m - m / 8 : 0;
    std::uniform_int_distribution<int> col(0, m - 1), win(first, m - 1), mult(-3, 3);
    for (int step = 0; step < 4 * (m - first); ++step) {
      const int a = win(g), cc = col(g), f = mult(g);
      if (a == cc) continue;
      for (int q = 0; q < m; ++q) t[std::size_t(a) * m + q] += f * t[std::size_t(cc) * m + q];
    }
    if (c.window) {
      std::swap(t[std::size_t(3) * m + 3], t[std::size_t(3) * m + 5]);  // columns 3, 5: e_5, e_3
      std::swap(t[std::size_t(5) * m + 5], t[std::size_t(5) * m + 3]);
      t[std::size_t(70) * m + 70] = -1;
      t[std::size_t(100) * m + 100] = 2;
    }
    std::vector<float> in(b.begin(), b.end()), bt(std::size_t(n) * m);
    double biggest = 0;
    for (int j = 0; j < m; ++j)
      for (int i = 0; i < n; ++i) {
        double v = 0;
        for (int q = 0; q < m; ++q)
          v += double(in[std::size_t(q) * n + i]) * double(t[std::size_t(j) * m + q]);
        bt[std::size_t(j) * n + i] = float(v);
        biggest = std::max(biggest, std::abs(v));
      }
    auto d_in = Buffer<float>::device(in.size());
    auto d_b = Buffer<float>::device(bt.size());
    auto d_t = Buffer<std::int64_t>::device(t.size());
    d_in.copy_from_host(in.data(), in.size());
    d_t.copy_from_host(t.data(), t.size());
    Buffer<double> scratch;
    Stream s = Stream::create();
    // Runs the check on bp; expects it to rebuild or not, and B' to be (close to) B T after.
    auto check = [&](const std::vector<float>& bp, bool rebuilt, const char* what) {
      d_b.copy_from_host(bp.data(), bp.size());
      EXPECT_EQ(lattice::detail::rebuild_if_drifted_cuda(d_in.data(), d_b.data(), d_t.data(), n, m,
                                                         scratch, s.handle(), 0),
                rebuilt)
          << what;
      std::vector<float> out(bp.size());
      d_b.copy_to_host(out.data(), out.size());
      double worst = 0;
      for (std::size_t e = 0; e < out.size(); ++e)
        worst = std::max(worst, std::abs(double(out[e]) - double(bt[e])));
      EXPECT_LE(worst, (rebuilt ? 1e-7 : 2e-6) * biggest) << what;
    };
    auto jitter = [&](double rel) {
      auto v = bt;
      std::bernoulli_distribution coin;
      for (auto& x : v) x = float(double(x) * (1 + (coin(g) ? rel : -rel)));
      return v;
    };
    SCOPED_TRACE(std::to_string(n) + "x" + std::to_string(m) + (c.window ? " window" : ""));
    check(bt, false, "B T itself");
    check(jitter(1e-7), false, "rounding-size jitter");
    auto jittered = jitter(1e-4);
    check(jittered, true, "1e-4 jitter");
    auto one = bt;
    one[std::size_t(m / 2) * n + n / 3] += float(2e-6 * biggest);
    check(one, true, "one entry moved");
    if (c.window) {  // in a unit column (3: B's column 5), and in the -e_j column
      for (int k : {3, 70}) {
        auto moved = bt;
        moved[std::size_t(k) * n + n / 2] += float(2e-6 * biggest);
        check(moved, true, k == 3 ? "an entry of a unit column moved" : "an entry of -e_j moved");
      }
    }
  }
}
#endif

TEST(LllGpu, AllSwapNonSquare) {
  MIMORX_REQUIRE_GPU();
  std::mt19937_64 g(test::fresh_seed());
  gpu_case<double>(g, 12, 8, 50, LllMethod::all_swap, true);
  gpu_case<float>(g, 40, 20, 20, LllMethod::all_swap, true);
}

TEST(LllGpu, BlockMethodCpuGpuScheduler) {
  MIMORX_REQUIRE_GPU();
  std::mt19937_64 g(test::fresh_seed());
  gpu_case<double>(g, 128, 128, 2, LllMethod::block, true);
  gpu_case<float>(g, 128, 128, 2, LllMethod::block, true);
  gpu_case<double>(g, 96, 96, 3, LllMethod::block, true, 16);
  gpu_case<float>(g, 300, 300, 1, LllMethod::block, true);   // partial last Cholesky panel
  gpu_case<double>(g, 160, 128, 1, LllMethod::block, true);  // non-square
  gpu_case<float>(g, 130, 130, 1, LllMethod::block, false);  // no transform, tail block
}

#if MIMORX_HAS_CUDA
TEST(LllGpu, BlockMethodHostSidePathStillWorks) {
  // The host-side CPU+GPU scheduler (GSC-Update on the CPU), used when the device-resident
  // path is disabled or falls back.
  MIMORX_REQUIRE_GPU();
  std::mt19937_64 g(test::fresh_seed());
  LllOptions host_side;
  host_side.block_device = false;
  gpu_case<double>(g, 128, 128, 1, LllMethod::block, true, 0, host_side);
  gpu_case<float>(g, 128, 128, 1, LllMethod::block, true, 0, host_side);
}
#endif

TEST(LllGpu, BlockMethodWindowGrowsToTheFront) {
  // Input order kept and the last vector 1000 times shorter than the rest: the first check finds
  // violations only in the last columns, so the device-resident block method starts with a
  // window at the end; the short vector has to travel to the front, and the window with it
  // (each check that finds the window's first pair violated moves its start down).
  MIMORX_REQUIRE_GPU();
  std::mt19937_64 g(test::fresh_seed());
  for (int n : {96, 256}) {
    auto b0 = test::gaussian_basis(g, n, n);
    double short_norm = 0;
    for (int i = 0; i < n; ++i) {
      b0[std::size_t(n - 1) * n + i] *= 1e-3;
      short_norm += b0[std::size_t(n - 1) * n + i] * b0[std::size_t(n - 1) * n + i];
    }
    short_norm = std::sqrt(short_norm);
    LllConfig cfg{n, n};
    cfg.method = LllMethod::block;
    cfg.presort = false;
    cfg.transform = true;
    for (bool f32 : {false, true}) {
      const std::string what = "window n=" + std::to_string(n) + (f32 ? " float" : " double");
      std::vector<double> out;
      if (f32) {
        reduce_one_on_gpu<float>(cfg, b0, what.c_str(), &out);
      } else {
        reduce_one_on_gpu<double>(cfg, b0, what.c_str(), &out);
      }
      if (::testing::Test::HasFatalFailure()) return;
      double first = 0;
      for (int i = 0; i < n; ++i) first += out[std::size_t(i)] * out[std::size_t(i)];
      EXPECT_LT(std::sqrt(first), 1.01 * short_norm) << what << ": the short vector comes first";
    }
  }
}

#if MIMORX_HAS_CUDA
// A window of at most m / 8 columns is refactorised after its block pass instead of carried
// through the GSC-Update (LllOptions::refactor_small_window), early or not (early_refactorisation):
// the 1024 x 1024 Gaussian basis (window [896, 1024) after the presort) and the window that grows
// to the front (from 32 of 256 columns, then wider), with T, both ways; every output reduced on the
// input lattice.
TEST(LllGpu, BlockMethodRefactorisedWindow) {
  MIMORX_REQUIRE_GPU();
  std::mt19937_64 g(test::fresh_seed());
  struct Case {
    int n;
    bool presort, short_last;
  };
  for (const Case c : {Case{1024, true, false}, Case{256, false, true}}) {
    auto b0 = test::gaussian_basis(g, c.n, c.n);
    if (c.short_last)
      for (int i = 0; i < c.n; ++i) b0[std::size_t(c.n - 1) * c.n + i] *= 1e-3;
    LllConfig cfg{c.n, c.n};
    cfg.method = LllMethod::block;
    cfg.presort = c.presort;
    cfg.transform = true;
    // Refactorised with the pass's flags read before (early = false) or after the
    // refactorisation is enqueued (early_refactorisation), or carried through the GSC-Update.
    for (int mode : {0, 1, 2}) {
      const bool refactor = mode < 2, early = mode == 0;
      LllOptions options;
      options.refactor_small_window = refactor;
      options.early_refactorisation = early;
      const std::string what =
          "n=" + std::to_string(c.n) +
          (refactor ? (early ? " refactorised early" : " refactorised") : " GSC");
      reduce_one_on_gpu<float>(cfg, b0, what.c_str(), nullptr, options);
      if (::testing::Test::HasFatalFailure()) return;
    }
  }
}
#endif

#if MIMORX_HAS_CUDA
// The head inverse's diagonal blocks inverted inside the start, beside the factorisation's last
// panels (LllOptions::early_head_inverse), give the same W, hence the same B', T and status to the
// bit as all of them after the start: windows that start at the early blocks' end (1024, presort)
// or after it (the last block's inverse still needed: a nearly orthogonal head, 10 e_j plus small
// noise, and `tail` Gaussian columns after it, which violate Lovasz only there), with the
// direct start and the graph.
TEST(LllGpu, EarlyHeadInverseMatchesLate) {
  MIMORX_REQUIRE_GPU();
  std::mt19937_64 g(test::fresh_seed());
  struct Case {
    int n;
    bool presort;
    int tail;  // 0: a Gaussian basis
  };
  for (const Case c : {Case{1024, true, 0}, Case{1000, false, 40}, Case{700, false, 40}}) {
    const int n = c.n;
    auto b0 = test::gaussian_basis(g, n, n);
    if (c.tail > 0)
      for (int j = 0; j < n - c.tail; ++j)
        for (int i = 0; i < n; ++i) {
          double& x = b0[std::size_t(j) * n + i];
          x = (i == j ? 10.0 : 0.0) + 1e-3 * x;
        }
    const std::vector<float> hb(b0.begin(), b0.end());
    LllConfig cfg{n, n};
    cfg.method = LllMethod::block;
    cfg.presort = c.presort;
    cfg.transform = true;
    std::vector<float> out[2];
    std::vector<std::int64_t> tout[2];
    LllStatus st[2] = {LllStatus::not_converged, LllStatus::not_converged};
    for (int early = 0; early < 2; ++early) {
      LllOptions options;
      options.early_head_inverse = early == 1;
      LllPlan plan(cfg, Backend::cuda(), options);
      auto db = Buffer<float>::device(hb.size());
      auto dt = Buffer<std::int64_t>::device(std::size_t(n) * n);
      for (int rep = 0; rep < 3; ++rep) {  // direct, captured, replayed: the same each time
        db.copy_from_host(hb.data(), hb.size());
        LllStatus s = LllStatus::not_converged;
        plan.run(MatrixBatch<float>::over(db, 1, n, n),
                 MatrixBatch<std::int64_t>::over(dt, 1, n, n),
                 View<LllStatus>(&s, 1, Memory::host));
        std::vector<float> o(hb.size());
        std::vector<std::int64_t> t(std::size_t(n) * n);
        db.copy_to_host(o.data(), o.size());
        dt.copy_to_host(t.data(), t.size());
        if (rep == 0) {
          out[early] = o;
          tout[early] = t;
          st[early] = s;
        } else {
          EXPECT_TRUE(o == out[early] && t == tout[early] && s == st[early])
              << "n=" << n << " early " << early << " run " << rep << " differs from the first";
        }
      }
    }
    const std::string what = "n=" + std::to_string(n);
    EXPECT_EQ(st[1], st[0]) << what;
    EXPECT_EQ(st[0], LllStatus::reduced) << what;
    EXPECT_TRUE(out[1] == out[0]) << what << ": B' differs between the early and late inverse";
    EXPECT_TRUE(tout[1] == tout[0]) << what << ": T differs between the early and late inverse";
    const std::vector<double> in(hb.begin(), hb.end());
    test::expect_reduced(n, n, in, out[1], &tout[1], cfg.delta, true, what.c_str());
    if (::testing::Test::HasFailure()) return;
  }
}
#endif

#if MIMORX_HAS_CUDA
// The block method's start (presort, the input's copy, T = I, R of B and its check) replayed
// from a CUDA graph (CapturedSequence) gives the same B', T and status to the bit as the direct
// launches (LllOptions::captured_sequences = false), on the first run that captures it, on the runs
// that replay it, and on other buffers (another key: a direct run, then a new capture).
TEST(LllGpu, CapturedStartMatchesDirectLaunches) {
  MIMORX_REQUIRE_GPU();
  std::mt19937_64 g(test::fresh_seed());
  struct Case {
    int n;
    bool presort, transform;
  };
  for (const Case c : {Case{1024, true, false}, Case{256, true, true}, Case{128, false, true}}) {
    const int n = c.n;
    const auto b0 = test::gaussian_basis(g, n, n);
    const std::vector<float> hb(b0.begin(), b0.end());
    LllConfig cfg{n, n};
    cfg.method = LllMethod::block;
    cfg.presort = c.presort;
    cfg.transform = c.transform;
    LllOptions uncaptured;
    uncaptured.captured_sequences = false;
    LllPlan plan(cfg, Backend::cuda()), direct(cfg, Backend::cuda(), uncaptured);
    Buffer<float> db[2] = {Buffer<float>::device(hb.size()), Buffer<float>::device(hb.size())};
    Buffer<std::int64_t> dt[2] = {Buffer<std::int64_t>::device(std::size_t(n) * n),
                                  Buffer<std::int64_t>::device(std::size_t(n) * n)};
    auto run = [&](LllPlan& p, int buf, std::vector<float>& out, std::vector<std::int64_t>& t) {
      db[buf].copy_from_host(hb.data(), hb.size());
      LllStatus st = LllStatus::not_converged;
      p.run(MatrixBatch<float>::over(db[buf], 1, n, n),
            c.transform ? MatrixBatch<std::int64_t>::over(dt[buf], 1, n, n)
                        : MatrixBatch<std::int64_t>(),
            View<LllStatus>(&st, 1, Memory::host));
      out.resize(hb.size());
      db[buf].copy_to_host(out.data(), out.size());
      t.assign(c.transform ? std::size_t(n) * n : 0, 0);
      if (c.transform) dt[buf].copy_to_host(t.data(), t.size());
      return st;
    };
    const std::string what = "n=" + std::to_string(n);
    std::vector<float> ref;
    std::vector<std::int64_t> tref;
    const LllStatus st_ref = run(direct, 0, ref, tref);
    ASSERT_EQ(st_ref, LllStatus::reduced) << what;
    const std::vector<double> in(hb.begin(), hb.end());
    test::expect_reduced(n, n, in, ref, c.transform ? &tref : nullptr, cfg.delta, true,
                         what.c_str());
    const long before = lattice::detail::captured_sequence_launches();
    // Buffer 0 (a new key: direct), 0 (captured and launched), 0 and 0 (the graph), 1 (a new
    // key: direct), 1 (captured and launched): four graph launches.
    const int bufs[] = {0, 0, 0, 0, 1, 1};
    for (int i = 0; i < 6; ++i) {
      std::vector<float> out;
      std::vector<std::int64_t> t;
      EXPECT_EQ(run(plan, bufs[i], out, t), st_ref) << what << " run " << i;
      EXPECT_TRUE(out == ref) << what << " run " << i << ": B' differs from the direct launches'";
      EXPECT_TRUE(t == tref) << what << " run " << i << ": T differs from the direct launches'";
    }
    EXPECT_EQ(lattice::detail::captured_sequence_launches() - before, 4) << what;
  }
}
#endif

#if MIMORX_HAS_CUDA
// The size reduction's snapshots taken ahead (after the start, on their own stream, with only
// the columns changed since copied again) against all of them taken before the reduction: B', T
// and the status bit for bit. Gaussian bases (a small window, refactorised), block-Toeplitz
// ones (wider windows, several passes), with T and presort.
TEST(LllGpu, SnapshotAheadMatchesCopiesBeforeTheReduction) {
  MIMORX_REQUIRE_GPU();
  std::mt19937_64 g(test::fresh_seed());
  struct Case {
    int n;
    bool toeplitz, transform;
  };
  for (const Case c : {Case{1024, false, false}, Case{300, false, true}, Case{256, true, true},
                       Case{512, true, false}}) {
    const int n = c.n;
    const auto b0 =
        c.toeplitz ? test::lll_input("toeplitz", n, 1, g()) : test::gaussian_basis(g, n, n);
    const std::vector<float> hb(b0.begin(), b0.end());
    LllConfig cfg{n, n};
    cfg.method = LllMethod::block;
    cfg.transform = c.transform;
    LllOptions copies_before;
    copies_before.snapshot_ahead = false;
    LllPlan plan(cfg, Backend::cuda()), before(cfg, Backend::cuda(), copies_before);
    auto db = Buffer<float>::device(hb.size());
    auto dt = Buffer<std::int64_t>::device(std::size_t(n) * n);
    auto run = [&](LllPlan& p, std::vector<float>& out, std::vector<std::int64_t>& t) {
      db.copy_from_host(hb.data(), hb.size());
      LllStatus st = LllStatus::not_converged;
      p.run(
          MatrixBatch<float>::over(db, 1, n, n),
          c.transform ? MatrixBatch<std::int64_t>::over(dt, 1, n, n) : MatrixBatch<std::int64_t>(),
          View<LllStatus>(&st, 1, Memory::host));
      out.resize(hb.size());
      db.copy_to_host(out.data(), out.size());
      t.assign(c.transform ? std::size_t(n) * n : 0, 0);
      if (c.transform) dt.copy_to_host(t.data(), t.size());
      return st;
    };
    const std::string what = "n=" + std::to_string(n) + (c.toeplitz ? " block-Toeplitz" : "");
    std::vector<float> ref, out;
    std::vector<std::int64_t> tref, t;
    const LllStatus st_ref = run(before, ref, tref);
    for (int i = 0; i < 3; ++i) {  // the start direct, captured, replayed
      EXPECT_EQ(run(plan, out, t), st_ref) << what << " run " << i;
      EXPECT_TRUE(out == ref) << what << " run " << i << ": B' differs";
      EXPECT_TRUE(t == tref) << what << " run " << i << ": T differs";
    }
    if (st_ref == LllStatus::reduced) {
      const std::vector<double> in(hb.begin(), hb.end());
      test::expect_reduced(n, n, in, ref, c.transform ? &tref : nullptr, cfg.delta, true,
                           what.c_str());
    }
    if (::testing::Test::HasFailure()) return;
  }
}

// The small window refactorised with the head's block rows kept (LllOptions::kept_head_rows, and
// the head inverse left out) and recomputed: both reduce (on the input lattice, the verification's
// conditions), with T, presorted 1024 x 1024 and input-order 512 x 512 Gaussian bases; the
// orthogonality defects agree within 1 %.
TEST(LllGpu, KeptHeadRowsReduceAsRecomputed) {
  MIMORX_REQUIRE_GPU();
  std::mt19937_64 g(test::fresh_seed());
  for (auto [n, presort] : std::vector<std::pair<int, bool>>{{1024, true}, {512, false}}) {
    const auto b0 = test::gaussian_basis(g, n, n);
    LllConfig cfg{n, n};
    cfg.method = LllMethod::block;
    cfg.presort = presort;
    cfg.transform = true;
    double defect[2] = {0, 0};
    for (int kept = 0; kept < 2; ++kept) {
      LllOptions options;
      options.kept_head_rows = kept == 1;
      const std::string what = "n=" + std::to_string(n) + (kept ? " kept" : " recomputed");
      std::vector<double> out;
      reduce_one_on_gpu<float>(cfg, b0, what.c_str(), &out, options);
      if (::testing::Test::HasFatalFailure()) return;
      CheckOptions opt;
      opt.condition_number = false;
      defect[kept] = std::log(check_lll(n, n, out.data(), opt).orthogonality_defect);
    }
    EXPECT_NEAR(defect[1], defect[0], 0.01 * std::abs(defect[0])) << "log defect, n=" << n;
  }
}

// The block method's latency kernel for its diagonal blocks (column_warp_lll_enqueue) against
// its host model: the same U to the bit and the same status, for blocks of 2..32 columns at
// offsets and strides inside a larger R (Gaussian and knapsack blocks, delta 0.75 and 0.99, a
// phase limit that stops it early); the host model's own outputs are checked in test_lll.cpp.
TEST(LllGpu, ColumnWarpBlocksMatchTheHostModel) {
  MIMORX_REQUIRE_GPU();
  std::mt19937_64 g(test::fresh_seed());
  const int m = 300;
  struct Case {
    int sz, s0, stride, count;
    double delta;
    long phases;
  };
  for (const Case c :
       {Case{32, 3, 33, 8, 0.75, 0}, Case{31, 0, 31, 9, 0.99, 0}, Case{16, 7, 40, 7, 0.75, 0},
        Case{2, 1, 2, 60, 0.75, 0}, Case{5, 10, 9, 30, 0.99, 0}, Case{32, 0, 32, 9, 0.75, 3}}) {
    std::vector<double> r(std::size_t(m) * m, 0.0);
    for (int k = 0; k < c.count; ++k) {
      const auto b =
          k % 2 ? test::knapsack_basis(g, c.sz, 1e4) : test::gaussian_basis(g, c.sz, c.sz);
      const auto rb = test::upper_factor(c.sz, c.sz, b);
      const int s = c.s0 + k * c.stride;
      for (int j = 0; j < c.sz; ++j)
        for (int i = 0; i < c.sz; ++i)
          r[std::size_t(s + j) * m + s + i] = rb[std::size_t(j) * c.sz + i];
    }
    const long phases = c.phases ? c.phases : lattice::detail::default_max_iter(c.sz);
    const std::size_t bs = std::size_t(c.sz) * c.sz;
    auto dr = Buffer<double>::device(r.size());
    auto du = Buffer<std::int64_t>::device(bs * c.count);
    auto dst = Buffer<std::int32_t>::device(c.count);
    dr.copy_from_host(r.data(), r.size());
    du.fill_bytes(0x7F);
    dst.fill_bytes(0x7F);
    lattice::detail::column_warp_lll_enqueue(dr.data(), m, c.s0, c.stride, c.sz, c.count, c.delta,
                                             phases, du.data(), dst.data(), nullptr);
    std::vector<std::int64_t> gu(du.size());
    std::vector<std::int32_t> gst(c.count);
    du.copy_to_host(gu.data(), gu.size());
    dst.copy_to_host(gst.data(), gst.size());
    for (int k = 0; k < c.count; ++k) {
      std::vector<std::int64_t> hu(bs);
      const int s = c.s0 + k * c.stride;
      const LllStatus hst = lattice::detail::column_warp_lll_host(
          c.sz, r.data() + std::size_t(s) * m + s, m, c.delta, phases, hu.data());
      const std::string what = "sz=" + std::to_string(c.sz) + " block " + std::to_string(k);
      ASSERT_EQ(gst[k], std::int32_t(hst)) << what;
      if (c.phases == 0) {
        EXPECT_EQ(hst, LllStatus::reduced) << what;
      }
      if (hst != LllStatus::reduced) continue;
      for (std::size_t e = 0; e < bs; ++e)
        ASSERT_EQ(gu[k * bs + e], hu[e]) << what << " U(" << e % c.sz << ", " << e / c.sz << ")";
    }
  }
}

// The batched all-swap kernel still reduces the blocks where the column-warp kernel is off.
TEST(LllGpu, BlockMethodWithAllSwapBlocks) {
  MIMORX_REQUIRE_GPU();
  std::mt19937_64 g(test::fresh_seed());
  const int n = 256;
  const auto b0 = test::gaussian_basis(g, n, n);
  LllConfig cfg{n, n};
  cfg.method = LllMethod::block;
  cfg.transform = true;
  LllOptions options;
  options.column_warp_blocks = false;
  reduce_one_on_gpu<float>(cfg, b0, "gpu block, all-swap blocks", nullptr, options);
}
#endif

TEST(LllGpu, BlockMethodFallsBackOnIllConditionedBases) {
  // Columns scaled by 10^-5 .. 10^5: the Cholesky factor's diagonal ratio is far below 1e-6, so
  // the device-resident path hands the basis (restored) to the host-side path (Householder QR).
  MIMORX_REQUIRE_GPU();
  std::mt19937_64 g(test::fresh_seed());
  const int n = 96;
  auto b0 = test::gaussian_basis(g, n, n);
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i)
      b0[std::size_t(j) * n + i] *= std::pow(10.0, -5 + 10.0 * j / (n - 1));
  LllConfig cfg{n, n};
  cfg.method = LllMethod::block;
  cfg.transform = true;
  reduce_one_on_gpu<double>(cfg, b0, "gpu block, ill-conditioned");
}

TEST(LllGpu, DegenerateBasesAreFlagged) {
  MIMORX_REQUIRE_GPU();
  LllConfig cfg{3, 3};
  cfg.method = LllMethod::all_swap;
  LllPlan plan(cfg, Backend::cuda());
  std::vector<double> h = {1, 2, 3,
                           2, 4, 6,
                           0, 1, 0,  // dependent
                           1, 0, std::numeric_limits<double>::quiet_NaN(),
                           0, 1, 0,
                           0, 0, 1,  // NaN
                           1, 0, 0,
                           0, 0, 0,
                           0, 0, 1};  // zero
  auto d = Buffer<double>::device(h.size());
  d.copy_from_host(h.data(), h.size());
  std::vector<LllStatus> st(3, LllStatus::reduced);
  plan.run(MatrixBatch<double>::over(d, 3, 3, 3), {}, View<LllStatus>(st.data(), 3, Memory::host));
  for (int k = 0; k < 3; ++k) EXPECT_EQ(st[k], LllStatus::singular) << k;
  d.copy_from_host(h.data(), h.size());
  EXPECT_THROW(plan.run(MatrixBatch<double>::over(d, 3, 3, 3), {}, {}), InvalidArgument);
  // Host memory given to a CUDA plan is refused.
  EXPECT_THROW(plan.run(MatrixBatch<double>(h.data(), 3, 3, 3, Memory::host), {}, {}),
               InvalidArgument);
}

#if MIMORX_HAS_CUDA
// Gaussian bases with exact ties of the presort key: column 5 is column 2 with its first entry
// negated (the same squares in the same order), so the order must fall back to the position.
std::vector<double> presort_inputs(std::mt19937_64& g, int n, int m, int batch) {
  std::vector<double> h;
  for (int k = 0; k < batch; ++k) {
    auto b = test::gaussian_basis(g, n, m);
    if (m > 5) {
      for (int i = 0; i < n; ++i) b[std::size_t(5) * n + i] = b[std::size_t(2) * n + i];
      b[std::size_t(5) * n] = -b[std::size_t(5) * n];
    }
    h.insert(h.end(), b.begin(), b.end());
  }
  return h;
}

// The device presort (block method) against the host's: ranks and sorted bases bit for bit;
// T taken back to the input order likewise.
template <class F>
void presort_device_case(std::mt19937_64& g, int n, int m) {
  const auto h = presort_inputs(g, n, m, 1);
  std::vector<F> host(h.begin(), h.end());
  std::vector<std::int32_t> rank(m), drank(m);
  lattice::detail::presort_columns(n, m, host.data(), rank.data());
  auto db = Buffer<F>::device(host.size());
  db.copy_from_host(std::vector<F>(h.begin(), h.end()).data(), host.size());
  auto dr = Buffer<std::int32_t>::device(m);
  auto dk = Buffer<double>::device(m);
  lattice::detail::presort_columns_cuda(db.data(), n, m, dr.data(), dk.data(), nullptr);
  std::vector<F> dev(host.size());
  db.copy_to_host(dev.data(), dev.size());
  dr.copy_to_host(drank.data(), m);
  ASSERT_EQ(drank, rank) << n << "x" << m;
  ASSERT_EQ(dev, host) << n << "x" << m;
  EXPECT_EQ(rank[2] + 1, rank[5]) << "tie not in input order";
  {  // out of place (the block method's start): B and the copy both sorted, through scratch
    auto db2 = Buffer<F>::device(host.size()), copy = Buffer<F>::device(host.size()),
         scratch = Buffer<F>::device(host.size());
    db2.copy_from_host(std::vector<F>(h.begin(), h.end()).data(), host.size());
    lattice::detail::presort_columns_cuda(db2.data(), n, m, dr.data(), dk.data(), nullptr,
                                          copy.data(), scratch.data());
    std::vector<F> dev2(host.size()), copied(host.size());
    db2.copy_to_host(dev2.data(), dev2.size());
    copy.copy_to_host(copied.data(), copied.size());
    dr.copy_to_host(drank.data(), m);
    ASSERT_EQ(drank, rank) << n << "x" << m << " out of place";
    ASSERT_EQ(dev2, host) << n << "x" << m << " out of place";
    ASSERT_EQ(copied, host) << n << "x" << m << " out of place, the copy";
  }
  std::uniform_int_distribution<std::int64_t> u(-1000000, 1000000);
  std::vector<std::int64_t> t(std::size_t(m) * m), dt(t.size());
  for (auto& x : t) x = u(g);
  auto dtb = Buffer<std::int64_t>::device(t.size());
  dtb.copy_from_host(t.data(), t.size());
  lattice::detail::unsort_transform(m, t.data(), rank.data());
  lattice::detail::unsort_transform_cuda(dtb.data(), m, dr.data(), nullptr);
  dtb.copy_to_host(dt.data(), dt.size());
  EXPECT_EQ(dt, t) << n << "x" << m;
}

// A CUDA plan with presort reduces as the same plan without presort reduces the host-sorted
// basis: B' bit for bit, T = P T_sorted, statuses equal (all-swap: the sort inside the kernel;
// block: the device presort, with the device-resident and the host-side paths).
template <class F>
void presort_plan_case(std::mt19937_64& g, LllMethod method, int n, int m, int batch,
                       const LllOptions& options = {}) {
  const std::size_t nm = std::size_t(n) * m, mm = std::size_t(m) * m;
  const auto h = presort_inputs(g, n, m, batch);
  const std::vector<F> in(h.begin(), h.end());
  auto sorted = in;
  std::vector<std::int32_t> rank(std::size_t(batch) * m);
  for (int k = 0; k < batch; ++k)
    lattice::detail::presort_columns(n, m, sorted.data() + k * nm, rank.data() + k * m);
  auto reduce = [&](const std::vector<F>& b, bool presort, std::vector<std::int64_t>& t,
                    std::vector<LllStatus>& st) {
    LllConfig cfg;
    cfg.n = n;
    cfg.m = m;
    cfg.method = method;
    cfg.transform = true;
    cfg.presort = presort;
    auto db = Buffer<F>::device(b.size());
    db.copy_from_host(b.data(), b.size());
    auto dt = Buffer<std::int64_t>::device(mm * batch);
    st.assign(batch, LllStatus::not_converged);
    LllPlan(cfg, Backend::cuda(), options)
        .run(MatrixBatch<F>::over(db, batch, n, m),
             MatrixBatch<std::int64_t>::over(dt, batch, m, m),
             View<LllStatus>(st.data(), batch, Memory::host));
    std::vector<F> out(b.size());
    db.copy_to_host(out.data(), out.size());
    t.resize(mm * batch);
    dt.copy_to_host(t.data(), t.size());
    return out;
  };
  std::vector<std::int64_t> t_on, t_off;
  std::vector<LllStatus> s_on, s_off;
  const auto on = reduce(in, true, t_on, s_on);
  const auto off = reduce(sorted, false, t_off, s_off);
  const std::string what = std::string(to_string(method)) + " " + std::to_string(n) + "x" +
                           std::to_string(m) + (sizeof(F) == 4 ? " float" : " double");
  ASSERT_EQ(s_on, s_off) << what;
  ASSERT_EQ(on, off) << what;
  for (int k = 0; k < batch; ++k) {
    lattice::detail::unsort_transform(m, t_off.data() + k * mm, rank.data() + k * m);
    std::vector<std::int64_t> tk(t_on.begin() + k * mm, t_on.begin() + (k + 1) * mm);
    ASSERT_TRUE(std::equal(tk.begin(), tk.end(), t_off.begin() + k * mm)) << what;
    ASSERT_EQ(s_on[k], LllStatus::reduced) << what;
    const std::vector<double> ink(in.begin() + k * nm, in.begin() + (k + 1) * nm);
    const std::vector<F> outk(on.begin() + k * nm, on.begin() + (k + 1) * nm);
    test::expect_reduced(n, m, ink, outk, &tk, 0.75, sizeof(F) == 4, what.c_str());
  }
}

TEST(LllGpu, PresortMatchesTheHost) {
  MIMORX_REQUIRE_GPU();
  std::mt19937_64 g(test::fresh_seed());
  presort_device_case<float>(g, 300, 200);
  presort_device_case<double>(g, 64, 64);
  presort_device_case<float>(g, 1024, 1024);
  // n not a multiple of the 16-byte unit: the permutation moves single entries.
  presort_device_case<float>(g, 37, 50);
  presort_device_case<double>(g, 33, 20);
  for (auto [n, m, batch] : {std::tuple{8, 8, 200}, std::tuple{16, 16, 100}, std::tuple{20, 12, 50},
                             std::tuple{64, 64, 20}}) {
    presort_plan_case<float>(g, LllMethod::all_swap, n, m, batch);
    presort_plan_case<double>(g, LllMethod::all_swap, n, m, batch);
    if (::testing::Test::HasFatalFailure()) return;
  }
  presort_plan_case<float>(g, LllMethod::block, 128, 128, 1);
  presort_plan_case<double>(g, LllMethod::block, 160, 128, 1);
  LllOptions host_side;
  host_side.block_device = false;
  presort_plan_case<float>(g, LllMethod::block, 128, 128, 1, host_side);
}
#endif

// float32 all-swap without T on strided bases: the "singular" ones are gathered from the batch
// and judged on the host; exactly dependent inputs stay singular, the independent ones around
// them are reduced (a wrong gather would judge a neighbour and call the dependent one a
// precision failure).
TEST(LllGpu, Float32SingularBasesAreJudgedInABatch) {
  MIMORX_REQUIRE_GPU();
  std::mt19937_64 g(test::fresh_seed());
  const int n = 16, batch = 7;
  const std::int64_t stride = std::int64_t(n) * n + 7;
  std::vector<float> h(std::size_t(stride) * batch, 0.0f);
  const std::vector<bool> dependent = {false, true, false, false, true, true, false};
  for (int k = 0; k < batch; ++k) {
    auto b = test::gaussian_basis(g, n, n);
    if (dependent[k])
      for (int i = 0; i < n; ++i) b[std::size_t(n - 1) * n + i] = 2 * b[std::size_t(k) * n + i];
    std::copy(b.begin(), b.end(), h.begin() + k * stride);
  }
  LllConfig cfg{n, n};
  cfg.method = LllMethod::all_swap;
  LllPlan plan(cfg, Backend::cuda());
  auto d = Buffer<float>::device(h.size());
  d.copy_from_host(h.data(), h.size());
  std::vector<LllStatus> st(batch, LllStatus::not_converged);
  plan.run(MatrixBatch<float>(d.data(), batch, n, n, Memory::device, stride), {},
           View<LllStatus>(st.data(), batch, Memory::host));
  std::vector<float> out(h.size());
  d.copy_to_host(out.data(), out.size());
  for (int k = 0; k < batch; ++k) {
    if (dependent[k]) {
      EXPECT_EQ(st[k], LllStatus::singular) << k;
      continue;
    }
    ASSERT_EQ(st[k], LllStatus::reduced) << k;
    const std::vector<double> in(h.begin() + k * stride, h.begin() + k * stride + n * n);
    const std::vector<float> o(out.begin() + k * stride, out.begin() + k * stride + n * n);
    test::expect_reduced(n, n, in, o, nullptr, 0.75, true, "float32 batch with singular ones");
  }
}

TEST(LllGpu, CpuAndGpuBothReduceTheSameInput) {
  MIMORX_REQUIRE_GPU();
  std::mt19937_64 g(test::fresh_seed());
  const int n = 24, batch = 32;
  std::vector<double> b0;
  for (int k = 0; k < batch; ++k) {
    auto b = test::gaussian_basis(g, n, n);
    b0.insert(b0.end(), b.begin(), b.end());
  }
  LllConfig cfg{n, n};
  cfg.method = LllMethod::all_swap;
  auto cpu = b0;
  LllPlan(cfg, Backend::cpu())
      .run(MatrixBatch<double>(cpu.data(), batch, n, n, Memory::host), {}, {});
  auto d = Buffer<double>::device(b0.size());
  d.copy_from_host(b0.data(), b0.size());
  LllPlan(cfg, Backend::cuda()).run(MatrixBatch<double>::over(d, batch, n, n), {}, {});
  std::vector<double> gpu(b0.size());
  d.copy_to_host(gpu.data(), gpu.size());
  int identical = 0;
  for (int k = 0; k < batch; ++k) {
    const std::size_t nn = std::size_t(n) * n;
    std::vector<double> in(b0.begin() + k * nn, b0.begin() + (k + 1) * nn);
    std::vector<double> c(cpu.begin() + k * nn, cpu.begin() + (k + 1) * nn);
    std::vector<double> gg(gpu.begin() + k * nn, gpu.begin() + (k + 1) * nn);
    test::expect_reduced(n, n, in, c, nullptr, 0.75, false, "cpu all-swap");
    test::expect_reduced(n, n, in, gg, nullptr, 0.75, false, "gpu all-swap");
    identical += c == gg;
  }
  std::printf("CPU and GPU all-swap outputs identical for %d of %d bases\n", identical, batch);
}

// The block method on CUDA (GPU-resident and the host-side CPU+GPU scheduler): T's products, the
// split-K products, the active window and its refactorisation, the start's graph and snapshots,
// the column-warp block kernel, fallbacks, degenerate inputs and the presort.
#include <gtest/gtest.h>

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
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
// The GPU-resident block method updates T in float64 where every partial sum stays below 2^53
// (a running bound of |T| times the multipliers' column sums) and in 128-bit integers
// otherwise: both give the same B' and T, bit for bit (float32 and float64 bases, with and
// without presort, 160x128 and 200x200).
TEST(LllGpu, BlockTransformFloat64ProductsMatchInteger) {
  MIMORX_REQUIRE_GPU();
  MIMORX_SEEDED_GENERATOR(g);
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

// The block method's products with the size-reduction multipliers (B -= B0 M, T -= T0 M) with
// their k range split over a cluster of blocks (split_k.cuh) and with one block per tile: both
// reduced and on the input lattice; the same T and float32 B' where the float64 sums' last bits
// do not cross a float32 rounding (the usual case); float64 bases agree to rounding.
TEST(LllGpu, BlockSplitProductsMatchUnsplit) {
  MIMORX_REQUIRE_GPU();
  MIMORX_SEEDED_GENERATOR(g);
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

#endif

TEST(LllGpu, BlockMethodCpuGpuScheduler) {
  MIMORX_REQUIRE_GPU();
  MIMORX_SEEDED_GENERATOR(g);
  test::gpu_case<double>(g, 128, 128, 2, LllMethod::block, true);
  test::gpu_case<float>(g, 128, 128, 2, LllMethod::block, true);
  test::gpu_case<double>(g, 96, 96, 3, LllMethod::block, true, 16);
  test::gpu_case<float>(g, 300, 300, 1, LllMethod::block, true);   // partial last Cholesky panel
  test::gpu_case<double>(g, 160, 128, 1, LllMethod::block, true);  // non-square
  test::gpu_case<float>(g, 130, 130, 1, LllMethod::block, false);  // no transform, tail block
}

#if MIMORX_HAS_CUDA
TEST(LllGpu, BlockMethodHostSidePathStillWorks) {
  // The host-side CPU+GPU scheduler (GSC-Update on the CPU), used when the device-resident
  // path is disabled or falls back.
  MIMORX_REQUIRE_GPU();
  MIMORX_SEEDED_GENERATOR(g);
  LllOptions host_side;
  host_side.block_device = false;
  test::gpu_case<double>(g, 128, 128, 1, LllMethod::block, true, 0, host_side);
  test::gpu_case<float>(g, 128, 128, 1, LllMethod::block, true, 0, host_side);
}

#endif

TEST(LllGpu, BlockMethodWindowGrowsToTheFront) {
  // Input order kept and the last vector 1000 times shorter than the rest: the first check finds
  // violations only in the last columns, so the device-resident block method starts with a
  // window at the end; the short vector has to travel to the front, and the window with it
  // (each check that finds the window's first pair violated moves its start down).
  MIMORX_REQUIRE_GPU();
  MIMORX_SEEDED_GENERATOR(g);
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
        test::reduce_one_on_gpu<float>(cfg, b0, what.c_str(), &out);
      } else {
        test::reduce_one_on_gpu<double>(cfg, b0, what.c_str(), &out);
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
  MIMORX_SEEDED_GENERATOR(g);
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
      test::reduce_one_on_gpu<float>(cfg, b0, what.c_str(), nullptr, options);
      if (::testing::Test::HasFatalFailure()) return;
    }
  }
}

// The head inverse's diagonal blocks inverted inside the start, beside the factorisation's last
// panels (LllOptions::early_head_inverse), give the same W, hence the same B', T and status to the
// bit as all of them after the start: windows that start at the early blocks' end (1024, presort)
// or after it (the last block's inverse still needed: a nearly orthogonal head, 10 e_j plus small
// noise, and `tail` Gaussian columns after it, which violate Lovasz only there), with the
// direct start and the graph.
TEST(LllGpu, EarlyHeadInverseMatchesLate) {
  MIMORX_REQUIRE_GPU();
  MIMORX_SEEDED_GENERATOR(g);
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

// The block method's start (presort, the input's copy, T = I, R of B and its check) replayed
// from a CUDA graph (CapturedSequence) gives the same B', T and status to the bit as the direct
// launches (LllOptions::captured_sequences = false), on the first run that captures it, on the runs
// that replay it, and on other buffers (another key: a direct run, then a new capture).
TEST(LllGpu, CapturedStartMatchesDirectLaunches) {
  MIMORX_REQUIRE_GPU();
  MIMORX_SEEDED_GENERATOR(g);
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

// The size reduction's snapshots taken ahead (after the start, on their own stream, with only
// the columns changed since copied again) against all of them taken before the reduction: B', T
// and the status bit for bit. Gaussian bases (a small window, refactorised), block-Toeplitz
// ones (wider windows, several passes), with T and presort.
TEST(LllGpu, SnapshotAheadMatchesCopiesBeforeTheReduction) {
  MIMORX_REQUIRE_GPU();
  MIMORX_SEEDED_GENERATOR(g);
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
  MIMORX_SEEDED_GENERATOR(g);
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
      test::reduce_one_on_gpu<float>(cfg, b0, what.c_str(), &out, options);
      if (::testing::Test::HasFatalFailure()) return;
      CheckOptions opt;
      opt.condition_number = false;
      defect[kept] = std::log(check_lll(n, n, out.data(), opt).orthogonality_defect);
    }
    EXPECT_NEAR(defect[1], defect[0], 0.01 * std::abs(defect[0])) << "log defect, n=" << n;
  }
}

// The column-warp kernel (column_warp_lll_enqueue) against its host model on the inputs of one
// seed: blocks of 2..32 columns at offsets and strides inside a larger R (Gaussian and knapsack
// blocks, delta 0.75 and 0.99, a phase limit that stops it early), all drawn from
// std::mt19937_64(seed). Returns one line for every block whose status or U differs (or whose
// host model did not reduce without a phase limit); empty: the same U to the bit and the same
// status everywhere. Where a block differs, the kernel runs again on it (the same launch, and the
// block alone) and the line says whether the GPU's result repeats: a result that changes from
// run to run points at a race, one that repeats at an operation the model does differently.
std::vector<std::string> column_warp_mismatches(std::uint64_t seed) {
  std::mt19937_64 g(seed);
  const int m = 300;
  struct Case {
    int sz, s0, stride, count;
    double delta;
    long phases;
  };
  std::vector<std::string> out;
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
    dr.copy_from_host(r.data(), r.size());
    // The kernel on `count` blocks from s0: U (count x sz^2) and the statuses.
    auto on_gpu = [&](int s0, int count, std::vector<std::int64_t>& gu,
                      std::vector<std::int32_t>& gst) {
      auto du = Buffer<std::int64_t>::device(bs * count);
      auto dst = Buffer<std::int32_t>::device(count);
      du.fill_bytes(0x7F);
      dst.fill_bytes(0x7F);
      lattice::detail::column_warp_lll_enqueue(dr.data(), m, s0, c.stride, c.sz, count, c.delta,
                                               phases, du.data(), dst.data(), nullptr);
      gu.resize(du.size());
      gst.resize(count);
      du.copy_to_host(gu.data(), gu.size());
      dst.copy_to_host(gst.data(), gst.size());
    };
    std::vector<std::int64_t> gu;
    std::vector<std::int32_t> gst;
    on_gpu(c.s0, c.count, gu, gst);
    for (int k = 0; k < c.count; ++k) {
      std::vector<std::int64_t> hu(bs);
      const int s = c.s0 + k * c.stride;
      const LllStatus hst = lattice::detail::column_warp_lll_host(
          c.sz, r.data() + std::size_t(s) * m + s, m, c.delta, phases, hu.data());
      const std::string what = "seed " + std::to_string(seed) + " sz=" + std::to_string(c.sz) +
                               " delta=" + std::to_string(c.delta) + " block " + std::to_string(k) +
                               (k % 2 ? " (knapsack)" : " (Gaussian)");
      // Knapsack blocks may end in precision_loss (docs/lll.md, Limits); the GPU must then say
      // the same.
      const bool allowed =
          hst == LllStatus::reduced || (k % 2 == 1 && hst == LllStatus::precision_loss);
      if (c.phases == 0 && !allowed) out.push_back(what + ": host model " + to_string(hst));
      // The first entry of U that differs (bs: none), compared where both reduced.
      auto first_u_diff = [&](const std::int64_t* u) {
        std::size_t e = 0;
        while (e < bs && u[e] == hu[e]) ++e;
        return e;
      };
      const std::int64_t* u = gu.data() + k * bs;
      const bool both_reduced =
          gst[k] == std::int32_t(LllStatus::reduced) && hst == LllStatus::reduced;
      const std::size_t e = both_reduced ? first_u_diff(u) : bs;
      if (gst[k] == std::int32_t(hst) && e == bs) continue;
      std::string line = what + ": GPU status " + std::to_string(gst[k]) + ", host " +
                         std::to_string(int(hst)) + " (" + to_string(hst) + ")";
      if (e < bs)
        line += ", U(" + std::to_string(e % c.sz) + ", " + std::to_string(e / c.sz) + ") GPU " +
                std::to_string(u[e]) + " host " + std::to_string(hu[e]);
      // The same launch again, and the block alone.
      std::vector<std::int64_t> gu2, gu1;
      std::vector<std::int32_t> gst2, gst1;
      on_gpu(c.s0, c.count, gu2, gst2);
      on_gpu(s, 1, gu1, gst1);
      const bool same2 = gst2[k] == gst[k] && std::equal(u, u + bs, gu2.data() + k * bs);
      const bool same1 = gst1[0] == gst[k] && std::equal(u, u + bs, gu1.data());
      line += std::string("; rerun ") + (same2 ? "repeats it" : "differs") + ", alone " +
              (same1 ? "repeats it" : "differs") + " (status " + std::to_string(gst1[0]) + ")";
      out.push_back(line);
    }
  }
  return out;
}

// The block method's latency kernel for its diagonal blocks against its host model on this
// run's seed (column_warp_mismatches); the host model's own outputs are checked in test_lll.cpp.
TEST(LllGpu, ColumnWarpBlocksMatchTheHostModel) {
  MIMORX_REQUIRE_GPU();
  const std::uint64_t seed = test::fresh_seed();
  MIMORX_TRACE_SEED(seed);
  for (const std::string& line : column_warp_mismatches(seed)) ADD_FAILURE() << line;
}

// The same over many seeds (MIMORX_COLUMN_WARP_SEEDS, 2000 unless set), from this run's seed
// on: every seed whose status or U differs is listed (replay one with MIMORX_TEST_SEED=<seed>
// and --gtest_filter=LllGpu.ColumnWarpBlocksMatchTheHostModel).
TEST(LllGpuSlow, ColumnWarpBlocksMatchTheHostModelOverManySeeds) {
  MIMORX_REQUIRE_GPU();
  const std::uint64_t base = test::fresh_seed();
  MIMORX_TRACE_SEED(base);
  long seeds = 2000;
  if (const char* v = std::getenv("MIMORX_COLUMN_WARP_SEEDS")) seeds = std::strtol(v, nullptr, 10);
  std::vector<std::uint64_t> bad;
  for (long i = 0; i < seeds; ++i) {
    const auto lines = column_warp_mismatches(base + std::uint64_t(i));
    if (lines.empty()) continue;
    bad.push_back(base + std::uint64_t(i));
    for (const std::string& line : lines) ADD_FAILURE() << line;
  }
  ::testing::Message list;
  for (const std::uint64_t s : bad) list << ' ' << s;
  EXPECT_TRUE(bad.empty()) << bad.size() << " of " << seeds << " seeds differ:" << list;
}

// The batched all-swap kernel still reduces the blocks where the column-warp kernel is off.
TEST(LllGpu, BlockMethodWithAllSwapBlocks) {
  MIMORX_REQUIRE_GPU();
  MIMORX_SEEDED_GENERATOR(g);
  const int n = 256;
  const auto b0 = test::gaussian_basis(g, n, n);
  LllConfig cfg{n, n};
  cfg.method = LllMethod::block;
  cfg.transform = true;
  LllOptions options;
  options.column_warp_blocks = false;
  test::reduce_one_on_gpu<float>(cfg, b0, "gpu block, all-swap blocks", nullptr, options);
}

#endif

TEST(LllGpu, BlockMethodFallsBackOnIllConditionedBases) {
  // Columns scaled by 10^-5 .. 10^5: the Cholesky factor's diagonal ratio is far below 1e-6, so
  // the device-resident path hands the basis (restored) to the host-side path (Householder QR).
  MIMORX_REQUIRE_GPU();
  MIMORX_SEEDED_GENERATOR(g);
  const int n = 96;
  auto b0 = test::gaussian_basis(g, n, n);
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i)
      b0[std::size_t(j) * n + i] *= std::pow(10.0, -5 + 10.0 * j / (n - 1));
  LllConfig cfg{n, n};
  cfg.method = LllMethod::block;
  cfg.transform = true;
  test::reduce_one_on_gpu<double>(cfg, b0, "gpu block, ill-conditioned");
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
  MIMORX_SEEDED_GENERATOR(g);
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

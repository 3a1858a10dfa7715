// The CR-AS-LLL kernel on the GPU: batched sizes and shapes, the fixed-shape kernels against the
// generic one, int32 T, and the CPU and GPU all-swap on the same input.
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

TEST(LllGpu, AllSwapBatchedSizesBothPrecisions) {
  MIMORX_REQUIRE_GPU();
  MIMORX_SEEDED_GENERATOR(g);
  for (int n : {4, 8, 16, 32, 48, 64}) {
    const int batch = n <= 16 ? 64 : 12;
    test::gpu_case<float>(g, n, n, batch, LllMethod::all_swap, true);
    test::gpu_case<double>(g, n, n, batch, LllMethod::all_swap, true);
  }
  test::gpu_case<float>(g, 8, 8, 1000, LllMethod::all_swap, false);
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

TEST(LllGpu, FixedShapeKernelsMatchGenericBitForBit) {
  MIMORX_REQUIRE_GPU();
  MIMORX_SEEDED_GENERATOR(g);
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

TEST(LllGpu, Float32BigMultiplierInTheFinalCheckIsNotAccepted) {
  // The basis on which the kernel's final check accepted |mu| = 0.60 (see support/lll_support.hpp).
  MIMORX_REQUIRE_GPU();
  const int n = 64;
  for (bool transform : {false, true}) {
    LllConfig cfg{n, n};
    cfg.method = LllMethod::all_swap;
    cfg.transform = transform;
    test::reduce_one_on_gpu<float>(cfg, test::big_final_multiplier_basis(), "gpu float32");
  }
}

#if MIMORX_HAS_CUDA
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
  MIMORX_SEEDED_GENERATOR(g);
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

#endif

TEST(LllGpu, AllSwapNonSquare) {
  MIMORX_REQUIRE_GPU();
  MIMORX_SEEDED_GENERATOR(g);
  test::gpu_case<double>(g, 12, 8, 50, LllMethod::all_swap, true);
  test::gpu_case<float>(g, 40, 20, 20, LllMethod::all_swap, true);
}

TEST(LllGpu, CpuAndGpuBothReduceTheSameInput) {
  MIMORX_REQUIRE_GPU();
  MIMORX_SEEDED_GENERATOR(g);
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

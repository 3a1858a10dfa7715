// CR-AS-LLL (CUDA kernel) and the CPU+GPU block method: every output passes the independent
// verification; the CPU and GPU results may differ, both must be reduced.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "lattice/lll_support.hpp"
#include "mimorx/core/buffer.hpp"
#include "mimorx/lattice/lll.hpp"
#include "mimorx/lattice/quality.hpp"
#include "support/gpu.hpp"

using namespace mimorx;
using namespace mimorx::lattice;

namespace {

template <class F>
void gpu_case(std::mt19937_64& g, int n, int m, int batch, LllMethod method, bool transform,
              int block = 0) {
  LllConfig cfg;
  cfg.n = n;
  cfg.m = m;
  cfg.method = method;
  cfg.transform = transform;
  cfg.block = block;
  cfg.max_sweeps = 20000;  // a kernel that loops shows up as not_converged within seconds
  LllPlan plan(cfg, Backend::cuda());
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

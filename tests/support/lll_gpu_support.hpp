#pragma once
// One batch, or one basis, through a CUDA LllPlan and verified (the GPU tests of the lattice).
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

#include "mimorx/core/buffer.hpp"
#include "mimorx/lattice/lll.hpp"
#include "support/lll_support.hpp"

namespace mimorx::test {

template <class F>
void gpu_case(std::mt19937_64& g, int n, int m, int batch, lattice::LllMethod method,
              bool transform, int block = 0, const lattice::LllOptions& options = {}) {
  lattice::LllConfig cfg;
  cfg.n = n;
  cfg.m = m;
  cfg.method = method;
  cfg.transform = transform;
  cfg.block = block;
  cfg.max_sweeps = 20000;  // a kernel that loops shows up as not_converged within seconds
  lattice::LllPlan plan(cfg, Backend::cuda(), options);
  const std::size_t nm = std::size_t(n) * m, mm = std::size_t(m) * m;
  std::vector<double> b0;
  for (int k = 0; k < batch; ++k) {
    auto b = gaussian_basis(g, n, m);
    for (auto& x : b) x = double(F(x));
    b0.insert(b0.end(), b.begin(), b.end());
  }
  std::vector<F> hb(b0.begin(), b0.end());
  auto db = Buffer<F>::device(hb.size());
  db.copy_from_host(hb.data(), hb.size());
  auto dt = Buffer<std::int64_t>::device(transform ? mm * batch : 0);
  dt.fill_bytes(0xFF);
  std::vector<lattice::LllStatus> st(batch, lattice::LllStatus::not_converged);
  plan.run(
      MatrixBatch<F>::over(db, batch, n, m),
      transform ? MatrixBatch<std::int64_t>::over(dt, batch, m, m) : MatrixBatch<std::int64_t>(),
      View<lattice::LllStatus>(st.data(), batch, Memory::host));
  db.copy_to_host(hb.data(), hb.size());
  std::vector<std::int64_t> ht(dt.size());
  if (transform) dt.copy_to_host(ht.data(), ht.size());
  const bool f32 = sizeof(F) == 4;
  for (int k = 0; k < batch; ++k) {
    ASSERT_EQ(st[k], lattice::LllStatus::reduced)
        << "n=" << n << " m=" << m << " basis " << k << " f32=" << f32 << ": " << to_string(st[k]);
    std::vector<double> in(b0.begin() + k * nm, b0.begin() + (k + 1) * nm);
    std::vector<F> out(hb.begin() + k * nm, hb.begin() + (k + 1) * nm);
    std::vector<std::int64_t> tk(transform ? ht.begin() + k * mm : ht.begin(),
                                 transform ? ht.begin() + (k + 1) * mm : ht.begin());
    expect_reduced(n, m, in, out, transform ? &tk : nullptr, 0.75, f32,
                   f32 ? "gpu float" : "gpu double");
    if (::testing::Test::HasFailure()) return;
  }
}

// One basis through a CUDA plan (with T when cfg.transform): status reduced and verified.
template <class F>
void reduce_one_on_gpu(const lattice::LllConfig& cfg, const std::vector<double>& b0,
                       const char* what, std::vector<double>* reduced = nullptr,
                       const lattice::LllOptions& options = {}) {
  const int n = cfg.n, m = cfg.m;
  std::vector<F> hb(b0.begin(), b0.end());
  const std::vector<double> in(hb.begin(), hb.end());
  auto db = Buffer<F>::device(hb.size());
  db.copy_from_host(hb.data(), hb.size());
  auto dt = Buffer<std::int64_t>::device(std::size_t(m) * m);
  lattice::LllStatus st = lattice::LllStatus::not_converged;
  lattice::LllPlan(cfg, Backend::cuda(), options)
      .run(MatrixBatch<F>::over(db, 1, n, m),
           cfg.transform ? MatrixBatch<std::int64_t>::over(dt, 1, m, m)
                         : MatrixBatch<std::int64_t>(),
           View<lattice::LllStatus>(&st, 1, Memory::host));
  ASSERT_EQ(st, lattice::LllStatus::reduced) << what;
  std::vector<F> out(hb.size());
  db.copy_to_host(out.data(), out.size());
  std::vector<std::int64_t> t(std::size_t(m) * m);
  if (cfg.transform) dt.copy_to_host(t.data(), t.size());
  expect_reduced(n, m, in, out, cfg.transform ? &t : nullptr, cfg.delta, sizeof(F) == 4, what);
  if (reduced) reduced->assign(out.begin(), out.end());
}

}  // namespace mimorx::test

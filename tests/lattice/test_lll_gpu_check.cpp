// The float32 lattice check on the GPU: the rebuild of drifted bases from B T, the device
// re-check and polish, the square one-pass kernels, the block method's drift check, and the
// judgement of bases float32 calls singular.
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

// The float32 all-swap kernel with T on ill-conditioned bases: the rebuild of B' from B T
// (rebuild_cuda.cu, then the host's re-check) keeps every basis reported reduced on the input
// lattice; without it some are off (test::ill_conditioned_float32).
TEST(LllGpu, AllSwapFloat32IllConditionedStaysOnTheLattice) {
  MIMORX_REQUIRE_GPU();
  const std::uint64_t seed = test::fresh_seed();
  MIMORX_TRACE_SEED(seed);
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
  MIMORX_TRACE_SEED(seed);
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
  MIMORX_TRACE_SEED(seed);
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

// The all-swap lattice check's device re-check (rebuild_cuda.cu): bases that drifted from B T
// are rebuilt (here T = I, so the rebuilt basis is the input) and their LLL conditions checked
// in float64 on the device. Reduced ones pass (status reduced); one that is not size-reduced
// (|mu| = 0.6) or breaks Lovasz (|b_1*|^2 = 1/4 |b_0*|^2) keeps kStatusRecheck for the host.
// Shapes 4x4 (hand-made) and 40x24 (a reference-reduced Gaussian basis, which also spans
// several warps' rows and columns, and the same with its two last columns swapped).
TEST(LllGpu, DeviceRecheckOfRebuiltBases) {
  MIMORX_REQUIRE_GPU();
  MIMORX_SEEDED_GENERATOR(g);
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
  MIMORX_SEEDED_GENERATOR(g);
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
  MIMORX_SEEDED_GENERATOR(g);
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

// The device-resident block method's lattice check: B' = B T rounded to float32 passes, and so
// does B' with every entry moved by 1e-7 of itself; B' with one entry moved by 2e-6 of the
// largest entry, or every entry by 1e-4 of itself, is replaced by the rounded B T.
// window: T as a block method run leaves it, the identity but for its last columns (dense,
// from every column) and a few head columns (two unit columns swapped, one -e_j, one 2 e_j):
// the check takes the unit columns' tiles without the product (unit_tile_kernel).
TEST(LllGpu, TransformDriftCheck) {
  MIMORX_REQUIRE_GPU();
  MIMORX_SEEDED_GENERATOR(g);
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

// float32 all-swap without T on strided bases: the "singular" ones are gathered from the batch
// and judged on the host; exactly dependent inputs stay singular, the independent ones around
// them are reduced (a wrong gather would judge a neighbour and call the dependent one a
// precision failure).
TEST(LllGpu, Float32SingularBasesAreJudgedInABatch) {
  MIMORX_REQUIRE_GPU();
  MIMORX_SEEDED_GENERATOR(g);
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

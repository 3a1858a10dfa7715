// The simulator's channel model (sim/channel_model.hpp): Kronecker correlation against an
// Eigen reference built from the same i.i.d. draws, block fading's coherence blocks (uncoded,
// and within transport blocks when coded), the identity model equal to the i.i.d. generator,
// bad values refused, batch-independent counts in the links, and CPU == CUDA.
#include <gtest/gtest.h>

#include <Eigen/Dense>
#include <cmath>
#include <cstring>
#include <vector>

#include "mimorx/channel/fading.hpp"
#include "mimorx/config.hpp"
#include "mimorx/core/error.hpp"
#include "mimorx/sim/coded.hpp"
#include "mimorx/sim/link.hpp"
#include "sim/channel_model.hpp"
#include "sim/frames.hpp"
#include "sim/frames_math.hpp"
#include "support/gpu.hpp"

namespace mimorx::sim::detail {
namespace {

struct Batch {
  std::vector<std::uint8_t> bits;
  std::vector<cf32> h, y;
  Batch(std::int64_t n, int nt, int nr, Modulation mod)
      : bits(std::size_t(n) * nt * bits_per_symbol(mod)),
        h(std::size_t(n) * nt * nr),
        y(std::size_t(n) * nr) {}
};

// The generator's frames, then the model rewritten over them.
Batch modelled(const ChannelModelArgs& a, std::uint64_t seed, std::int64_t first, std::int64_t n,
               int nt, int nr, Modulation mod, float n0) {
  Batch b(n, nt, nr, mod);
  make_frames_cpu(seed, first, n, nt, nr, mod, n0, {b.bits.data(), b.h.data(), b.y.data()});
  channel_model_cpu(a, seed, first, n, nt, nr, mod, n0, b.bits.data(), b.h.data(), b.y.data());
  return b;
}

TEST(ChannelModel, IdentityModelIsTheIidGenerator) {
  const auto seed = test::fresh_seed();
  const int nt = 3, nr = 4, n = 500;
  Batch iid(n, nt, nr, Modulation::qam16);
  make_frames_cpu(seed, 11, n, nt, nr, Modulation::qam16, 0.2f,
                  {iid.bits.data(), iid.h.data(), iid.y.data()});
  const Batch same = modelled({}, seed, 11, n, nt, nr, Modulation::qam16, 0.2f);
  EXPECT_EQ(0, std::memcmp(iid.h.data(), same.h.data(), iid.h.size() * sizeof(cf32)));
  EXPECT_EQ(0, std::memcmp(iid.y.data(), same.y.data(), iid.y.size() * sizeof(cf32)));
}

TEST(ChannelModel, KroneckerEqualsTheEigenProductOfTheSameDraws) {
  const auto seed = test::fresh_seed();
  const int nt = 4, nr = 3, n = 64;
  const channel::FadingPlan roots({nr, nt, 0.7, 0.4}, Backend::cpu());
  ChannelModelArgs a;
  a.sqrt_rx = roots.sqrt_rx().data();
  a.sqrt_tx = roots.sqrt_tx().data();
  const Batch b = modelled(a, seed, 5, n, nt, nr, Modulation::qpsk, 0.1f);
  Eigen::MatrixXd ar(nr, nr), bt(nt, nt);
  for (int j = 0; j < nr; ++j)
    for (int i = 0; i < nr; ++i) ar(i, j) = roots.sqrt_rx()[std::size_t(j) * nr + i];
  for (int j = 0; j < nt; ++j)
    for (int i = 0; i < nt; ++i) bt(i, j) = roots.sqrt_tx()[std::size_t(j) * nt + i];
  // R^{1/2} squares to the exponential correlation matrix.
  const auto r = channel::exponential_correlation(nt, 0.7);
  EXPECT_NEAR((bt * bt)(0, 1), r[std::size_t(1) * nt], 1e-6);
  for (int v = 0; v < n; ++v) {
    Eigen::MatrixXcd g(nr, nt);
    for (int j = 0; j < nt; ++j)
      for (int i = 0; i < nr; ++i) {
        const cf32 e = rayleigh_entry(seed, 5 + v, nr, nt, i, j);
        g(i, j) = {e.re, e.im};
      }
    const Eigen::MatrixXcd want =
        ar.cast<std::complex<double>>() * g * bt.cast<std::complex<double>>();
    for (int j = 0; j < nt; ++j)
      for (int i = 0; i < nr; ++i) {
        const cf32 got = b.h[std::size_t(v) * nr * nt + std::size_t(j) * nr + i];
        EXPECT_NEAR(got.re, want(i, j).real(), 1e-5);
        EXPECT_NEAR(got.im, want(i, j).imag(), 1e-5);
      }
  }
}

TEST(ChannelModel, BlockFadingSharesOneChannelPerCoherenceBlock) {
  const auto seed = test::fresh_seed();
  const int nt = 2, nr = 2, n = 12;
  const auto h_of = [&](const Batch& b, int v) {
    return std::vector<cf32>(b.h.begin() + v * nr * nt, b.h.begin() + (v + 1) * nr * nt);
  };
  const auto same = [](const std::vector<cf32>& x, const std::vector<cf32>& y) {
    return std::memcmp(x.data(), y.data(), x.size() * sizeof(cf32)) == 0;
  };
  ChannelModelArgs a;
  a.vectors_per_channel = 3;
  const Batch u = modelled(a, seed, 0, n, nt, nr, Modulation::qpsk, 0.1f);
  for (int v = 0; v < n; ++v) EXPECT_EQ(same(h_of(u, v), h_of(u, v / 3 * 3)), true) << v;
  EXPECT_FALSE(same(h_of(u, 2), h_of(u, 3)));
  // Uncoded vector 3 uses realisation 1: the i.i.d. draw of index 1.
  EXPECT_EQ(u.h[std::size_t(3) * nr * nt].re, rayleigh_entry(seed, 1, nr, nt, 0, 0).re);
  // Coded, 5 vectors per block, 2 per channel: block 0 has realisations 0, 1, 2 (vectors 0-1,
  // 2-3, 4), block 1 starts with realisation 3 at its vector 0 (global 5).
  a.vectors_per_block = 5;
  a.channels_per_block = 3;
  const Batch c = modelled(a, seed, 0, n, nt, nr, Modulation::qpsk, 0.1f);
  EXPECT_TRUE(same(h_of(c, 0), h_of(c, 1)));
  EXPECT_FALSE(same(h_of(c, 4), h_of(c, 5)));
  EXPECT_TRUE(same(h_of(c, 5), h_of(c, 6)));
  EXPECT_EQ(c.h[std::size_t(5) * nr * nt].re, rayleigh_entry(seed, 3, nr, nt, 0, 0).re);
  // A batch starting inside a coherence block gives the same values as one from 0.
  const Batch part = modelled(a, seed, 6, 4, nt, nr, Modulation::qpsk, 0.1f);
  EXPECT_EQ(0, std::memcmp(part.h.data(), c.h.data() + 6 * nr * nt, part.h.size() * sizeof(cf32)));
  EXPECT_EQ(0, std::memcmp(part.y.data(), c.y.data() + 6 * nr, part.y.size() * sizeof(cf32)));
}

TEST(ChannelModel, BadValuesAreRefused) {
  const detect::MimoShape s{2, 2, Modulation::qpsk};
  for (double rho : {1.0, -0.1, 1.5, std::nan("")}) {
    EXPECT_THROW(ChannelModelPlan({rho, 0.0, 1}, s, 0, Backend::cpu()), InvalidArgument) << rho;
    EXPECT_THROW(ChannelModelPlan({0.0, rho, 1}, s, 0, Backend::cpu()), InvalidArgument) << rho;
  }
  EXPECT_THROW(ChannelModelPlan({0.0, 0.0, 0}, s, 0, Backend::cpu()), InvalidArgument);
  EXPECT_THROW(ChannelModelPlan({0.0, 0.0, -4}, s, 0, Backend::cpu()), InvalidArgument);
  EXPECT_FALSE(ChannelModelPlan({}, s, 0, Backend::cpu()).active());
  EXPECT_TRUE(ChannelModelPlan({0.5, 0.0, 1}, s, 0, Backend::cpu()).active());
}

TEST(ChannelModel, LinksCountTheSameForAnyBatchAndCorrelationCostsErrors) {
  const auto seed = test::fresh_seed();
  UncodedConfig c;
  c.shape = {2, 2, Modulation::qpsk};
  c.detector = "mmse";
  c.seed = seed;
  c.frames = 6000;
  c.channel = {0.0, 0.0, 7};
  c.batch = 1000;
  const auto a = run_uncoded(c, Backend::cpu(), {10.0})[0];
  c.batch = 333;
  const auto b = run_uncoded(c, Backend::cpu(), {10.0})[0];
  EXPECT_EQ(a.bit_errors, b.bit_errors);
  EXPECT_EQ(a.symbol_errors, b.symbol_errors);
  // Strong correlation at both ends makes the channel ill-conditioned: MMSE loses.
  c.channel = {0.95, 0.95, 1};
  c.batch = 0;
  const auto corr = run_uncoded(c, Backend::cpu(), {10.0})[0];
  c.channel = {};
  const auto iid = run_uncoded(c, Backend::cpu(), {10.0})[0];
  EXPECT_GT(corr.bit_errors, 2 * iid.bit_errors);

  CodedConfig cc;
  cc.shape = {2, 2, Modulation::qpsk};
  cc.seed = seed;
  cc.tbs = 256;
  cc.blocks = 40;
  cc.channel = {0.3, 0.5, 5};
  cc.batch_blocks = 7;
  const auto x = run_coded(cc, Backend::cpu(), {4.0})[0];
  cc.batch_blocks = 40;
  const auto y = run_coded(cc, Backend::cpu(), {4.0})[0];
  EXPECT_EQ(x.bit_errors, y.bit_errors);
  EXPECT_EQ(x.block_errors, y.block_errors);
}

TEST(ChannelModelGpu, CountsEqualTheCpu) {
  MIMORX_REQUIRE_GPU();
  const auto seed = test::fresh_seed();
  UncodedConfig c;
  c.shape = {4, 4, Modulation::qam16};
  c.detector = "kbest:8";
  c.seed = seed;
  c.frames = 20000;
  c.channel = {0.5, 0.7, 6};
  const auto cpu = run_uncoded(c, Backend::cpu(), {8.0, 14.0});
  const auto gpu = run_uncoded(c, Backend::cuda(0), {8.0, 14.0});
  for (std::size_t i = 0; i < cpu.size(); ++i) {
    EXPECT_EQ(cpu[i].bit_errors, gpu[i].bit_errors) << i;
    EXPECT_EQ(cpu[i].symbol_errors, gpu[i].symbol_errors) << i;
  }
  CodedConfig cc;
  cc.shape = {2, 2, Modulation::qam16};
  cc.detector = "kbest:8";
  cc.seed = seed;
  cc.tbs = 1024;
  cc.blocks = 200;
  cc.channel = {0.3, 0.6, 50};
  const auto ccpu = run_coded(cc, Backend::cpu(), {6.0, 9.0});
  const auto cgpu = run_coded(cc, Backend::cuda(0), {6.0, 9.0});
  for (std::size_t i = 0; i < ccpu.size(); ++i) {
    EXPECT_EQ(ccpu[i].bit_errors, cgpu[i].bit_errors) << i;
    EXPECT_EQ(ccpu[i].block_errors, cgpu[i].block_errors) << i;
  }
}

}  // namespace
}  // namespace mimorx::sim::detail

#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "mimorx/channel/awgn.hpp"
#include "mimorx/channel/fading.hpp"
#include "mimorx/channel/samples.hpp"
#include "mimorx/channel/snr.hpp"
#include "mimorx/config.hpp"
#include "support/gpu.hpp"

namespace mimorx::channel {
namespace {

using cd = std::complex<double>;

std::vector<cf32> generate_cpu(const FadingConfig& cfg, std::uint64_t seed, std::int64_t first,
                               std::int64_t count) {
  std::vector<cf32> h(std::size_t(count * cfg.nr * cfg.nt));
  FadingPlan plan(cfg, Backend::cpu());
  plan.generate(seed, first, MatrixBatch<cf32>(h.data(), count, cfg.nr, cfg.nt, Memory::host));
  return h;
}

TEST(Snr, Conventions) {
  EXPECT_FLOAT_EQ(noise_variance_from_esn0_db(0.0), 1.f);
  EXPECT_FLOAT_EQ(noise_variance_from_esn0_db(10.0), 0.1f);
  EXPECT_FLOAT_EQ(noise_variance_from_esn0_db(-3.0), float(std::pow(10.0, 0.3)));
  // 16-QAM, rate 1/2: Es/N0 = Eb/N0 + 10 log10(2).
  EXPECT_NEAR(esn0_db_from_ebn0_db(5.0, 4, 0.5), 5.0 + 10 * std::log10(2.0), 1e-12);
  EXPECT_NEAR(esn0_db_from_ebn0_db(5.0, 1, 1.0), 5.0, 1e-12);
  EXPECT_FLOAT_EQ(noise_variance_from_ebn0_db(3.0, 2, 1.0),
                  float(std::pow(10.0, -(3.0 + 10 * std::log10(2.0)) / 10)));
}

TEST(Fading, IidRayleighStatistics) {
  const std::uint64_t seed = test::fresh_seed();
  const FadingConfig cfg{4, 3, 0.0, 0.0};
  const std::int64_t count = 40000;
  const auto h = generate_cpu(cfg, seed, 0, count);
  const double n = double(h.size());
  cd mean = 0;
  double power = 0, re2 = 0, im2 = 0;
  cd adjacent = 0;  // E[h_00 conj(h_10)] must be 0 for i.i.d. entries
  for (std::int64_t c = 0; c < count; ++c) {
    for (int e = 0; e < 12; ++e) {
      const cf32 v = h[std::size_t(c * 12 + e)];
      mean += cd(v.re, v.im);
      power += double(v.re) * v.re + double(v.im) * v.im;
      re2 += double(v.re) * v.re;
      im2 += double(v.im) * v.im;
    }
    const cf32 a = h[std::size_t(c * 12)], b = h[std::size_t(c * 12 + 1)];
    adjacent += cd(a.re, a.im) * std::conj(cd(b.re, b.im));
  }
  // 5 standard errors: the test fails with probability < 1e-6 when the generator is right.
  EXPECT_LT(std::abs(mean / n), 5 * std::sqrt(1.0 / n));
  EXPECT_NEAR(power / n, 1.0, 5 * std::sqrt(1.0 / n));
  EXPECT_NEAR(re2 / n, 0.5, 5 * std::sqrt(0.5 / n));
  EXPECT_NEAR(im2 / n, 0.5, 5 * std::sqrt(0.5 / n));
  EXPECT_LT(std::abs(adjacent / double(count)), 5 * std::sqrt(1.0 / double(count)));
}

TEST(Fading, KroneckerCorrelationMatchesRho) {
  const std::uint64_t seed = test::fresh_seed() + 1;
  const FadingConfig cfg{3, 4, 0.7, 0.4};
  const std::int64_t count = 60000;
  const auto h = generate_cpu(cfg, seed, 0, count);
  // E[h_ij conj(h_kl)] = R_rx(i,k) R_tx(j,l) for the Kronecker model.
  for (auto [i, j, k, l] : {std::array{0, 0, 0, 0}, std::array{0, 0, 0, 1}, std::array{0, 0, 0, 2},
                            std::array{0, 1, 0, 3}, std::array{0, 0, 1, 0}, std::array{0, 0, 2, 0},
                            std::array{1, 1, 2, 2}}) {
    cd acc = 0;
    for (std::int64_t c = 0; c < count; ++c) {
      const cf32 a = h[std::size_t(c * 12 + j * 3 + i)], b = h[std::size_t(c * 12 + l * 3 + k)];
      acc += cd(a.re, a.im) * std::conj(cd(b.re, b.im));
    }
    const double want = std::pow(0.4, std::abs(i - k)) * std::pow(0.7, std::abs(j - l));
    EXPECT_NEAR(acc.real() / double(count), want, 5 * std::sqrt(1.0 / double(count)))
        << i << j << k << l;
    EXPECT_NEAR(acc.imag() / double(count), 0.0, 5 * std::sqrt(1.0 / double(count)));
  }
}

TEST(Fading, SquareRootSquaresToR) {
  FadingPlan plan({2, 5, 0.9, 0.0}, Backend::cpu());
  EXPECT_TRUE(plan.sqrt_rx().empty());
  const auto& s = plan.sqrt_tx();
  for (int i = 0; i < 5; ++i) {
    for (int j = 0; j < 5; ++j) {
      double r = 0;
      for (int k = 0; k < 5; ++k)
        r += double(s[std::size_t(k * 5 + i)]) * s[std::size_t(j * 5 + k)];
      EXPECT_NEAR(r, std::pow(0.9, std::abs(i - j)), 1e-6);
    }
  }
}

TEST(Fading, IndependentOfBatchSplit) {
  const std::uint64_t seed = test::fresh_seed() + 2;
  for (double rho : {0.0, 0.5}) {
    const FadingConfig cfg{2, 3, rho, rho};
    const auto all = generate_cpu(cfg, seed, 0, 10);
    const auto tail = generate_cpu(cfg, seed, 4, 6);
    EXPECT_EQ(std::memcmp(all.data() + 4 * 6, tail.data(), tail.size() * sizeof(cf32)), 0);
    const auto other = generate_cpu(cfg, seed + 1, 0, 10);
    EXPECT_NE(std::memcmp(all.data(), other.data(), all.size() * sizeof(cf32)), 0);
  }
}

TEST(Fading, BadConfigThrows) {
  EXPECT_THROW(FadingPlan({0, 2, 0, 0}, Backend::cpu()), InvalidArgument);
  EXPECT_THROW(FadingPlan({2, 65, 0, 0}, Backend::cpu()), InvalidArgument);
  EXPECT_THROW(FadingPlan({2, 2, 1.0, 0}, Backend::cpu()), InvalidArgument);
  EXPECT_THROW(FadingPlan({2, 2, 0, -0.1}, Backend::cpu()), InvalidArgument);
  EXPECT_THROW(FadingPlan({2, 2, std::nan(""), 0}, Backend::cpu()), InvalidArgument);
  FadingPlan plan({2, 2, 0, 0}, Backend::cpu());
  std::vector<cf32> h(12);
  EXPECT_THROW(plan.generate(1, 0, MatrixBatch<cf32>(h.data(), 2, 3, 2, Memory::host)),
               InvalidArgument);
}

TEST(Awgn, NoiseVarianceAndReceivedSignal) {
  const std::uint64_t seed = test::fresh_seed() + 3;
  const int nr = 3, nt = 2, vpc = 4;
  const std::int64_t channels = 5000, vectors = channels * vpc;
  const auto h = generate_cpu({nr, nt, 0, 0}, seed, 0, channels);
  std::vector<cf32> x(std::size_t(vectors * nt)), y(std::size_t(vectors * nr));
  std::mt19937_64 gen(seed);
  std::normal_distribution<float> g;
  for (auto& v : x) v = {g(gen), g(gen)};
  const float n0 = 0.37f;
  std::vector<float> nv{n0};
  apply_channel(Backend::cpu(), MatrixBatch<const cf32>(h.data(), channels, nr, nt, Memory::host),
                MatrixBatch<const cf32>(x.data(), vectors, nt, 1, Memory::host), vpc,
                View<const float>(nv.data(), 1, Memory::host), seed, 0,
                MatrixBatch<cf32>(y.data(), vectors, nr, 1, Memory::host));
  double p = 0;
  cd mean = 0;
  for (std::int64_t v = 0; v < vectors; ++v) {
    for (int i = 0; i < nr; ++i) {
      cd s = 0;
      for (int j = 0; j < nt; ++j) {
        const cf32 hij = h[std::size_t((v / vpc) * nr * nt + j * nr + i)];
        const cf32 xj = x[std::size_t(v * nt + j)];
        s += cd(hij.re, hij.im) * cd(xj.re, xj.im);
      }
      const cf32 yi = y[std::size_t(v * nr + i)];
      const cd n = cd(yi.re, yi.im) - s;
      p += std::norm(n);
      mean += n;
    }
  }
  const double cnt = double(vectors * nr);
  EXPECT_NEAR(p / cnt, n0, 5 * n0 / std::sqrt(cnt));
  EXPECT_LT(std::abs(mean / cnt), 5 * std::sqrt(n0 / cnt));
  // Noise of vector v is a pure function of (seed, v): recompute one sample.
  const cf32 n7 = noise_sample(seed, 7, nr, 1, n0);
  cd s = 0;
  for (int j = 0; j < nt; ++j) {
    const cf32 hij = h[std::size_t(1 * nr * nt + j * nr + 1)];
    s += cd(hij.re, hij.im) * cd(x[std::size_t(7 * nt + j)].re, x[std::size_t(7 * nt + j)].im);
  }
  EXPECT_NEAR(y[std::size_t(7 * nr + 1)].re, s.real() + n7.re, 1e-5);
  EXPECT_NEAR(y[std::size_t(7 * nr + 1)].im, s.imag() + n7.im, 1e-5);
}

TEST(Awgn, ScalarAwgnAndBadInput) {
  const std::uint64_t seed = test::fresh_seed() + 4;
  const std::int64_t n = 200000;
  std::vector<cf32> x(std::size_t(n), cf32{0.5f, -0.25f}), y(static_cast<std::size_t>(n));
  std::vector<float> nv{2.f};
  add_awgn(Backend::cpu(), View<const cf32>(x.data(), n, Memory::host),
           View<const float>(nv.data(), 1, Memory::host), seed, 0,
           View<cf32>(y.data(), n, Memory::host));
  double p = 0;
  for (std::int64_t s = 0; s < n; ++s) p += double(norm2(y[std::size_t(s)] - x[std::size_t(s)]));
  EXPECT_NEAR(p / double(n), 2.0, 5 * 2.0 / std::sqrt(double(n)));
  std::vector<float> bad{-1.f};
  EXPECT_THROW(add_awgn(Backend::cpu(), View<const cf32>(x.data(), n, Memory::host),
                        View<const float>(bad.data(), 1, Memory::host), seed, 0,
                        View<cf32>(y.data(), n, Memory::host)),
               InvalidArgument);
  std::vector<cf32> h(4), xv(4), yv(4);
  EXPECT_THROW(
      apply_channel(Backend::cpu(), MatrixBatch<const cf32>(h.data(), 1, 2, 2, Memory::host),
                    MatrixBatch<const cf32>(xv.data(), 2, 2, 1, Memory::host), 1,
                    View<const float>(nv.data(), 1, Memory::host), seed, 0,
                    MatrixBatch<cf32>(yv.data(), 2, 2, 1, Memory::host)),
      InvalidArgument);
}

#if MIMORX_HAS_CUDA
TEST(ChannelGpu, FadingAndNoiseBitIdenticalToCpu) {
  MIMORX_REQUIRE_GPU();
  const std::uint64_t seed = test::fresh_seed() + 5;
  for (double rho : {0.0, 0.6}) {
    const FadingConfig cfg{4, 3, rho, rho * 0.5};
    const std::int64_t count = 3000, first = 17;
    const auto hc = generate_cpu(cfg, seed, first, count);
    Buffer<cf32> hd = Buffer<cf32>::device(hc.size());
    FadingPlan plan(cfg, Backend::cuda());
    plan.generate(seed, first, MatrixBatch<cf32>(hd.data(), count, 4, 3, Memory::device));
    std::vector<cf32> hg(hc.size());
    hd.copy_to_host(hg.data(), hg.size());
    EXPECT_EQ(std::memcmp(hg.data(), hc.data(), hc.size() * sizeof(cf32)), 0) << rho;

    const int vpc = 3;
    const std::int64_t vectors = count * vpc;
    std::vector<cf32> x(std::size_t(vectors * 3)), yc(std::size_t(vectors * 4)), yg(yc.size());
    std::mt19937_64 gen(seed);
    std::normal_distribution<float> g;
    for (auto& v : x) v = {g(gen), g(gen)};
    std::vector<float> nv(static_cast<std::size_t>(vectors));
    for (auto& v : nv) v = std::abs(g(gen)) + 0.01f;
    apply_channel(Backend::cpu(), MatrixBatch<const cf32>(hc.data(), count, 4, 3, Memory::host),
                  MatrixBatch<const cf32>(x.data(), vectors, 3, 1, Memory::host), vpc,
                  View<const float>(nv.data(), vectors, Memory::host), seed, 5,
                  MatrixBatch<cf32>(yc.data(), vectors, 4, 1, Memory::host));
    Buffer<cf32> xd = Buffer<cf32>::device(x.size()), yd = Buffer<cf32>::device(yc.size());
    Buffer<float> nd = Buffer<float>::device(nv.size());
    xd.copy_from_host(x.data(), x.size());
    nd.copy_from_host(nv.data(), nv.size());
    apply_channel(Backend::cuda(), MatrixBatch<const cf32>(hd.data(), count, 4, 3, Memory::device),
                  MatrixBatch<const cf32>(xd.data(), vectors, 3, 1, Memory::device), vpc,
                  View<const float>(nd.data(), vectors, Memory::device), seed, 5,
                  MatrixBatch<cf32>(yd.data(), vectors, 4, 1, Memory::device));
    yd.copy_to_host(yg.data(), yg.size());
    EXPECT_EQ(std::memcmp(yg.data(), yc.data(), yc.size() * sizeof(cf32)), 0) << rho;

    std::vector<cf32> ac(x.size()), ag(x.size());
    add_awgn(Backend::cpu(), View<const cf32>(x.data(), std::int64_t(x.size()), Memory::host),
             View<const float>(nv.data(), 1, Memory::host), seed, 3,
             View<cf32>(ac.data(), std::int64_t(ac.size()), Memory::host));
    add_awgn(Backend::cuda(), View<const cf32>(xd.data(), std::int64_t(x.size()), Memory::device),
             View<const float>(nd.data(), 1, Memory::device), seed, 3,
             View<cf32>(yd.data(), std::int64_t(x.size()), Memory::device));
    yd.copy_to_host(ag.data(), ag.size());
    EXPECT_EQ(std::memcmp(ag.data(), ac.data(), ac.size() * sizeof(cf32)), 0) << rho;
  }
}
#endif

}  // namespace
}  // namespace mimorx::channel

// TDL channels, statistics of the CPU backend: tap power and the Jakes autocorrelation
// J0(2 pi fD tau) of the fading processes, the LOS row's Doppler, the time and frequency
// correlation of H from the plan, the Kronecker correlation across antennas, and the
// independence of the batch split. Bounds are 5 standard errors, estimated from independent
// realisations.
#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <cstring>
#include <functional>
#include <numbers>
#include <vector>

#include "channel/tdl_math.hpp"
#include "mimorx/channel/tdl.hpp"
#include "support/gpu.hpp"

namespace mimorx::channel {
namespace {

using cd = std::complex<double>;
constexpr double kPi = std::numbers::pi;

cd to_cd(cf32 v) { return {v.re, v.im}; }

// Mean and standard error of a complex statistic from independent samples.
struct Estimate {
  cd mean;
  double se;  // of the real and imaginary parts together: sqrt(var_re/n + var_im/n)
};
Estimate estimate(const std::vector<cd>& samples) {
  const double n = double(samples.size());
  cd mean = 0;
  for (cd s : samples) mean += s;
  mean /= n;
  double var = 0;
  for (cd s : samples) var += std::norm(s - mean);
  return {mean, std::sqrt(var / (n - 1) / n)};
}

std::vector<cf32> generate(const TdlConfig& cfg, std::uint64_t seed, const TdlSlots& slots,
                           std::int64_t count) {
  TdlChannel ch(cfg, Backend::cpu());
  std::vector<cf32> h(std::size_t(count * ch.matrices_per_slot() * cfg.n_rx * cfg.n_tx));
  ch.generate(seed, slots,
              MatrixBatch<cf32>(h.data(), count * ch.matrices_per_slot(), cfg.n_rx, cfg.n_tx,
                                Memory::host));
  return h;
}

TEST(TdlProcess, UnitPowerAndJakesAutocorrelation) {
  const std::uint64_t seed = test::fresh_seed();
  const double fd = 100.0;
  const double fd_tc = fd * detail::kTdlTcSeconds;
  const std::int64_t t0 = detail::tdl_symbol_tc(1, 5, 3);
  // Lags with 2 pi fD tau across the first two lobes of J0 (zero at 2.405, minimum at 3.83).
  const double args[] = {0.0, 0.5, 1.2, 2.405, 3.0, 3.83, 5.52, 7.0};
  const int reals = 1200, taps = 4, pairs = 4;
  std::vector<std::vector<cd>> corr(std::size(args));
  std::vector<cd> power, pseudo, cross;
  for (int c = 0; c < reals; ++c) {
    for (int n = 0; n < taps; ++n) {
      for (int e = 0; e < pairs; ++e) {
        const cd w0 = to_cd(detail::tdl_process(seed, c, n, e, false, fd_tc, t0));
        power.push_back(std::norm(w0));
        pseudo.push_back(w0 * w0);
        const int e2 = (e + 1) % pairs;
        cross.push_back(w0 *
                        std::conj(to_cd(detail::tdl_process(seed, c, n, e2, false, fd_tc, t0))));
        for (std::size_t a = 0; a < std::size(args); ++a) {
          const auto lag =
              std::int64_t(std::llround(args[a] / (2 * kPi * fd * detail::kTdlTcSeconds)));
          const cd w1 = to_cd(detail::tdl_process(seed, c, n, e, false, fd_tc, t0 + lag));
          corr[a].push_back(w0 * std::conj(w1));
        }
      }
    }
  }
  const Estimate p = estimate(power), q = estimate(pseudo), x = estimate(cross);
  EXPECT_NEAR(p.mean.real(), 1.0, 5 * p.se);
  EXPECT_LT(std::abs(q.mean), 5 * q.se);
  EXPECT_LT(std::abs(x.mean), 5 * x.se);
  for (std::size_t a = 0; a < std::size(args); ++a) {
    const auto lag = std::int64_t(std::llround(args[a] / (2 * kPi * fd * detail::kTdlTcSeconds)));
    const double want = std::cyl_bessel_j(0.0, 2 * kPi * fd * double(lag) * detail::kTdlTcSeconds);
    const Estimate r = estimate(corr[a]);
    EXPECT_LT(std::abs(r.mean - cd(want, 0.0)), 5 * r.se + 1e-6)
        << "2 pi fD tau = " << args[a] << ": " << r.mean << " vs J0 = " << want;
  }
}

TEST(TdlProcess, LosRowIsARotatingPhasorAtSevenTenthsFd) {
  const std::uint64_t seed = test::fresh_seed() + 1;
  const double fd = 400.0, fd_tc = fd * detail::kTdlTcSeconds;
  for (int c = 0; c < 50; ++c) {
    const std::int64_t t0 = detail::tdl_symbol_tc(0, c, c % 14);
    const std::int64_t lag = 12345 + 1000 * c;
    const cd w0 = to_cd(detail::tdl_process(seed, c, 0, c % 4, true, fd_tc, t0));
    const cd w1 = to_cd(detail::tdl_process(seed, c, 0, c % 4, true, fd_tc, t0 + lag));
    EXPECT_NEAR(std::abs(w0), 1.0, 1e-6);
    const cd want = std::exp(cd(0, 2 * kPi * 0.7 * fd * double(lag) * detail::kTdlTcSeconds));
    EXPECT_LT(std::abs(w1 / w0 - want), 2e-5) << c;
  }
}

TEST(TdlProcess, SincosTurnsMatchesLibm) {
  for (int i = 0; i <= 4096; ++i) {
    const float u = float(i) / 4096.f;
    float s, c;
    detail::sincos_turns(u, &s, &c);
    EXPECT_NEAR(s, std::sin(2 * kPi * u), 3e-7) << u;
    EXPECT_NEAR(c, std::cos(2 * kPi * u), 3e-7) << u;
  }
}

// E[H(k, t0) H*(k, t)] = sum over NLOS rows P_n J0(2 pi fD tau) + P_LOS exp(-j 2 pi 0.7 fD tau).
void check_time_correlation(TdlModel model) {
  const std::uint64_t seed = test::fresh_seed() + 2 + std::uint64_t(model);
  TdlConfig cfg;
  cfg.model = model;
  cfg.delay_spread_ns = 1000.0;  // many nearly independent subcarriers per realisation
  cfg.max_doppler_hz = 2000.0;
  cfg.n_subcarriers = 256;
  const int reals = 400, n_sc = cfg.n_subcarriers, sym = cfg.symbols_per_slot;
  const auto h = generate(cfg, seed, {0, 3, 1}, reals);
  double p_los = 0.0;
  for (const TdlTap& t : tdl_profile(model, cfg.delay_spread_ns)) p_los += t.los ? t.power : 0.0;
  for (int l = 1; l < sym; l += 3) {
    std::vector<cd> per_real;
    for (int r = 0; r < reals; ++r) {
      cd acc = 0;
      for (int k = 0; k < n_sc; ++k) {
        const cf32 a = h[std::size_t((r * sym + 0) * n_sc + k)];
        const cf32 b = h[std::size_t((r * sym + l) * n_sc + k)];
        acc += to_cd(a) * std::conj(to_cd(b));
      }
      per_real.push_back(acc / double(n_sc));
    }
    const double tau = tdl_symbol_time_s(30, 3, l) - tdl_symbol_time_s(30, 3, 0);
    const double x = 2 * kPi * cfg.max_doppler_hz * tau;
    const cd want = (1.0 - p_los) * std::cyl_bessel_j(0.0, x) +
                    p_los * std::exp(cd(0, -2 * kPi * 0.7 * cfg.max_doppler_hz * tau));
    const Estimate e = estimate(per_real);
    EXPECT_LT(std::abs(e.mean - want), 5 * e.se + 1e-6)
        << tdl_model_name(model) << " symbol " << l << ": " << e.mean << " vs " << want;
  }
}

TEST(TdlChannelStats, TimeCorrelationIsJakes) { check_time_correlation(TdlModel::c); }
TEST(TdlChannelStats, TimeCorrelationWithLosRow) { check_time_correlation(TdlModel::d); }

// E[H(k) H*(k + m)] = sum_n P_n exp(+j 2 pi m df tau_n) for H(f) = sum_n a_n exp(-j 2 pi f tau_n).
TEST(TdlChannelStats, FrequencyCorrelationIsTheProfilesTransform) {
  const std::uint64_t seed = test::fresh_seed() + 10;
  TdlConfig cfg;
  cfg.model = TdlModel::c;
  cfg.delay_spread_ns = 300.0;
  cfg.max_doppler_hz = 100.0;
  cfg.n_subcarriers = 64;
  cfg.symbols_per_slot = 1;
  const int reals = 3000, n_sc = cfg.n_subcarriers;
  const auto h = generate(cfg, seed, {0, 0, 1}, reals);
  const auto taps = tdl_profile(cfg.model, cfg.delay_spread_ns);
  for (int m : {0, 1, 2, 4, 8, 16, 32}) {
    std::vector<cd> per_real;
    for (int r = 0; r < reals; ++r) {
      cd acc = 0;
      for (int k = 0; k + m < n_sc; ++k) {
        acc += to_cd(h[std::size_t(r * n_sc + k)]) *
               std::conj(to_cd(h[std::size_t(r * n_sc + k + m)]));
      }
      per_real.push_back(acc / double(n_sc - m));
    }
    cd want = 0;
    for (const TdlTap& t : taps)
      want += t.power * std::exp(cd(0, 2 * kPi * m * 30e3 * t.delay_ns * 1e-9));
    const Estimate e = estimate(per_real);
    EXPECT_LT(std::abs(e.mean - want), 5 * e.se + 1e-6)
        << "lag " << m << ": " << e.mean << " vs " << want;
  }
}

// E[vec(H) vec(H)^H] = (R_tx kron R_rx + a I) / (1 + a) for every subcarrier and symbol.
void check_kronecker(const TdlConfig& base) {
  const std::uint64_t seed = test::fresh_seed() + 20 + std::uint64_t(base.n_rx * 10 + base.n_tx);
  TdlConfig cfg = base;
  cfg.model = TdlModel::c;
  cfg.delay_spread_ns = 1000.0;
  cfg.n_subcarriers = 128;
  cfg.symbols_per_slot = 1;
  const int reals = 600, n_sc = cfg.n_subcarriers, p = cfg.n_rx * cfg.n_tx;
  const auto h = generate(cfg, seed, {0, 0, 1}, reals);
  const auto r = tdl_spatial_correlation(cfg);
  for (int e = 0; e < p; ++e) {
    for (int f = 0; f < p; ++f) {
      std::vector<cd> per_real;
      for (int c = 0; c < reals; ++c) {
        cd acc = 0;
        for (int k = 0; k < n_sc; ++k) {
          const cf32* m = &h[std::size_t((c * n_sc + k) * p)];
          acc += to_cd(m[e]) * std::conj(to_cd(m[f]));
        }
        per_real.push_back(acc / double(n_sc));
      }
      const Estimate est = estimate(per_real);
      EXPECT_LT(std::abs(est.mean - r[std::size_t(f) * p + e]), 5 * est.se + 1e-4)
          << "(" << e << ", " << f << "): " << est.mean << " vs " << r[std::size_t(f) * p + e];
    }
  }
}

TEST(TdlChannelStats, KroneckerCorrelationUplinkHigh) {
  TdlConfig c;
  c.n_rx = 4;
  c.n_tx = 2;
  c.correlation = TdlCorrelation::high;
  check_kronecker(c);
}

TEST(TdlChannelStats, KroneckerCorrelationDownlinkMedium) {
  TdlConfig c;
  c.n_rx = 2;
  c.n_tx = 2;
  c.link = TdlLink::downlink;
  c.correlation = TdlCorrelation::medium;
  check_kronecker(c);
}

TEST(TdlChannelStats, SqrtCorrelationSquaresToR) {
  TdlConfig c;
  c.n_rx = 4;
  c.n_tx = 4;
  c.correlation = TdlCorrelation::high;
  const TdlChannel ch(c, Backend::cpu());
  const auto& s = ch.sqrt_correlation();
  const auto r = tdl_spatial_correlation(c);
  const int p = 16;
  ASSERT_EQ(s.size(), std::size_t(p * p));
  for (int i = 0; i < p; ++i) {
    for (int j = 0; j < p; ++j) {
      double acc = 0;
      for (int k = 0; k < p; ++k)
        acc += double(s[std::size_t(k) * p + i]) * s[std::size_t(j) * p + k];
      EXPECT_NEAR(acc, r[std::size_t(j) * p + i], 2e-5);
    }
  }
  c.correlation = TdlCorrelation::low;
  EXPECT_TRUE(TdlChannel(c, Backend::cpu()).sqrt_correlation().empty());
}

TEST(TdlChannelStats, BatchSplitAndSeedIndependence) {
  const std::uint64_t seed = test::fresh_seed() + 30;
  TdlConfig cfg = parse_tdl("tdl-b:100:400:medium");
  cfg.n_rx = 2;
  cfg.n_tx = 2;
  cfg.n_subcarriers = 24;
  const std::size_t per = std::size_t(14 * 24 * 4);
  const auto all = generate(cfg, seed, {10, 0, 2}, 6);  // (10,0) (10,1) (11,0) (11,1) (12,0) (12,1)
  const auto tail = generate(cfg, seed, {11, 0, 2}, 4);
  ASSERT_EQ(std::memcmp(all.data() + 2 * per, tail.data(), tail.size() * sizeof(cf32)), 0);
  const auto one = generate(cfg, seed, {11, 1, 1}, 1);
  ASSERT_EQ(std::memcmp(all.data() + 3 * per, one.data(), one.size() * sizeof(cf32)), 0);
  const auto again = generate(cfg, seed, {10, 0, 2}, 6);
  ASSERT_EQ(std::memcmp(all.data(), again.data(), all.size() * sizeof(cf32)), 0);
  const auto other = generate(cfg, seed + 1, {10, 0, 2}, 6);
  EXPECT_NE(std::memcmp(all.data(), other.data(), all.size() * sizeof(cf32)), 0);
  // Slot 1 of realisation 10 is a later time of the same channel, not a copy of slot 0.
  EXPECT_NE(std::memcmp(all.data(), all.data() + per, per * sizeof(cf32)), 0);
}

TEST(TdlChannelStats, ZeroDopplerIsConstantInTime) {
  TdlConfig cfg = parse_tdl("tdl-e:30:0:low");
  cfg.n_subcarriers = 12;
  const auto h = generate(cfg, test::fresh_seed() + 40, {0, 0, 3}, 3);
  const std::size_t sym = 12;
  for (std::size_t m = sym; m < h.size(); ++m) {
    ASSERT_EQ(h[m].re, h[m % sym].re);
    ASSERT_EQ(h[m].im, h[m % sym].im);
  }
}

}  // namespace
}  // namespace mimorx::channel

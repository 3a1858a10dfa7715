// Uncoded BER of the foundation chain (mapper -> channel samples -> demapper / exhaustive ML)
// against closed forms. The channel coefficients and noise come from channel/samples.hpp, the
// same functions FadingPlan, apply_channel and add_awgn evaluate (this test is linked to the ML
// component only, so it calls them directly).
//
// Confidence: the Monte-Carlo BER is the mean of per-symbol (per-vector) error counts, whose
// sample variance gives the standard error, so bits of one symbol may be correlated. Each check
// uses z = 4.42 (two-sided 1e-5); a test has at most 10 checks, so all of them hold jointly with
// probability >= 99.99% when the chain is right (Bonferroni). (With z = 3.29, 99% jointly, a
// fresh seed failed about one CI run in a hundred, as designed, which is too often for a gate.)
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "mimorx/channel/samples.hpp"
#include "mimorx/channel/snr.hpp"
#include "mimorx/detect/ml.hpp"
#include "mimorx/modem/modem.hpp"
#include "support/gpu.hpp"

namespace mimorx {
namespace {

constexpr double kZ = 4.42;

double q_function(double x) { return 0.5 * std::erfc(x / std::sqrt(2.0)); }

struct Estimate {
  double ber = 0, half_width = 0;
  std::int64_t bits = 0, errors = 0;
};

// Accumulates per-unit error counts (unit = symbol or received vector carrying `bits_per_unit`).
struct Counter {
  double sum = 0, sum2 = 0;
  std::int64_t units = 0;
  int bits_per_unit = 1;
  void add(int e) {
    sum += e;
    sum2 += double(e) * e;
    ++units;
  }
  Estimate estimate() const {
    const double n = double(units), mean = sum / n;
    const double var = (sum2 - n * mean * mean) / (n - 1);
    Estimate r;
    r.ber = mean / bits_per_unit;
    r.half_width = kZ * std::sqrt(var / n) / bits_per_unit;
    r.bits = units * bits_per_unit;
    r.errors = std::int64_t(sum);
    return r;
  }
};

void expect_matches(const Estimate& e, double theory, const std::string& what) {
  EXPECT_GT(e.errors, 100) << what << ": too few errors for a meaningful check";
  EXPECT_NEAR(e.ber, theory, e.half_width)
      << what << ": simulated " << e.ber << " (" << e.errors << " errors in " << e.bits
      << " bits), closed form " << theory;
}

// Uncoded AWGN: y = x + n with N0 from Eb/N0 (code rate 1), hard demapping (= ML per symbol).
Estimate simulate_awgn(Modulation mod, double ebn0_db, std::int64_t symbols, std::uint64_t seed) {
  const int m = bits_per_symbol(mod);
  const float n0 = channel::noise_variance_from_ebn0_db(ebn0_db, m, 1.0);
  const std::int64_t batch = 1 << 17;
  Counter counter;
  counter.bits_per_unit = m;
  modem::Mapper mapper(mod, Backend::cpu());
  modem::Demapper demapper({mod, false}, Backend::cpu());
  std::vector<std::uint8_t> bits(std::size_t(batch * m)), hard(bits.size());
  std::vector<cf32> x(static_cast<std::size_t>(batch)), y(x.size());
  for (std::int64_t first = 0; first < symbols; first += batch) {
    for (std::int64_t i = 0; i < batch * m; ++i) {
      bits[std::size_t(i)] = rng::uniform_at(seed, 99, std::uint64_t(first * m + i)) < 0.5f ? 0 : 1;
    }
    mapper.run(View<const std::uint8_t>(bits.data(), batch * m, Memory::host),
               View<cf32>(x.data(), batch, Memory::host));
#pragma omp parallel for schedule(static)
    for (std::int64_t s = 0; s < batch; ++s) {
      y[std::size_t(s)] =
          rounding::cadd(x[std::size_t(s)], channel::noise_sample(seed, first + s, 1, 0, n0));
    }
    demapper.run(View<const cf32>(y.data(), batch, Memory::host), {},
                 View<std::uint8_t>(hard.data(), batch * m, Memory::host), {});
    for (std::int64_t s = 0; s < batch; ++s) {
      int e = 0;
      for (int k = 0; k < m; ++k) e += bits[std::size_t(s * m + k)] != hard[std::size_t(s * m + k)];
      counter.add(e);
    }
  }
  return counter.estimate();
}

TEST(BerAwgnSlow, BpskQpskQam16MatchClosedForms) {
  const std::uint64_t seed = test::fresh_seed();
  for (Modulation mod : {Modulation::bpsk, Modulation::qpsk}) {
    for (double ebn0 : {0.0, 4.0, 7.0}) {
      const double theory = q_function(std::sqrt(2 * std::pow(10.0, ebn0 / 10)));
      const Estimate e = simulate_awgn(mod, ebn0, std::int64_t(1) << (ebn0 > 5 ? 21 : 18), seed);
      expect_matches(e, theory, to_string(mod) + " Eb/N0 " + std::to_string(ebn0));
    }
  }
  for (double ebn0 : {2.0, 6.0, 10.0}) {
    // Exact Gray 16-QAM (per-axis 4-PAM): Pb = 3/4 Q(x) + 1/2 Q(3x) - 1/4 Q(5x), x^2 = 4/5 Eb/N0.
    const double x = std::sqrt(0.8 * std::pow(10.0, ebn0 / 10));
    const double theory = 0.75 * q_function(x) + 0.5 * q_function(3 * x) - 0.25 * q_function(5 * x);
    const Estimate e = simulate_awgn(Modulation::qam16, ebn0, std::int64_t(1) << 20, seed + 1);
    expect_matches(e, theory, "16qam Eb/N0 " + std::to_string(ebn0));
  }
}

// Flat Rayleigh, BPSK, 1 x nr, exhaustive ML (which is maximum-ratio combining for BPSK).
Estimate simulate_rayleigh(int nr, double snr_db, std::int64_t vectors, std::uint64_t seed) {
  const float n0 = channel::noise_variance_from_esn0_db(snr_db);
  const std::int64_t batch = 1 << 16;
  Counter counter;
  detect::MlPlan plan({{1, nr, Modulation::bpsk}, false}, Backend::cpu());
  std::vector<cf32> h(std::size_t(batch * nr)), y(std::size_t(batch * nr));
  std::vector<std::uint8_t> tx(static_cast<std::size_t>(batch)), rx(tx.size());
  std::vector<float> nv{n0};
  for (std::int64_t first = 0; first < vectors; first += batch) {
#pragma omp parallel for schedule(static)
    for (std::int64_t v = 0; v < batch; ++v) {
      const std::int64_t a = first + v;
      tx[std::size_t(v)] = rng::uniform_at(seed, 98, std::uint64_t(a)) < 0.5f ? 0 : 1;
      const cf32 x = map_symbol(Modulation::bpsk, &tx[std::size_t(v)]);
      for (int i = 0; i < nr; ++i) {
        h[std::size_t(v * nr + i)] = channel::fading_entry(seed, a, nr, 1, i, 0);
      }
      for (int i = 0; i < nr; ++i) {
        y[std::size_t(v * nr + i)] = channel::received_entry(
            &h[std::size_t(v * nr)], &x, nr, 1, i, channel::noise_sample(seed, a, nr, i, n0));
      }
    }
    detect::DetectInput in;
    in.h = ConstMatrixBatch<cf32>(h.data(), batch, nr, 1, Memory::host);
    in.y = ConstMatrixBatch<cf32>(y.data(), batch, nr, 1, Memory::host);
    in.noise_var = View<const float>(nv.data(), 1, Memory::host);
    plan.run(in, View<std::uint8_t>(rx.data(), batch, Memory::host), {});
    for (std::int64_t v = 0; v < batch; ++v) counter.add(tx[std::size_t(v)] != rx[std::size_t(v)]);
  }
  return counter.estimate();
}

// L-branch MRC of BPSK in Rayleigh fading, mu = sqrt(g/(1+g)) (Proakis, Digital Communications):
// Pb = ((1-mu)/2)^L sum_{k<L} C(L-1+k, k) ((1+mu)/2)^k.
double mrc_bpsk(int branches, double gamma) {
  const double mu = std::sqrt(gamma / (1 + gamma));
  double sum = 0, binom = 1;
  for (int k = 0; k < branches; ++k) {
    if (k > 0) binom = binom * (branches - 1 + k) / k;
    sum += binom * std::pow((1 + mu) / 2, k);
  }
  return std::pow((1 - mu) / 2, branches) * sum;
}

TEST(BerRayleighSlow, SisoBpskMatchesClosedForm) {
  const std::uint64_t seed = test::fresh_seed() + 2;
  for (double snr : {0.0, 10.0, 20.0}) {
    const double g = std::pow(10.0, snr / 10);
    const double theory = 0.5 * (1 - std::sqrt(g / (1 + g)));
    EXPECT_NEAR(theory, mrc_bpsk(1, g), 1e-15);
    const Estimate e = simulate_rayleigh(1, snr, std::int64_t(1) << (snr > 15 ? 19 : 17), seed);
    expect_matches(e, theory, "1x1 rayleigh bpsk " + std::to_string(snr) + " dB");
  }
}

TEST(BerRayleighSlow, TwoBranchMlHasDiversityTwo) {
  const std::uint64_t seed = test::fresh_seed() + 3;
  const double snr_lo = 10.0, snr_hi = 16.0;
  const Estimate lo = simulate_rayleigh(2, snr_lo, std::int64_t(1) << 18, seed);
  const Estimate hi = simulate_rayleigh(2, snr_hi, std::int64_t(1) << 21, seed + 1);
  expect_matches(lo, mrc_bpsk(2, std::pow(10.0, snr_lo / 10)), "1x2 ML " + std::to_string(snr_lo));
  expect_matches(hi, mrc_bpsk(2, std::pow(10.0, snr_hi / 10)), "1x2 ML " + std::to_string(snr_hi));
  // Diversity order: BER ~ SNR^-2 at high SNR, i.e. slope -2 per decade of SNR (the closed form
  // itself gives -1.92 between 10 and 16 dB).
  const double slope = std::log10(hi.ber / lo.ber) / ((snr_hi - snr_lo) / 10);
  EXPECT_NEAR(slope, -2.0, 0.3) << "BER " << lo.ber << " -> " << hi.ber;
  // A single branch would give about -1 per decade: make sure the test can tell them apart.
  const Estimate siso = simulate_rayleigh(1, snr_hi, std::int64_t(1) << 16, seed + 2);
  EXPECT_GT(siso.ber, 5 * hi.ber);
}

}  // namespace
}  // namespace mimorx

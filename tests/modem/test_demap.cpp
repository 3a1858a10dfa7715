#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "mimorx/modem/demap.hpp"
#include "support/gpu.hpp"

namespace mimorx {
namespace {

constexpr Modulation kAll[] = {Modulation::bpsk, Modulation::qpsk, Modulation::qam16,
                               Modulation::qam64, Modulation::qam256};

// Brute force over the M points, built from map_symbol (the 38.211 formula) alone.
struct Constellation {
  std::vector<cf32> points;
  std::vector<std::uint8_t> bits;  // M x m
  int m;
  explicit Constellation(Modulation mod) : m(bits_per_symbol(mod)) {
    const int size = constellation_size(mod);
    bits.resize(std::size_t(size) * m);
    for (int s = 0; s < size; ++s) {
      for (int k = 0; k < m; ++k) bits[std::size_t(s) * m + k] = (s >> (m - 1 - k)) & 1;
      points.push_back(map_symbol(mod, &bits[std::size_t(s) * m]));
    }
  }
  double dist(cf32 y, int s) const {
    const double dr = double(y.re) - points[s].re, di = double(y.im) - points[s].im;
    return dr * dr + di * di;
  }
};

cf32 random_observation(std::mt19937_64& gen, float spread) {
  std::uniform_real_distribution<float> u(-spread, spread);
  return {u(gen), u(gen)};
}

TEST(Demap, NearestPointAndHardBitsMatchBruteForce) {
  std::mt19937_64 gen(test::fresh_seed());
  for (Modulation mod : kAll) {
    Constellation c(mod);
    for (int t = 0; t < 4000; ++t) {
      const cf32 y = random_observation(gen, 1.6f);
      int best = 0;
      for (int s = 1; s < int(c.points.size()); ++s)
        if (c.dist(y, s) < c.dist(y, best)) best = s;
      const cf32 p = nearest_point(mod, y);
      // Ties have probability zero with continuous y; compare distances to be robust anyway.
      EXPECT_NEAR(norm2(y - p), c.dist(y, best), 1e-5) << to_string(mod);
      std::uint8_t b[8] = {};
      hard_bits(mod, y, b);
      EXPECT_EQ(map_symbol(mod, b), p) << to_string(mod);
    }
  }
}

TEST(Demap, MaxLogLlrsMatchBruteForce) {
  std::mt19937_64 gen(test::fresh_seed());
  std::uniform_real_distribution<float> nv(0.01f, 2.f);
  for (Modulation mod : kAll) {
    Constellation c(mod);
    for (int t = 0; t < 2000; ++t) {
      const cf32 y = random_observation(gen, 1.8f);
      const float n0 = nv(gen);
      float llr[8];
      maxlog_llrs(mod, y, n0, llr);
      for (int k = 0; k < c.m; ++k) {
        double d0 = std::numeric_limits<double>::infinity(), d1 = d0;
        for (int s = 0; s < int(c.points.size()); ++s) {
          double& d = c.bits[std::size_t(s) * c.m + k] ? d1 : d0;
          d = std::min(d, c.dist(y, s));
        }
        const double ref = (d1 - d0) / n0;
        EXPECT_NEAR(llr[k], ref, 1e-4 * std::max(1.0, std::abs(ref)))
            << to_string(mod) << " k=" << k;
      }
    }
  }
}

TEST(Demap, PamLevelsAreAscendingAndConsistentWithMapper) {
  for (Modulation mod : kAll) {
    if (mod == Modulation::bpsk) continue;
    const int levels = axis_levels(mod);
    for (int l = 0; l < levels; ++l) {
      if (l > 0) {
        EXPECT_GT(pam_level_amplitude(mod, l), pam_level_amplitude(mod, l - 1));
      }
      EXPECT_EQ(slice_pam(mod, pam_level_amplitude(mod, l)), l);
      std::uint8_t c[4] = {};
      pam_level_bits(mod, l, c);
      EXPECT_FLOAT_EQ(float(pam_amplitude(axis_bits(mod), c)) * qam_scale(mod),
                      pam_level_amplitude(mod, l));
      for (int l2 = 0; l2 < levels; ++l2) {
        std::uint8_t bits[8] = {};
        symbol_bits_from_levels(mod, l, l2, bits);
        const cf32 p = map_symbol(mod, bits);
        EXPECT_FLOAT_EQ(p.re, pam_level_amplitude(mod, l));
        EXPECT_FLOAT_EQ(p.im, pam_level_amplitude(mod, l2));
      }
    }
    EXPECT_EQ(slice_pam(mod, -1e30f), 0);
    EXPECT_EQ(slice_pam(mod, 1e30f), levels - 1);
    EXPECT_EQ(slice_pam(mod, std::numeric_limits<float>::infinity()), levels - 1);
  }
}

}  // namespace
}  // namespace mimorx

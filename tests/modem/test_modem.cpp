#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "mimorx/config.hpp"
#include "mimorx/modem/demap.hpp"
#include "mimorx/modem/modem.hpp"
#include "support/gpu.hpp"

namespace mimorx::modem {
namespace {

constexpr Modulation kAll[] = {Modulation::bpsk, Modulation::qpsk, Modulation::qam16,
                               Modulation::qam64, Modulation::qam256};

template <class T>
View<T> hv(std::vector<T>& v) {
  return View<T>(v.data(), std::int64_t(v.size()), Memory::host);
}
template <class T>
View<const T> chv(const std::vector<T>& v) {
  return View<const T>(v.data(), std::int64_t(v.size()), Memory::host);
}

std::vector<std::uint8_t> bits_of_index(int s, int m) {
  std::vector<std::uint8_t> b(static_cast<std::size_t>(m));
  for (int k = 0; k < m; ++k) b[std::size_t(k)] = (s >> (m - 1 - k)) & 1;
  return b;
}

cf32 map_one(Modulation mod, const std::vector<std::uint8_t>& b) {
  std::vector<cf32> out(1);
  Mapper(mod, Backend::cpu()).run(chv(b), hv(out));
  return out[0];
}

// TS 38.211 §5.1 formulas written out independently of pam_amplitude().
TEST(Modem, ExactPointsOf38211) {
  const double s2 = 1 / std::sqrt(2.0), s10 = 1 / std::sqrt(10.0), s42 = 1 / std::sqrt(42.0),
               s170 = 1 / std::sqrt(170.0);
  auto near = [](cf32 a, double re, double im) {
    EXPECT_NEAR(a.re, re, 1e-6);
    EXPECT_NEAR(a.im, im, 1e-6);
  };
  near(map_one(Modulation::bpsk, {0}), s2, s2);
  near(map_one(Modulation::bpsk, {1}), -s2, -s2);
  near(map_one(Modulation::qpsk, {0, 1}), s2, -s2);
  near(map_one(Modulation::qpsk, {1, 0}), -s2, s2);
  for (int s = 0; s < 16; ++s) {
    const auto b = bits_of_index(s, 4);
    const double re = (1 - 2 * b[0]) * (2 - (1 - 2 * b[2])) * s10;
    const double im = (1 - 2 * b[1]) * (2 - (1 - 2 * b[3])) * s10;
    near(map_one(Modulation::qam16, b), re, im);
  }
  near(map_one(Modulation::qam16, {0, 0, 0, 0}), s10, s10);
  near(map_one(Modulation::qam16, {1, 1, 1, 1}), -3 * s10, -3 * s10);
  for (int s = 0; s < 64; ++s) {
    const auto b = bits_of_index(s, 6);
    const double re = (1 - 2 * b[0]) * (4 - (1 - 2 * b[2]) * (2 - (1 - 2 * b[4]))) * s42;
    const double im = (1 - 2 * b[1]) * (4 - (1 - 2 * b[3]) * (2 - (1 - 2 * b[5]))) * s42;
    near(map_one(Modulation::qam64, b), re, im);
  }
  for (int s = 0; s < 256; s += 7) {
    const auto b = bits_of_index(s, 8);
    const double re =
        (1 - 2 * b[0]) * (8 - (1 - 2 * b[2]) * (4 - (1 - 2 * b[4]) * (2 - (1 - 2 * b[6])))) * s170;
    const double im =
        (1 - 2 * b[1]) * (8 - (1 - 2 * b[3]) * (4 - (1 - 2 * b[5]) * (2 - (1 - 2 * b[7])))) * s170;
    near(map_one(Modulation::qam256, b), re, im);
  }
}

std::vector<cf32> all_points(Modulation mod) {
  const int m = bits_per_symbol(mod), size = constellation_size(mod);
  std::vector<std::uint8_t> bits;
  for (int s = 0; s < size; ++s) {
    const auto b = bits_of_index(s, m);
    bits.insert(bits.end(), b.begin(), b.end());
  }
  std::vector<cf32> pts(static_cast<std::size_t>(size));
  Mapper(mod, Backend::cpu()).run(chv(bits), hv(pts));
  return pts;
}

TEST(Modem, UnitAverageEnergyAndDistinctPoints) {
  for (Modulation mod : kAll) {
    const auto pts = all_points(mod);
    double e = 0;
    for (const cf32& p : pts) e += double(p.re) * p.re + double(p.im) * p.im;
    EXPECT_NEAR(e / double(pts.size()), 1.0, 1e-6) << to_string(mod);
    for (std::size_t a = 0; a < pts.size(); ++a) {
      for (std::size_t b = a + 1; b < pts.size(); ++b) EXPECT_FALSE(pts[a] == pts[b]);
    }
  }
}

// Gray: every point's nearest neighbours (at the minimum distance 2*scale) differ in one bit.
TEST(Modem, GrayNeighboursDifferInOneBit) {
  for (Modulation mod : kAll) {
    const auto pts = all_points(mod);
    const double dmin = 2 * qam_scale(mod) * (mod == Modulation::bpsk ? std::sqrt(2.0) : 1.0);
    int pairs = 0;
    for (std::size_t a = 0; a < pts.size(); ++a) {
      for (std::size_t b = a + 1; b < pts.size(); ++b) {
        const double d = std::sqrt(double(norm2(pts[a] - pts[b])));
        if (std::abs(d - dmin) > 1e-5) continue;
        ++pairs;
        EXPECT_EQ(__builtin_popcount(unsigned(a ^ b)), 1) << to_string(mod) << " " << a << " " << b;
      }
    }
    const int l = axis_levels(mod);
    EXPECT_EQ(pairs, mod == Modulation::bpsk ? 1 : 2 * l * (l - 1)) << to_string(mod);
  }
}

struct Data {
  std::vector<std::uint8_t> bits;
  std::vector<cf32> noisy;
  std::vector<float> n0;
};

Data random_data(Modulation mod, std::int64_t n, std::mt19937_64& gen, bool per_symbol_n0) {
  const int m = bits_per_symbol(mod);
  Data d;
  d.bits.resize(std::size_t(n * m));
  for (auto& b : d.bits) b = std::uint8_t(gen() & 1);
  std::vector<cf32> x(static_cast<std::size_t>(n));
  Mapper(mod, Backend::cpu()).run(chv(d.bits), hv(x));
  std::normal_distribution<float> g(0.f, 1.f);
  std::uniform_real_distribution<float> u(0.02f, 0.5f);
  d.n0.resize(per_symbol_n0 ? std::size_t(n) : 1);
  for (auto& v : d.n0) v = u(gen);
  d.noisy = x;
  for (std::int64_t s = 0; s < n; ++s) {
    const float sd = std::sqrt(d.n0[per_symbol_n0 ? std::size_t(s) : 0] / 2);
    d.noisy[std::size_t(s)] = x[std::size_t(s)] + cf32{sd * g(gen), sd * g(gen)};
  }
  return d;
}

TEST(Modem, MapThenHardDemapRoundTrips) {
  std::mt19937_64 gen(test::fresh_seed());
  for (Modulation mod : kAll) {
    Data d = random_data(mod, 3000, gen, false);
    std::vector<cf32> x(3000);
    Mapper(mod, Backend::cpu()).run(chv(d.bits), hv(x));
    std::vector<std::uint8_t> back(d.bits.size(), 7);
    Demapper({mod, false}, Backend::cpu()).run(chv(x), {}, hv(back), {});
    EXPECT_EQ(back, d.bits) << to_string(mod);
  }
}

TEST(Modem, SoftDemapperMatchesBruteForceAndSignConvention) {
  std::mt19937_64 gen(test::fresh_seed() + 1);
  for (Modulation mod : kAll) {
    const int m = bits_per_symbol(mod);
    const auto pts = all_points(mod);
    for (bool per_symbol : {false, true}) {
      Data d = random_data(mod, 500, gen, per_symbol);
      std::vector<float> llr(d.bits.size());
      std::vector<std::uint8_t> hard(d.bits.size());
      Demapper({mod, true}, Backend::cpu()).run(chv(d.noisy), chv(d.n0), hv(hard), hv(llr));
      for (std::size_t s = 0; s < d.noisy.size(); ++s) {
        const double n0 = d.n0[per_symbol ? s : 0];
        for (int k = 0; k < m; ++k) {
          double d0 = 1e300, d1 = 1e300;
          for (std::size_t p = 0; p < pts.size(); ++p) {
            const double dr = double(d.noisy[s].re) - pts[p].re,
                         di = double(d.noisy[s].im) - pts[p].im;
            double& t = ((p >> (m - 1 - k)) & 1) ? d1 : d0;
            t = std::min(t, dr * dr + di * di);
          }
          const double ref = (d1 - d0) / n0;
          const float l = llr[s * std::size_t(m) + std::size_t(k)];
          EXPECT_NEAR(l, ref, 1e-4 * std::max(1.0, std::abs(ref)));
          // Positive means bit 0: the bit is 0 exactly when its nearest point is closer.
          EXPECT_EQ(hard[s * std::size_t(m) + std::size_t(k)], l < 0 ? 1 : 0);
          if (std::abs(ref) > 1e-3) {
            EXPECT_EQ(l > 0, d0 < d1);
          }
        }
      }
    }
  }
}

TEST(Modem, SoftLlrSignMatchesTransmittedBitsAtHighSnr) {
  std::mt19937_64 gen(test::fresh_seed() + 2);
  for (Modulation mod : kAll) {
    const int n = 1000, m = bits_per_symbol(mod);
    std::vector<std::uint8_t> bits(std::size_t(n * m));
    for (auto& b : bits) b = std::uint8_t(gen() & 1);
    std::vector<cf32> x(static_cast<std::size_t>(n));
    Mapper(mod, Backend::cpu()).run(chv(bits), hv(x));
    std::vector<float> n0{0.1f}, llr(bits.size());
    Demapper({mod, true}, Backend::cpu()).run(chv(x), chv(n0), {}, hv(llr));
    for (std::size_t i = 0; i < bits.size(); ++i) EXPECT_EQ(llr[i] > 0, bits[i] == 0);
  }
}

TEST(Modem, BadInputThrows) {
  std::vector<std::uint8_t> bits{0, 2, 1, 0};
  std::vector<cf32> x(2);
  EXPECT_THROW(Mapper(Modulation::qpsk, Backend::cpu()).run(chv(bits), hv(x)), InvalidArgument);
  std::vector<cf32> x3(3);
  bits[1] = 1;
  EXPECT_THROW(Mapper(Modulation::qpsk, Backend::cpu()).run(chv(bits), hv(x3)), InvalidArgument);
  EXPECT_THROW(Mapper(static_cast<Modulation>(3), Backend::cpu()), InvalidArgument);
  std::vector<cf32> y{{0.1f, 0.2f}, {std::numeric_limits<float>::quiet_NaN(), 0.f}};
  std::vector<std::uint8_t> out(4);
  std::vector<float> llr(4), n0{0.5f}, bad_n0{-1.f};
  EXPECT_THROW(Demapper({Modulation::qpsk, false}, Backend::cpu()).run(chv(y), {}, hv(out), {}),
               InvalidArgument);
  y[1] = {0.3f, 0.f};
  EXPECT_NO_THROW(
      Demapper({Modulation::qpsk, true}, Backend::cpu()).run(chv(y), chv(n0), {}, hv(llr)));
  EXPECT_THROW(
      Demapper({Modulation::qpsk, true}, Backend::cpu()).run(chv(y), chv(bad_n0), {}, hv(llr)),
      InvalidArgument);
  std::vector<float> short_llr(3);
  EXPECT_THROW(
      Demapper({Modulation::qpsk, true}, Backend::cpu()).run(chv(y), chv(n0), {}, hv(short_llr)),
      InvalidArgument);
  std::vector<float> n0_wrong(3, 1.f);
  EXPECT_THROW(
      Demapper({Modulation::qpsk, true}, Backend::cpu()).run(chv(y), chv(n0_wrong), {}, hv(llr)),
      InvalidArgument);
}

#if MIMORX_HAS_CUDA
template <class T>
Buffer<T> to_device(const std::vector<T>& v) {
  Buffer<T> b = Buffer<T>::device(v.size());
  b.copy_from_host(v.data(), v.size());
  return b;
}
template <class T>
std::vector<T> to_host(const Buffer<T>& b) {
  std::vector<T> v(b.size());
  b.copy_to_host(v.data(), v.size());
  return v;
}

TEST(ModemGpu, MapperAndDemapperMatchCpuBitForBit) {
  MIMORX_REQUIRE_GPU();
  std::mt19937_64 gen(test::fresh_seed() + 3);
  for (Modulation mod : kAll) {
    for (bool per_symbol : {false, true}) {
      Data d = random_data(mod, 20000, gen, per_symbol);
      const std::int64_t n = std::int64_t(d.noisy.size());
      std::vector<cf32> x(d.noisy.size());
      Mapper(mod, Backend::cpu()).run(chv(d.bits), hv(x));
      auto dbits = to_device(d.bits);
      Buffer<cf32> dx = Buffer<cf32>::device(x.size());
      Mapper(mod, Backend::cuda()).run(View<const std::uint8_t>(dbits), View<cf32>(dx));
      EXPECT_EQ(std::memcmp(to_host(dx).data(), x.data(), x.size() * sizeof(cf32)), 0);

      std::vector<float> llr(d.bits.size());
      std::vector<std::uint8_t> hard(d.bits.size()), hard2(d.bits.size());
      Demapper({mod, true}, Backend::cpu()).run(chv(d.noisy), chv(d.n0), hv(hard), hv(llr));
      Demapper({mod, false}, Backend::cpu()).run(chv(d.noisy), {}, hv(hard2), {});
      auto dy = to_device(d.noisy);
      auto dn0 = to_device(d.n0);
      Buffer<float> dllr = Buffer<float>::device(llr.size());
      Buffer<std::uint8_t> dhard = Buffer<std::uint8_t>::device(hard.size());
      Demapper({mod, true}, Backend::cuda())
          .run(View<const cf32>(dy), View<const float>(dn0), View<std::uint8_t>(dhard),
               View<float>(dllr));
      const auto gl = to_host(dllr);
      for (std::int64_t i = 0; i < n * bits_per_symbol(mod); ++i) {
        EXPECT_NEAR(gl[std::size_t(i)], llr[std::size_t(i)],
                    1e-4f * std::max(1.f, std::abs(llr[std::size_t(i)])));
      }
      Demapper({mod, false}, Backend::cuda())
          .run(View<const cf32>(dy), {}, View<std::uint8_t>(dhard), {});
      EXPECT_EQ(to_host(dhard), hard2) << to_string(mod);
    }
  }
}

// Values within a few ulps of every decision boundary (and the one seen to differ, 64-QAM
// v = -0.925820172, when nvcc fused the level amplitude's product into the distance's
// subtraction): GPU hard decisions equal the CPU's.
TEST(ModemGpu, HardDecisionsAtBoundariesMatchCpu) {
  MIMORX_REQUIRE_GPU();
  for (Modulation mod : kAll) {
    if (mod == Modulation::bpsk) continue;
    std::vector<cf32> y;
    for (int l = 0; l + 1 < axis_levels(mod); ++l) {
      float v = 0.5f * (pam_level_amplitude(mod, l) + pam_level_amplitude(mod, l + 1));
      for (int k = 0; k < 8; ++k) v = std::nextafter(v, -1e9f);
      for (int k = 0; k < 17; ++k, v = std::nextafter(v, 1e9f)) y.push_back({v, -v});
    }
    if (mod == Modulation::qam64) y.push_back({-0.925820172f, 0.925820172f});
    std::vector<std::uint8_t> hard(y.size() * std::size_t(bits_per_symbol(mod)));
    Demapper({mod, false}, Backend::cpu()).run(chv(y), {}, hv(hard), {});
    auto dy = to_device(y);
    Buffer<std::uint8_t> dhard = Buffer<std::uint8_t>::device(hard.size());
    Demapper({mod, false}, Backend::cuda())
        .run(View<const cf32>(dy), {}, View<std::uint8_t>(dhard), {});
    EXPECT_EQ(to_host(dhard), hard) << to_string(mod);
  }
}
#endif

}  // namespace
}  // namespace mimorx::modem

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "mimorx/core/rng.hpp"
#include "support/gpu.hpp"

namespace mimorx::rng {
namespace {

// Known-answer vectors of Philox4x32-10 published with Random123 (kat_vectors).
TEST(Philox, KnownAnswers) {
  U32x4 a = philox4x32_10(U32x4{{0, 0, 0, 0}}, 0, 0);
  EXPECT_EQ(a.v[0], 0x6627e8d5u);
  EXPECT_EQ(a.v[1], 0xe169c58du);
  EXPECT_EQ(a.v[2], 0xbc57ac4cu);
  EXPECT_EQ(a.v[3], 0x9b00dbd8u);
  U32x4 b = philox4x32_10(U32x4{{0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu}}, 0xffffffffu,
                          0xffffffffu);
  EXPECT_EQ(b.v[0], 0x408f276du);
  EXPECT_EQ(b.v[1], 0x41c83b0eu);
  EXPECT_EQ(b.v[2], 0xa20bc7c6u);
  EXPECT_EQ(b.v[3], 0x6d5451fdu);
  U32x4 c = philox4x32_10(U32x4{{0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u}}, 0xa4093822u,
                          0x299f31d0u);
  EXPECT_EQ(c.v[0], 0xd16cfe09u);
  EXPECT_EQ(c.v[1], 0x94fdccebu);
  EXPECT_EQ(c.v[2], 0x5001e420u);
  EXPECT_EQ(c.v[3], 0x24126ea1u);
}

// Within a few float ulps of libm's double results, over every octave of the uniforms'
// range and the whole octant.
TEST(Philox, LogAndSinCosAreAccurate) {
  for (float x : {5.9604645e-08f, 1e-7f, 0.001f, 0.3f, 0.5f, 0.70710678f, 0.7071068f, 0.9999f,
                  0.99999994f, 1.0f}) {
    const double ref = std::log(double(x));
    EXPECT_NEAR(detail::log_open01(x), ref, 3e-7 * std::abs(ref) + 1e-12) << x;
  }
  for (int k = 1; k < (1 << 24); k += 997) {
    const float u = float(2 * k + 1) * (1.0f / 16777216.0f);
    const double ref = std::log(double(u));
    ASSERT_NEAR(detail::log_open01(u), ref, 3e-7 * std::abs(ref) + 1e-12) << u;
  }
  for (int i = 0; i <= 1000; ++i) {
    const float t = float(i) * (0.78539816f / 1000.f);
    float s, c;
    detail::sincos_octant(t, &s, &c);
    ASSERT_NEAR(s, std::sin(double(t)), 1.5e-7) << t;
    ASSERT_NEAR(c, std::cos(double(t)), 1.5e-7) << t;
  }
}

// Box-Muller against the exact transform of the same uniforms, in double.
TEST(Philox, BoxMullerMatchesDoubleTransform) {
  for (std::uint32_t k = 0; k < 200000; ++k) {
    const U32x4 b = philox_block(7, 11, k);
    const float u1 = to_uniform(b.v[0]), u2 = to_uniform(b.v[1]);
    float z0, z1;
    box_muller(u1, u2, &z0, &z1);
    const double r = std::sqrt(-2 * std::log(double(u1)));
    const double a = 2 * 3.14159265358979323846 * double(u2);
    ASSERT_NEAR(z0, r * std::cos(a), 5e-7 * r + 1e-7) << u1 << " " << u2;
    ASSERT_NEAR(z1, r * std::sin(a), 5e-7 * r + 1e-7) << u1 << " " << u2;
  }
}

TEST(Philox, UniformInOpenIntervalWithRightMoments) {
  const std::uint64_t seed = test::fresh_seed();
  const int n = 1 << 20;
  Buffer<float> u = Buffer<float>::host(n);
  fill_uniform(Backend::cpu(), seed, 7, View<float>(u));
  double sum = 0, sum2 = 0;
  for (int i = 0; i < n; ++i) {
    ASSERT_GT(u[i], 0.f);
    ASSERT_LT(u[i], 1.f);
    sum += u[i];
    sum2 += double(u[i]) * u[i];
  }
  const double mean = sum / n, var = sum2 / n - mean * mean;
  EXPECT_NEAR(mean, 0.5, 5 * std::sqrt(1.0 / 12 / n));
  EXPECT_NEAR(var, 1.0 / 12, 0.002);
}

TEST(Philox, GaussianMomentsAndTail) {
  const std::uint64_t seed = test::fresh_seed();
  const int n = 1 << 20;
  Buffer<float> z = Buffer<float>::host(n);
  fill_gaussian(Backend::cpu(), seed, 3, View<float>(z));
  double sum = 0, sum2 = 0, sum4 = 0;
  int beyond2 = 0;
  for (int i = 0; i < n; ++i) {
    ASSERT_TRUE(std::isfinite(z[i]));
    sum += z[i];
    sum2 += double(z[i]) * z[i];
    sum4 += std::pow(double(z[i]), 4);
    beyond2 += std::abs(z[i]) > 2.f;
  }
  EXPECT_NEAR(sum / n, 0.0, 5 / std::sqrt(double(n)));
  EXPECT_NEAR(sum2 / n, 1.0, 5 * std::sqrt(2.0 / n));
  EXPECT_NEAR(sum4 / n, 3.0, 5 * std::sqrt(96.0 / n));
  const double p2 = 0.0455002638963584;  // P(|Z| > 2)
  EXPECT_NEAR(double(beyond2) / n, p2, 5 * std::sqrt(p2 * (1 - p2) / n));
}

TEST(Philox, StreamsAndOffsetsAreConsistent) {
  const std::uint64_t seed = test::fresh_seed();
  Buffer<float> all = Buffer<float>::host(1000), part = Buffer<float>::host(300);
  fill_gaussian(Backend::cpu(), seed, 11, View<float>(all));
  fill_gaussian(Backend::cpu(), seed, 11, View<float>(part), 333);
  for (int i = 0; i < 300; ++i) ASSERT_EQ(all[333 + i], part[i]) << i;
  Buffer<float> other = Buffer<float>::host(1000);
  fill_gaussian(Backend::cpu(), seed, 12, View<float>(other));
  int same = 0;
  for (int i = 0; i < 1000; ++i) same += all[i] == other[i];
  EXPECT_LT(same, 5);
}

TEST(PhiloxGpu, BitIdenticalToCpu) {
  MIMORX_REQUIRE_GPU();
  const std::uint64_t seed = test::fresh_seed();
  const int n = (1 << 20) + 3;
  for (int kind = 0; kind < 2; ++kind) {
    Buffer<float> cpu = Buffer<float>::host(n), dev = Buffer<float>::device(n),
                  back = Buffer<float>::host(n);
    dev.fill_bytes(0xFF);
    auto fill = kind == 0 ? fill_uniform : fill_gaussian;
    fill(Backend::cpu(), seed, 5, View<float>(cpu), 17);
    fill(Backend::cuda(0), seed, 5, View<float>(dev), 17);
    back.copy_from(dev);
    ASSERT_EQ(0, std::memcmp(cpu.data(), back.data(), n * sizeof(float))) << "kind " << kind;
  }
}

TEST(PhiloxGpu, WrongResidencyIsRejected) {
  Buffer<float> host = Buffer<float>::host(16);
  if (!cuda_available()) GTEST_SKIP() << "no CUDA GPU available";
  EXPECT_THROW(fill_uniform(Backend::cuda(0), 1, 1, View<float>(host)), InvalidArgument);
}

}  // namespace
}  // namespace mimorx::rng

namespace mimorx::rng {
namespace {
TEST(Rng, GaussianPairIsTwoElementsOfTheStream) {
  const auto seed = test::fresh_seed();
  for (std::uint64_t i = 0; i < 4096; i += 2) {
    float z0 = 0, z1 = 0;
    gaussian_pair_at(seed, 5, i, &z0, &z1);
    ASSERT_EQ(z0, gaussian_at(seed, 5, i)) << i;
    ASSERT_EQ(z1, gaussian_at(seed, 5, i + 1)) << i;
  }
}
}  // namespace
}  // namespace mimorx::rng

// interop::LayoutConverter against plain loops written here (the oracle), on the CPU; the CUDA
// backend against the CPU bit for bit on the same random inputs.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "mimorx/core/error.hpp"
#include "mimorx/interop/layout.hpp"
#include "support/gpu.hpp"

namespace mimorx::interop {
namespace {

template <class T>
View<T> host_view(std::vector<T>& v) {
  return View<T>(v.data(), std::int64_t(v.size()), Memory::host);
}
template <class T>
View<const T> host_cview(const std::vector<T>& v) {
  return View<const T>(v.data(), std::int64_t(v.size()), Memory::host);
}

struct Inputs {
  std::int64_t rows = 7;
  int in_cols = 13, out_cols = 19;
  std::vector<float> bits_f, llrs, base;
  std::vector<std::uint8_t> bits_u8;
  std::vector<int> index, signed_index;
  std::vector<cf32> mats, cov;
};

Inputs make_inputs(std::uint64_t seed) {
  std::mt19937_64 g(seed);
  std::uniform_real_distribution<float> u(-3.f, 3.f);
  Inputs in;
  for (std::int64_t i = 0; i < in.rows * in.in_cols; ++i) {
    in.bits_f.push_back(float(g() & 1));
    in.bits_u8.push_back(std::uint8_t(g() & 1));
    in.llrs.push_back(u(g));
  }
  for (int j = 0; j < in.out_cols; ++j) {
    in.index.push_back(int(g() % in.in_cols));
    in.signed_index.push_back(int(g() % (in.in_cols + 3)) - 3);  // some -1..-3: no source
    in.base.push_back(u(g));
  }
  for (int i = 0; i < 5 * 4 * 3; ++i) in.mats.push_back(cf32(u(g), u(g)));
  for (int i = 0; i < 5 * 4 * 4; ++i) in.cov.push_back(cf32(u(g), u(g)));
  return in;
}

TEST(InteropLayout, BitsFromFloatPadsAndFlagsNonBits) {
  LayoutConverter c(Backend::cpu());
  std::vector<float> in = {0, 1, 1, 0, 1, 0};
  std::vector<std::uint8_t> out(2 * 5, 7);
  std::vector<int> flag = {5};
  c.bits_from_float(host_cview(in), 2, 3, host_view(out), 5, host_view(flag));
  EXPECT_EQ(out, (std::vector<std::uint8_t>{0, 1, 1, 0, 0, 0, 1, 0, 0, 0}));
  EXPECT_EQ(flag[0], 0);
  in[4] = 0.5f;
  c.bits_from_float(host_cview(in), 2, 3, host_view(out), 5, host_view(flag));
  EXPECT_EQ(flag[0], 1);
  in[4] = std::nanf("");
  c.bits_from_float(host_cview(in), 2, 3, host_view(out), 5, host_view(flag));
  EXPECT_EQ(flag[0], 1);
  EXPECT_THROW(c.bits_from_float(host_cview(in), 2, 3, host_view(out), 2, host_view(flag)),
               InvalidArgument);
}

TEST(InteropLayout, GathersEqualTheirDefinition) {
  const Inputs in = make_inputs(test::fresh_seed());
  LayoutConverter c(Backend::cpu());
  std::vector<float> out(in.rows * in.out_cols);
  c.gather_bits_to_float(host_cview(in.bits_u8), in.rows, in.in_cols, host_cview(in.index),
                         host_view(out));
  for (std::int64_t r = 0; r < in.rows; ++r) {
    for (int j = 0; j < in.out_cols; ++j) {
      ASSERT_EQ(out[r * in.out_cols + j], float(in.bits_u8[r * in.in_cols + in.index[j]]));
    }
  }
  c.gather_scaled(host_cview(in.llrs), in.rows, in.in_cols, host_cview(in.signed_index), -1.f,
                  host_cview(in.base), false, host_view(out));
  std::vector<float> twice = out;
  c.gather_scaled(host_cview(in.llrs), in.rows, in.in_cols, host_cview(in.signed_index), -1.f, {},
                  true, host_view(twice));
  for (std::int64_t r = 0; r < in.rows; ++r) {
    for (int j = 0; j < in.out_cols; ++j) {
      const int k = in.signed_index[j];
      const float add = k >= 0 ? -in.llrs[r * in.in_cols + k] : 0.f;
      ASSERT_EQ(out[r * in.out_cols + j], in.base[j] + add);
      ASSERT_EQ(twice[r * in.out_cols + j], out[r * in.out_cols + j] + add);
    }
  }
}

TEST(InteropLayout, BadIndicesAreRefusedOnTheHost) {
  LayoutConverter c(Backend::cpu());
  std::vector<std::uint8_t> in(4, 1);
  std::vector<int> index = {0, 4};
  std::vector<float> out(2);
  EXPECT_THROW(c.gather_bits_to_float(host_cview(in), 1, 4, host_cview(index), host_view(out)),
               InvalidArgument);
  index = {-1, 0};
  EXPECT_THROW(c.gather_bits_to_float(host_cview(in), 1, 4, host_cview(index), host_view(out)),
               InvalidArgument);
  std::vector<float> fin(4, 1.f), base(2, 0.f);
  index = {-1, 4};
  EXPECT_THROW(c.gather_scaled(host_cview(fin), 1, 4, host_cview(index), 1.f, host_cview(base),
                               false, host_view(out)),
               InvalidArgument);
}

TEST(InteropLayout, TransposeScaleAndNoiseEqualTheirDefinition) {
  const Inputs in = make_inputs(test::fresh_seed() + 1);
  LayoutConverter c(Backend::cpu());
  std::vector<cf32> out(in.mats.size());
  c.row_to_column_major(host_cview(in.mats), 5, 4, 3, host_view(out));
  for (int b = 0; b < 5; ++b) {
    for (int i = 0; i < 4; ++i) {
      for (int j = 0; j < 3; ++j) ASSERT_EQ(out[b * 12 + j * 4 + i], in.mats[b * 12 + i * 3 + j]);
    }
  }
  std::vector<float> neg(in.llrs.size());
  c.scale(host_cview(in.llrs), -1.f, host_view(neg));
  for (std::size_t i = 0; i < neg.size(); ++i) ASSERT_EQ(neg[i], -in.llrs[i]);
  std::vector<float> n0(5);
  c.noise_from_covariance(host_cview(in.cov), 5, 4, 16, 5, host_view(n0));
  for (int b = 0; b < 5; ++b) {
    float s = 0.f;
    for (int i = 0; i < 4; ++i) s += in.cov[b * 16 + i * 5].re;
    ASSERT_EQ(n0[b], s / 4.f);
  }
  // One matrix for the whole batch (a broadcast covariance: batch stride 0).
  c.noise_from_covariance(host_cview(in.cov), 5, 4, 0, 5, host_view(n0));
  for (int b = 1; b < 5; ++b) ASSERT_EQ(n0[b], n0[0]);
  EXPECT_THROW(c.noise_from_covariance(host_cview(in.cov), 5, 4, 20, 5, host_view(n0)),
               InvalidArgument);
}

#if MIMORX_HAS_CUDA
template <class T>
Buffer<T> on_device(const std::vector<T>& v) {
  Buffer<T> b = Buffer<T>::device(v.size());
  b.copy_from_host(v.data(), v.size());
  return b;
}
template <class T>
std::vector<T> on_host(const Buffer<T>& b) {
  std::vector<T> v(b.size());
  b.copy_to_host(v.data(), v.size());
  return v;
}
#endif

TEST(InteropLayoutGpu, EveryConversionEqualsTheCpu) {
  MIMORX_REQUIRE_GPU();
#if MIMORX_HAS_CUDA
  Inputs in = make_inputs(test::fresh_seed() + 2);
  in.bits_f[3] = 0.25f;
  LayoutConverter cpu(Backend::cpu()), gpu(Backend::cuda(0));
  const std::int64_t n_out = in.rows * in.out_cols;

  std::vector<std::uint8_t> u8(n_out);
  std::vector<int> flag(1);
  cpu.bits_from_float(host_cview(in.bits_f), in.rows, in.in_cols, host_view(u8), in.out_cols,
                      host_view(flag));
  auto d_bits = on_device(in.bits_f);
  Buffer<std::uint8_t> d_u8 = Buffer<std::uint8_t>::device(n_out);
  Buffer<int> d_flag = Buffer<int>::device(1);
  gpu.bits_from_float(d_bits, in.rows, in.in_cols, d_u8, in.out_cols, d_flag);
  EXPECT_EQ(on_host(d_u8), u8);
  EXPECT_EQ(on_host(d_flag), flag);

  std::vector<float> g(n_out);
  cpu.gather_bits_to_float(host_cview(in.bits_u8), in.rows, in.in_cols, host_cview(in.index),
                           host_view(g));
  auto d_in8 = on_device(in.bits_u8);
  auto d_index = on_device(in.index);
  Buffer<float> d_g = Buffer<float>::device(n_out);
  gpu.gather_bits_to_float(d_in8, in.rows, in.in_cols, d_index, d_g);
  EXPECT_EQ(on_host(d_g), g);

  cpu.gather_scaled(host_cview(in.llrs), in.rows, in.in_cols, host_cview(in.signed_index), -1.f,
                    host_cview(in.base), false, host_view(g));
  cpu.gather_scaled(host_cview(in.llrs), in.rows, in.in_cols, host_cview(in.signed_index), 0.5f, {},
                    true, host_view(g));
  auto d_llrs = on_device(in.llrs);
  auto d_sindex = on_device(in.signed_index);
  auto d_base = on_device(in.base);
  gpu.gather_scaled(d_llrs, in.rows, in.in_cols, d_sindex, -1.f, d_base, false, d_g);
  gpu.gather_scaled(d_llrs, in.rows, in.in_cols, d_sindex, 0.5f, {}, true, d_g);
  EXPECT_EQ(on_host(d_g), g);

  std::vector<cf32> t(in.mats.size());
  cpu.row_to_column_major(host_cview(in.mats), 5, 4, 3, host_view(t));
  auto d_mats = on_device(in.mats);
  Buffer<cf32> d_t = Buffer<cf32>::device(t.size());
  gpu.row_to_column_major(d_mats, 5, 4, 3, d_t);
  const auto t_gpu = on_host(d_t);
  for (std::size_t i = 0; i < t.size(); ++i) ASSERT_EQ(t_gpu[i], t[i]);

  std::vector<float> n0(5);
  cpu.noise_from_covariance(host_cview(in.cov), 5, 4, 16, 5, host_view(n0));
  auto d_cov = on_device(in.cov);
  Buffer<float> d_n0 = Buffer<float>::device(5);
  gpu.noise_from_covariance(d_cov, 5, 4, 16, 5, d_n0);
  EXPECT_EQ(on_host(d_n0), n0);

  std::vector<float> neg(in.llrs.size());
  cpu.scale(host_cview(in.llrs), -1.f, host_view(neg));
  gpu.scale(d_llrs, -1.f, d_llrs);
  EXPECT_EQ(on_host(d_llrs), neg);
#endif
}

}  // namespace
}  // namespace mimorx::interop

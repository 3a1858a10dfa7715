// LDPC encoder: every (BG, Z) pair of TS 38.212 against the parity-check matrix itself.
// H has full rank on its parity columns, so "systematic and H c = 0" determines the codeword:
// passing is_codeword() with the info bits in place is a complete oracle.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include "mimorx/core/error.hpp"
#include "mimorx/ldpc/encoder.hpp"
#include "support/gpu.hpp"

namespace mimorx::ldpc {
namespace {

std::vector<std::uint8_t> random_bits(std::mt19937_64& rng, std::size_t n) {
  std::vector<std::uint8_t> b(n);
  for (auto& x : b) x = std::uint8_t(rng() & 1);
  return b;
}

TEST(Encoder, EveryBaseGraphAndLiftingSizeGivesCodewords) {
  std::mt19937_64 rng(test::fresh_seed());
  int pairs = 0;
  for (BaseGraph bg : {BaseGraph::bg1, BaseGraph::bg2}) {
    for (int z : lifting_sizes()) {
      ++pairs;
      EncoderPlan plan(bg, z, Backend::cpu());
      ASSERT_EQ(plan.k(), (bg == BaseGraph::bg1 ? 22 : 10) * z);
      ASSERT_EQ(plan.n(), (bg == BaseGraph::bg1 ? 68 : 52) * z);
      const int num = 3;
      auto info = random_bits(rng, std::size_t(num) * plan.k());
      std::vector<std::uint8_t> cw(std::size_t(num) * plan.n(), 0xEE);
      plan.encode(View<const std::uint8_t>(info.data(), info.size(), Memory::host), num,
                  View<std::uint8_t>(cw.data(), cw.size(), Memory::host));
      for (int w = 0; w < num; ++w) {
        const std::uint8_t* c = cw.data() + std::size_t(w) * plan.n();
        for (int j = 0; j < plan.k(); ++j) {
          ASSERT_EQ(c[j], info[std::size_t(w) * plan.k() + j]) << "bg" << int(bg) << " z" << z;
        }
        for (int j = 0; j < plan.n(); ++j) ASSERT_LE(c[j], 1) << "bit " << j;
        ASSERT_TRUE(plan.graph().is_codeword(c)) << "bg" << int(bg) << " z=" << z << " word " << w;
      }
      // A single flipped bit must violate some check: sample positions in every column block.
      std::vector<std::uint8_t> c(cw.begin(), cw.begin() + plan.n());
      for (int col = 0; col < plan.graph().base_cols(); ++col) {
        const int pos = col * z + int(rng() % unsigned(z));
        c[pos] ^= 1;
        ASSERT_FALSE(plan.graph().is_codeword(c.data()))
            << "bg" << int(bg) << " z" << z << " bit " << pos;
        c[pos] ^= 1;
      }
    }
  }
  EXPECT_EQ(pairs, 102);
}

TEST(Encoder, EverySingleBitFlipIsDetectedSmallZ) {
  std::mt19937_64 rng(test::fresh_seed());
  for (BaseGraph bg : {BaseGraph::bg1, BaseGraph::bg2}) {
    for (int z : {2, 7, 15}) {
      EncoderPlan plan(bg, z, Backend::cpu());
      auto info = random_bits(rng, plan.k());
      std::vector<std::uint8_t> c(plan.n());
      plan.encode(View<const std::uint8_t>(info.data(), info.size(), Memory::host), 1,
                  View<std::uint8_t>(c.data(), c.size(), Memory::host));
      ASSERT_TRUE(plan.graph().is_codeword(c.data()));
      for (int j = 0; j < plan.n(); ++j) {
        c[j] ^= 1;
        ASSERT_FALSE(plan.graph().is_codeword(c.data()))
            << "bg" << int(bg) << " z" << z << " bit " << j;
        c[j] ^= 1;
      }
    }
  }
}

TEST(Encoder, LinearOverGf2) {
  std::mt19937_64 rng(test::fresh_seed());
  EncoderPlan plan(BaseGraph::bg2, 52, Backend::cpu());
  auto a = random_bits(rng, plan.k()), b = random_bits(rng, plan.k()), s = a;
  for (int j = 0; j < plan.k(); ++j) s[j] = a[j] ^ b[j];
  std::vector<std::uint8_t> ca(plan.n()), cb(plan.n()), cs(plan.n());
  auto enc = [&](std::vector<std::uint8_t>& in, std::vector<std::uint8_t>& out) {
    plan.encode(View<const std::uint8_t>(in.data(), in.size(), Memory::host), 1,
                View<std::uint8_t>(out.data(), out.size(), Memory::host));
  };
  enc(a, ca);
  enc(b, cb);
  enc(s, cs);
  for (int j = 0; j < plan.n(); ++j) ASSERT_EQ(cs[j], ca[j] ^ cb[j]) << j;
}

TEST(Encoder, BadInput) {
  EXPECT_THROW(EncoderPlan(BaseGraph::bg1, 17, Backend::cpu()), InvalidArgument);
  EncoderPlan plan(BaseGraph::bg1, 8, Backend::cpu());
  std::vector<std::uint8_t> info(plan.k()), cw(plan.n());
  EXPECT_THROW(plan.encode(View<const std::uint8_t>(info.data(), plan.k() - 1, Memory::host), 1,
                           View<std::uint8_t>(cw.data(), cw.size(), Memory::host)),
               InvalidArgument);
  EXPECT_THROW(plan.encode(View<const std::uint8_t>(info.data(), info.size(), Memory::host), 1,
                           View<std::uint8_t>(cw.data(), plan.n() - 1, Memory::host)),
               InvalidArgument);
  EXPECT_THROW(plan.encode(View<const std::uint8_t>(info.data(), info.size(), Memory::device), 1,
                           View<std::uint8_t>(cw.data(), cw.size(), Memory::host)),
               InvalidArgument);
}

TEST(EncoderGpu, MatchesCpuBitExact) {
  MIMORX_REQUIRE_GPU();
  std::mt19937_64 rng(test::fresh_seed());
  for (BaseGraph bg : {BaseGraph::bg1, BaseGraph::bg2}) {
    for (int z : lifting_sizes()) {
      const int num = 1 + int(rng() % 40);
      EncoderPlan cpu(bg, z, Backend::cpu());
      EncoderPlan gpu(bg, z, Backend::cuda());
      auto info = random_bits(rng, std::size_t(num) * cpu.k());
      std::vector<std::uint8_t> want(std::size_t(num) * cpu.n());
      cpu.encode(View<const std::uint8_t>(info.data(), info.size(), Memory::host), num,
                 View<std::uint8_t>(want.data(), want.size(), Memory::host));
      auto d_info = Buffer<std::uint8_t>::device(info.size());
      auto d_cw = Buffer<std::uint8_t>::device(want.size());
      d_info.copy_from_host(info.data(), info.size());
      d_cw.fill_bytes(0xFF);
      gpu.encode(d_info, num, d_cw);
      std::vector<std::uint8_t> got(want.size());
      d_cw.copy_to_host(got.data(), got.size());
      ASSERT_EQ(got, want) << "bg" << int(bg) << " z=" << z << " num=" << num;
      // An output that is not 4-byte aligned takes the byte-store path.
      auto d_odd = Buffer<std::uint8_t>::device(want.size() + 1);
      gpu.encode(d_info, num,
                 View<std::uint8_t>(d_odd.data() + 1, std::int64_t(want.size()), Memory::device));
      std::vector<std::uint8_t> odd(want.size() + 1);
      d_odd.copy_to_host(odd.data(), odd.size());
      ASSERT_TRUE(std::equal(want.begin(), want.end(), odd.begin() + 1)) << "unaligned, z=" << z;
    }
  }
}

}  // namespace
}  // namespace mimorx::ldpc

// The CUDA kernel's bit-packed algorithm, emulated on the host, against the byte encoder.
#include "ldpc/encoder_packed.hpp"
namespace mimorx::ldpc {
namespace {
TEST(Encoder, PackedKernelAlgorithmMatchesOnHost) {
  std::mt19937_64 rng(test::fresh_seed());
  for (BaseGraph bg : {BaseGraph::bg1, BaseGraph::bg2}) {
    for (int z : lifting_sizes()) {
      EncoderPlan plan(bg, z, Backend::cpu());
      auto info = random_bits(rng, plan.k());
      std::vector<std::uint8_t> want(plan.n()), got(plan.n(), 7);
      plan.encode(View<const std::uint8_t>(info.data(), info.size(), Memory::host), 1,
                  View<std::uint8_t>(want.data(), want.size(), Memory::host));
      detail::encode_packed_host(plan.tables(), info.data(), got.data());
      ASSERT_EQ(got, want) << "bg" << int(bg) << " z=" << z;
    }
  }
}
}  // namespace
}  // namespace mimorx::ldpc

// Base-graph selection and code-block segmentation (TS 38.212 §7.2.2, §5.2.2).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include "mimorx/core/error.hpp"
#include "mimorx/ldpc/segmentation.hpp"
#include "support/gpu.hpp"

namespace mimorx::ldpc {
namespace {

TEST(Segmentation, BaseGraphSelection) {
  EXPECT_EQ(select_base_graph(292, 0.9), BaseGraph::bg2);
  EXPECT_EQ(select_base_graph(293, 0.9), BaseGraph::bg1);
  EXPECT_EQ(select_base_graph(3824, 0.67), BaseGraph::bg2);
  EXPECT_EQ(select_base_graph(3824, 0.68), BaseGraph::bg1);
  EXPECT_EQ(select_base_graph(3825, 0.5), BaseGraph::bg1);
  EXPECT_EQ(select_base_graph(100000, 0.25), BaseGraph::bg2);
  EXPECT_EQ(tb_crc_type(3824), CrcType::crc16);
  EXPECT_EQ(tb_crc_type(3825), CrcType::crc24a);
}

TEST(Segmentation, WorkedValues) {
  // TBS 8424: B = 8448 = Kcb, one block, Zc = 384, no filler.
  auto s = segment(8424, BaseGraph::bg1);
  EXPECT_EQ(s.c, 1);
  EXPECT_EQ(s.l_cb, 0);
  EXPECT_EQ(s.k_prime, 8448);
  EXPECT_EQ(s.zc, 384);
  EXPECT_EQ(s.f, 0);
  // TBS 8448: B = 8472 > 8448 -> C = ceil(8472 / 8424) = 2, B' = 8520, K' = 4260,
  // 22 Zc >= 4260 -> Zc = 208, K = 4576, F = 316.
  s = segment(8448, BaseGraph::bg1);
  EXPECT_EQ(s.c, 2);
  EXPECT_EQ(s.b_prime, 8520);
  EXPECT_EQ(s.k_prime, 4260);
  EXPECT_EQ(s.zc, 208);
  EXPECT_EQ(s.ils, 6);  // 208 = 13 x 16
  EXPECT_EQ(s.k, 4576);
  EXPECT_EQ(s.f, 316);
  // BG2 boundary: TBS 3824 + CRC16 = 3840 = Kcb -> one block, Kb = 10, Zc = 384.
  s = segment(3824, BaseGraph::bg2);
  EXPECT_EQ(s.l_tb, 16);
  EXPECT_EQ(s.c, 1);
  EXPECT_EQ(s.kb, 10);
  EXPECT_EQ(s.zc, 384);
  // TBS 3840 (BG2 at R <= 0.25): CRC24A, B = 3864 -> C = 2, K' = 1956, Zc = 208, F = 124.
  s = segment(3840, BaseGraph::bg2);
  EXPECT_EQ(s.l_tb, 24);
  EXPECT_EQ(s.c, 2);
  EXPECT_EQ(s.k_prime, 1956);
  EXPECT_EQ(s.zc, 208);
  EXPECT_EQ(s.k, 2080);
  EXPECT_EQ(s.f, 124);
  // Small TBS: 100 + 16 = 116 <= 192 -> Kb = 6, 6 Zc >= 116 -> Zc = 20, K = 200.
  s = segment(100, BaseGraph::bg2);
  EXPECT_EQ(s.kb, 6);
  EXPECT_EQ(s.zc, 20);
  EXPECT_EQ(s.k, 200);
  EXPECT_EQ(s.f, 84);
  // B = 516 in (192, 560] -> Kb = 8, 8 Zc >= 516 -> Zc = 72.
  s = segment(500, BaseGraph::bg2);
  EXPECT_EQ(s.kb, 8);
  EXPECT_EQ(s.zc, 72);
  // B = 600 in (560, 640] -> Kb = 9, 9 Zc >= 600 -> Zc = 72 (64 x 9 = 576 < 600).
  s = segment(584, BaseGraph::bg2);
  EXPECT_EQ(s.kb, 9);
  EXPECT_EQ(s.zc, 72);
}

TEST(Segmentation, InvariantsOverTs38214Sizes) {
  std::mt19937_64 rng(test::fresh_seed());
  const auto& z = lifting_sizes();
  for (int trial = 0; trial < 2000; ++trial) {
    const BaseGraph bg = trial % 2 ? BaseGraph::bg1 : BaseGraph::bg2;
    const int a0 = 24 + int(rng() % 200000);
    int a = a0;
    if (a > 3824) {
      // TS 38.214 §5.1.3.2 form: TBS = 8 C ceil((N + 24) / (8 C)) - 24.
      const int kcb = bg == BaseGraph::bg1 ? 8448 : 3840;
      const int c = (a + 24 + kcb - 25) / (kcb - 24);
      a = 8 * c * ((a + 24 + 8 * c - 1) / (8 * c)) - 24;
    }
    const Segmentation s = segment(a, bg);
    ASSERT_EQ(s.c * s.k_prime, s.b + s.c * s.l_cb) << "tbs " << a;
    ASSERT_LE(s.k_prime, s.kcb);
    ASSERT_GE(s.kb * s.zc, s.k_prime);
    const auto it = std::find(z.begin(), z.end(), s.zc);
    ASSERT_TRUE(it != z.end());
    if (it != z.begin()) {
      ASSERT_LT(s.kb * *(it - 1), s.k_prime) << "Zc not minimal, tbs " << a;
    }
    ASSERT_EQ(s.f, s.k - s.k_prime);
    ASSERT_GE(s.f, 0);
    ASSERT_EQ(s.c > 1, s.b > s.kcb);
  }
}

TEST(Segmentation, BitsCarryCrcAndFiller) {
  std::mt19937_64 rng(test::fresh_seed());
  const Segmentation s = segment(8448, BaseGraph::bg1);
  std::vector<std::uint8_t> tb(s.a);
  for (auto& b : tb) b = rng() & 1;
  const auto with = crc_attach(CrcType::crc24a, tb);
  const auto blocks = segment_bits(s, with);
  ASSERT_EQ(blocks.size(), std::size_t(s.c) * s.k);
  for (int r = 0; r < s.c; ++r) {
    const std::uint8_t* blk = blocks.data() + std::size_t(r) * s.k;
    EXPECT_TRUE(crc_check(CrcType::crc24b, std::span<const std::uint8_t>(blk, s.k_prime)));
    for (int i = 0; i < s.k_prime - 24; ++i) ASSERT_EQ(blk[i], with[r * (s.k_prime - 24) + i]);
    for (int i = s.k_prime; i < s.k; ++i) ASSERT_EQ(blk[i], 0);
  }
}

TEST(Segmentation, BadInput) {
  EXPECT_THROW(segment(0, BaseGraph::bg1), InvalidArgument);
  EXPECT_THROW(segment(kMaxTbs + 1, BaseGraph::bg1), InvalidArgument);
  EXPECT_THROW(segment(8449, BaseGraph::bg1), InvalidArgument);  // B' = 8521 not a multiple of 2
  EXPECT_THROW(select_base_graph(100, 1.2), InvalidArgument);
}

}  // namespace
}  // namespace mimorx::ldpc

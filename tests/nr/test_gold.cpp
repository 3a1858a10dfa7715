// The Gold sequence of TS 38.211 §5.2.1 against a direct transcription of its definition, and
// the DM-RS c_init of §6.4.1.1.1.1 / §7.4.1.1.1 against hand-worked values.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

#include "mimorx/core/error.hpp"
#include "mimorx/nr/dmrs.hpp"
#include "mimorx/nr/gold.hpp"

namespace mimorx::nr {
namespace {

// The definition written out with whole arrays: x1(0) = 1, x1(1..30) = 0, x2(i) = bit i of
// c_init, the two recursions, c(n) = x1(n + 1600) + x2(n + 1600) mod 2.
std::vector<std::uint8_t> reference_gold(std::uint32_t c_init, int length) {
  const int nc = 1600, total = nc + length + 31;
  std::vector<int> x1(std::size_t(total), 0), x2(std::size_t(total), 0);
  x1[0] = 1;
  for (int i = 0; i < 31; ++i) x2[std::size_t(i)] = int((c_init >> i) & 1u);
  for (int n = 0; n + 31 < total; ++n) {
    x1[std::size_t(n + 31)] = (x1[std::size_t(n + 3)] + x1[std::size_t(n)]) % 2;
    x2[std::size_t(n + 31)] = (x2[std::size_t(n + 3)] + x2[std::size_t(n + 2)] +
                               x2[std::size_t(n + 1)] + x2[std::size_t(n)]) %
                              2;
  }
  std::vector<std::uint8_t> c(static_cast<std::size_t>(length));
  for (int n = 0; n < length; ++n) {
    c[std::size_t(n)] = std::uint8_t((x1[std::size_t(n + nc)] + x2[std::size_t(n + nc)]) % 2);
  }
  return c;
}

TEST(Gold, MatchesTheDefinition) {
  std::mt19937 rng(7);
  std::vector<std::uint32_t> seeds = {0u, 1u, 0x7fffffffu, 8257557u};
  for (int i = 0; i < 40; ++i) seeds.push_back(rng() & 0x7fffffffu);
  for (std::uint32_t s : seeds) {
    for (int length : {0, 1, 31, 32, 1000, 3300}) {
      ASSERT_EQ(gold_sequence(s, length), reference_gold(s, length)) << s << " " << length;
    }
  }
}

TEST(Gold, PrefixesAgreeAndSeedsDiffer) {
  const auto long_seq = gold_sequence(12345, 500);
  const auto short_seq = gold_sequence(12345, 100);
  EXPECT_TRUE(std::equal(short_seq.begin(), short_seq.end(), long_seq.begin()));
  EXPECT_NE(gold_sequence(12345, 100), gold_sequence(12346, 100));
  int ones = 0;
  for (auto b : gold_sequence(98765, 10000)) ones += b;
  EXPECT_NEAR(ones, 5000, 300);  // balanced: 6 sigma of a fair coin
}

TEST(Gold, RejectsSeedsOf32Bits) {
  EXPECT_THROW(gold_sequence(0x80000000u, 10), InvalidArgument);
  EXPECT_THROW(gold_sequence(1, -1), InvalidArgument);
}

TEST(DmrsCinit, HandWorkedValues) {
  // Slot 0, symbol 2, N_ID 10, n_SCID 1: 2^17 (0 + 2 + 1)(2 * 10 + 1) + 2 * 10 + 1 =
  // 131072 * 63 + 21 = 8257557.
  EXPECT_EQ(dmrs_c_init(0, 2, 10, 1), 8257557u);
  // Slot 0, symbol 0, N_ID 0, n_SCID 0: 2^17 * 1 * 1 = 131072.
  EXPECT_EQ(dmrs_c_init(0, 0, 0, 0), 131072u);
  // Slot 19, symbol 13, N_ID 65535, n_SCID 1: (14 * 19 + 14)(131071) = 36699880;
  // 36699880 * 2^17 = 4810326671360 = 2239 * 2^31 + 2110783488; + 131070 + 1 = 2110914559.
  EXPECT_EQ(dmrs_c_init(19, 13, 65535, 1), 2110914559u);
  EXPECT_THROW(dmrs_c_init(0, 14, 0, 0), InvalidArgument);
  EXPECT_THROW(dmrs_c_init(0, 0, 65536, 0), InvalidArgument);
  EXPECT_THROW(dmrs_c_init(0, 0, 0, 2), InvalidArgument);
}

}  // namespace
}  // namespace mimorx::nr

// CRCs of TS 38.212 §5.1 against published check values, hand-derived remainders, an
// independent long-division oracle, and single-bit-error detection.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "mimorx/core/error.hpp"
#include "mimorx/ldpc/crc.hpp"
#include "support/gpu.hpp"

namespace mimorx::ldpc {
namespace {

const CrcType kAll[] = {CrcType::crc24a, CrcType::crc24b, CrcType::crc24c,
                        CrcType::crc16,  CrcType::crc11,  CrcType::crc6};

// Remainder of m(D) D^L mod g(D) by schoolbook long division on a coefficient array.
std::uint32_t long_division(CrcType t, const std::vector<std::uint8_t>& m) {
  const int l = crc_length(t);
  std::vector<std::uint8_t> g(l + 1);  // g[0] = D^L coefficient ... g[L] = D^0
  g[0] = 1;
  for (int i = 0; i < l; ++i) g[l - i] = (crc_polynomial(t) >> i) & 1;
  std::vector<std::uint8_t> a(m);
  a.resize(m.size() + l, 0);
  for (std::size_t i = 0; i < m.size(); ++i) {
    if (!a[i]) continue;
    for (int j = 0; j <= l; ++j) a[i + j] ^= g[j];
  }
  std::uint32_t r = 0;
  for (int i = 0; i < l; ++i) r = (r << 1) | a[m.size() + i];
  return r;
}

TEST(Crc, PublishedCheckValues) {
  const std::string s = "123456789";
  std::span<const std::uint8_t> msg(reinterpret_cast<const std::uint8_t*>(s.data()), s.size());
  // Catalogue of parametrised CRC algorithms (reveng): CRC-24/LTE-A, CRC-24/LTE-B use the same
  // generators as 38.212's CRC24A / CRC24B with init 0, no reflection, no final XOR;
  // CRC-16/XMODEM is gCRC16 with the same convention.
  EXPECT_EQ(crc_compute_bytes(CrcType::crc24a, msg), 0xCDE703u);
  EXPECT_EQ(crc_compute_bytes(CrcType::crc24b, msg), 0x23EF52u);
  EXPECT_EQ(crc_compute_bytes(CrcType::crc16, msg), 0x31C3u);
}

TEST(Crc, HandDerivedRemainders) {
  for (CrcType t : kAll) {
    // "1": D^L mod g = g - D^L, the polynomial itself.
    EXPECT_EQ(crc_compute(t, std::vector<std::uint8_t>{1}), crc_polynomial(t)) << crc_name(t);
    EXPECT_EQ(crc_compute(t, std::vector<std::uint8_t>{0, 0, 0}), 0u) << crc_name(t);
  }
  // CRC6, "10": D^7 = D (D^5 + 1) = D^6 + D = D^5 + D + 1 -> 0b100011.
  EXPECT_EQ(crc_compute(CrcType::crc6, std::vector<std::uint8_t>{1, 0}), 0x23u);
  // CRC11, "10": D^12 = D (D^10 + D^9 + D^5 + 1) = D^11 + D^10 + D^6 + D
  //   = (D^10 + D^9 + D^5 + 1) + D^10 + D^6 + D = D^9 + D^6 + D^5 + D + 1.
  EXPECT_EQ(crc_compute(CrcType::crc11, std::vector<std::uint8_t>{1, 0}), 0x263u);
}

TEST(Crc, MatchesLongDivisionAndAttachChecks) {
  std::mt19937_64 rng(test::fresh_seed());
  for (CrcType t : kAll) {
    for (int trial = 0; trial < 20; ++trial) {
      std::vector<std::uint8_t> m(1 + rng() % 3000);
      for (auto& b : m) b = rng() & 1;
      ASSERT_EQ(crc_compute(t, m), long_division(t, m)) << crc_name(t) << " len " << m.size();
      const auto with = crc_attach(t, m);
      ASSERT_EQ(with.size(), m.size() + crc_length(t));
      ASSERT_TRUE(crc_check(t, with)) << crc_name(t);
    }
  }
}

TEST(Crc, DetectsEverySingleBitError) {
  std::mt19937_64 rng(test::fresh_seed());
  for (CrcType t : kAll) {
    std::vector<std::uint8_t> m(500);
    for (auto& b : m) b = rng() & 1;
    auto with = crc_attach(t, m);
    for (std::size_t i = 0; i < with.size(); ++i) {
      with[i] ^= 1;
      ASSERT_FALSE(crc_check(t, with)) << crc_name(t) << " bit " << i;
      with[i] ^= 1;
    }
  }
}

TEST(Crc, BadInput) {
  EXPECT_THROW(crc_check(CrcType::crc24a, std::vector<std::uint8_t>(10)), InvalidArgument);
}

}  // namespace
}  // namespace mimorx::ldpc

// MCS index tables 1..3 of TS 38.214 §5.1.3.1.
#include <gtest/gtest.h>

#include <cmath>

#include "mimorx/core/error.hpp"
#include "mimorx/nr/mcs.hpp"

namespace mimorx::nr {
namespace {

constexpr McsTable kTables[] = {McsTable::qam64, McsTable::qam256, McsTable::qam64_low_se};

TEST(Mcs, SpectralEfficiencyIsQmTimesRateAsPrinted) {
  // The tables print Qm R rounded half up to 4 decimals; a mistyped rate or Qm breaks this.
  for (McsTable t : kTables) {
    for (int m = 0; m <= max_mcs(t); ++m) {
      const McsEntry e = mcs_entry(t, m);
      ASSERT_FALSE(e.reserved) << int(t) << " " << m;
      const double se = e.qm * e.rate_x1024() / 1024.0;
      EXPECT_NEAR(std::floor(se * 1e4 + 0.5) / 1e4, e.spectral_efficiency, 1e-9)
          << "table " << int(t) << " mcs " << m;
    }
  }
}

TEST(Mcs, ReservedRowsCarryQmOnly) {
  // Tables 1 and 3: 29, 30, 31 -> Qm 2, 4, 6. Table 2: 28..31 -> 2, 4, 6, 8.
  for (McsTable t : {McsTable::qam64, McsTable::qam64_low_se}) {
    EXPECT_EQ(max_mcs(t), 28);
    for (int m = 29; m < 32; ++m) {
      const McsEntry e = mcs_entry(t, m);
      EXPECT_TRUE(e.reserved);
      EXPECT_EQ(e.qm, 2 * (m - 28));
      EXPECT_EQ(e.rate_x2048, 0);
    }
  }
  EXPECT_EQ(max_mcs(McsTable::qam256), 27);
  for (int m = 28; m < 32; ++m) {
    const McsEntry e = mcs_entry(McsTable::qam256, m);
    EXPECT_TRUE(e.reserved);
    EXPECT_EQ(e.qm, 2 * (m - 27));
  }
}

TEST(Mcs, ModulationOrderNeverDecreasesAlongTheTable) {
  for (McsTable t : kTables) {
    for (int m = 1; m <= max_mcs(t); ++m) {
      EXPECT_GE(mcs_entry(t, m).qm, mcs_entry(t, m - 1).qm) << int(t) << " " << m;
    }
  }
}

TEST(Mcs, HandCheckedRows) {
  // Table 5.1.3.1-1 row 0: QPSK 120; row 17: 64QAM 438; row 28: 64QAM 948.
  EXPECT_EQ(mcs_entry(McsTable::qam64, 0).qm, 2);
  EXPECT_EQ(mcs_entry(McsTable::qam64, 0).rate_x1024(), 120.0);
  EXPECT_EQ(mcs_entry(McsTable::qam64, 17).qm, 6);
  EXPECT_EQ(mcs_entry(McsTable::qam64, 17).rate_x1024(), 438.0);
  EXPECT_EQ(mcs_entry(McsTable::qam64, 28).rate_x1024(), 948.0);
  // Table 5.1.3.1-2 rows 20 and 26: 256QAM 682.5 and 916.5, the two half-integer rates.
  EXPECT_EQ(mcs_entry(McsTable::qam256, 20).qm, 8);
  EXPECT_EQ(mcs_entry(McsTable::qam256, 20).rate_x1024(), 682.5);
  EXPECT_EQ(mcs_entry(McsTable::qam256, 26).rate_x1024(), 916.5);
  EXPECT_EQ(mcs_entry(McsTable::qam256, 27).spectral_efficiency, 7.4063);
  // Table 5.1.3.1-3 row 0: QPSK 30 (SE 0.0586); row 15: 16QAM 340.
  EXPECT_EQ(mcs_entry(McsTable::qam64_low_se, 0).rate_x1024(), 30.0);
  EXPECT_EQ(mcs_entry(McsTable::qam64_low_se, 0).spectral_efficiency, 0.0586);
  EXPECT_EQ(mcs_entry(McsTable::qam64_low_se, 15).qm, 4);
  EXPECT_EQ(mcs_entry(McsTable::qam64_low_se, 15).rate_x1024(), 340.0);
  EXPECT_DOUBLE_EQ(mcs_entry(McsTable::qam64, 9).code_rate(), 679.0 / 1024.0);
}

TEST(Mcs, RejectsBadIndicesAndNames) {
  EXPECT_THROW(mcs_entry(McsTable::qam64, -1), InvalidArgument);
  EXPECT_THROW(mcs_entry(McsTable::qam64, 32), InvalidArgument);
  EXPECT_THROW(mcs_entry(McsTable(4), 0), InvalidArgument);
  EXPECT_THROW(parse_mcs_table("qam1024"), InvalidArgument);
  EXPECT_EQ(parse_mcs_table("qam256"), McsTable::qam256);
  EXPECT_EQ(parse_mcs_table("3"), McsTable::qam64_low_se);
  for (McsTable t : kTables) EXPECT_EQ(parse_mcs_table(to_string(t)), t);
}

}  // namespace
}  // namespace mimorx::nr

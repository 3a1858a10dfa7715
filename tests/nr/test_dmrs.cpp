// DM-RS of TS 38.211 §6.4.1.1 / §7.4.1.1: position tables, port tables (CDM groups, OCC),
// the sequence against published values, and the REs and values of SlotPlan.
#include <gtest/gtest.h>

#include <cmath>
#include <set>
#include <utility>
#include <vector>

#include "mimorx/core/error.hpp"
#include "mimorx/nr/dmrs.hpp"
#include "mimorx/nr/slot.hpp"

namespace mimorx::nr {
namespace {

TEST(DmrsPositions, PuschTableWrittenOut) {
  // Table 6.4.1.1.3-3, single-symbol DM-RS, mapping type A, l0 = 2; rows l_d = 4..14,
  // columns dmrs-AdditionalPosition 0..3. PDSCH Table 7.4.1.1.2-3 has the same rows (l1 = 11).
  using V = std::vector<int>;
  const std::vector<std::vector<V>> table = {
      /* 4 */ {{2}, {2}, {2}, {2}},
      /* 5 */ {{2}, {2}, {2}, {2}},
      /* 6 */ {{2}, {2}, {2}, {2}},
      /* 7 */ {{2}, {2}, {2}, {2}},
      /* 8 */ {{2}, {2, 7}, {2, 7}, {2, 7}},
      /* 9 */ {{2}, {2, 7}, {2, 7}, {2, 7}},
      /* 10 */ {{2}, {2, 9}, {2, 6, 9}, {2, 6, 9}},
      /* 11 */ {{2}, {2, 9}, {2, 6, 9}, {2, 6, 9}},
      /* 12 */ {{2}, {2, 9}, {2, 6, 9}, {2, 5, 8, 11}},
      /* 13 */ {{2}, {2, 11}, {2, 7, 11}, {2, 5, 8, 11}},
      /* 14 */ {{2}, {2, 11}, {2, 7, 11}, {2, 5, 8, 11}},
  };
  for (int ld = 4; ld <= 14; ++ld) {
    for (int pos = 0; pos < 4; ++pos) {
      const V& want = table[std::size_t(ld - 4)][std::size_t(pos)];
      EXPECT_EQ(dmrs_symbols(SharedChannel::pusch, 2, pos, ld), want) << ld << " " << pos;
      EXPECT_EQ(dmrs_symbols(SharedChannel::pdsch, 2, pos, ld), want) << ld << " " << pos;
    }
  }
  // l0 = 3 moves the first symbol only.
  EXPECT_EQ(dmrs_symbols(SharedChannel::pusch, 3, 2, 14), (V{3, 7, 11}));
  EXPECT_EQ(dmrs_symbols(SharedChannel::pdsch, 3, 1, 10), (V{3, 9}));
  // PDSCH allows l_d = 3; PUSCH starts at 4.
  EXPECT_EQ(dmrs_symbols(SharedChannel::pdsch, 2, 3, 3), (V{2}));
  EXPECT_THROW(dmrs_symbols(SharedChannel::pusch, 2, 0, 3), InvalidArgument);
  EXPECT_THROW(dmrs_symbols(SharedChannel::pdsch, 2, 0, 2), InvalidArgument);
  EXPECT_THROW(dmrs_symbols(SharedChannel::pusch, 4, 0, 14), InvalidArgument);
  EXPECT_THROW(dmrs_symbols(SharedChannel::pusch, 2, 4, 14), InvalidArgument);
}

TEST(DmrsPorts, TablesAndGroups) {
  // Type 1: ports 0, 1 in group 0 (Delta 0), ports 2, 3 in group 1 (Delta 1); odd ports carry
  // w_f = (+1, -1); ports 4..7 repeat 0..3 with w_t = (+1, -1).
  for (int p = 0; p < 8; ++p) {
    const DmrsPort d = dmrs_port(DmrsType::type1, p);
    EXPECT_EQ(d.cdm_group, (p / 2) % 2) << p;
    EXPECT_EQ(d.delta, d.cdm_group) << p;
    EXPECT_EQ(d.w_f[0], 1);
    EXPECT_EQ(d.w_f[1], p % 2 ? -1 : 1) << p;
    EXPECT_EQ(d.w_t[0], 1);
    EXPECT_EQ(d.w_t[1], p < 4 ? 1 : -1) << p;
  }
  // Type 2: groups 0, 1, 2 with Delta 0, 2, 4; ports 6..11 repeat 0..5 with w_t = (+1, -1).
  for (int p = 0; p < 12; ++p) {
    const DmrsPort d = dmrs_port(DmrsType::type2, p);
    EXPECT_EQ(d.cdm_group, (p / 2) % 3) << p;
    EXPECT_EQ(d.delta, 2 * d.cdm_group) << p;
    EXPECT_EQ(d.w_f[1], p % 2 ? -1 : 1) << p;
    EXPECT_EQ(d.w_t[1], p < 6 ? 1 : -1) << p;
  }
  EXPECT_THROW(dmrs_port(DmrsType::type1, 8), InvalidArgument);
  EXPECT_THROW(dmrs_port(DmrsType::type2, 12), InvalidArgument);
  // CDM groups partition the subcarriers.
  for (DmrsType t : {DmrsType::type1, DmrsType::type2}) {
    for (int k = 0; k < 48; ++k) {
      int owners = 0;
      for (int g = 0; g < dmrs_cdm_groups(t); ++g) owners += in_cdm_group(t, g, k);
      EXPECT_EQ(owners, 1) << int(t) << " " << k;
    }
  }
}

TEST(DmrsPorts, OccOrthogonalWithinEachCdmGroup) {
  // Over the 2 x 2 block (k', l'), sum w_f w_t w_f' w_t' is 4 for the same port and 0 for two
  // ports of one CDM group; with single-symbol DM-RS (l' = 0) the frequency OCC alone separates
  // the two ports 0..3 of a group.
  for (DmrsType t : {DmrsType::type1, DmrsType::type2}) {
    const int ports = t == DmrsType::type1 ? 8 : 12;
    for (int p = 0; p < ports; ++p) {
      for (int q = 0; q < ports; ++q) {
        const DmrsPort a = dmrs_port(t, p), b = dmrs_port(t, q);
        if (a.cdm_group != b.cdm_group) continue;
        int full = 0;
        for (int kp = 0; kp < 2; ++kp) {
          for (int lp = 0; lp < 2; ++lp) full += a.w_f[kp] * a.w_t[lp] * b.w_f[kp] * b.w_t[lp];
        }
        EXPECT_EQ(full, p == q ? 4 : 0) << int(t) << " " << p << " " << q;
        const bool single_symbol_pair = p < ports / 2 && q < ports / 2;
        if (single_symbol_pair) {
          const int freq = a.w_f[0] * b.w_f[0] + a.w_f[1] * b.w_f[1];
          EXPECT_EQ(freq, p == q ? 2 : 0) << int(t) << " " << p << " " << q;
        }
      }
    }
  }
}

TEST(DmrsSequence, MatlabPuschExample) {
  // MATLAB 5G Toolbox, nrPUSCHDMRS documentation example: 52 PRBs, 15 kHz, slot 0, PUSCH
  // symbols 0..13, DM-RS type 1, dmrs-TypeA-Position 2, dmrs-AdditionalPosition 1, port 2,
  // NIDNSCID 10, NSCID 1 (precoded by TPMI 0 of 4 ports, hence its amplitude 0.3536). Its
  // first 11 values, k = 1, 3, ..., 21 of symbol 2, have the signs below (re, im).
  const int signs[11][2] = {{-1, -1}, {+1, -1}, {-1, +1}, {-1, -1}, {-1, +1}, {+1, -1},
                            {-1, -1}, {+1, +1}, {+1, -1}, {+1, -1}, {+1, -1}};
  SlotConfig c;
  c.channel = SharedChannel::pusch;
  c.numerology = 0;
  c.n_prb = 52;
  c.additional_position = 1;
  c.type_a_position = 2;
  c.layers = 3;  // ports 0, 1, 2
  c.cdm_groups_without_data = 2;
  c.n_id = 10;
  c.n_scid = 1;
  c.dmrs_amplitude = 1.f;
  const SlotPlan plan(c);
  EXPECT_EQ(plan.dmrs_symbols(), (std::vector<int>{2, 11}));
  const auto& res = plan.dmrs_res(2);
  ASSERT_EQ(res.size(), 624u);  // MATLAB's 624 rows: 52 PRBs x 6 REs x 2 symbols
  const float a = float(1.0 / std::sqrt(2.0));
  for (int i = 0; i < 11; ++i) {
    EXPECT_EQ(res[std::size_t(i)].l, 2);
    EXPECT_EQ(res[std::size_t(i)].k, 2 * i + 1);
    EXPECT_FLOAT_EQ(res[std::size_t(i)].value.re, a * float(signs[i][0])) << i;
    EXPECT_FLOAT_EQ(res[std::size_t(i)].value.im, a * float(signs[i][1])) << i;
  }
}

TEST(DmrsSequence, QpskOfTheGoldBits) {
  const auto r = dmrs_sequence(8257557u, 300);
  const float a = float(1.0 / std::sqrt(2.0));
  for (const cf32& v : r) {
    EXPECT_EQ(std::fabs(v.re), a);
    EXPECT_EQ(std::fabs(v.im), a);
  }
}

SlotConfig four_layers(DmrsType type, int cdm_groups) {
  SlotConfig c;
  c.channel = SharedChannel::pdsch;
  c.n_prb = 4;
  c.dmrs_type = type;
  c.cdm_groups_without_data = cdm_groups;
  c.additional_position = 2;
  c.layers = 4;
  c.n_id = 321;
  c.slot = 7;
  return c;
}

TEST(DmrsRes, PositionsValuesAndDespreading) {
  for (DmrsType t : {DmrsType::type1, DmrsType::type2}) {
    const SlotPlan plan(four_layers(t, t == DmrsType::type1 ? 2 : 3));
    const float beta = plan.dmrs_amplitude();
    EXPECT_FLOAT_EQ(beta, float(std::sqrt(t == DmrsType::type1 ? 2.0 : 3.0)));
    EXPECT_EQ(plan.dmrs_symbols(), (std::vector<int>{2, 7, 11}));
    const int per_symbol = (t == DmrsType::type1 ? 6 : 4) * 4;
    for (int p = 0; p < 4; ++p) {
      const auto& res = plan.dmrs_res(p);
      ASSERT_EQ(res.size(), std::size_t(3 * per_symbol));
      const int g = plan.cdm_group(p);
      for (std::size_t i = 0; i < res.size(); ++i) {
        EXPECT_TRUE(in_cdm_group(t, g, res[i].k)) << int(t) << " port " << p;
        EXPECT_NEAR(std::hypot(res[i].value.re, res[i].value.im), beta, 1e-5);
        // Hand-checked subcarriers of the first symbol: type 1 port 2 -> 1, 3, 5, ...;
        // type 2 port 2 -> 2, 3, 8, 9, ...
        if (p == 2 && i < 4) {
          const int want1[4] = {1, 3, 5, 7}, want2[4] = {2, 3, 8, 9};
          EXPECT_EQ(res[i].k, t == DmrsType::type1 ? want1[i] : want2[i]);
        }
      }
    }
    // Two ports of a CDM group share REs; summing conj(a_p) a_q over each (k' = 0, 1) pair
    // cancels: the despreading that separates them at the receiver.
    for (int p : {0, 2}) {
      const auto& a = plan.dmrs_res(p);
      const auto& b = plan.dmrs_res(p + 1);
      ASSERT_EQ(a.size(), b.size());
      for (std::size_t i = 0; i + 1 < a.size(); i += 2) {
        ASSERT_EQ(a[i].k, b[i].k);
        ASSERT_EQ(a[i].l, b[i].l);
        const cf32 s =
            cmul_conj(a[i].value, b[i].value) + cmul_conj(a[i + 1].value, b[i + 1].value);
        EXPECT_NEAR(s.re, 0.f, 1e-5);
        EXPECT_NEAR(s.im, 0.f, 1e-5);
        const cf32 self =
            cmul_conj(a[i].value, a[i].value) + cmul_conj(a[i + 1].value, a[i + 1].value);
        EXPECT_NEAR(self.re, 2 * beta * beta, 1e-4);
      }
    }
  }
}

TEST(DmrsRes, SequenceIndexFollowsSubcarrier) {
  // Port 0 of type 1 at subcarrier k = 4n + 2k' carries beta r(2n + k') of its symbol's c_init.
  SlotConfig c = four_layers(DmrsType::type1, 2);
  c.layers = 1;
  const SlotPlan plan(c);
  const auto& res = plan.dmrs_res(0);
  std::size_t i = 0;
  for (int l : plan.dmrs_symbols()) {
    const auto r = dmrs_sequence(dmrs_c_init(c.slot, l, c.n_id, c.n_scid), 6 * c.n_prb);
    for (int m = 0; m < 6 * c.n_prb; ++m, ++i) {
      ASSERT_EQ(res[i].l, l);
      ASSERT_EQ(res[i].k, 4 * (m / 2) + 2 * (m % 2));
      EXPECT_FLOAT_EQ(res[i].value.re, plan.dmrs_amplitude() * r[std::size_t(m)].re);
      EXPECT_FLOAT_EQ(res[i].value.im, plan.dmrs_amplitude() * r[std::size_t(m)].im);
    }
  }
  EXPECT_EQ(i, res.size());
}

}  // namespace
}  // namespace mimorx::nr

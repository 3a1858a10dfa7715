// SlotPlan: data REs (count, order, no overlap with DM-RS), N_DMRS^PRB and the TBS it gives,
// and the validation of SlotConfig.
#include <gtest/gtest.h>

#include <functional>
#include <set>
#include <string>
#include <utility>

#include "mimorx/core/error.hpp"
#include "mimorx/nr/slot.hpp"
#include "mimorx/nr/tbs.hpp"

namespace mimorx::nr {
namespace {

SlotConfig pusch(int n_prb, DmrsType type, int pos, int cdm, int layers) {
  SlotConfig c;
  c.channel = SharedChannel::pusch;
  c.n_prb = n_prb;
  c.dmrs_type = type;
  c.additional_position = pos;
  c.cdm_groups_without_data = cdm;
  c.layers = layers;
  return c;
}

TEST(Slot, DataReCountsByHand) {
  // 1 PRB, 14 symbols = 168 REs.
  // Type 1, pos1 (symbols 2, 11), 2 CDM groups without data: 168 - 2 * 12 = 144.
  EXPECT_EQ(SlotPlan(pusch(1, DmrsType::type1, 1, 2, 1)).data_re_count(), 144);
  // Type 1, pos1, 1 CDM group without data: the odd subcarriers of DM-RS symbols carry data:
  // 168 - 2 * 6 = 156.
  EXPECT_EQ(SlotPlan(pusch(1, DmrsType::type1, 1, 1, 1)).data_re_count(), 156);
  // Type 2, pos3 (symbols 2, 5, 8, 11), 3 CDM groups: 168 - 4 * 12 = 120; 1 group: 168 - 4 * 4.
  EXPECT_EQ(SlotPlan(pusch(1, DmrsType::type2, 3, 3, 1)).data_re_count(), 120);
  EXPECT_EQ(SlotPlan(pusch(1, DmrsType::type2, 3, 1, 1)).data_re_count(), 152);
  // 273 PRBs, type 1, pos0, 2 groups: 273 * (168 - 12) = 42588.
  EXPECT_EQ(SlotPlan(pusch(273, DmrsType::type1, 0, 2, 4)).data_re_count(), 42588);
}

TEST(Slot, DataIsTotalMinusDmrsOverhead) {
  for (DmrsType t : {DmrsType::type1, DmrsType::type2}) {
    for (int pos = 0; pos < 4; ++pos) {
      for (int cdm = 1; cdm <= dmrs_cdm_groups(t); ++cdm) {
        for (int length : {4, 9, 12, 14}) {
          SlotConfig c = pusch(11, t, pos, cdm, cdm == 1 ? 2 : 4);
          c.num_symbols = length;
          const SlotPlan plan(c);
          const int total = 12 * c.n_prb * length;
          EXPECT_EQ(plan.data_re_count(), total - c.n_prb * plan.dmrs_re_per_prb())
              << int(t) << " " << pos << " " << cdm << " " << length;
          EXPECT_EQ(plan.dmrs_re_per_prb(),
                    dmrs_re_per_group(t) * cdm * int(plan.dmrs_symbols().size()));
        }
      }
    }
  }
}

TEST(Slot, DataOrderIsFrequencyFirstAndAvoidsDmrs) {
  SlotConfig c = pusch(3, DmrsType::type2, 2, 2, 4);
  c.channel = SharedChannel::pdsch;
  c.start_symbol = 1;
  c.num_symbols = 12;  // symbols 1..12, l_d = 13: DM-RS at 2, 7, 11
  const SlotPlan plan(c);
  EXPECT_EQ(plan.dmrs_symbols(), (std::vector<int>{2, 7, 11}));
  const auto& d = plan.data_res();
  ASSERT_FALSE(d.empty());
  EXPECT_EQ(d.front().l, 1);
  EXPECT_EQ(d.back().l, 12);
  for (std::size_t i = 1; i < d.size(); ++i) {
    const bool next_k = d[i].l == d[i - 1].l && d[i].k > d[i - 1].k;
    const bool next_l = d[i].l > d[i - 1].l;
    ASSERT_TRUE(next_k || next_l) << i;
  }
  std::set<std::pair<int, int>> dmrs;
  for (int p = 0; p < c.layers; ++p) {
    for (const DmrsRe& r : plan.dmrs_res(p)) dmrs.insert({r.k, r.l});
  }
  for (const Re& r : d) {
    ASSERT_FALSE(dmrs.count({r.k, r.l})) << r.k << " " << r.l;
    ASSERT_TRUE(r.k >= 0 && r.k < plan.n_subcarriers());
  }
  // Type 2 with 2 CDM groups without data leaves group 2 (k mod 6 = 4, 5) for data in DM-RS
  // symbols: the first data REs of symbol 2 are k = 4, 5, 10, 11.
  std::vector<int> first;
  for (const Re& r : d) {
    if (r.l == 2 && first.size() < 4) first.push_back(r.k);
  }
  EXPECT_EQ(first, (std::vector<int>{4, 5, 10, 11}));
}

TEST(Slot, TbsFromThePlan) {
  // Table 2 MCS 20, 52 PRBs, 14 symbols, type 1 pos0 with 2 CDM groups (N_DMRS^PRB = 12),
  // 2 layers: the worked case D of test_tbs, TBS 86040.
  const SlotPlan plan(pusch(52, DmrsType::type1, 0, 2, 2));
  EXPECT_EQ(plan.dmrs_re_per_prb(), 12);
  EXPECT_EQ(transport_block_size(plan.tbs_input(McsTable::qam256, 20)), 86040);
  // N_RE of the TBS is min(156, N'_RE) n_PRB; without the cap it equals the plan's data REs.
  const TbsSteps s = tbs_steps(plan.tbs_input(McsTable::qam64, 10));
  EXPECT_EQ(s.n_re, plan.data_re_count());
}

void expect_invalid(const std::function<void(SlotConfig&)>& change, const std::string& field) {
  SlotConfig c = pusch(52, DmrsType::type1, 1, 2, 2);
  change(c);
  try {
    validate(c);
    ADD_FAILURE() << "accepted; expected an error on " << field;
  } catch (const InvalidArgument& e) {
    EXPECT_EQ(std::string(e.what()).rfind(field + ":", 0), 0u) << e.what();
  }
}

TEST(Slot, RejectsIllegalCombinations) {
  EXPECT_NO_THROW(validate(pusch(52, DmrsType::type1, 1, 2, 2)));
  expect_invalid([](SlotConfig& c) { c.numerology = 2; }, "numerology");
  expect_invalid([](SlotConfig& c) { c.n_prb = 0; }, "n_prb");
  expect_invalid([](SlotConfig& c) { c.n_prb = 274; }, "n_prb");
  expect_invalid([](SlotConfig& c) { c.start_symbol = 1; }, "start_symbol");
  expect_invalid([](SlotConfig& c) { c.num_symbols = 3; }, "num_symbols");
  expect_invalid([](SlotConfig& c) { c.type_a_position = 1; }, "type_a_position");
  expect_invalid(
      [](SlotConfig& c) {
        c.type_a_position = 3;
        c.additional_position = 3;
      },
      "additional_position");
  expect_invalid([](SlotConfig& c) { c.cdm_groups_without_data = 3; }, "cdm_groups_without_data");
  expect_invalid(
      [](SlotConfig& c) {
        c.layers = 3;
        c.cdm_groups_without_data = 1;
      },
      "cdm_groups_without_data");
  expect_invalid([](SlotConfig& c) { c.layers = 5; }, "layers");
  expect_invalid([](SlotConfig& c) { c.slot = 20; }, "slot");  // mu = 1: 20 slots
  expect_invalid([](SlotConfig& c) { c.n_id = 65536; }, "n_id");
  expect_invalid([](SlotConfig& c) { c.n_scid = 2; }, "n_scid");
  expect_invalid([](SlotConfig& c) { c.dmrs_amplitude = 0.f; }, "dmrs_amplitude");
  expect_invalid(
      [](SlotConfig& c) {
        c.channel = SharedChannel::pdsch;
        c.start_symbol = 3;  // after l0 = 2
        c.num_symbols = 11;
      },
      "start_symbol");
  expect_invalid(
      [](SlotConfig& c) {
        c.channel = SharedChannel::pdsch;
        c.start_symbol = 2;
        c.num_symbols = 13;
      },
      "num_symbols");
  expect_invalid(
      [](SlotConfig& c) {
        c.channel = SharedChannel::pdsch;
        c.type_a_position = 3;
        c.num_symbols = 4;  // l_d = 4 needs l0 = 2
      },
      "num_symbols");
  SlotConfig ok = pusch(52, DmrsType::type2, 1, 3, 4);
  ok.numerology = 0;
  ok.slot = 9;
  EXPECT_NO_THROW(validate(ok));
  EXPECT_THROW(SlotPlan(ok).dmrs_res(4), InvalidArgument);
}

}  // namespace
}  // namespace mimorx::nr

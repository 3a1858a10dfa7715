// The NR slot link (sim/nr_link.hpp): TBS from the MCS tables, delivery at high SNR, HARQ gain,
// throughput accounting, invariance to the batch size, the grid's layer mapping and bad input.
#include <gtest/gtest.h>

#include <cmath>
#include <numeric>
#include <vector>

#include "mimorx/core/error.hpp"
#include "mimorx/nr/tbs.hpp"
#include "mimorx/sim/nr_link.hpp"
#include "sim/nr_link_grid.hpp"
#include "support/gpu.hpp"

namespace mimorx::sim {
namespace {

NrLinkConfig small_config(std::uint64_t seed) {
  NrLinkConfig c;
  c.slot.n_prb = 4;
  c.slot.layers = 2;
  c.n_rx = 2;
  c.mcs_table = nr::McsTable::qam64;
  c.mcs = 9;  // QPSK, R = 679/1024
  c.detector = "mmse";
  c.seed = seed;
  c.max_slots = 40;
  return c;
}

TEST(NrLink, TbsAndGAreThoseOfTheSlotAndMcs) {
  struct Case {
    int prb, layers, mcs, add_pos;
    nr::McsTable table;
  };
  for (const Case k :
       {Case{4, 1, 0, 1, nr::McsTable::qam64}, Case{24, 2, 16, 1, nr::McsTable::qam64},
        Case{52, 4, 27, 2, nr::McsTable::qam256}, Case{10, 2, 3, 0, nr::McsTable::qam64_low_se}}) {
    NrLinkConfig c = small_config(1);
    c.slot.n_prb = k.prb;
    c.slot.layers = k.layers;
    c.slot.additional_position = k.add_pos;
    c.n_rx = 4;
    c.mcs_table = k.table;
    c.mcs = k.mcs;
    const NrLinkSetup s = nr_link_setup(c);
    const nr::SlotPlan plan(c.slot);
    EXPECT_EQ(s.tbs, nr::transport_block_size(plan.tbs_input(k.table, k.mcs))) << k.prb;
    const int qm = nr::mcs_entry(k.table, k.mcs).qm;
    EXPECT_EQ(bits_per_symbol(s.mod), qm);
    EXPECT_EQ(s.data_res, plan.data_re_count());
    EXPECT_EQ(s.g, std::int64_t(plan.data_re_count()) * k.layers * qm);
    EXPECT_DOUBLE_EQ(s.target_rate, nr::mcs_entry(k.table, k.mcs).code_rate());
  }
}

TEST(NrLink, FlatChannelAtHighSnrDeliversEveryBlockOnTheFirstTransmission) {
  NrLinkConfig c = small_config(test::fresh_seed());
  c.harq_transmissions = 4;
  c.mcs = 16;  // 16-QAM
  const auto r = run_nr_link(c, Backend::cpu(), {45.0});
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].blocks, c.max_slots);
  EXPECT_EQ(r[0].slots, c.max_slots);
  EXPECT_EQ(r[0].tx_errors, std::vector<std::int64_t>(4, 0));
  EXPECT_EQ(r[0].delivered_bits, c.max_slots * r[0].tbs);
  EXPECT_DOUBLE_EQ(r[0].throughput(), double(r[0].tbs));
  EXPECT_DOUBLE_EQ(r[0].throughput_fraction(), 1.0);
}

TEST(NrLink, TdlChannelAtHighSnrDeliversEveryBlock) {
  NrLinkConfig c = small_config(test::fresh_seed());
  c.tdl = channel::parse_tdl("tdl-c:300:100:low");
  c.max_slots = 10;
  const auto r = run_nr_link(c, Backend::cpu(), {45.0, -10.0});
  EXPECT_EQ(r[0].block_errors(), 0);
  EXPECT_EQ(r[1].block_errors(), r[1].blocks);
  EXPECT_EQ(r[1].delivered_bits, 0);
}

TEST(NrLink, HarqLowersTheResidualBlerBelowTheFirstTransmissions) {
  const auto seed = test::fresh_seed();
  NrLinkConfig c = small_config(seed);
  c.max_slots = 60;
  c.harq_transmissions = 4;
  // First-transmission BLER about 0.75, 0.5 and 0.3 on this flat channel.
  const std::vector<double> snrs = {2, 4, 6};
  const auto four = run_nr_link(c, Backend::cpu(), snrs);
  bool checked = false;
  for (std::size_t p = 0; p < snrs.size(); ++p) {
    const auto& b = four[p];
    for (std::size_t i = 1; i < b.tx_errors.size(); ++i)
      EXPECT_LE(b.tx_errors[i], b.tx_errors[i - 1]) << snrs[p];
    // Without HARQ, the same blocks see the same first transmissions: the same errors.
    NrLinkConfig one = c;
    one.harq_transmissions = 1;
    one.max_slots = b.blocks;
    const auto a = run_nr_link(one, Backend::cpu(), {snrs[p]});
    ASSERT_EQ(a[0].blocks, b.blocks);
    EXPECT_EQ(a[0].tx_errors[0], b.tx_errors[0]) << snrs[p];
    const double first = b.bler_tx(0);
    if (first >= 0.2 && first <= 0.8) {
      checked = true;
      EXPECT_LT(b.residual_bler(), first) << snrs[p];
      EXPECT_GT(b.throughput(), a[0].throughput()) << snrs[p];
    }
  }
  EXPECT_TRUE(checked) << "no point with a first-transmission BLER in [0.2, 0.8]";
}

TEST(NrLink, ThroughputIsDeliveredBitsPerSlot) {
  NrLinkConfig c = small_config(test::fresh_seed());
  c.harq_transmissions = 3;
  c.max_slots = 50;
  const auto r = run_nr_link(c, Backend::cpu(), {4.0, 6.0});
  for (const auto& p : r) {
    ASSERT_EQ(p.tx_errors.size(), 3u);
    // Block t takes transmission i + 2 exactly when it is not delivered after i + 1 (no TB CRC
    // passes with wrong bits at these sizes).
    EXPECT_EQ(p.undetected_errors, 0);
    EXPECT_EQ(p.slots, p.blocks + p.tx_errors[0] + p.tx_errors[1]);
    EXPECT_EQ(p.delivered_bits, std::int64_t(p.tbs) * (p.blocks - p.block_errors()));
    EXPECT_DOUBLE_EQ(p.throughput(), double(p.delivered_bits) / double(p.slots));
    // The point ends at the block whose transmissions reach max_slots.
    EXPECT_GE(p.slots, c.max_slots);
    EXPECT_LT(p.slots, c.max_slots + c.harq_transmissions);
  }
}

TEST(NrLink, CountsDoNotDependOnTheBatchSize) {
  NrLinkConfig c = small_config(test::fresh_seed());
  c.harq_transmissions = 2;
  c.max_slots = 16;
  c.min_block_errors = 3;
  c.tdl = channel::parse_tdl("tdl-a:30:10:medium");
  std::vector<std::vector<NrPointResult>> runs;
  for (std::int64_t batch : {1, 4, 0}) {
    c.batch_blocks = batch;
    runs.push_back(run_nr_link(c, Backend::cpu(), {2.0, 6.0}));
  }
  for (std::size_t k = 1; k < runs.size(); ++k) {
    for (std::size_t p = 0; p < 2; ++p) {
      EXPECT_EQ(runs[k][p].blocks, runs[0][p].blocks);
      EXPECT_EQ(runs[k][p].slots, runs[0][p].slots);
      EXPECT_EQ(runs[k][p].tx_errors, runs[0][p].tx_errors);
      EXPECT_EQ(runs[k][p].delivered_bits, runs[0][p].delivered_bits);
    }
  }
}

// The DM-RS estimator in the receiver: every block delivered at high SNR on a TDL channel, and
// at a mid SNR no fewer first-transmission errors than the genie (the same blocks, channels and
// noise: the estimate can only lose information on average; a margin of 2 blocks allows for the
// few blocks an imperfect estimate happens to decode).
TEST(NrLink, EstimatedCsiDeliversAtHighSnrAndDoesNotBeatTheGenie) {
  NrLinkConfig c = small_config(test::fresh_seed());
  c.tdl = channel::parse_tdl("tdl-c:300:100:low");
  c.max_slots = 24;
  for (NrCsi csi : {NrCsi::ls_linear, NrCsi::ls_lmmse}) {
    c.csi = csi;
    const auto high = run_nr_link(c, Backend::cpu(), {40.0});
    EXPECT_EQ(high[0].block_errors(), 0) << int(csi);
    const auto est = run_nr_link(c, Backend::cpu(), {6.0});
    NrLinkConfig genie = c;
    genie.csi = NrCsi::perfect;
    const auto ref = run_nr_link(genie, Backend::cpu(), {6.0});
    ASSERT_EQ(est[0].blocks, ref[0].blocks);
    EXPECT_GE(est[0].tx_errors[0] + 2, ref[0].tx_errors[0]) << int(csi);
  }
}

TEST(NrLink, EstimatedCsiCountsDoNotDependOnTheBatchSize) {
  NrLinkConfig c = small_config(test::fresh_seed());
  c.csi = NrCsi::ls_lmmse;
  c.harq_transmissions = 2;
  c.max_slots = 12;
  c.tdl = channel::parse_tdl("tdl-a:30:10:low");
  std::vector<std::vector<NrPointResult>> runs;
  for (std::int64_t batch : {1, 5}) {
    c.batch_blocks = batch;
    runs.push_back(run_nr_link(c, Backend::cpu(), {4.0}));
  }
  EXPECT_EQ(runs[1][0].tx_errors, runs[0][0].tx_errors);
  EXPECT_EQ(runs[1][0].slots, runs[0][0].slots);
}

TEST(NrLink, LayerMappingOntoTheGridAndBackRoundTrips) {
  for (int v : {1, 2, 3, 4}) {
    nr::SlotConfig sc;
    sc.n_prb = 2;
    sc.layers = v;
    const nr::SlotPlan plan(sc);
    const int data = plan.data_re_count();
    const std::int64_t res = detail::grid_res(plan);
    std::vector<cf32> d(std::size_t(data) * v);
    for (std::size_t s = 0; s < d.size(); ++s) d[s] = {float(s), -float(s) - 0.5f};
    std::vector<cf32> x(std::size_t(res) * v);
    detail::place_layers(plan, d, x);
    detail::place_dmrs(plan, x);
    // Identity channel (antenna j to receive antenna j), no noise.
    std::vector<cf32> h(std::size_t(res) * v * v, cf32{0.f, 0.f});
    for (std::int64_t re = 0; re < res; ++re)
      for (int j = 0; j < v; ++j) h[std::size_t(re * v * v + j * v + j)] = {1.f, 0.f};
    std::vector<cf32> y(std::size_t(res) * v), y_data(std::size_t(data) * v);
    detail::receive_grid(7, 0, plan, v, h, x, 0.f, y);
    detail::gather_data_y(plan, v, y, y_data);
    // Data RE i, antenna j carries layer j's symbol i = codeword symbol v i + j.
    for (std::size_t s = 0; s < d.size(); ++s) {
      EXPECT_EQ(y_data[s].re, d[s].re) << v << " " << s;
      EXPECT_EQ(y_data[s].im, d[s].im) << v << " " << s;
    }
    // The DM-RS of port p is on antenna p at its REs.
    for (int p = 0; p < v; ++p) {
      for (const auto& re : plan.dmrs_res(p)) {
        const std::size_t at = (std::size_t(re.l) * plan.n_subcarriers() + re.k) * v + p;
        EXPECT_EQ(y[at].re, re.value.re);
        EXPECT_EQ(y[at].im, re.value.im);
      }
    }
    // The detector's LLR order (RE, layer, bit) is the codeword's.
    const int m = 4;
    std::vector<float> det(d.size() * m), cw(d.size() * m);
    std::iota(det.begin(), det.end(), 0.f);
    detail::llrs_to_codeword(det, v, m, cw);
    for (std::size_t i = 0; i < std::size_t(data); ++i)
      for (int j = 0; j < v; ++j)
        for (int k = 0; k < m; ++k) EXPECT_EQ(cw[(v * i + j) * m + k], float((i * v + j) * m + k));
  }
}

// The tables the GPU kernels read (data-RE positions, DM-RS entries) describe the grid that
// place_layers and place_dmrs write: every nonzero of x is a table entry with its value, and
// the tables cover disjoint elements of x.
TEST(NrLink, GridTablesDescribeTheHostGrid) {
  for (int v : {1, 2, 3, 4}) {
    nr::SlotConfig sc;
    sc.n_prb = 3;
    sc.layers = v;
    sc.dmrs_type = v == 3 ? nr::DmrsType::type2 : nr::DmrsType::type1;
    sc.additional_position = 2;
    const nr::SlotPlan plan(sc);
    const int data = plan.data_re_count();
    const std::int64_t res = detail::grid_res(plan);
    std::vector<cf32> d(std::size_t(data) * v);
    for (std::size_t s = 0; s < d.size(); ++s) d[s] = {float(s) + 1.f, -float(s)};
    std::vector<cf32> x(std::size_t(res) * v);
    detail::place_layers(plan, d, x);
    detail::place_dmrs(plan, x);
    std::vector<cf32> t(x.size(), cf32{0.f, 0.f});
    std::vector<int> written(x.size(), 0);
    const std::vector<int> pos = detail::data_re_positions(plan);
    ASSERT_EQ(pos.size(), std::size_t(data));
    for (std::size_t i = 0; i < pos.size(); ++i)
      for (int j = 0; j < v; ++j) {
        const std::size_t at = std::size_t(pos[i]) * v + j;
        t[at] = d[v * i + j];
        ++written[at];
      }
    const detail::DmrsTable dmrs = detail::dmrs_table(plan);
    ASSERT_EQ(dmrs.at.size(), dmrs.value.size());
    ASSERT_FALSE(dmrs.at.empty());
    for (std::size_t q = 0; q < dmrs.at.size(); ++q) {
      t[std::size_t(dmrs.at[q])] = dmrs.value[q];
      ++written[std::size_t(dmrs.at[q])];
    }
    for (std::size_t e = 0; e < x.size(); ++e) {
      EXPECT_LE(written[e], 1) << v << " " << e;
      EXPECT_EQ(x[e].re, t[e].re) << v << " " << e;
      EXPECT_EQ(x[e].im, t[e].im) << v << " " << e;
    }
  }
}

TEST(NrLink, BadInputIsRefused) {
  const auto bad = [](auto edit) {
    NrLinkConfig c = small_config(1);
    c.max_slots = 1;
    edit(c);
    EXPECT_THROW(run_nr_link(c, Backend::cpu(), {10.0}), InvalidArgument);
  };
  bad([](NrLinkConfig& c) { c.n_rx = 1; });  // fewer receive antennas than layers
  bad([](NrLinkConfig& c) { c.harq_transmissions = 5; });
  bad([](NrLinkConfig& c) { c.harq_transmissions = 0; });
  bad([](NrLinkConfig& c) { c.mcs = 29; });  // reserved row
  bad([](NrLinkConfig& c) { c.max_slots = 0; });
  bad([](NrLinkConfig& c) { c.detector = "psd"; });  // hard-output detector
  bad([](NrLinkConfig& c) { c.slot.n_prb = 0; });
  bad([](NrLinkConfig& c) {
    c.slot.layers = 3;
    c.n_rx = 3;
    c.tdl = channel::parse_tdl("tdl-a:30:0:low");
  });
}

}  // namespace
}  // namespace mimorx::sim

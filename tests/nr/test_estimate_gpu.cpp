// ChannelEstimator: the CUDA backend gives the CPU reference's estimates and noise variances
// bit for bit (memcmp) for linear and LMMSE interpolation, both noise sources, with and without
// the CDM leakage correction, DM-RS types 1 and 2, 1..4 layers, 1..8 antennas, padded output
// strides. Skips without a GPU.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "mimorx/nr/estimate.hpp"
#include "support/gpu.hpp"
#include "support/nr_grid.hpp"

namespace mimorx::nr {
namespace {

using test::Grid;
using test::kSlotSymbols;

struct Output {
  std::vector<cf32> h;
  std::vector<float> noise;
};

Output run(const SlotPlan& plan, int n_rx, const EstimatorConfig& cfg, Backend backend,
           const Grid& y, std::int64_t slots, int stride) {
  const ChannelEstimator est(plan, n_rx, cfg, backend);
  const std::int64_t mats = slots * kSlotSymbols * plan.n_subcarriers();
  auto yb = Buffer<cf32>::on(backend, y.size());
  yb.copy_from_host(y.data(), y.size());
  auto hb = Buffer<cf32>::on(backend, std::size_t(mats * stride));
  hb.fill_bytes(0xFF);
  auto nb = Buffer<float>::on(backend, std::size_t(slots));
  est.estimate(View<const cf32>(yb.data(), std::int64_t(y.size()), yb.where()), slots,
               MatrixBatch<cf32>(hb.data(), mats, n_rx, plan.config().layers, hb.where(), stride),
               View<float>(nb.data(), slots, nb.where()));
  Output out;
  out.h.resize(hb.size());
  out.noise.resize(nb.size());
  hb.copy_to_host(out.h.data(), out.h.size());
  nb.copy_to_host(out.noise.data(), out.noise.size());
  return out;
}

TEST(ChannelEstimateGpu, BitIdenticalToCpu) {
  MIMORX_REQUIRE_GPU();
  MIMORX_SEEDED_GENERATOR(g);
  struct Case {
    DmrsType type;
    int layers, cdm, additional, n_prb, n_rx;
    FreqInterpolation freq;
    bool empty_res;
    bool tdl_pdp;
    int stride_pad;
    std::int64_t slots;
  };
  const Case cases[] = {
      {DmrsType::type1, 1, 2, 0, 4, 1, FreqInterpolation::linear, true, false, 0, 3},
      {DmrsType::type1, 2, 2, 1, 52, 2, FreqInterpolation::lmmse, true, true, 0, 2},
      {DmrsType::type1, 4, 2, 3, 24, 4, FreqInterpolation::linear, true, false, 3, 2},
      {DmrsType::type1, 3, 2, 2, 12, 8, FreqInterpolation::lmmse, false, false, 1, 2},
      {DmrsType::type2, 1, 1, 1, 6, 2, FreqInterpolation::lmmse, false, true, 0, 3},
      {DmrsType::type2, 3, 2, 3, 10, 4, FreqInterpolation::linear, false, false, 0, 2},
      {DmrsType::type2, 2, 3, 2, 1, 2, FreqInterpolation::linear, false, false, 2, 4},
      {DmrsType::type2, 4, 3, 1, 273, 2, FreqInterpolation::lmmse, true, false, 0, 1},
  };
  channel::TdlConfig tdl = channel::parse_tdl("tdl-c:300:100:low");
  for (const Case& c : cases) {
    SCOPED_TRACE("type " + std::to_string(int(c.type)) + ", layers " + std::to_string(c.layers) +
                 ", " + std::to_string(c.n_prb) + " PRBs, " + std::to_string(c.n_rx) + " rx");
    SlotConfig sc;
    sc.dmrs_type = c.type;
    sc.layers = c.layers;
    sc.cdm_groups_without_data = c.cdm;
    sc.additional_position = c.additional;
    sc.n_prb = c.n_prb;
    sc.n_id = 101;
    const SlotPlan plan(sc);
    EstimatorConfig cfg;
    cfg.freq = c.freq;
    cfg.noise_from_empty_res = c.empty_res;
    cfg.cdm_leakage_correction = c.n_prb != 24;  // one case without
    if (c.tdl_pdp) {
      for (const channel::TdlTap& t : channel::tdl_profile(tdl.model, tdl.delay_spread_ns)) {
        cfg.pdp_delay_ns.push_back(t.delay_ns);
        cfg.pdp_power.push_back(t.power);
      }
    }
    tdl.n_rx = c.n_rx;
    const Grid h = test::tdl_channel(plan, tdl, g_seed, c.slots);
    const Grid y = test::receive(plan, c.n_rx, c.slots, h, 0.05f, g);
    const int stride = c.n_rx * c.layers + c.stride_pad;
    const Output cpu = run(plan, c.n_rx, cfg, Backend::cpu(), y, c.slots, stride);
    const Output gpu = run(plan, c.n_rx, cfg, Backend::cuda(), y, c.slots, stride);
    ASSERT_EQ(cpu.h.size(), gpu.h.size());
    EXPECT_EQ(std::memcmp(cpu.h.data(), gpu.h.data(), cpu.h.size() * sizeof(cf32)), 0);
    EXPECT_EQ(std::memcmp(cpu.noise.data(), gpu.noise.data(), cpu.noise.size() * sizeof(float)), 0);
  }
}

// Batches split over two calls on the GPU give the one-call result.
TEST(ChannelEstimateGpu, SplitBatchMatchesOneCall) {
  MIMORX_REQUIRE_GPU();
  MIMORX_SEEDED_GENERATOR(g);
  SlotConfig sc;
  sc.layers = 2;
  sc.n_prb = 20;
  const SlotPlan plan(sc);
  EstimatorConfig cfg;
  cfg.freq = FreqInterpolation::lmmse;
  const Grid h = test::flat_channel(plan, 4, 4, g);
  const Grid y = test::receive(plan, 4, 4, h, 0.1f, g);
  const Output all = run(plan, 4, cfg, Backend::cuda(), y, 4, 8);
  const std::size_t half_y = y.size() / 2;
  const Output first =
      run(plan, 4, cfg, Backend::cuda(), Grid(y.begin(), y.begin() + half_y), 2, 8);
  const Output second = run(plan, 4, cfg, Backend::cuda(), Grid(y.begin() + half_y, y.end()), 2, 8);
  const std::size_t half_h = all.h.size() / 2;
  EXPECT_EQ(std::memcmp(first.h.data(), all.h.data(), half_h * sizeof(cf32)), 0);
  EXPECT_EQ(std::memcmp(second.h.data(), all.h.data() + half_h, half_h * sizeof(cf32)), 0);
  EXPECT_EQ(first.noise[1], all.noise[1]);
  EXPECT_EQ(second.noise[0], all.noise[2]);
}

}  // namespace
}  // namespace mimorx::nr

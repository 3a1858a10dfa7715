// ChannelEstimator on flat channels: exact recovery without noise for every DM-RS layout,
// unbiased noise variance, batch independence, bad inputs.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "mimorx/core/error.hpp"
#include "mimorx/nr/estimate.hpp"
#include "support/gpu.hpp"
#include "support/nr_grid.hpp"

namespace mimorx::nr {
namespace {

using test::Grid;
using test::kSlotSymbols;

SlotConfig slot_config(DmrsType type, int layers, int additional, int n_prb = 4) {
  SlotConfig c;
  c.dmrs_type = type;
  c.layers = layers;
  c.additional_position = additional;
  c.cdm_groups_without_data = 2;
  c.n_prb = n_prb;
  c.n_id = 17;
  return c;
}

struct Result {
  Grid h;
  std::vector<float> noise;
};

Result run(const ChannelEstimator& est, const Grid& y, std::int64_t slots) {
  Result out;
  out.h.assign(std::size_t(slots) * kSlotSymbols * est.n_subcarriers() * est.n_rx() * est.layers(),
               cf32{NAN, NAN});
  out.noise.assign(std::size_t(slots), NAN);
  est.estimate(View<const cf32>(y.data(), std::int64_t(y.size()), Memory::host), slots,
               MatrixBatch<cf32>(out.h.data(), slots * kSlotSymbols * est.n_subcarriers(),
                                 est.n_rx(), est.layers(), Memory::host),
               View<float>(out.noise.data(), slots, Memory::host));
  return out;
}

double max_error(const Grid& a, const Grid& b) {
  double m = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    m = std::max(m, double(std::hypot(a[i].re - b[i].re, a[i].im - b[i].im)));
  }
  return m;
}

// Noiseless, frequency-flat and time-constant: every RE's estimate is H to float rounding, for
// 1..4 layers (despread and per-RE pilots), DM-RS types 1 and 2, 1..4 DM-RS symbols.
TEST(ChannelEstimate, FlatNoiselessIsExactEverywhere) {
  MIMORX_SEEDED_GENERATOR(g);
  const int n_rx = 2;
  for (DmrsType type : {DmrsType::type1, DmrsType::type2}) {
    for (int layers = 1; layers <= 4; ++layers) {
      for (int add = 0; add <= 3; ++add) {
        SCOPED_TRACE("type " + std::to_string(int(type)) + ", layers " + std::to_string(layers) +
                     ", additional position " + std::to_string(add));
        const SlotPlan plan(slot_config(type, layers, add));
        const ChannelEstimator est(plan, n_rx, {}, Backend::cpu());
        EXPECT_EQ(est.despread(0), layers >= 2);
        const Grid h = test::flat_channel(plan, n_rx, 2, g);
        const Result r = run(est, test::receive(plan, n_rx, 2, h, 0.f, g), 2);
        EXPECT_LT(max_error(r.h, h), 2e-6);
        for (float n0 : r.noise) EXPECT_LT(n0, 1e-11f);
      }
    }
  }
}

// The LMMSE interpolator designed for a high SNR is close to H on a flat channel: its weights
// reproduce a constant up to the design noise.
TEST(ChannelEstimate, LmmseFlatNoiselessIsClose) {
  MIMORX_SEEDED_GENERATOR(g);
  for (DmrsType type : {DmrsType::type1, DmrsType::type2}) {
    const SlotPlan plan(slot_config(type, 2, 1, 8));
    EstimatorConfig cfg;
    cfg.freq = FreqInterpolation::lmmse;
    cfg.lmmse_snr_db = 50.0;
    cfg.delay_spread_ns = 100.0;
    const ChannelEstimator est(plan, 1, cfg, Backend::cpu());
    EXPECT_EQ(est.taps(), 16);
    const Grid h = test::flat_channel(plan, 1, 1, g);
    const Result r = run(est, test::receive(plan, 1, 1, h, 0.f, g), 1);
    EXPECT_LT(max_error(r.h, h), 1e-2);
  }
}

// Mean of the per-slot N0 estimates over many slots equals N0 within 5 standard errors (on a
// flat channel the residuals are exact zero-mean noise, as are the empty REs), with a
// standard error below 1.5 %. Both sources: empty DM-RS REs, pilot residuals of per-RE and
// despread pilots, uniform (type 1) and non-uniform (type 2 per-RE) pilot spacing.
TEST(ChannelEstimate, NoiseVarianceIsUnbiasedOnFlatChannel) {
  MIMORX_SEEDED_GENERATOR(g);
  struct Case {
    DmrsType type;
    int layers, cdm;
    bool allow_empty, empty;
    float n0;
  };
  const Case cases[] = {
      {DmrsType::type1, 1, 1, true, false, 0.1f},  {DmrsType::type1, 1, 2, true, true, 1.0f},
      {DmrsType::type1, 2, 2, false, false, 0.3f}, {DmrsType::type1, 4, 2, true, false, 1.0f},
      {DmrsType::type2, 1, 1, true, false, 1.0f},  {DmrsType::type2, 3, 2, true, false, 0.1f},
      {DmrsType::type2, 2, 3, true, true, 0.05f},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE("type " + std::to_string(int(c.type)) + ", layers " + std::to_string(c.layers) +
                 ", CDM groups without data " + std::to_string(c.cdm));
    SlotConfig sc = slot_config(c.type, c.layers, 3, 6);
    sc.cdm_groups_without_data = c.cdm;
    const SlotPlan plan(sc);
    const int n_rx = 4, slots = 40;
    EstimatorConfig cfg;
    cfg.noise_from_empty_res = c.allow_empty;
    const ChannelEstimator est(plan, n_rx, cfg, Backend::cpu());
    EXPECT_EQ(est.uses_empty_res(), c.empty);
    const Grid h = test::flat_channel(plan, n_rx, slots, g);
    const Result r = run(est, test::receive(plan, n_rx, slots, h, c.n0, g), slots);
    double sum = 0.0, sum2 = 0.0;
    for (float x : r.noise) {
      sum += x;
      sum2 += double(x) * x;
    }
    const double mean = sum / slots, var = sum2 / slots - mean * mean;
    const double se = std::sqrt(var / slots);
    std::printf(
        "type %d, %d layers, %d CDM groups without data, %s: N0 %.2f, mean estimate %.4f "
        "(se %.4f)\n",
        int(c.type), c.layers, c.cdm, c.empty ? "empty REs" : "residuals", double(c.n0), mean, se);
    EXPECT_NEAR(mean, c.n0, 5 * se);
    EXPECT_LT(se / c.n0, 0.015);
  }
}

// Slots are independent: one call over 3 slots equals three calls of one slot, bit for bit,
// and a padded output stride leaves the padding alone.
TEST(ChannelEstimate, SlotsAreIndependentAndStridesHonoured) {
  MIMORX_SEEDED_GENERATOR(g);
  const SlotPlan plan(slot_config(DmrsType::type1, 3, 2));
  EstimatorConfig cfg;
  cfg.freq = FreqInterpolation::lmmse;
  const ChannelEstimator est(plan, 2, cfg, Backend::cpu());
  const Grid h = test::flat_channel(plan, 2, 3, g);
  const Grid y = test::receive(plan, 2, 3, h, 0.05f, g);
  const Result all = run(est, y, 3);
  const std::size_t per_y = y.size() / 3, per_h = all.h.size() / 3;
  for (int b = 0; b < 3; ++b) {
    const Grid yb(y.begin() + b * per_y, y.begin() + (b + 1) * per_y);
    const Result one = run(est, yb, 1);
    EXPECT_EQ(std::memcmp(one.h.data(), all.h.data() + b * per_h, per_h * sizeof(cf32)), 0);
    EXPECT_EQ(one.noise[0], all.noise[std::size_t(b)]);
  }
  const int p = 2 * 3, stride = p + 3;
  const std::int64_t mats = 3 * kSlotSymbols * est.n_subcarriers();
  Grid padded(std::size_t(mats * stride), cf32{7.f, 7.f});
  std::vector<float> noise(3);
  est.estimate(View<const cf32>(y.data(), std::int64_t(y.size()), Memory::host), 3,
               MatrixBatch<cf32>(padded.data(), mats, 2, 3, Memory::host, stride),
               View<float>(noise.data(), 3, Memory::host));
  for (std::int64_t m = 0; m < mats; ++m) {
    EXPECT_EQ(
        std::memcmp(&padded[std::size_t(m * stride)], &all.h[std::size_t(m * p)], p * sizeof(cf32)),
        0);
    for (int e = p; e < stride; ++e) EXPECT_EQ(padded[std::size_t(m * stride + e)], cf32(7.f, 7.f));
  }
}

TEST(ChannelEstimate, BadConfigsThrow) {
  const SlotPlan plan(slot_config(DmrsType::type1, 2, 1));
  auto bad = [&](EstimatorConfig c, int n_rx = 2) {
    EXPECT_THROW(ChannelEstimator(plan, n_rx, c, Backend::cpu()), InvalidArgument);
  };
  EstimatorConfig c;
  bad(c, 0);
  bad(c, 65);
  c.pdp_delay_ns = {0.0, 100.0};
  c.pdp_power = {1.0};
  bad(c);
  c.pdp_power = {0.5, 0.6};
  bad(c);
  c.pdp_power = {1.5, -0.5};
  bad(c);
  c.pdp_delay_ns = {-1.0, 100.0};
  c.pdp_power = {0.5, 0.5};
  bad(c);
  c = {};
  c.delay_spread_ns = 0.0;
  bad(c);
  c = {};
  c.lmmse_snr_db = NAN;
  bad(c);
  c = {};
  c.lmmse_window = 1;
  bad(c);
  c = {};
  c.freq = FreqInterpolation(7);
  bad(c);
  if (!built_with_cuda()) {
    EXPECT_THROW(ChannelEstimator(plan, 2, {}, Backend::cuda()), Error);
  }
}

TEST(ChannelEstimate, BadViewsThrow) {
  const SlotPlan plan(slot_config(DmrsType::type2, 2, 0));
  const ChannelEstimator est(plan, 2, {}, Backend::cpu());
  const std::int64_t mats = 2 * kSlotSymbols * est.n_subcarriers();
  Grid y(std::size_t(mats * 2)), h(std::size_t(mats * 4));
  std::vector<float> n(2);
  const View<const cf32> yv(y.data(), std::int64_t(y.size()), Memory::host);
  const MatrixBatch<cf32> hv(h.data(), mats, 2, 2, Memory::host);
  const View<float> nv(n.data(), 2, Memory::host);
  EXPECT_NO_THROW(est.estimate(yv, 2, hv, nv));
  EXPECT_THROW(est.estimate(yv, 3, hv, nv), InvalidArgument);
  EXPECT_THROW(est.estimate(yv, -1, hv, nv), InvalidArgument);
  EXPECT_THROW(
      est.estimate(View<const cf32>(y.data(), std::int64_t(y.size()) - 1, Memory::host), 2, hv, nv),
      InvalidArgument);
  EXPECT_THROW(est.estimate(yv, 2, MatrixBatch<cf32>(h.data(), mats, 2, 1, Memory::host), nv),
               InvalidArgument);
  EXPECT_THROW(est.estimate(yv, 2, MatrixBatch<cf32>(h.data(), mats - 1, 2, 2, Memory::host), nv),
               InvalidArgument);
  EXPECT_THROW(est.estimate(yv, 2, MatrixBatch<cf32>(h.data(), mats, 2, 2, Memory::host, 3), nv),
               InvalidArgument);
  EXPECT_THROW(est.estimate(yv, 2, hv, View<float>(n.data(), 1, Memory::host)), InvalidArgument);
  EXPECT_THROW(
      est.estimate(View<const cf32>(y.data(), std::int64_t(y.size()), Memory::device), 2, hv, nv),
      InvalidArgument);
  EXPECT_THROW(est.estimate(yv, 2, MatrixBatch<cf32>(h.data(), mats, 2, 2, Memory::device), nv),
               InvalidArgument);
  EXPECT_THROW(est.estimate(yv, 2, hv, View<float>(n.data(), 2, Memory::device)), InvalidArgument);
  EXPECT_THROW(
      est.estimate(View<const cf32>(nullptr, std::int64_t(y.size()), Memory::host), 2, hv, nv),
      InvalidArgument);
  EXPECT_THROW((void)est.pilots(2), InvalidArgument);
  EXPECT_THROW((void)est.despread(-1), InvalidArgument);
}

}  // namespace
}  // namespace mimorx::nr

#include "sim/nr_link_grid.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include "mimorx/core/error.hpp"
#include "mimorx/nr/layer_map.hpp"

namespace mimorx::sim::detail {

std::vector<int> data_re_positions(const nr::SlotPlan& plan) {
  const int n_sc = plan.n_subcarriers();
  std::vector<int> pos;
  pos.reserve(plan.data_res().size());
  for (const auto& re : plan.data_res()) pos.push_back(re.l * n_sc + re.k);
  return pos;
}

DmrsTable dmrs_table(const nr::SlotPlan& plan) {
  const int v = plan.config().layers;
  const int n_sc = plan.n_subcarriers();
  DmrsTable t;
  for (int p = 0; p < v; ++p) {
    for (const auto& re : plan.dmrs_res(p)) {
      t.at.push_back((re.l * n_sc + re.k) * v + p);
      t.value.push_back(re.value);
    }
  }
  return t;
}

channel::TdlConfig nr_tdl_config(const NrLinkConfig& c, const nr::SlotPlan& plan) {
  channel::TdlConfig t = *c.tdl;
  t.n_rx = c.n_rx;
  t.n_tx = c.slot.layers;
  t.link = c.slot.channel == nr::SharedChannel::pusch ? channel::TdlLink::uplink
                                                      : channel::TdlLink::downlink;
  t.subcarrier_spacing_khz = plan.subcarrier_spacing_khz();
  t.n_subcarriers = plan.n_subcarriers();
  t.symbols_per_slot = nr::SlotPlan::kSymbols;
  return t;
}

nr::EstimatorConfig nr_estimator_config(const NrLinkConfig& c, float n0) {
  nr::EstimatorConfig e;
  e.freq = c.csi == NrCsi::ls_lmmse ? nr::FreqInterpolation::lmmse : nr::FreqInterpolation::linear;
  e.delay_spread_ns = c.tdl ? c.tdl->delay_spread_ns : 100.0;
  e.lmmse_snr_db = std::clamp(-10.0 * std::log10(double(n0)), -30.0, 100.0);
  return e;
}

void place_layers(const nr::SlotPlan& plan, std::span<const cf32> d, std::span<cf32> x) {
  const int v = plan.config().layers;
  const auto& res = plan.data_res();
  const std::size_t per_layer = res.size();
  require(d.size() == per_layer * std::size_t(v), "codeword",
          "symbols " + std::to_string(d.size()) + " != data REs x layers");
  require(x.size() == std::size_t(grid_res(plan)) * std::size_t(v), "grid", "size mismatch");
  std::fill(x.begin(), x.end(), cf32{0.f, 0.f});
  const std::vector<cf32> layered = nr::map_to_layers(d, v);  // layer-major
  const int n_sc = plan.n_subcarriers();
  for (int j = 0; j < v; ++j) {
    for (std::size_t i = 0; i < per_layer; ++i) {
      const std::size_t re = std::size_t(res[i].l) * std::size_t(n_sc) + std::size_t(res[i].k);
      x[re * std::size_t(v) + std::size_t(j)] = layered[std::size_t(j) * per_layer + i];
    }
  }
}

void place_dmrs(const nr::SlotPlan& plan, std::span<cf32> x) {
  const int v = plan.config().layers;
  const int n_sc = plan.n_subcarriers();
  for (int p = 0; p < v; ++p) {
    for (const auto& re : plan.dmrs_res(p)) {
      const std::size_t at = (std::size_t(re.l) * std::size_t(n_sc) + std::size_t(re.k)) * v + p;
      x[at] = rounding::cadd(x[at], re.value);
    }
  }
}

NrSlotChannel::NrSlotChannel(const NrLinkConfig& c, const nr::SlotPlan& plan)
    : n_rx_(c.n_rx), layers_(c.slot.layers), res_(grid_res(plan)) {
  if (!c.tdl) return;
  tdl_ = std::make_unique<channel::TdlChannel>(nr_tdl_config(c, plan), Backend::cpu());
}

NrSlotChannel::~NrSlotChannel() = default;

void NrSlotChannel::generate(std::uint64_t seed, std::int64_t block, int tx, std::span<cf32> h) {
  const std::size_t per = std::size_t(n_rx_) * std::size_t(layers_);
  if (tdl_) {
    tdl_->generate(seed, channel::TdlSlots{block, tx, 1},
                   MatrixBatch<cf32>(h.data(), res_, n_rx_, layers_, Memory::host));
    return;
  }
  // Flat: one CN(0, 1) matrix per slot, on every RE.
  const std::uint64_t slot = nr_noise_slot(block, tx);
  for (std::size_t e = 0; e < per; ++e) h[e] = nr_flat_entry(seed, slot, int(per), int(e));
  for (std::int64_t r = 1; r < res_; ++r)
    std::copy_n(h.begin(), per, h.begin() + std::ptrdiff_t(std::size_t(r) * per));
}

void receive_grid(std::uint64_t seed, std::uint64_t noise_slot, const nr::SlotPlan& plan, int n_rx,
                  std::span<const cf32> h, std::span<const cf32> x, float n0, std::span<cf32> y) {
  const int v = plan.config().layers;
  const std::int64_t res = grid_res(plan);
  const float s = nr_noise_scale(n0);
  for (std::int64_t re = 0; re < res; ++re) {
    for (int r = 0; r < n_rx; ++r) {
      y[std::size_t(re * n_rx + r)] = nr_received(seed, noise_slot, res, n_rx, v, re, r,
                                                  h.data() + re * n_rx * v, x.data() + re * v, s);
    }
  }
}

void gather_data_y(const nr::SlotPlan& plan, int n_rx, std::span<const cf32> y,
                   std::span<cf32> y_data) {
  const int n_sc = plan.n_subcarriers();
  const auto& res = plan.data_res();
  for (std::size_t i = 0; i < res.size(); ++i) {
    const std::size_t re = std::size_t(res[i].l) * std::size_t(n_sc) + std::size_t(res[i].k);
    std::copy_n(y.begin() + std::ptrdiff_t(re * n_rx), n_rx,
                y_data.begin() + std::ptrdiff_t(i * n_rx));
  }
}

void llrs_to_codeword(std::span<const float> detected, int layers, int m,
                      std::span<float> codeword) {
  // Codeword symbol v i + j is layer j's symbol i (TS 38.211 §6.3.1.3), which the detector
  // gives as stream j of data RE i. With layer j on antenna j the two indices coincide; the loop
  // states the correspondence rather than assume it.
  const std::size_t per_re = std::size_t(layers) * std::size_t(m);
  const auto n_re = std::int64_t(detected.size() / per_re);
  for (std::int64_t i = 0; i < n_re; ++i)
    for (int j = 0; j < layers; ++j)
      for (int k = 0; k < m; ++k)
        codeword[std::size_t(nr_codeword_llr(i, layers, j, m, k))] =
            detected[std::size_t(nr_detector_llr(i, layers, j, m, k))];
}

}  // namespace mimorx::sim::detail

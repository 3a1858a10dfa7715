// The slot's RE bookkeeping: TS 38.211 §6.3.1.6 / §7.3.1.5 (data REs) and §6.4.1.1.3 /
// §7.4.1.1.2 (DM-RS REs).
#include <algorithm>
#include <cmath>
#include <string>

#include "mimorx/core/error.hpp"
#include "mimorx/nr/slot.hpp"

namespace mimorx::nr {
namespace {

int ld_of(const SlotConfig& c) { return c.start_symbol + c.num_symbols; }

bool is_dmrs_symbol(const std::vector<int>& symbols, int l) {
  return std::find(symbols.begin(), symbols.end(), l) != symbols.end();
}

}  // namespace

void validate(const SlotConfig& c) {
  const bool pusch = c.channel == SharedChannel::pusch;
  require(pusch || c.channel == SharedChannel::pdsch, "channel", "must be pusch or pdsch");
  require(c.numerology == 0 || c.numerology == 1, "numerology",
          std::to_string(c.numerology) + "; allowed 0 (15 kHz) or 1 (30 kHz)");
  require(c.n_prb >= 1 && c.n_prb <= 273, "n_prb", std::to_string(c.n_prb) + "; allowed 1..273");
  if (pusch) {
    require(c.start_symbol == 0, "start_symbol",
            std::to_string(c.start_symbol) + "; PUSCH mapping type A starts at symbol 0");
    require(c.num_symbols >= 4 && c.num_symbols <= 14, "num_symbols",
            std::to_string(c.num_symbols) + "; PUSCH mapping type A allows 4..14");
  } else {
    require(c.start_symbol >= 0 && c.start_symbol <= 3, "start_symbol",
            std::to_string(c.start_symbol) + "; PDSCH mapping type A allows 0..3");
    require(c.num_symbols >= 3 && c.num_symbols <= 14 - c.start_symbol, "num_symbols",
            std::to_string(c.num_symbols) + " from symbol " + std::to_string(c.start_symbol) +
                "; PDSCH mapping type A allows 3..14 with start + length <= 14");
  }
  require(c.type_a_position == 2 || c.type_a_position == 3, "type_a_position",
          std::to_string(c.type_a_position) + "; allowed 2 or 3");
  require(c.start_symbol <= c.type_a_position, "start_symbol",
          std::to_string(c.start_symbol) +
              " is after the first DM-RS symbol l0 = " + std::to_string(c.type_a_position));
  require(c.additional_position >= 0 && c.additional_position <= 3, "additional_position",
          std::to_string(c.additional_position) + "; allowed 0..3");
  require(c.additional_position < 3 || c.type_a_position == 2, "additional_position",
          "3 needs type_a_position 2 (TS 38.211 §6.4.1.1.3, §7.4.1.1.2)");
  require(pusch || ld_of(c) > 4 || c.type_a_position == 2, "num_symbols",
          "a PDSCH ending at symbol " + std::to_string(ld_of(c) - 1) +
              " (l_d = 3 or 4) needs type_a_position 2 (TS 38.211 §7.4.1.1.2)");
  require(c.dmrs_type == DmrsType::type1 || c.dmrs_type == DmrsType::type2, "dmrs_type",
          "must be 1 or 2");
  const int groups = dmrs_cdm_groups(c.dmrs_type);
  require(c.cdm_groups_without_data >= 1 && c.cdm_groups_without_data <= groups,
          "cdm_groups_without_data",
          std::to_string(c.cdm_groups_without_data) + "; allowed 1.." + std::to_string(groups) +
              " for DM-RS type " + std::to_string(int(c.dmrs_type)));
  require(c.layers >= 1 && c.layers <= 4, "layers",
          std::to_string(c.layers) + "; allowed 1..4 (ports 0..3, one codeword)");
  const int needed = dmrs_port(c.dmrs_type, c.layers - 1).cdm_group + 1;
  require(c.cdm_groups_without_data >= needed, "cdm_groups_without_data",
          std::to_string(c.cdm_groups_without_data) + " with " + std::to_string(c.layers) +
              " layers: ports 0.." + std::to_string(c.layers - 1) + " use " +
              std::to_string(needed) + " CDM groups; set at least " + std::to_string(needed));
  const int slots = 10 << c.numerology;
  require(c.slot >= 0 && c.slot < slots, "slot",
          std::to_string(c.slot) + "; allowed 0.." + std::to_string(slots - 1) +
              " for numerology " + std::to_string(c.numerology));
  require(c.n_id >= 0 && c.n_id <= 65535, "n_id", std::to_string(c.n_id) + "; allowed 0..65535");
  require(c.n_scid == 0 || c.n_scid == 1, "n_scid", std::to_string(c.n_scid) + "; allowed 0 or 1");
  if (c.dmrs_amplitude) {
    require(std::isfinite(*c.dmrs_amplitude) && *c.dmrs_amplitude > 0.f, "dmrs_amplitude",
            std::to_string(*c.dmrs_amplitude) + "; must be finite and > 0");
  }
}

SlotPlan::SlotPlan(const SlotConfig& config) : config_(config) {
  validate(config_);
  const SlotConfig& c = config_;
  amplitude_ =
      c.dmrs_amplitude ? *c.dmrs_amplitude : float(std::sqrt(double(c.cdm_groups_without_data)));
  dmrs_symbols_ = nr::dmrs_symbols(c.channel, c.type_a_position, c.additional_position, ld_of(c));
  const int nsc = n_subcarriers();

  // Data: every RE of the allocation except, in DM-RS symbols, those of CDM groups 0 ..
  // cdm_groups_without_data - 1.
  for (int l = c.start_symbol; l < ld_of(c); ++l) {
    const bool dmrs = is_dmrs_symbol(dmrs_symbols_, l);
    for (int k = 0; k < nsc; ++k) {
      bool reserved = false;
      for (int g = 0; dmrs && g < c.cdm_groups_without_data; ++g) {
        reserved = reserved || in_cdm_group(c.dmrs_type, g, k);
      }
      if (!reserved) data_res_.push_back({k, l});
    }
  }

  // DM-RS: k = 4n + 2k' + Delta (type 1) or 6n + k' + Delta (type 2), value
  // beta w_f(k') w_t(l') r(2n + k'), l' = 0 (single symbol).
  const bool t1 = c.dmrs_type == DmrsType::type1;
  const int per_prb = dmrs_re_per_group(c.dmrs_type);
  dmrs_res_.resize(std::size_t(c.layers));
  for (int p = 0; p < c.layers; ++p) {
    const DmrsPort port = dmrs_port(c.dmrs_type, p);
    std::vector<DmrsRe>& out = dmrs_res_[std::size_t(p)];
    for (int l : dmrs_symbols_) {
      const std::vector<cf32> r =
          dmrs_sequence(dmrs_c_init(c.slot, l, c.n_id, c.n_scid), per_prb * c.n_prb);
      for (int n = 0; 2 * n < per_prb * c.n_prb; ++n) {
        for (int kp = 0; kp < 2; ++kp) {
          const int k = t1 ? 4 * n + 2 * kp + port.delta : 6 * n + kp + port.delta;
          const float w = amplitude_ * float(port.w_f[kp] * port.w_t[0]);
          out.push_back({k, l, r[std::size_t(2 * n + kp)] * w});
        }
      }
    }
  }
}

const std::vector<DmrsRe>& SlotPlan::dmrs_res(int port) const {
  require(port >= 0 && port < config_.layers, "port",
          std::to_string(port) + "; allowed 0.." + std::to_string(config_.layers - 1));
  return dmrs_res_[std::size_t(port)];
}

int SlotPlan::dmrs_re_per_prb() const {
  return dmrs_re_per_group(config_.dmrs_type) * config_.cdm_groups_without_data *
         int(dmrs_symbols_.size());
}

TbsInput SlotPlan::tbs_input(McsTable table, int mcs, int n_oh_prb) const {
  return nr::tbs_input(table, mcs, config_.layers, config_.n_prb, config_.num_symbols,
                       dmrs_re_per_prb(), n_oh_prb);
}

}  // namespace mimorx::nr

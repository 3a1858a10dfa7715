#pragma once
// One slot of PUSCH (without transform precoding) or PDSCH on an NR resource grid (TS 38.211):
// mapping type A, single-symbol DM-RS of type 1 or 2, ports 0 .. layers - 1. The plan lists
// the data REs in the standard's mapping order, the DM-RS REs and values of each port, and the
// DM-RS overhead that the TBS determination of TS 38.214 §5.1.3.2 needs.
#include <optional>
#include <vector>

#include "mimorx/core/complex.hpp"
#include "mimorx/nr/dmrs.hpp"
#include "mimorx/nr/mcs.hpp"
#include "mimorx/nr/tbs.hpp"

namespace mimorx::nr {

struct SlotConfig {
  SharedChannel channel = SharedChannel::pusch;
  int numerology = 1;  // mu: 0 (15 kHz) or 1 (30 kHz)
  // PRBs of the grid, 1..273; the allocation is the whole grid, starting at common resource
  // block 0 (the reference point of the DM-RS sequence).
  int n_prb = 52;
  int start_symbol = 0;     // S: 0 for PUSCH, 0..3 for PDSCH (mapping type A)
  int num_symbols = 14;     // L: PUSCH 4..14, PDSCH 3..14 with S + L <= 14
  int type_a_position = 2;  // dmrs-TypeA-Position: l0 = 2 or 3
  DmrsType dmrs_type = DmrsType::type1;
  int additional_position = 1;  // dmrs-AdditionalPosition: 0..3 (3 needs l0 = 2)
  // CDM groups without data: 1..2 (type 1) or 1..3 (type 2); their REs in DM-RS symbols carry
  // no data. Must cover the CDM groups of the ports (2 or more for 3 and 4 layers).
  int cdm_groups_without_data = 2;
  int layers = 1;  // v = 1..4 on DM-RS ports 0 .. v - 1 (PDSCH ports 1000 ..)
  int slot = 0;    // n_s,f: slot in the frame, 0 .. 10 * 2^mu - 1
  int n_id = 0;    // N_ID^{n_SCID} (scramblingID0/1 or the cell id), 0..65535
  int n_scid = 0;  // n_SCID: 0 or 1
  // beta_DMRS, the DM-RS amplitude relative to data. Default: sqrt(cdm_groups_without_data),
  // the EPRE ratios 0, -3, -4.77 dB of TS 38.214 Table 4.1-1 (PDSCH) and 6.2.2-1 (PUSCH).
  std::optional<float> dmrs_amplitude;
};

// Throws InvalidArgument naming the first illegal field or combination.
void validate(const SlotConfig& config);

struct Re {
  int k;  // subcarrier, 0 .. 12 n_prb - 1
  int l;  // OFDM symbol in the slot, 0..13
};

struct DmrsRe {
  int k;
  int l;
  cf32 value;  // beta_DMRS w_f(k') w_t(l') r(2n + k')
};

class SlotPlan {
 public:
  static constexpr int kSymbols = 14;

  explicit SlotPlan(const SlotConfig& config);

  const SlotConfig& config() const { return config_; }
  int n_subcarriers() const { return 12 * config_.n_prb; }
  int subcarrier_spacing_khz() const { return 15 << config_.numerology; }
  float dmrs_amplitude() const { return amplitude_; }

  // DM-RS symbols l, ascending.
  const std::vector<int>& dmrs_symbols() const { return dmrs_symbols_; }
  // Data REs in the order codeword symbols fill them (§6.3.1.6 / §7.3.1.5): subcarrier first,
  // then symbol; the same positions carry layer j's symbol i at index i.
  const std::vector<Re>& data_res() const { return data_res_; }
  int data_re_count() const { return int(data_res_.size()); }
  // DM-RS REs of port p (0 .. layers - 1) by symbol, then subcarrier, with their values.
  const std::vector<DmrsRe>& dmrs_res(int port) const;
  int cdm_group(int port) const { return dmrs_port(config_.dmrs_type, port).cdm_group; }
  // N_DMRS^PRB of TS 38.214 §5.1.3.2: DM-RS REs per PRB in the allocation, counting the REs
  // of all CDM groups without data.
  int dmrs_re_per_prb() const;

  // TBS input for this allocation: N_symb^sh = L, N_DMRS^PRB, n_PRB, layers.
  TbsInput tbs_input(McsTable table, int mcs, int n_oh_prb = 0) const;

 private:
  SlotConfig config_;
  float amplitude_ = 1.f;
  std::vector<int> dmrs_symbols_;
  std::vector<Re> data_res_;
  std::vector<std::vector<DmrsRe>> dmrs_res_;
};

}  // namespace mimorx::nr

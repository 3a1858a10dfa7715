#pragma once
// The NR slot link (docs/nr_sim.md): one codeword of TS 38.214-sized
// transport blocks per slot on a resource grid, over a flat or TDL channel, with HARQ.
//
//   TBS, Qm and R from the MCS table (nr::SlotPlan::tbs_input) -> tbs information bits (Philox,
//   addressed by the block index) -> TS 38.212 chain with the transmission's rv (0, 2, 3, 1),
//   G = data REs x layers x Qm -> QAM -> layer mapping (layer j on transmit antenna j) onto the
//   data REs, DM-RS of each port on its REs -> y[k, l] = H[k, l] x[k, l] + n on every RE of the
//   grid -> receiver CSI (H and N0 per data RE) -> soft detection per data RE -> LLRs in
//   codeword order -> HARQ soft combining -> LDPC decoding -> TB CRC. A block whose TB CRC fails
//   is sent again in the next slot of the same channel realisation, up to harq_transmissions.
//
// Addressing (so that counts depend neither on the batch size nor on harq_transmissions for the
// transmissions both make): block t is channel realisation t; its transmission i (0-based) is
// slot i of that realisation (TdlSlots{t, i, 1}) and noise slot 4 t + i. The same addressing,
// the shared per-RE arithmetic (src/sim/nr_link_math.hpp) and the backends' bit-identical plans
// give the same counts on the CPU and CUDA backends.
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "mimorx/channel/tdl.hpp"
#include "mimorx/core/backend.hpp"
#include "mimorx/ldpc/decoder.hpp"
#include "mimorx/ldpc/transport.hpp"
#include "mimorx/modem/modulation.hpp"
#include "mimorx/nr/mcs.hpp"
#include "mimorx/nr/slot.hpp"
#include "mimorx/sim/distributed.hpp"

namespace mimorx::sim {

// Where the receiver's H and N0 come from. perfect: the true channel and noise variance
// (genie). ls_linear, ls_lmmse: the DM-RS channel estimator (nr/estimate.hpp) on the received
// grid, with linear or LMMSE frequency interpolation (the LMMSE design: an exponential
// power-delay profile with the TDL's delay spread, 100 ns on the flat channel, at the point's
// SNR), and N0 estimated per slot.
enum class NrCsi { perfect, ls_linear, ls_lmmse };

inline constexpr int kMaxHarqTransmissions = 4;

struct NrLinkConfig {
  nr::SlotConfig slot{};  // numerology, PRBs, DM-RS, layers (= transmit antennas)
  nr::McsTable mcs_table = nr::McsTable::qam64;
  int mcs = 0;   // 0 .. nr::max_mcs(mcs_table); reserved rows are refused
  int n_rx = 2;  // receive antennas, 1..8, >= layers
  // Empty: flat i.i.d. Rayleigh, CN(0, 1) entries, one draw per slot (constant over its REs,
  // independent between slots, retransmissions included). Otherwise a TDL channel: model, delay
  // spread, Doppler and correlation from here; antennas, subcarriers, spacing, symbols and the
  // link direction (uplink for PUSCH) are set by the link.
  std::optional<channel::TdlConfig> tdl;
  std::string detector = "mmse";  // a soft detector of detect/factory.hpp
  ldpc::DecoderSettings decoder{};
  int harq_transmissions = 1;  // 1..4, rv sequence 0, 2, 3, 1
  NrCsi csi = NrCsi::perfect;
  std::uint64_t seed = 1;
  std::int64_t max_slots = 1000;  // a point ends at the block whose transmissions reach this
  // A point ends at the block that makes this many residual block errors (0 = never).
  std::int64_t min_block_errors = 0;
  std::int64_t batch_blocks = 0;  // transport blocks per call; 0 = automatic
  // End the sweep after the first point without a residual block error.
  bool early_stop = false;
  // The ranks that run this simulation together, each its share of every round; all of them
  // get the counts of one process (docs/sim_mpi.md). None: this process alone.
  std::shared_ptr<Communicator> comm;
};

// What a configuration resolves to.
struct NrLinkSetup {
  int tbs = 0;
  Modulation mod = Modulation::qpsk;
  double target_rate = 0;  // the MCS row's R
  int data_res = 0;        // data REs per slot
  std::int64_t g = 0;      // coded bits per transmission: data_res x layers x Qm
  double rate = 0;         // tbs / g
  int code_blocks = 0;
};

// Validates the configuration and builds what the link derives (throws InvalidArgument).
NrLinkSetup nr_link_setup(const NrLinkConfig& config);
// The TS 38.212 chain of the link (rv 0; the link passes each transmission's rv).
ldpc::TransportConfig nr_transport_config(const NrLinkConfig& config);

struct NrPointResult {
  double snr_db = 0;   // Es/N0 per RE and receive antenna, Es = 1 per layer
  double ebn0_db = 0;  // Es/N0 / (Qm tbs / g)
  int tbs = 0;
  std::int64_t blocks = 0;  // transport blocks
  std::int64_t slots = 0;   // transmissions (one slot each)
  // tx_errors[i]: blocks not delivered after i + 1 transmissions (size harq_transmissions).
  std::vector<std::int64_t> tx_errors;
  std::int64_t undetected_errors = 0;  // blocks whose TB CRC passed with wrong bits
  std::int64_t delivered_bits = 0;     // tbs x delivered blocks
  double seconds = 0;

  std::int64_t block_errors() const { return tx_errors.empty() ? 0 : tx_errors.back(); }
  double bler_tx(std::size_t i) const {
    return blocks ? double(tx_errors[i]) / double(blocks) : 0.0;
  }
  double residual_bler() const { return blocks ? double(block_errors()) / double(blocks) : 0.0; }
  // Delivered information bits per slot, and that over the maximum (tbs per slot).
  double throughput() const { return slots ? double(delivered_bits) / double(slots) : 0.0; }
  double throughput_fraction() const { return tbs ? throughput() / double(tbs) : 0.0; }
};

using NrProgress = std::function<void(const NrPointResult&)>;

struct NrHooks {
  std::function<void(const NrLinkSetup&)> ready;  // once, after validation
  NrProgress batch_done;                          // the current point so far
  NrProgress point_done;                          // a finished point
};

// On the CPU or a CUDA backend, with identical counts for one seed (and any batch_blocks).
// Validates everything before `ready`.
std::vector<NrPointResult> run_nr_link(const NrLinkConfig& config, const Backend& backend,
                                       const std::vector<double>& snr_db,
                                       const NrHooks& hooks = {});

}  // namespace mimorx::sim

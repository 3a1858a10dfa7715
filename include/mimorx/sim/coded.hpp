#pragma once
// The coded link: 5G NR LDPC transport blocks over a MIMO channel.
//
//   tbs information bits (Philox) -> TS 38.212 chain (CRC, segmentation, LDPC encoding, rate
//   matching; ldpc::TransportPlan) -> G coded bits -> QAM on nt antennas -> G / (nt m) received
//   vectors, each with its own i.i.d. Rayleigh channel (fast fading) and AWGN -> soft detector
//   (max-log LLRs, positive = bit 0) -> de-rate-matching, layered LDPC decoding, CRCs -> BER of
//   the information bits and BLER (a block is in error when any decoded bit differs).
//
// G is what TransportPlan derives for the target rate, rounded up to a multiple of nt * m so
// that the coded bits fill whole vectors; the rate actually used is tbs / G (reported).
//
// Reproducibility as in link.hpp: every random value is a Philox stream addressed by (seed,
// block index, bit or vector index), so counts do not depend on the backend or the batch.
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "mimorx/core/backend.hpp"
#include "mimorx/detect/common.hpp"
#include "mimorx/ldpc/decoder.hpp"
#include "mimorx/ldpc/transport.hpp"
#include "mimorx/sim/channel_model.hpp"
#include "mimorx/sim/distributed.hpp"

namespace mimorx::sim {

struct CodedConfig {
  detect::MimoShape shape{2, 2, Modulation::qam16};
  std::string detector = "mmse";  // must give LLRs: zf, mmse, ml, nway:N, kbest:K
  std::uint64_t seed = 1;
  int tbs = 1024;                   // information bits per transport block (TS 38.214 sizes)
  double code_rate = 0.5;           // target rate R (selects the base graph and G)
  ldpc::DecoderSettings decoder{};  // LDPC decoder: algorithm, iterations, alpha, ...
  std::int64_t blocks = 1000;       // transport blocks per SNR point (the most simulated)
  std::int64_t batch_blocks = 0;    // blocks per detector call; 0 = automatic
  // Stop a point at the block whose error makes this many block errors (0 = never). The cut is
  // exact (block by block), so the counts do not depend on the batch size.
  std::int64_t min_block_errors = 0;
  // End the sweep after the first point without a block error (the points after it are not
  // simulated and not returned).
  bool early_stop = false;
  ChannelModel channel{};  // correlation and block fading (default: i.i.d. per vector)
  // The ranks that run this simulation together, each its share of every round; all of them
  // get the counts of one process (docs/sim_mpi.md). None: this process alone.
  std::shared_ptr<Communicator> comm;
};

struct CodedPointResult {
  double snr_db = 0;   // Es/N0 in dB (Es = 1 per transmit antenna, N0 per receive antenna)
  double ebn0_db = 0;  // Eb/N0 = Es/N0 / (m * tbs / G), information bits
  std::int64_t bit_errors = 0, bits = 0;      // information bits
  std::int64_t block_errors = 0, blocks = 0;  // transport blocks
  std::int64_t crc_failures = 0;              // blocks whose TB CRC failed
  std::int64_t undetected_errors = 0;         // blocks in error whose TB CRC passed
  double seconds = 0;
  double ber() const { return bits ? double(bit_errors) / double(bits) : 0.0; }
  double bler() const { return blocks ? double(block_errors) / double(blocks) : 0.0; }
};

struct CodedLink {
  std::int64_t g = 0;                  // coded bits per block
  std::int64_t vectors_per_block = 0;  // g / (nt m)
  double rate = 0;                     // tbs / g
};

using CodedProgress = std::function<void(const CodedPointResult&)>;
using CodedReady = std::function<void(const CodedLink&)>;

// What the caller is told while a sweep runs (every hook may be empty).
struct CodedHooks {
  CodedReady ready;          // once, after validation, before the first point
  CodedProgress batch_done;  // after each batch: the current point's counts so far
  CodedProgress point_done;  // after each point: its final counts
};

// The transport chain a coded link runs: the config's TBS, rate, modulation and decoder, one
// layer, and G rounded up to whole received vectors (a multiple of nt m).
ldpc::TransportConfig transport_config(const CodedConfig& config);

// Validates everything (and builds the plans) before `ready` is called, so bad input fails
// before any output.
std::vector<CodedPointResult> run_coded(const CodedConfig& config, const Backend& backend,
                                        const std::vector<double>& snr_db, const CodedHooks& hooks);
std::vector<CodedPointResult> run_coded(const CodedConfig& config, const Backend& backend,
                                        const std::vector<double>& snr_db,
                                        const CodedProgress& progress = {},
                                        const CodedReady& ready = {});

}  // namespace mimorx::sim

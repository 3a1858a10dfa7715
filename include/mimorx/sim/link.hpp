#pragma once
// The link-level simulator. Uncoded mode: per SNR point, `frames` received vectors, each with
// its own i.i.d. Rayleigh channel realisation (one vector per channel), detected by the chosen
// detector; BER and SER of the hard decisions are counted.
//
// Reproducibility: all random values are Philox streams addressed by (seed, global frame
// index), so a run gives the same counts on the CPU and on CUDA and for any batch size. The
// same bits, channels and noise shapes are used at every SNR point (common random numbers).
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "mimorx/core/backend.hpp"
#include "mimorx/detect/common.hpp"
#include "mimorx/sim/channel_model.hpp"
#include "mimorx/sim/distributed.hpp"

namespace mimorx::sim {

struct UncodedConfig {
  detect::MimoShape shape{2, 2, Modulation::qam16};
  std::string detector = "mmse";
  std::uint64_t seed = 1;
  std::int64_t frames = 100000;  // received vectors per SNR point
  std::int64_t batch = 0;        // vectors per detector call; 0 = automatic
  // Stop a point at the received vector whose errors make this many bit errors (0 = never).
  // The cut is exact (vector by vector), so the counts do not depend on the batch size.
  std::int64_t min_bit_errors = 0;
  // End the sweep after the first point without a bit error.
  bool early_stop = false;
  ChannelModel channel{};  // correlation and block fading (default: i.i.d. per vector)
  // The ranks that run this simulation together, each its share of every round; all of them
  // get the counts of one process (docs/sim_mpi.md). None: this process alone.
  std::shared_ptr<Communicator> comm;
};

struct PointResult {
  double snr_db = 0;   // Es/N0 in dB (Es = 1 per transmit antenna, N0 per receive antenna)
  double ebn0_db = 0;  // Eb/N0 = Es/N0 / bits per symbol
  std::int64_t bit_errors = 0, bits = 0;
  std::int64_t symbol_errors = 0, symbols = 0;
  std::int64_t frames = 0;
  // Vectors whose detection a work cap stopped early (Detector::capped_vectors; psd's node
  // budget): their decisions are not guaranteed exact. Batches queued past a stop count too.
  std::int64_t capped_vectors = 0;
  double seconds = 0;
  double ber() const { return bits ? double(bit_errors) / double(bits) : 0.0; }
  double ser() const { return symbols ? double(symbol_errors) / double(symbols) : 0.0; }
};

using Progress = std::function<void(const PointResult&)>;
using Ready = std::function<void()>;

// What the caller is told while a sweep runs (every hook may be empty).
struct UncodedHooks {
  Ready ready;          // once, after validation, before the first point
  Progress batch_done;  // after each batch: the current point's counts so far
  Progress point_done;  // after each point: its final counts
};

// Validates everything (and builds the detector plan) before `ready` is called and the first
// point is simulated, so that bad input fails before any output.
std::vector<PointResult> run_uncoded(const UncodedConfig& config, const Backend& backend,
                                     const std::vector<double>& snr_db, const UncodedHooks& hooks);
std::vector<PointResult> run_uncoded(const UncodedConfig& config, const Backend& backend,
                                     const std::vector<double>& snr_db,
                                     const Progress& progress = {}, const Ready& ready = {});

}  // namespace mimorx::sim

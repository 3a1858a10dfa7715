#pragma once
// The simulator's fading channel (uncoded and coded links): Rayleigh with optional Kronecker
// correlation and block fading.
//
//   H = R_rx^{1/2} G R_tx^{1/2}, G i.i.d. CN(0, 1), [R]_ij = rho^|i-j| at each end (the
//   exponential model of channel/fading.hpp; rho = 0: no correlation, H = G);
//   one realisation of H serves vectors_per_channel consecutive received vectors (block
//   fading; 1: a new H for every vector). In the coded link a coherence block never spans two
//   transport blocks: block b's vectors 0..V-1 use its own ceil(V / vectors_per_channel)
//   realisations, so vectors_per_channel >= V gives one H per transport block (quasi-static).
//
// With the defaults (no correlation, one vector per channel) the channel is exactly the i.i.d.
// one the simulator draws without a model; like it, every value is addressed by the seed and
// global indices, so CPU and CUDA give the same counts for any batch.
#include <cstdint>

namespace mimorx::sim {

struct ChannelModel {
  double corr_tx = 0.0;                  // rho between adjacent transmit antennas, [0, 1)
  double corr_rx = 0.0;                  // rho between adjacent receive antennas, [0, 1)
  std::int64_t vectors_per_channel = 1;  // received vectors per realisation of H, >= 1

  bool iid() const { return corr_tx == 0.0 && corr_rx == 0.0 && vectors_per_channel == 1; }
};

// The most vectors_per_channel may be (larger values would only repeat the largest block).
inline constexpr std::int64_t kMaxVectorsPerChannel = std::int64_t(1) << 40;

}  // namespace mimorx::sim

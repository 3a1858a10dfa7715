#pragma once
// Batched flat-fading MIMO channels, nr x nt, on the CPU or a CUDA device:
//   i.i.d. Rayleigh:  H = G, entries CN(0, 1) (no 1/nt normalisation: E|h_ij|^2 = 1);
//   Kronecker:        H = R_rx^{1/2} G R_tx^{1/2}, exponential correlation [R]_ij = rho^|i-j|
//                     at each end (Loyka 2001), rho in [0, 1); R^{1/2} is the symmetric square
//                     root, computed once in double precision and rounded to float.
// G comes from Philox at documented counters (channel/samples.hpp), so the CPU and CUDA backends
// give bit-identical H for the same seed, whatever the batch split: channel c of a call with
// first_channel = f is channel f + c of the seed's sequence.
// One channel serves a coherence block of vectors; see awgn.hpp (vectors_per_channel).
#include <cstdint>
#include <vector>

#include "mimorx/core/backend.hpp"
#include "mimorx/core/buffer.hpp"
#include "mimorx/core/complex.hpp"
#include "mimorx/core/tensor.hpp"

namespace mimorx::channel {

struct FadingConfig {
  int nr = 1;
  int nt = 1;
  double rho_tx = 0.0;  // exponential correlation between adjacent transmit antennas, [0, 1)
  double rho_rx = 0.0;  // ... between adjacent receive antennas, [0, 1)
};

class FadingPlan {
 public:
  // Validates (1 <= nr, nt <= 64; 0 <= rho < 1) and computes the square roots.
  FadingPlan(const FadingConfig& config, Backend backend);
  // Fills h (C matrices nr x nt in the backend's memory) with channels first_channel ...
  // first_channel + C - 1 of the sequence of `seed`.
  void generate(std::uint64_t seed, std::int64_t first_channel, MatrixBatch<cf32> h,
                const Stream& stream = {});
  const FadingConfig& config() const { return config_; }
  // R^{1/2} (column-major, float) as used; empty where rho = 0 (identity).
  const std::vector<float>& sqrt_rx() const { return sqrt_rx_host_; }
  const std::vector<float>& sqrt_tx() const { return sqrt_tx_host_; }

 private:
  FadingConfig config_;
  Backend backend_;
  std::vector<float> sqrt_rx_host_, sqrt_tx_host_;
  Buffer<float> sqrt_rx_dev_, sqrt_tx_dev_;
  Buffer<cf32> work_;  // G before correlation
};

// The exponential correlation matrix [R]_ij = rho^|i-j| (n x n, column-major, double).
std::vector<double> exponential_correlation(int n, double rho);

}  // namespace mimorx::channel

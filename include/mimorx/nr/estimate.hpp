#pragma once
// Receiver channel estimation from the DM-RS of one slot (docs/nr_estimate.md):
// least-squares estimates at each port's DM-RS REs with CDM despreading,
// interpolation in frequency (linear, or LMMSE from a power-delay profile) and in time (linear
// between DM-RS symbols), and the noise variance from the DM-RS residual. CPU and CUDA compute
// the same bits.
#include <cstdint>
#include <memory>
#include <vector>

#include "mimorx/core/backend.hpp"
#include "mimorx/core/buffer.hpp"
#include "mimorx/core/complex.hpp"
#include "mimorx/core/tensor.hpp"
#include "mimorx/nr/slot.hpp"

namespace mimorx::nr {

enum class FreqInterpolation { linear, lmmse };

struct EstimatorConfig {
  FreqInterpolation freq = FreqInterpolation::linear;
  // The design of the LMMSE interpolator and of the noise residuals' predictor: the channel's
  // power-delay profile (delays in ns, >= 0; linear powers, >= 0, summing to 1 within 1e-3,
  // normalised here); empty: an exponential profile with rms delay spread `delay_spread_ns`.
  std::vector<double> pdp_delay_ns, pdp_power;
  double delay_spread_ns = 300.0;  // (0, 100000]
  // The SNR the LMMSE weights are designed for: 1/N0 with unit channel power per entry and
  // unit-energy data symbols (channel/snr.hpp), [-30, 100] dB.
  double lmmse_snr_db = 20.0;
  // Pilot estimates per LMMSE window (interpolation, noise residuals), 2..64 (fewer where a
  // port has fewer).
  int lmmse_window = 16;
  // N0 from the DM-RS REs that carry nothing (CDM groups without data that no scheduled port
  // uses: y = n there when no other transmitter uses those ports) where the slot has them;
  // otherwise, or when false, from the residual of the pilot estimates.
  bool noise_from_empty_res = true;
  // Despread pilots: remove the other port's leakage (half its channel difference over the OCC
  // pair) using that port's slope between neighbouring pilots.
  bool cdm_leakage_correction = true;
};

// Throws InvalidArgument naming the first bad field.
void validate(const EstimatorConfig& config);

class ChannelEstimator {
 public:
  // n_rx: receive antennas, 1..64. Validates, builds the interpolation tables on `backend`.
  ChannelEstimator(const SlotPlan& plan, int n_rx, const EstimatorConfig& config, Backend backend);
  ChannelEstimator(ChannelEstimator&&) noexcept;
  ChannelEstimator& operator=(ChannelEstimator&&) noexcept;
  ~ChannelEstimator();

  // y: received grids of `slots` slots: element ((b * 14 + l) * n_sc + k) * n_rx + r (the
  //    receive vector of RE (k, l) contiguous); only the DM-RS REs are read.
  // h: estimates in the TDL layout: matrix (b * 14 + l) * n_sc + k, n_rx x layers
  //    column-major, written for every RE (k, l) of the slot, l = 0..13.
  // noise_var: per slot, N0 estimated from the empty DM-RS REs or the pilot residuals
  //    (EstimatorConfig::noise_from_empty_res).
  // All three in the backend's memory. The workspace is the plan's: one call at a time.
  void estimate(View<const cf32> y, std::int64_t slots, MatrixBatch<cf32> h, View<float> noise_var,
                const Stream& stream = {}) const;

  const EstimatorConfig& config() const;
  int n_rx() const;
  int layers() const;
  int n_subcarriers() const;
  // Pilot estimates of `port` per DM-RS symbol: one per RE, or one per OCC pair where another
  // scheduled port shares the CDM group.
  int pilots(int port) const;
  // Whether `port`'s estimates are despread over OCC pairs.
  bool despread(int port) const;
  // Whether N0 comes from empty DM-RS REs (else from the pilot residual).
  bool uses_empty_res() const;
  // Frequency-interpolation taps per subcarrier: 2 (linear) or the LMMSE window used.
  int taps() const;

 private:
  struct Impl;  // tables and workspace on the backend (src/nr/estimate_plan.cpp)
  std::unique_ptr<Impl> impl_;
};

}  // namespace mimorx::nr

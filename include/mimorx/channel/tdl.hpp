#pragma once
// 3GPP tapped-delay-line channels in the frequency domain (docs/channel.md, "TDL channels"):
//   power-delay profiles TDL-A..E of TR 38.901 §7.7.2 scaled to a delay spread, and the
//   fixed-delay profiles TDLA30, TDLB100, TDLC300 of the conformance tests (TS 38.104 Annex G.2),
//   per tap and antenna pair a sum-of-sinusoids process with the classical (Jakes) Doppler
//   spectrum (TDL-D/E: the LOS row a rotating phasor at 0.7 fD),
//   MIMO correlation by the Kronecker model of TS 38.104 / TS 38.101-4 (low, medium, high),
//   H[k, l] = sum_n sqrt(P_n) (R^{1/2} w_n(t_l)) exp(-j 2 pi k df tau_n) per subcarrier k and
//   OFDM symbol l.
// All randomness comes from Philox at documented counters (seed, realisation, tap, antenna
// pair), so CPU and CUDA give bit-identical H whatever the batch split.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "mimorx/core/backend.hpp"
#include "mimorx/core/buffer.hpp"
#include "mimorx/core/complex.hpp"
#include "mimorx/core/tensor.hpp"

namespace mimorx::channel {

// a..e: TR 38.901 TDL-A..E, scaled to a delay spread. a30, b100, c300: the simplified profiles
// of TS 38.104 Table G.2.1.1-2..4 (12 taps each, delays fixed in ns, delay spread 30, 100,
// 300 ns), which the base station's performance requirements (TS 38.104 §8) are defined with.
enum class TdlModel { a, b, c, d, e, a30, b100, c300 };
enum class TdlCorrelation { low, medium, high };
// Which end is the gNB: uplink = the receiver (TS 38.104 Annex G), downlink = the transmitter
// (TS 38.101-4 Annex B). It decides which end gets alpha (gNB) and which beta (UE).
enum class TdlLink { uplink, downlink };

// One row of a profile after scaling: delay in ns, power linear with the rows summing to 1.
// A LOS row (TDL-D/E) is the specular part of the first tap; the Rayleigh row at the same delay
// is its diffuse part, and their power ratio is the profile's K-factor.
struct TdlTap {
  double delay_ns = 0.0;
  double power = 0.0;
  bool los = false;
};

struct TdlConfig {
  TdlModel model = TdlModel::a;
  double delay_spread_ns = 30.0;  // DS; tau_n = tau_norm,n * DS, (0, 10000]
  double max_doppler_hz = 0.0;    // fD, [0, 10000]
  TdlCorrelation correlation = TdlCorrelation::low;
  TdlLink link = TdlLink::uplink;
  int n_rx = 1;                     // 1, 2, 4, 8 (a UE end: 1, 2, 4 unless correlation is low)
  int n_tx = 1;                     // idem
  int subcarrier_spacing_khz = 30;  // 15 or 30 (numerology 0 or 1, normal cyclic prefix)
  int n_subcarriers = 12;           // 1..3300
  int symbols_per_slot = 14;        // 1..14: symbols 0..symbols_per_slot-1 of each slot
};

// Throws InvalidArgument naming the field, the value and what is allowed.
void validate(const TdlConfig& config);

// "tdl-b:100:400:low": model, delay spread (ns), maximum Doppler (Hz), correlation
// (low|medium|high); or the conformance name "tdlb100-400:low" (TDLA30, TDLB100, TDLC300 with
// the maximum Doppler after the dash). Case-insensitive names; the other fields keep their
// defaults.
TdlConfig parse_tdl(std::string_view text);

std::string_view tdl_model_name(TdlModel model);  // "tdl-a" ... "tdlc300"
// The delay spread (ns) a fixed-delay profile is defined with (30, 100, 300); empty for the
// scalable TR 38.901 models.
std::optional<double> tdl_fixed_delay_spread_ns(TdlModel model);
// The command-line form of a configuration: "tdl-b:100:400:low" or "tdlb100-400:low".
std::string tdl_name(const TdlConfig& config);
std::string_view tdl_correlation_name(TdlCorrelation level);  // "low" ...

// The profile rows of TR 38.901 Tables 7.7.2-1..5 scaled to delay_spread_ns, or of TS 38.104
// Tables G.2.1.1-2..4 (delay_spread_ns must then be the profile's own), normalised.
std::vector<TdlTap> tdl_profile(TdlModel model, double delay_spread_ns);
// K-factor of the first tap in dB (TDL-D 13.3, TDL-E 22.0); empty for the NLOS models.
std::optional<double> tdl_k_factor_db(TdlModel model);

// The single-end correlation matrix of TS 38.104 Table G.2.3.1.1-1/-2 for n = 1, 2, 4, 8
// antennas: [R]_ij = c^((i-j)^2 / (n-1)^2) (n x n, column-major).
std::vector<double> tdl_end_correlation(int n, double coefficient);
// alpha (gNB) and beta (UE) of a correlation level for a link direction.
struct TdlAlphaBeta {
  double alpha = 0.0;
  double beta = 0.0;
};
TdlAlphaBeta tdl_alpha_beta(TdlCorrelation level, TdlLink link);
// The diagonal loading a of the spec for this configuration (0 where the spec gives none).
double tdl_loading(const TdlConfig& config);
// R = (R_tx kron R_rx + a I) / (1 + a), (n_rx n_tx) square, column-major: the covariance of
// vec(H) (H column-major n_rx x n_tx) for every tap.
std::vector<double> tdl_spatial_correlation(const TdlConfig& config);

// Time of OFDM symbol l of slot s in seconds: the centre of its useful part (after the normal
// cyclic prefix, TS 38.211 §5.3.1), slots of 1 ms / 2^mu from t = 0.
double tdl_symbol_time_s(int subcarrier_spacing_khz, std::int64_t slot, int symbol);

// Which slots a call generates: slot b of the call (b = 0 .. B-1) is slot
// first_slot + b % slots_per_realisation of realisation first_realisation + b /
// slots_per_realisation. Realisations are independent channels (drops); the slots of one
// realisation are consecutive in time.
struct TdlSlots {
  std::int64_t first_realisation = 0;
  std::int64_t first_slot = 0;
  std::int64_t slots_per_realisation = 1;
};

class TdlChannel {
 public:
  // Validates, builds the profile, R^{1/2} and the per-subcarrier phase table.
  TdlChannel(const TdlConfig& config, Backend backend);
  // h: B * matrices_per_slot() matrices n_rx x n_tx in the backend's memory; matrix
  // (b * symbols_per_slot + l) * n_subcarriers + k is H[k, l] of slot b (frequency first).
  void generate(std::uint64_t seed, const TdlSlots& slots, MatrixBatch<cf32> h,
                const Stream& stream = {});
  const TdlConfig& config() const { return config_; }
  const std::vector<TdlTap>& taps() const { return taps_; }
  std::int64_t matrices_per_slot() const {
    return std::int64_t(config_.symbols_per_slot) * config_.n_subcarriers;
  }
  // R^{1/2} as used (float, column-major); empty for the identity (low correlation).
  const std::vector<float>& sqrt_correlation() const { return sqrt_r_host_; }

 private:
  TdlConfig config_;
  Backend backend_;
  std::vector<TdlTap> taps_;
  std::vector<float> sqrt_r_host_, amp_host_;
  std::vector<std::uint8_t> los_host_;
  std::vector<cf32> ramp_host_;
  Buffer<float> sqrt_r_dev_, amp_dev_;
  Buffer<std::uint8_t> los_dev_;
  Buffer<cf32> ramp_dev_;
  Buffer<cf32> w_, a_;  // uncorrelated processes, correlated tap matrices
};

}  // namespace mimorx::channel

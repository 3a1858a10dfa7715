#pragma once
// Exhaustive maximum-likelihood MIMO detection: x_ML = argmin_x ||y - H x||^2 over all M^nt
// symbol vectors, and exact max-log LLRs
//   LLR_k = (min_{x: b_k = 1} ||y - Hx||^2 - min_{x: b_k = 0} ||y - Hx||^2) / N0 (positive = 0).
//
// Exact for any nt, nr <= 8 with M^nt <= 2^24 hypotheses. The search enumerates the M^(nt-1)
// symbol combinations of columns 0..nt-2 and minimises over the last column's symbol in closed
// form: with r = y - sum_{t<nt-1} h_t x_t, g = ||h||^2 and z = h^H r / g (h the last column),
//   ||r - h x||^2 = ||r||^2 - g |z|^2 + g |x - z|^2,
// so the best last symbol is the constellation point nearest to z (a slicer), and its per-bit
// minima are per-axis PAM minima (demap.hpp). This is the whole search, only cheaper by M; no
// hypothesis is pruned. docs/ml.md has the derivation and the measured throughput.
//
// CPU: OpenMP over received vectors. CUDA: M^(nt-2) threads per received vector, each owning the
// combinations of columns 1..nt-2 and enumerating column 0, then warp-shuffle and atomic-min
// reductions of the minimum (hard) or of the 2 nt m per-bit minima (soft).
#include <cstdint>

#include "mimorx/core/backend.hpp"
#include "mimorx/core/buffer.hpp"
#include "mimorx/detect/common.hpp"

namespace mimorx::detect {

struct MlConfig {
  MimoShape shape;
  bool soft = false;
  // Check device inputs for NaN/Inf with a kernel (synchronises); the simulator turns it off.
  bool check_device_values = true;
};

class MlPlan {
 public:
  // Throws InvalidArgument for nt, nr outside 1..8 and Unsupported where M^nt > 2^24
  // (the message names the count and the limit).
  MlPlan(const MlConfig& config, Backend backend);
  // Validates with detect::validate, then detects every vector. bits: V*nt*m (required when
  // hard; when soft, empty or V*nt*m, filled with the ML decisions' bits as LLR signs, ties to
  // 0). llrs: V*nt*m exact max-log LLRs (required when soft, ignored when hard).
  void run(const DetectInput& in, View<std::uint8_t> bits, View<float> llrs,
           const Stream& stream = {});
  const MlConfig& config() const { return config_; }
  // M^nt, the number of hypotheses per received vector.
  std::int64_t hypotheses() const;

  static constexpr std::int64_t kMaxHypotheses = std::int64_t(1) << 24;
  static constexpr int kMaxAntennas = 8;

 private:
  MlConfig config_;
  Backend backend_;
  Buffer<unsigned char> workspace_;  // device reduction slots, grown on demand
};

}  // namespace mimorx::detect

#pragma once
// Lattice-reduction-aided detection (Yao & Wornell 2002; Wuebben et al., ICC 2004): LR-ZF,
// LR-MMSE and LR-MMSE-SIC with complex LLL (lattice/lll.hpp, clll_reference).
//
// Lattice form of the constellation: every square-QAM point is x = 2 s z + o with
//   s = qam_scale(mod) (1/sqrt(10) for 16-QAM), z in {0..L-1} + j{0..L-1} a Gaussian integer
//   (the PAM level indices of demap.hpp), o = -s (L-1)(1+j) the centre offset.
// So y = H x + n becomes y' = (y - H o 1) / (2 s) = H z + n / (2 s), an integer lattice.
//   LR-ZF:       H T = H~ (complex LLL, delta); z~ = round(H~^+ y'); z = T z~.
//   LR-MMSE:     the same on the extended channel [H; sqrt(N0) I] and the extended observation
//                [y'; -sqrt(N0) o 1 / (2 s)] (the shift applied to the zero rows, so that the
//                regularisation pulls towards the constellation centre, not the origin).
//   LR-MMSE-SIC: QR of the reduced extended channel, successive rounding from the last layer.
// z is clipped to the constellation (levels 0..L-1 per axis) and mapped to bits (demap.hpp).
// One LLL per channel (per channel and noise variance for the MMSE kinds when N0 varies).
// BPSK is not a square QAM and is refused (Unsupported).
// Backends: CPU (float64 arithmetic, channels in parallel over OpenMP). Backend::cuda() stages
// the inputs through host memory and runs the CPU code (no LR kernel yet; docs/lll.md).
#include <cstdint>

#include "mimorx/core/backend.hpp"
#include "mimorx/core/buffer.hpp"
#include "mimorx/detect/common.hpp"

namespace mimorx::detect {

enum class LrKind { zf, mmse, mmse_sic };

struct LrConfig {
  MimoShape shape;
  LrKind kind = LrKind::mmse;
  double delta = 0.75;  // complex LLL: (0.5, 1)
};

class LrPlan {
 public:
  // Throws InvalidArgument for shapes validate() rejects, delta outside (0.5, 1), ZF with
  // nt > nr; Unsupported for BPSK or CUDA in a build without it.
  LrPlan(const LrConfig& config, Backend backend);
  // bits: V * nt * m hard decisions, layout as in detect/common.hpp.
  void run(const DetectInput& in, View<std::uint8_t> bits, const Stream& stream = Stream{});
  // The soft/hard adapter form used by the detector factory: llrs must be empty.
  void run(const DetectInput& in, View<std::uint8_t> bits, View<float> llrs,
           const Stream& stream = Stream{});
  const LrConfig& config() const { return cfg_; }

 private:
  LrConfig cfg_;
  Backend backend_;
};

}  // namespace mimorx::detect

#pragma once
// Soft-output N-way parallel MIMO detector (Wu, Yin, Wang, Studer, Cavallaro, "GPU acceleration
// of a configurable N-way MIMO detector for wireless systems", J. Signal Process. Syst. 2014).
//
// N greedy tree searches (SSFE passes) run in parallel, each on the channel with its columns
// circularly rotated by a different amount (pass n detects transmit stream (nt-1+n) mod nt
// first). Each pass enumerates all M points of its first complex symbol (M = QAM order) and
// completes every path greedily by round-and-clip slicing, level by level, on the real-valued
// (MRVD) model. The N*M candidate vectors are merged into max-log LLRs:
//   LLR(b) = clip((min_{list, b=1} d - min_{list, b=0} d) / N0),  d = ||y - H x||^2,
// positive = bit 0 (mimorx convention). The paper writes 1/(2 sigma^2) with sigma^2 the noise
// variance per real dimension; with N0 = 2 sigma^2 both are the same scaling. A bit without a
// counter-hypothesis in the list takes as that minimum the distance of the best candidate with
// only the real coordinate carrying the bit moved to the nearest level with the other value
// (docs/kbest.md). N = 1 is plain SSFE; N = nt expands every symbol once (exact max-log for
// 2 x 2).
//
// Supported: nt in {2, 4, 8}, nr >= nt (nr <= 64), QPSK, 16-, 64-, 256-QAM (BPSK is not
// separable into two PAM axes: Unsupported).
#include <cstdint>
#include <memory>

#include "mimorx/core/backend.hpp"
#include "mimorx/core/buffer.hpp"
#include "mimorx/core/tensor.hpp"
#include "mimorx/detect/common.hpp"
#include "mimorx/detect/list_plan.hpp"

namespace mimorx::detect {

struct NwayConfig {
  MimoShape shape;
  int n_ways = 1;        // N, 1..nt
  float llr_clip = 8.f;  // |LLR| <= llr_clip; finite and > 0 (the paper uses 8 for N < 4)
  // Check device inputs for NaN/Inf with a kernel (synchronises); the simulator turns it off.
  bool check_device_values = true;
};

// run / qr / search / candidates as in list_plan.hpp. qr() is the MRVD + MGS QR of the N
// rotated extended matrices [H | y] of every vector (Algorithm 1), search() the N*M greedy
// searches and the LLR merge (Algorithms 2 and 3). candidates: N * M per vector, index
// (v * N + n) * M + k for pass n, candidate k.
class NwayPlan : public ListDetectorPlan {
 public:
  // Validates the config (InvalidArgument / Unsupported naming the value and what is allowed).
  NwayPlan(const NwayConfig& config, Backend backend);

  const NwayConfig& config() const;
  int candidates_per_pass() const;  // M
  // Floats per (vector, pass) in the QR workspace: packed R (scaled by the QAM scale), Q^T y,
  // 1 / diag(R).
  int workspace_floats_per_problem() const;
};

}  // namespace mimorx::detect

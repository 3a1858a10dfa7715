#pragma once
// The numbers of `mimorx detect` made safe for the detectors' float32 arithmetic, on the host
// before any backend sees them (so that the CPU and CUDA paths get the same numbers):
//  - every channel and its received vectors are scaled by one power of two that brings the
//    channel's largest entry into [0.5, 1), its noise variance by the square of it. Exact, and
//    no detector's decision or LLR changes under a common scale of H, y and sqrt(N0), while a
//    channel of 1e-16 would underflow in the metrics unscaled;
//  - a noise variance below kMinNoiseVar (relative to that scale) is raised to it, and LLRs are
//    saturated to +-kMaxLlr, so that every LLR is finite;
//  - zf refuses a channel without full column rank, where it is not defined.
#include <cstdint>
#include <string>
#include <vector>

namespace mimorx::cli {

inline constexpr float kMinNoiseVar = 1e-30f;
inline constexpr float kMaxLlr = 1e30f;

struct DetectNumbers {
  int nt = 0, nr = 0, vectors_per_channel = 1;
  std::vector<float> h, y, noise_var;  // complex interleaved; noise_var: 1 or one per vector
};

// Scales in place as described above; noise_var becomes one value per vector. The counts must
// already be consistent (detect::validate).
void normalise_scale(DetectNumbers& d);

// Throws InvalidArgument naming the first channel whose numerical rank is below nt.
void require_full_rank(const DetectNumbers& d, const std::string& detector);

// +-kMaxLlr for larger magnitudes, 0 for NaN.
void saturate_llrs(std::vector<float>& llrs);

}  // namespace mimorx::cli

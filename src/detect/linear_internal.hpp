#pragma once
// Plain-pointer arguments of the linear detector kernels and the CUDA entry point.
#include <cstdint>

#include "mimorx/core/complex.hpp"
#include "mimorx/modem/modulation.hpp"

namespace mimorx::detect::detail {

struct LinearArgs {
  bool mmse = true;
  Modulation mod = Modulation::qpsk;
  int nr = 0, nt = 0;
  const cf32* h = nullptr;
  std::int64_t h_stride = 0;
  std::int64_t channels = 0;
  const cf32* y = nullptr;
  std::int64_t y_stride = 0;
  std::int64_t vectors = 0;
  int vpc = 1;
  const float* n0 = nullptr;
  bool n0_per_vector = false;
  std::uint8_t* bits = nullptr;  // may be null
  float* llrs = nullptr;         // may be null
  // Equaliser slots: one per channel, or (MMSE with per-vector N0 and vpc > 1) one per vector,
  // used by vector v when its N0 differs from the first vector of its coherence block.
  bool slot_per_vector = false;
  cf32* w = nullptr;
  float* d = nullptr;
};

// Launches the equaliser and detection kernels on `stream` (cudaStream_t). linear_cuda.cu.
void linear_run_cuda(const LinearArgs& args, int device, void* stream);

}  // namespace mimorx::detect::detail

#pragma once
// Internal to mimorx_detect_sts: the CUDA backend of StsPlan (sts_cuda.cu).
#include <cstddef>
#include <cstdint>

#include "mimorx/config.hpp"
#include "mimorx/core/complex.hpp"
#include "mimorx/detect/common.hpp"
#include "mimorx/detect/sphere.hpp"  // SearchStats
#include "mimorx/modem/modulation.hpp"

namespace mimorx::detect::sts {

#if MIMORX_HAS_CUDA
struct StsCudaArgs {
  Modulation mod = Modulation::qpsk;
  int nt = 0, nr = 0;
  float clip = 0.f, capped_llr = 32.f;
  std::int64_t node_cap = 0;
  bool sorted_qr = true;
  bool refill_lanes = true;
  std::int64_t channels = 0, vectors = 0;
  int vectors_per_channel = 1;
  const cf32* h = nullptr;
  std::int64_t h_stride = 0;
  const cf32* y = nullptr;
  std::int64_t y_stride = 0;
  const float* n0 = nullptr;  // device, n0_size = 1 (shared) or vectors
  std::int64_t n0_size = 1;
  std::uint8_t* bits = nullptr;  // vectors * nt * m
  float* llrs = nullptr;         // vectors * nt * m, or nullptr
  SearchStats* stats = nullptr;  // vectors, or nullptr
  void* workspace = nullptr;     // sts_cuda_workspace_bytes(...) bytes of device memory
  std::size_t workspace_bytes = 0;
  int device = 0;
};

// Device workspace for `channels` channels: Q, R and the column order per channel, and the
// channel order of the search (keys, indices, CUB's sort storage).
std::size_t sts_cuda_workspace_bytes(Modulation mod, int nt, int nr, std::int64_t channels);

// The QR kernel, the channel sort and the search kernel, asynchronous on `stream`.
void sts_run_cuda(const StsCudaArgs& a, void* stream);
#endif

}  // namespace mimorx::detect::sts

#pragma once
// How many thread blocks of a kernel fit on the current device at once (SMs times the blocks
// one SM holds at the given shape), cached per kernel and device: the grid size of persistent
// kernels, and the limit of a cooperative launch. A kernel is assumed to be always asked about
// with the same block size and dynamic shared memory.
#include "mimorx/config.hpp"
#if MIMORX_HAS_CUDA
#include <cuda_runtime.h>

#include <cstddef>
#include <map>
#include <mutex>
#include <utility>

#include "core/cuda_check.hpp"

namespace mimorx::detail {
inline int resident_blocks(const void* kernel, int threads, std::size_t smem) {
  static std::mutex mu;
  static std::map<std::pair<const void*, int>, int> known;  // (kernel, device) -> blocks
  int device = 0;
  MIMORX_CUDA_CHECK(cudaGetDevice(&device));
  const std::lock_guard<std::mutex> lock(mu);
  if (auto it = known.find({kernel, device}); it != known.end()) return it->second;
  int sms = 0, per_sm = 0;
  MIMORX_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  MIMORX_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, smem));
  return known[{kernel, device}] = sms * per_sm;
}
}  // namespace mimorx::detail
#endif

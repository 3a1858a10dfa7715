#pragma once
// A kernel's dynamic shared-memory limit (cudaFuncSetAttribute) belongs to the current device's
// context: raised "once per process", it stays at the 48 KiB default on every other GPU, and
// the first launch there fails. raise_smem_limit raises it once per kernel and device, to the
// device's opt-in maximum less the kernel's static shared memory. Never to a launch's own size:
// CPU threads launching different sizes concurrently would lower it under one another.
#include "mimorx/config.hpp"
#if MIMORX_HAS_CUDA
#include <cuda_runtime.h>

#include <mutex>
#include <set>
#include <utility>

#include "core/cuda_check.hpp"

namespace mimorx::detail {
inline void raise_smem_limit(const void* kernel) {
  static std::mutex mu;
  static std::set<std::pair<const void*, int>> done;
  int device = 0;
  MIMORX_CUDA_CHECK(cudaGetDevice(&device));
  const std::lock_guard<std::mutex> lock(mu);
  if (done.count({kernel, device})) return;
  int optin = 0;
  MIMORX_CUDA_CHECK(
      cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  cudaFuncAttributes a{};
  MIMORX_CUDA_CHECK(cudaFuncGetAttributes(&a, kernel));
  MIMORX_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                         optin - int(a.sharedSizeBytes)));
  done.insert({kernel, device});
}
}  // namespace mimorx::detail
#endif

#pragma once
// Every CUDA runtime call goes through MIMORX_CUDA_CHECK; every launch is followed by
// MIMORX_CUDA_CHECK_LAUNCH(). Failures become mimorx::CudaError (or OutOfMemory) naming the call.
#include "mimorx/config.hpp"
#if MIMORX_HAS_CUDA
#include <cuda_runtime.h>

#include <string>

#include "mimorx/core/error.hpp"

namespace mimorx::detail {
[[noreturn]] inline void throw_cuda(cudaError_t e, const char* what, const char* file, int line) {
  std::string msg = std::string(what) + " failed at " + file + ":" + std::to_string(line) + ": " +
                    cudaGetErrorName(e) + " (" + cudaGetErrorString(e) + ")";
  if (e == cudaErrorMemoryAllocation) {
    throw OutOfMemory(msg + "; reduce the batch size or free GPU memory");
  }
  throw CudaError(msg);
}
}  // namespace mimorx::detail

#define MIMORX_CUDA_CHECK(call)                                                  \
  do {                                                                           \
    cudaError_t mimorx_err_ = (call);                                            \
    if (mimorx_err_ != cudaSuccess) {                                            \
      ::mimorx::detail::throw_cuda(mimorx_err_, #call, __FILE__, __LINE__);      \
    }                                                                            \
  } while (0)

#define MIMORX_CUDA_CHECK_LAUNCH() MIMORX_CUDA_CHECK(cudaGetLastError())

namespace mimorx::detail {
inline cudaStream_t as_stream(void* h) { return static_cast<cudaStream_t>(h); }
}  // namespace mimorx::detail
#endif

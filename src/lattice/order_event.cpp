// OrderEvent and SideStream (lll_internal.hpp), created on first use (CUDA builds).
#include "lattice/lll_internal.hpp"
#if MIMORX_HAS_CUDA
#include "core/cuda_check.hpp"

namespace mimorx::lattice::detail {

OrderEvent::~OrderEvent() {
  if (handle_) (void)cudaEventDestroy(static_cast<cudaEvent_t>(handle_));
}

void OrderEvent::record(void* stream) {
  if (!handle_) {
    cudaEvent_t e = nullptr;
    MIMORX_CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
    handle_ = e;
  }
  MIMORX_CUDA_CHECK(
      cudaEventRecord(static_cast<cudaEvent_t>(handle_), mimorx::detail::as_stream(stream)));
}

void OrderEvent::wait(void* stream) const {
  if (handle_)
    MIMORX_CUDA_CHECK(cudaStreamWaitEvent(mimorx::detail::as_stream(stream),
                                          static_cast<cudaEvent_t>(handle_), 0));
}

SideStream::~SideStream() {
  if (handle_) (void)cudaStreamDestroy(static_cast<cudaStream_t>(handle_));
}

void* SideStream::get(int device) {
  if (!handle_) {
    MIMORX_CUDA_CHECK(cudaSetDevice(device));
    int least = 0, greatest = 0;  // numerically: least is the larger number
    MIMORX_CUDA_CHECK(cudaDeviceGetStreamPriorityRange(&least, &greatest));
    cudaStream_t h = nullptr;
    MIMORX_CUDA_CHECK(cudaStreamCreateWithPriority(&h, cudaStreamNonBlocking, least));
    handle_ = h;
  }
  return handle_;
}

}  // namespace mimorx::lattice::detail
#endif

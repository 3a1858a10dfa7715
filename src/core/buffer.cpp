#include "mimorx/core/buffer.hpp"

#include <cstdlib>
#include <cstring>
#include <new>
#include <string>

#include "core/cuda_check.hpp"
#include "mimorx/config.hpp"

namespace mimorx::detail {

#if MIMORX_HAS_CUDA
namespace {
cudaMemcpyKind kind_of(Memory dst, Memory src) {
  if (dst == Memory::host)
    return src == Memory::host ? cudaMemcpyHostToHost : cudaMemcpyDeviceToHost;
  return src == Memory::host ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToDevice;
}
}  // namespace
#endif

[[noreturn, maybe_unused]] static void no_cuda(const char* what) {
  throw Unsupported(std::string(what) + ": this build has no CUDA backend; use the cpu backend");
}

void* host_pinned_alloc(std::size_t bytes) {
#if MIMORX_HAS_CUDA
  void* p = nullptr;
  MIMORX_CUDA_CHECK(cudaMallocHost(&p, bytes));
  return p;
#else
  (void)bytes;
  no_cuda("pinned host memory");
#endif
}

void host_pinned_free(void* p) noexcept {
#if MIMORX_HAS_CUDA
  (void)cudaFreeHost(p);
#else
  (void)p;
#endif
}

void* device_alloc(std::size_t bytes, int device) {
#if MIMORX_HAS_CUDA
  MIMORX_CUDA_CHECK(cudaSetDevice(device));
  void* p = nullptr;
  MIMORX_CUDA_CHECK(cudaMalloc(&p, bytes));
  return p;
#else
  (void)bytes;
  (void)device;
  no_cuda("device memory");
#endif
}

void device_free(void* p) noexcept {
#if MIMORX_HAS_CUDA
  (void)cudaFree(p);
#else
  (void)p;
#endif
}

void copy_bytes(void* dst, Memory dst_mem, const void* src, Memory src_mem, std::size_t bytes,
                void* stream) {
  if (bytes == 0) return;
  if (dst_mem == Memory::host && src_mem == Memory::host) {
    std::memcpy(dst, src, bytes);
    return;
  }
#if MIMORX_HAS_CUDA
  if (stream) {
    MIMORX_CUDA_CHECK(
        cudaMemcpyAsync(dst, src, bytes, kind_of(dst_mem, src_mem), as_stream(stream)));
  } else {
    // Without a stream the copy has ended on return. cudaMemcpy alone may return before its DMA
    // ends (pageable host to device, device to device), and work on non-blocking streams (every
    // Stream::create) does not wait for the legacy stream it ran on.
    MIMORX_CUDA_CHECK(cudaMemcpy(dst, src, bytes, kind_of(dst_mem, src_mem)));
    MIMORX_CUDA_CHECK(cudaStreamSynchronize(cudaStreamLegacy));
  }
#else
  (void)stream;
  no_cuda("device copy");
#endif
}

void device_memset(void* p, int value, std::size_t bytes, void* stream) {
#if MIMORX_HAS_CUDA
  if (stream) {
    MIMORX_CUDA_CHECK(cudaMemsetAsync(p, value, bytes, as_stream(stream)));
  } else {
    MIMORX_CUDA_CHECK(cudaMemset(p, value, bytes));  // asynchronous: ended below, as a copy
    MIMORX_CUDA_CHECK(cudaStreamSynchronize(cudaStreamLegacy));
  }
#else
  (void)p;
  (void)value;
  (void)bytes;
  (void)stream;
  no_cuda("device memset");
#endif
}

}  // namespace mimorx::detail

namespace mimorx {

Stream Stream::create(int device) {
  Stream s;
#if MIMORX_HAS_CUDA
  MIMORX_CUDA_CHECK(cudaSetDevice(device));
  cudaStream_t h = nullptr;
  MIMORX_CUDA_CHECK(cudaStreamCreateWithFlags(&h, cudaStreamNonBlocking));
  s.handle_ = h;
  s.owned_ = true;
#else
  (void)device;
#endif
  return s;
}

Stream& Stream::operator=(Stream&& o) noexcept {
  if (this != &o) {
    this->~Stream();
    handle_ = std::exchange(o.handle_, nullptr);
    owned_ = o.owned_;
  }
  return *this;
}

Stream::~Stream() {
#if MIMORX_HAS_CUDA
  if (owned_ && handle_) (void)cudaStreamDestroy(detail::as_stream(handle_));
#endif
  handle_ = nullptr;
}

void Stream::synchronize() const {
#if MIMORX_HAS_CUDA
  if (handle_) {
    MIMORX_CUDA_CHECK(cudaStreamSynchronize(detail::as_stream(handle_)));
  } else if (cuda_available()) {
    MIMORX_CUDA_CHECK(cudaDeviceSynchronize());
  }
#endif
}

Event::~Event() {
#if MIMORX_HAS_CUDA
  if (handle_) (void)cudaEventDestroy(static_cast<cudaEvent_t>(handle_));
#endif
}

void Event::record(const Stream& s) {
#if MIMORX_HAS_CUDA
  if (!s.handle() && !handle_ && !cuda_available()) return;
  if (!handle_) {
    cudaEvent_t e = nullptr;
    MIMORX_CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
    handle_ = e;
  }
  MIMORX_CUDA_CHECK(
      cudaEventRecord(static_cast<cudaEvent_t>(handle_), detail::as_stream(s.handle())));
#else
  (void)s;
#endif
}

void Event::synchronize() const {
#if MIMORX_HAS_CUDA
  if (handle_) MIMORX_CUDA_CHECK(cudaEventSynchronize(static_cast<cudaEvent_t>(handle_)));
#endif
}

GpuTimer::GpuTimer(const Stream& s) : stream_(s.handle()) {
#if MIMORX_HAS_CUDA
  cudaEvent_t a, b;
  MIMORX_CUDA_CHECK(cudaEventCreate(&a));
  MIMORX_CUDA_CHECK(cudaEventCreate(&b));
  start_ = a;
  stop_ = b;
#else
  throw Unsupported("GpuTimer: this build has no CUDA backend");
#endif
}

GpuTimer::~GpuTimer() {
#if MIMORX_HAS_CUDA
  if (start_) (void)cudaEventDestroy(static_cast<cudaEvent_t>(start_));
  if (stop_) (void)cudaEventDestroy(static_cast<cudaEvent_t>(stop_));
#endif
}

void GpuTimer::start() {
#if MIMORX_HAS_CUDA
  MIMORX_CUDA_CHECK(cudaEventRecord(static_cast<cudaEvent_t>(start_), detail::as_stream(stream_)));
#endif
}

void GpuTimer::stop() {
#if MIMORX_HAS_CUDA
  MIMORX_CUDA_CHECK(cudaEventRecord(static_cast<cudaEvent_t>(stop_), detail::as_stream(stream_)));
#endif
}

float GpuTimer::elapsed_ms() const {
  float ms = 0.f;
#if MIMORX_HAS_CUDA
  MIMORX_CUDA_CHECK(cudaEventSynchronize(static_cast<cudaEvent_t>(stop_)));
  MIMORX_CUDA_CHECK(
      cudaEventElapsedTime(&ms, static_cast<cudaEvent_t>(start_), static_cast<cudaEvent_t>(stop_)));
#endif
  return ms;
}

}  // namespace mimorx

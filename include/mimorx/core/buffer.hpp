#pragma once
// RAII memory on the host (pageable or pinned) and on a CUDA device, and CUDA streams and
// event timers, with no CUDA types in this header.
#include <cstddef>
#include <cstring>
#include <span>
#include <utility>

#include "mimorx/core/backend.hpp"
#include "mimorx/core/error.hpp"

namespace mimorx {

enum class Memory { host, device };

namespace detail {
void* host_pinned_alloc(std::size_t bytes);
void host_pinned_free(void* p) noexcept;
void* device_alloc(std::size_t bytes, int device);
void device_free(void* p) noexcept;
// Copies between any two residencies; asynchronous on `stream` when it is not null.
void copy_bytes(void* dst, Memory dst_mem, const void* src, Memory src_mem, std::size_t bytes,
                void* stream);
void device_memset(void* p, int value, std::size_t bytes, void* stream);
}  // namespace detail

// A CUDA stream owned by this object (or the default stream when built without one).
class Stream {
 public:
  Stream() = default;                    // the legacy default stream
  static Stream create(int device = 0);  // a new non-blocking stream
  // A stream created elsewhere (a cudaStream_t of PyTorch, CuPy, ...): used, never destroyed.
  static Stream borrow(void* handle) {
    Stream s;
    s.handle_ = handle;
    return s;
  }
  Stream(Stream&& o) noexcept : handle_(std::exchange(o.handle_, nullptr)), owned_(o.owned_) {}
  Stream& operator=(Stream&& o) noexcept;
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  ~Stream();
  void synchronize() const;
  void* handle() const { return handle_; }  // cudaStream_t for src/ code

 private:
  void* handle_ = nullptr;
  bool owned_ = false;
};

// A point in a stream's work that the host can wait for: record() marks it, synchronize()
// waits until the work before it is done. Without CUDA (or before the first record) both do
// nothing, so host-only code can use it unchanged.
class Event {
 public:
  Event() = default;
  Event(Event&& o) noexcept : handle_(std::exchange(o.handle_, nullptr)) {}
  Event& operator=(Event&& o) noexcept {
    std::swap(handle_, o.handle_);
    return *this;
  }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  ~Event();
  void record(const Stream& s);  // a no-op where no CUDA device is in use
  void synchronize() const;

 private:
  void* handle_ = nullptr;
};

// Times device work between start() and stop() with CUDA events (milliseconds).
class GpuTimer {
 public:
  explicit GpuTimer(const Stream& s = Stream{});
  ~GpuTimer();
  GpuTimer(const GpuTimer&) = delete;
  GpuTimer& operator=(const GpuTimer&) = delete;
  void start();
  void stop();
  float elapsed_ms() const;  // synchronises on the stop event

 private:
  void* stream_;
  void* start_ = nullptr;
  void* stop_ = nullptr;
};

// A typed array on the host or on a device. Move-only.
template <class T>
class Buffer {
 public:
  Buffer() = default;
  Buffer(std::size_t n, Memory where, bool pinned = false, int device = 0)
      : size_(n), where_(where), pinned_(pinned) {
    const std::size_t bytes = n * sizeof(T);
    if (n == 0) return;
    if (where == Memory::device) {
      data_ = static_cast<T*>(detail::device_alloc(bytes, device));
    } else if (pinned) {
      data_ = static_cast<T*>(detail::host_pinned_alloc(bytes));
    } else {
      data_ = static_cast<T*>(::operator new(bytes, std::align_val_t(64)));
    }
  }
  static Buffer host(std::size_t n) { return Buffer(n, Memory::host); }
  static Buffer pinned(std::size_t n) { return Buffer(n, Memory::host, true); }
  static Buffer device(std::size_t n, int dev = 0) { return Buffer(n, Memory::device, false, dev); }
  // A buffer on the memory a backend computes on.
  static Buffer on(const Backend& b, std::size_t n) {
    return b.is_cuda() ? device(n, b.device()) : host(n);
  }

  Buffer(Buffer&& o) noexcept { swap(o); }
  Buffer& operator=(Buffer&& o) noexcept {
    Buffer tmp(std::move(o));
    swap(tmp);
    return *this;
  }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  ~Buffer() { release(); }

  T* data() { return data_; }
  const T* data() const { return data_; }
  std::size_t size() const { return size_; }
  std::size_t bytes() const { return size_ * sizeof(T); }
  Memory where() const { return where_; }
  bool empty() const { return size_ == 0; }
  // Host-only element access; device buffers must be copied first.
  std::span<T> span() {
    require(where_ == Memory::host, "buffer",
            "span() needs host memory; copy the device buffer first");
    return {data_, size_};
  }
  std::span<const T> span() const {
    require(where_ == Memory::host, "buffer",
            "span() needs host memory; copy the device buffer first");
    return {data_, size_};
  }
  T& operator[](std::size_t i) { return data_[i]; }
  const T& operator[](std::size_t i) const { return data_[i]; }

  // Copy `count` elements from `src` (default: all of it), any residency to any residency.
  template <class U>
  void copy_from(const Buffer<U>& src, const Stream& s = Stream{}) {
    static_assert(sizeof(U) == sizeof(T));
    require(src.size() <= size_, "buffer", "copy source is larger than the destination");
    detail::copy_bytes(data_, where_, src.data(), src.where(), src.bytes(), s.handle());
  }
  // The first n elements of `src`.
  template <class U>
  void copy_from(const Buffer<U>& src, std::size_t n, const Stream& s) {
    static_assert(sizeof(U) == sizeof(T));
    require(n <= src.size() && n <= size_, "buffer",
            "copy asks for more elements than a buffer holds");
    detail::copy_bytes(data_, where_, src.data(), src.where(), n * sizeof(T), s.handle());
  }
  void copy_from_host(const T* src, std::size_t n, const Stream& s = Stream{}) {
    require(n <= size_, "buffer", "copy source is larger than the destination");
    detail::copy_bytes(data_, where_, src, Memory::host, n * sizeof(T), s.handle());
  }
  void copy_to_host(T* dst, std::size_t n, const Stream& s = Stream{}) const {
    require(n <= size_, "buffer", "copy asks for more elements than the buffer holds");
    detail::copy_bytes(dst, Memory::host, data_, where_, n * sizeof(T), s.handle());
  }
  // Sets every byte (use 0xFF to poison outputs in tests).
  void fill_bytes(int value, const Stream& s = Stream{}) {
    if (where_ == Memory::device) {
      detail::device_memset(data_, value, bytes(), s.handle());
    } else if (size_ != 0) {
      std::memset(static_cast<void*>(data_), value, bytes());
    }
  }

 private:
  void swap(Buffer& o) noexcept {
    std::swap(data_, o.data_);
    std::swap(size_, o.size_);
    std::swap(where_, o.where_);
    std::swap(pinned_, o.pinned_);
  }
  void release() noexcept {
    if (!data_) return;
    if (where_ == Memory::device) {
      detail::device_free(data_);
    } else if (pinned_) {
      detail::host_pinned_free(data_);
    } else {
      ::operator delete(static_cast<void*>(data_), std::align_val_t(64));
    }
    data_ = nullptr;
  }
  T* data_ = nullptr;
  std::size_t size_ = 0;
  Memory where_ = Memory::host;
  bool pinned_ = false;
};

}  // namespace mimorx

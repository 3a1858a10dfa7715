#pragma once
// Batched views: the one documented layout for batches of matrices and vectors.
//
//   A batch of B matrices, each rows x cols, element (b, i, j) at data[b * batch_stride + j * rows + i]
//   (column-major per matrix, matrices one after the other: cuBLAS "strided batched").
//   A batch of vectors is a batch of matrices with cols = 1.
//   Complex numbers are interleaved (re, im) float32 (mimorx::cf32).
//
// A view knows where its memory lives; plans check residency and shapes on entry.
#include <cstdint>
#include <string>
#include <type_traits>

#include "mimorx/core/buffer.hpp"
#include "mimorx/core/error.hpp"
#include "mimorx/core/hd.hpp"

namespace mimorx {

template <class T>
struct MatrixBatch {
  T* data = nullptr;
  std::int64_t batch = 0;
  int rows = 0;
  int cols = 0;
  std::int64_t batch_stride = 0;  // elements between consecutive matrices (>= rows*cols)
  Memory where = Memory::host;

  MatrixBatch() = default;
  MatrixBatch(T* d, std::int64_t b, int r, int c, Memory w, std::int64_t stride = -1)
      : data(d), batch(b), rows(r), cols(c),
        batch_stride(stride < 0 ? std::int64_t(r) * c : stride), where(w) {}
  // A view over a whole buffer holding `b` dense matrices.
  template <class U>
  static MatrixBatch over(Buffer<U>& buf, std::int64_t b, int r, int c) {
    require(std::uint64_t(b) * r * c <= buf.size(), "buffer",
            "holds " + std::to_string(buf.size()) + " elements, the view needs " +
                std::to_string(b * r * c));
    return MatrixBatch(buf.data(), b, r, c, buf.where());
  }
  MIMORX_HD T& operator()(std::int64_t b, int i, int j) const {
    return data[b * batch_stride + std::int64_t(j) * rows + i];
  }
  MIMORX_HD T* matrix(std::int64_t b) const { return data + b * batch_stride; }
  std::int64_t elements() const { return batch * std::int64_t(rows) * cols; }
  operator MatrixBatch<const T>() const {
    return MatrixBatch<const T>(data, batch, rows, cols, where, batch_stride);
  }
};

template <class T>
using ConstMatrixBatch = MatrixBatch<const T>;

// A flat array view with its residency (bits, LLRs, per-vector outputs).
template <class T>
struct View {
  T* data = nullptr;
  std::int64_t size = 0;
  Memory where = Memory::host;
  View() = default;
  View(T* d, std::int64_t n, Memory w) : data(d), size(n), where(w) {}
  // Only from buffers whose elements this view can point at, so that overloads on views of
  // different element types (e.g. float and int8 LLRs) stay unambiguous.
  template <class U>
    requires std::is_convertible_v<U*, T*>
  View(Buffer<U>& b) : data(b.data()), size(std::int64_t(b.size())), where(b.where()) {}
  template <class U>
    requires std::is_convertible_v<const U*, T*>
  View(const Buffer<U>& b) : data(b.data()), size(std::int64_t(b.size())), where(b.where()) {}
  MIMORX_HD T& operator[](std::int64_t i) const { return data[i]; }
  operator View<const T>() const { return View<const T>(data, size, where); }
};

// Checks used by every plan on entry.
inline void require_memory(Memory actual, Memory wanted, const std::string& argument) {
  require(actual == wanted, argument,
          std::string("must be in ") + (wanted == Memory::device ? "device" : "host") +
              " memory for this backend");
}
inline Memory memory_of(const Backend& b) { return b.is_cuda() ? Memory::device : Memory::host; }
template <class T>
void require_shape(const MatrixBatch<T>& m, std::int64_t batch, int rows, int cols,
                   const std::string& argument) {
  require(m.batch == batch && m.rows == rows && m.cols == cols, argument,
          "has shape " + std::to_string(m.batch) + "x" + std::to_string(m.rows) + "x" +
              std::to_string(m.cols) + ", expected " + std::to_string(batch) + "x" +
              std::to_string(rows) + "x" + std::to_string(cols));
}
template <class T>
void require_size(const View<T>& v, std::int64_t n, const std::string& argument) {
  require(v.size == n, argument,
          "has " + std::to_string(v.size) + " elements, expected " + std::to_string(n));
}

}  // namespace mimorx

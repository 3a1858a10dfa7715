#include <string>

#include "interop/layout_cuda.hpp"
#include "interop/layout_math.hpp"
#include "mimorx/config.hpp"
#include "mimorx/core/error.hpp"
#include "mimorx/interop/layout.hpp"

namespace mimorx::interop {

namespace {
void require_dims(std::int64_t rows, int in_cols, int out_cols) {
  require(rows >= 0, "rows", "is " + std::to_string(rows) + "; must be >= 0");
  require(in_cols >= 0, "in_cols", "is " + std::to_string(in_cols) + "; must be >= 0");
  require(out_cols >= 0, "out_cols", "is " + std::to_string(out_cols) + "; must be >= 0");
}

void require_host_index(View<const int> index, int in_cols, bool allow_negative) {
  if (index.where != Memory::host) return;
  for (std::int64_t j = 0; j < index.size; ++j) {
    const int k = index[j];
    if (k >= in_cols || (k < 0 && !allow_negative)) {
      throw InvalidArgument("index: entry " + std::to_string(j) + " is " + std::to_string(k) +
                            "; must be in [0, " + std::to_string(in_cols) + ")");
    }
  }
}

// The checks both gathers make: in (rows, in_cols), out (rows, index.size), all in `mem`;
// returns out's columns.
template <class In>
int require_gather(View<const In> in, std::int64_t rows, int in_cols, View<const int> index,
                   View<float> out, Memory mem) {
  require(index.size <= (std::int64_t(1) << 30), "index", "is longer than 2^30 entries");
  const int out_cols = int(index.size);
  require_dims(rows, in_cols, out_cols);
  require_memory(in.where, mem, "in");
  require_memory(index.where, mem, "index");
  require_memory(out.where, mem, "out");
  require_size(in, rows * in_cols, "in");
  require_size(out, rows * out_cols, "out");
  return out_cols;
}

[[maybe_unused]] int device_of(const Backend& b) { return b.is_cuda() ? b.device() : 0; }
}  // namespace

LayoutConverter::LayoutConverter(Backend backend) : backend_(backend) {
#if !MIMORX_HAS_CUDA
  if (backend.is_cuda()) throw Unsupported("backend: this build of mimorx has no CUDA backend");
#endif
}

void LayoutConverter::bits_from_float(View<const float> in, std::int64_t rows, int in_cols,
                                      View<std::uint8_t> out, int out_cols, View<int> invalid,
                                      const Stream& stream) const {
  require_dims(rows, in_cols, out_cols);
  require(in_cols <= out_cols, "out_cols",
          "is " + std::to_string(out_cols) + "; must be >= in_cols " + std::to_string(in_cols));
  const Memory mem = memory_of(backend_);
  require_memory(in.where, mem, "in");
  require_memory(out.where, mem, "out");
  require_size(in, rows * in_cols, "in");
  require_size(out, rows * out_cols, "out");
  if (invalid.size != 0) {
    require_memory(invalid.where, mem, "invalid");
    require_size(invalid, 1, "invalid");
  }
  int* flag = invalid.size ? invalid.data : nullptr;
  if (backend_.is_cuda()) {
#if MIMORX_HAS_CUDA
    detail::bits_from_float_cuda(in.data, rows, in_cols, out.data, out_cols, flag,
                                 device_of(backend_), stream.handle());
#endif
    return;
  }
  (void)stream;
  bool bad = false;
  for (std::int64_t r = 0; r < rows; ++r) {
    for (int j = 0; j < out_cols; ++j) {
      std::uint8_t b = 0;
      if (j < in_cols) {
        const float v = in[r * in_cols + j];
        b = detail::bit_of_float(v);
        bad = bad || !detail::is_bit(v);
      }
      out[r * out_cols + j] = b;
    }
  }
  if (flag) *flag = bad ? 1 : 0;
}

void LayoutConverter::gather_bits_to_float(View<const std::uint8_t> in, std::int64_t rows,
                                           int in_cols, View<const int> index, View<float> out,
                                           const Stream& stream) const {
  const int out_cols = require_gather(in, rows, in_cols, index, out, memory_of(backend_));
  if (backend_.is_cuda()) {
#if MIMORX_HAS_CUDA
    detail::gather_bits_to_float_cuda(in.data, rows, in_cols, index.data, out_cols, out.data,
                                      device_of(backend_), stream.handle());
#endif
    return;
  }
  (void)stream;
  require_host_index(index, in_cols, false);
#pragma omp parallel for schedule(static) if (rows * out_cols > 65536)
  for (std::int64_t r = 0; r < rows; ++r) {
    for (int j = 0; j < out_cols; ++j) out[r * out_cols + j] = float(in[r * in_cols + index[j]]);
  }
}

void LayoutConverter::gather_scaled(View<const float> in, std::int64_t rows, int in_cols,
                                    View<const int> index, float scale, View<const float> base,
                                    bool accumulate, View<float> out, const Stream& stream) const {
  const Memory mem = memory_of(backend_);
  const int out_cols = require_gather(in, rows, in_cols, index, out, mem);
  if (!accumulate) {
    require_memory(base.where, mem, "base");
    require_size(base, out_cols, "base");
  }
  const float* b = accumulate ? nullptr : base.data;
  if (backend_.is_cuda()) {
#if MIMORX_HAS_CUDA
    detail::gather_scaled_cuda(in.data, rows, in_cols, index.data, out_cols, scale, b, out.data,
                               device_of(backend_), stream.handle());
#endif
    return;
  }
  (void)stream;
  require_host_index(index, in_cols, true);
#pragma omp parallel for schedule(static) if (rows * out_cols > 65536)
  for (std::int64_t r = 0; r < rows; ++r) {
    float* o = out.data + r * out_cols;
    for (int j = 0; j < out_cols; ++j) {
      o[j] = detail::gathered(in.data + r * in_cols, index[j], scale, b ? b[j] : o[j]);
    }
  }
}

void LayoutConverter::scale(View<const float> in, float s, View<float> out,
                            const Stream& stream) const {
  const Memory mem = memory_of(backend_);
  require_memory(in.where, mem, "in");
  require_memory(out.where, mem, "out");
  require_size(out, in.size, "out");
  if (backend_.is_cuda()) {
#if MIMORX_HAS_CUDA
    detail::scale_cuda(in.data, in.size, s, out.data, device_of(backend_), stream.handle());
#endif
    return;
  }
  (void)stream;
  for (std::int64_t i = 0; i < in.size; ++i) out[i] = s * in[i];
}

void LayoutConverter::row_to_column_major(View<const cf32> in, std::int64_t batch, int rows,
                                          int cols, View<cf32> out, const Stream& stream) const {
  require(batch >= 0 && rows >= 0 && cols >= 0, "shape", "batch, rows and cols must be >= 0");
  const Memory mem = memory_of(backend_);
  require_memory(in.where, mem, "in");
  require_memory(out.where, mem, "out");
  require_size(in, batch * rows * cols, "in");
  require_size(out, batch * rows * cols, "out");
  require(in.data != out.data || in.size == 0, "out",
          "must not be the input (no transposition in place)");
  if (backend_.is_cuda()) {
#if MIMORX_HAS_CUDA
    detail::row_to_column_major_cuda(in.data, batch, rows, cols, out.data, device_of(backend_),
                                     stream.handle());
#endif
    return;
  }
  (void)stream;
  const std::int64_t per = std::int64_t(rows) * cols;
  for (std::int64_t b = 0; b < batch; ++b) {
    for (int i = 0; i < rows; ++i) {
      for (int j = 0; j < cols; ++j) out[b * per + j * rows + i] = in[b * per + i * cols + j];
    }
  }
}

void LayoutConverter::noise_from_covariance(View<const cf32> s, std::int64_t batch, int n,
                                            std::int64_t batch_stride, std::int64_t diag_stride,
                                            View<float> n0, const Stream& stream) const {
  require(batch >= 0, "batch", "is " + std::to_string(batch) + "; must be >= 0");
  require(n >= 1, "n", "is " + std::to_string(n) + "; must be >= 1");
  require(batch_stride >= 0 && diag_stride >= 0, "strides", "must be >= 0");
  const Memory mem = memory_of(backend_);
  require_memory(s.where, mem, "s");
  require_memory(n0.where, mem, "n0");
  require_size(n0, batch, "n0");
  if (batch > 0) {
    const std::int64_t last = (batch - 1) * batch_stride + std::int64_t(n - 1) * diag_stride;
    require(last < s.size, "s",
            "has " + std::to_string(s.size) + " elements; the strides reach element " +
                std::to_string(last));
  }
  if (backend_.is_cuda()) {
#if MIMORX_HAS_CUDA
    detail::noise_from_covariance_cuda(s.data, batch, n, batch_stride, diag_stride, n0.data,
                                       device_of(backend_), stream.handle());
#endif
    return;
  }
  (void)stream;
  for (std::int64_t b = 0; b < batch; ++b) {
    n0[b] = detail::covariance_noise(s.data + b * batch_stride, n, diag_stride);
  }
}

}  // namespace mimorx::interop

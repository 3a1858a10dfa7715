#pragma once
// Layout and convention conversions for arrays that come from other frameworks (PyTorch,
// TensorFlow, NumPy models such as Sionna's): bits held as floats, LLRs of the other sign,
// rate-matched positions gathered from or scattered into mother codewords, row-major channel
// matrices, noise covariances. Each is one pass over its arrays on the CPU or the plan's GPU, so
// that glue code needs one call per array instead of a chain of small framework operations.
//
// Batches are row-major (rows, cols) per argument, C-contiguous; sizes are checked on entry.
#include <cstdint>

#include "mimorx/core/backend.hpp"
#include "mimorx/core/buffer.hpp"
#include "mimorx/core/complex.hpp"
#include "mimorx/core/tensor.hpp"

namespace mimorx::interop {

class LayoutConverter {
 public:
  explicit LayoutConverter(Backend backend);

  // out (rows, out_cols) uint8: out[r, j] = in[r, j] for j < in_cols (1 where the float is 1,
  // else 0), 0 for in_cols <= j < out_cols. invalid: empty, or one int set to 1 when some input
  // is neither 0 nor 1 and to 0 otherwise (on CUDA, readable after the stream's work).
  void bits_from_float(View<const float> in, std::int64_t rows, int in_cols, View<std::uint8_t> out,
                       int out_cols, View<int> invalid, const Stream& stream = {}) const;

  // out (rows, index.size) float: out[r, j] = in[r, index[j]], in (rows, in_cols) uint8;
  // every index in [0, in_cols) (checked when the index is in host memory).
  void gather_bits_to_float(View<const std::uint8_t> in, std::int64_t rows, int in_cols,
                            View<const int> index, View<float> out,
                            const Stream& stream = {}) const;

  // out (rows, index.size) float: out[r, j] = base[j] + scale * in[r, index[j]], the second
  // term left out where index[j] < 0; with accumulate, out[r, j] itself replaces base[j] (base
  // may then be empty). Scatters with repeated destinations are a sequence of such passes,
  // each with distinct sources per destination.
  void gather_scaled(View<const float> in, std::int64_t rows, int in_cols, View<const int> index,
                     float scale, View<const float> base, bool accumulate, View<float> out,
                     const Stream& stream = {}) const;

  // out[i] = scale * in[i] (in and out may be the same array).
  void scale(View<const float> in, float scale, View<float> out, const Stream& stream = {}) const;

  // batch matrices rows x cols: in row-major (element (b, i, j) at b*rows*cols + i*cols + j),
  // out column-major (at b*rows*cols + j*rows + i), the library's matrix layout.
  void row_to_column_major(View<const cf32> in, std::int64_t batch, int rows, int cols,
                           View<cf32> out, const Stream& stream = {}) const;

  // n0[b] = mean over i of Re s(b, i, i) for `batch` covariance matrices n x n whose diagonal
  // element i of matrix b is at s[b * batch_stride + i * diag_stride] (batch_stride may be 0:
  // one matrix for all).
  void noise_from_covariance(View<const cf32> s, std::int64_t batch, int n,
                             std::int64_t batch_stride, std::int64_t diag_stride, View<float> n0,
                             const Stream& stream = {}) const;

  const Backend& backend() const { return backend_; }

 private:
  Backend backend_;
};

}  // namespace mimorx::interop

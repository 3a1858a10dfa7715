#include "core/cuda_check.hpp"
#include "core/cuda_grid.cuh"
#include "interop/layout_cuda.hpp"
#include "interop/layout_math.hpp"

namespace mimorx::interop::detail {
namespace {
constexpr int kThreads = 256;

using mimorx::detail::grid_for;

__global__ void bits_from_float_kernel(const float* in, std::int64_t rows, int in_cols,
                                       std::uint8_t* out, int out_cols, int* invalid) {
  MIMORX_GRID_STRIDE(i, rows * out_cols) {
    const std::int64_t r = i / out_cols;
    const int j = int(i - r * out_cols);
    std::uint8_t b = 0;
    if (j < in_cols) {
      const float v = in[r * in_cols + j];
      b = bit_of_float(v);
      if (invalid && !is_bit(v)) *invalid = 1;
    }
    out[i] = b;
  }
}

__global__ void gather_bits_kernel(const std::uint8_t* in, std::int64_t rows, int in_cols,
                                   const int* index, int out_cols, float* out) {
  MIMORX_GRID_STRIDE(i, rows * out_cols) {
    const std::int64_t r = i / out_cols;
    const int j = int(i - r * out_cols);
    const int k = index[j];
    out[i] = unsigned(k) < unsigned(in_cols) ? float(in[r * in_cols + k]) : kBadIndex;
  }
}

__global__ void gather_scaled_kernel(const float* in, std::int64_t rows, int in_cols,
                                     const int* index, int out_cols, float scale, const float* base,
                                     float* out) {
  MIMORX_GRID_STRIDE(i, rows * out_cols) {
    const std::int64_t r = i / out_cols;
    const int j = int(i - r * out_cols);
    const int k = index[j];
    out[i] =
        k < in_cols ? gathered(in + r * in_cols, k, scale, base ? base[j] : out[i]) : kBadIndex;
  }
}

__global__ void scale_kernel(const float* in, std::int64_t n, float scale, float* out) {
  MIMORX_GRID_STRIDE(i, n) { out[i] = scale * in[i]; }
}

__global__ void transpose_kernel(const cf32* in, std::int64_t batch, int rows, int cols,
                                 cf32* out) {
  const std::int64_t per = std::int64_t(rows) * cols;
  MIMORX_GRID_STRIDE(o, batch * per) {
    const std::int64_t b = o / per;
    const int e = int(o - b * per);  // column-major position: e = j * rows + i
    const int j = e / rows, i = e - j * rows;
    out[o] = in[b * per + std::int64_t(i) * cols + j];
  }
}

__global__ void noise_kernel(const cf32* s, std::int64_t batch, int n, std::int64_t batch_stride,
                             std::int64_t diag_stride, float* n0) {
  MIMORX_GRID_STRIDE(b, batch) { n0[b] = covariance_noise(s + b * batch_stride, n, diag_stride); }
}
}  // namespace

void bits_from_float_cuda(const float* in, std::int64_t rows, int in_cols, std::uint8_t* out,
                          int out_cols, int* invalid, int device, void* stream) {
  MIMORX_CUDA_CHECK(cudaSetDevice(device));
  const cudaStream_t s = mimorx::detail::as_stream(stream);
  if (invalid) MIMORX_CUDA_CHECK(cudaMemsetAsync(invalid, 0, sizeof(int), s));
  if (rows * out_cols == 0) return;
  bits_from_float_kernel<<<grid_for(rows * out_cols), kThreads, 0, s>>>(in, rows, in_cols, out,
                                                                        out_cols, invalid);
  MIMORX_CUDA_CHECK_LAUNCH();
}

void gather_bits_to_float_cuda(const std::uint8_t* in, std::int64_t rows, int in_cols,
                               const int* index, int out_cols, float* out, int device,
                               void* stream) {
  if (rows * out_cols == 0) return;
  MIMORX_CUDA_CHECK(cudaSetDevice(device));
  gather_bits_kernel<<<grid_for(rows * out_cols), kThreads, 0, mimorx::detail::as_stream(stream)>>>(
      in, rows, in_cols, index, out_cols, out);
  MIMORX_CUDA_CHECK_LAUNCH();
}

void gather_scaled_cuda(const float* in, std::int64_t rows, int in_cols, const int* index,
                        int out_cols, float scale, const float* base, float* out, int device,
                        void* stream) {
  if (rows * out_cols == 0) return;
  MIMORX_CUDA_CHECK(cudaSetDevice(device));
  gather_scaled_kernel<<<grid_for(rows * out_cols), kThreads, 0,
                         mimorx::detail::as_stream(stream)>>>(in, rows, in_cols, index, out_cols,
                                                              scale, base, out);
  MIMORX_CUDA_CHECK_LAUNCH();
}

void scale_cuda(const float* in, std::int64_t n, float scale, float* out, int device,
                void* stream) {
  if (n == 0) return;
  MIMORX_CUDA_CHECK(cudaSetDevice(device));
  scale_kernel<<<grid_for(n), kThreads, 0, mimorx::detail::as_stream(stream)>>>(in, n, scale, out);
  MIMORX_CUDA_CHECK_LAUNCH();
}

void row_to_column_major_cuda(const cf32* in, std::int64_t batch, int rows, int cols, cf32* out,
                              int device, void* stream) {
  const std::int64_t n = batch * rows * cols;
  if (n == 0) return;
  MIMORX_CUDA_CHECK(cudaSetDevice(device));
  transpose_kernel<<<grid_for(n), kThreads, 0, mimorx::detail::as_stream(stream)>>>(in, batch, rows,
                                                                                    cols, out);
  MIMORX_CUDA_CHECK_LAUNCH();
}

void noise_from_covariance_cuda(const cf32* s, std::int64_t batch, int n, std::int64_t batch_stride,
                                std::int64_t diag_stride, float* n0, int device, void* stream) {
  if (batch == 0) return;
  MIMORX_CUDA_CHECK(cudaSetDevice(device));
  noise_kernel<<<grid_for(batch), kThreads, 0, mimorx::detail::as_stream(stream)>>>(
      s, batch, n, batch_stride, diag_stride, n0);
  MIMORX_CUDA_CHECK_LAUNCH();
}

}  // namespace mimorx::interop::detail

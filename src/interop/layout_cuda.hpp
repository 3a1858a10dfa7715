#pragma once
#include <cstdint>

#include "mimorx/core/complex.hpp"

namespace mimorx::interop::detail {
void bits_from_float_cuda(const float* in, std::int64_t rows, int in_cols, std::uint8_t* out,
                          int out_cols, int* invalid, int device, void* stream);
void gather_bits_to_float_cuda(const std::uint8_t* in, std::int64_t rows, int in_cols,
                               const int* index, int out_cols, float* out, int device,
                               void* stream);
void gather_scaled_cuda(const float* in, std::int64_t rows, int in_cols, const int* index,
                        int out_cols, float scale, const float* base, float* out, int device,
                        void* stream);
void scale_cuda(const float* in, std::int64_t n, float scale, float* out, int device, void* stream);
void row_to_column_major_cuda(const cf32* in, std::int64_t batch, int rows, int cols, cf32* out,
                              int device, void* stream);
void noise_from_covariance_cuda(const cf32* s, std::int64_t batch, int n, std::int64_t batch_stride,
                                std::int64_t diag_stride, float* n0, int device, void* stream);
}  // namespace mimorx::interop::detail

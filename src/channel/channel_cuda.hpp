#pragma once
#include <cstdint>

#include "mimorx/core/complex.hpp"

namespace mimorx::channel::detail {
// G of channels first .. first + count - 1 into dst (stride elements between matrices).
void fading_g_cuda(std::uint64_t seed, std::int64_t first, std::int64_t count, int nr, int nt,
                   cf32* dst, std::int64_t stride, int device, void* stream);
// h = A g B per matrix (g dense, a/b may be null for identity).
void kron_cuda(const cf32* g, const float* a, const float* b, std::int64_t count, int nr, int nt,
               cf32* h, std::int64_t stride, int device, void* stream);
void apply_channel_cuda(const cf32* h, std::int64_t h_stride, const cf32* x, std::int64_t x_stride,
                        cf32* y, std::int64_t y_stride, std::int64_t vectors, int vpc, int nr,
                        int nt, const float* n0, std::int64_t n0_size, std::uint64_t seed,
                        std::int64_t first_vector, int device, void* stream);
void add_awgn_cuda(const cf32* x, cf32* y, std::int64_t n, const float* n0, std::int64_t n0_size,
                   std::uint64_t seed, std::int64_t first, int device, void* stream);
}  // namespace mimorx::channel::detail

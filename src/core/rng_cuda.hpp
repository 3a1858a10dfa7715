#pragma once
// CUDA entry points of rng.hpp's fill functions (src/ only).
#include <cstdint>

namespace mimorx::rng::detail {
void fill_uniform_cuda(std::uint64_t seed, std::uint64_t stream, float* out, std::int64_t n,
                       std::uint64_t offset, int device);
void fill_gaussian_cuda(std::uint64_t seed, std::uint64_t stream, float* out, std::int64_t n,
                        std::uint64_t offset, int device);
}  // namespace mimorx::rng::detail

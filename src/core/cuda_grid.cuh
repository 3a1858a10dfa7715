#pragma once
// The launch shape of the grid-stride kernels (one item per thread, the loop covering what the
// grid does not): kGridThreads threads a block, at most 65535 blocks, at least one.
#include <cstdint>

namespace mimorx::detail {

inline constexpr int kGridThreads = 256;

inline int grid_for(std::int64_t n, int threads = kGridThreads) {
  const std::int64_t blocks = (n + threads - 1) / threads;
  return int(blocks < 65535 ? (blocks > 0 ? blocks : 1) : 65535);
}

}  // namespace mimorx::detail

// for (i = this thread's first item; i < n; i += the grid's threads), i an int64.
#define MIMORX_GRID_STRIDE(i, n)                                                      \
  for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < (n); \
       i += std::int64_t(gridDim.x) * blockDim.x)

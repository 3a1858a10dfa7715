#pragma once
// The simulator's frame generator: for frames [first, first + count) writes source bits,
// channels and received vectors in the library layout, on the backend's memory.
#include <cstdint>

#include "mimorx/core/backend.hpp"
#include "mimorx/core/complex.hpp"
#include "mimorx/modem/modulation.hpp"

namespace mimorx::sim::detail {

struct FrameBatch {
  std::uint8_t* bits;  // count * nt * m
  cf32* h;             // count matrices nr x nt
  cf32* y;             // count vectors nr
};

void make_frames_cpu(std::uint64_t seed, std::int64_t first, std::int64_t count, int nt, int nr,
                     Modulation mod, float n0, FrameBatch out);
void make_frames_cuda(std::uint64_t seed, std::int64_t first, std::int64_t count, int nt, int nr,
                      Modulation mod, float n0, FrameBatch out, int device);

}  // namespace mimorx::sim::detail

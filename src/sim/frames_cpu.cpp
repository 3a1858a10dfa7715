#include "sim/frames.hpp"
#include "sim/frames_math.hpp"

namespace mimorx::sim::detail {

void make_frames_cpu(std::uint64_t seed, std::int64_t first, std::int64_t count, int nt, int nr,
                     Modulation mod, float n0, FrameBatch out) {
  const int m = bits_per_symbol(mod);
#pragma omp parallel for schedule(static)
  for (std::int64_t f = 0; f < count; ++f) {
    make_frame(seed, first + f, nt, nr, mod, n0, out.bits + f * nt * m, out.h + f * nr * nt,
               out.y + f * nr);
  }
}

}  // namespace mimorx::sim::detail

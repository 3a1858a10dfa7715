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

void vector_errors_cpu(const std::uint8_t* sent, const std::uint8_t* got, std::int64_t count,
                       int nt, int m, std::uint16_t* errors) {
#pragma omp parallel for schedule(static)
  for (std::int64_t v = 0; v < count; ++v) {
    errors[v] = vector_errors(sent + v * nt * m, got + v * nt * m, nt, m);
  }
}

void transport_bits_cpu(std::uint64_t seed, std::int64_t first, std::int64_t count, int tbs,
                        std::uint8_t* tb) {
#pragma omp parallel for schedule(static)
  for (std::int64_t b = 0; b < count; ++b) {
    const std::uint64_t base = std::uint64_t(first + b) * std::uint64_t(tbs);
    for (int k = 0; k < tbs; ++k) tb[b * tbs + k] = transport_bit(seed, base + std::uint64_t(k));
  }
}

void make_received_cpu(std::uint64_t seed, std::int64_t first, std::int64_t count, int nt, int nr,
                       Modulation mod, float n0, const std::uint8_t* bits, cf32* h, cf32* y) {
  const int m = bits_per_symbol(mod);
#pragma omp parallel for schedule(static)
  for (std::int64_t v = 0; v < count; ++v) {
    make_received(seed, first + v, nt, nr, mod, n0, bits + v * nt * m, h + v * nr * nt,
                  y + v * nr);
  }
}

void block_errors_cpu(const std::uint8_t* sent, const std::uint8_t* got, std::int64_t count,
                      int tbs, int* errors) {
#pragma omp parallel for schedule(static)
  for (std::int64_t b = 0; b < count; ++b) {
    int e = 0;
    for (int k = 0; k < tbs; ++k) e += (sent[b * tbs + k] ^ got[b * tbs + k]) & 1;
    errors[b] = e;
  }
}

}  // namespace mimorx::sim::detail

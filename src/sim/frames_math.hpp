#pragma once
// Per-element arithmetic of the simulator's frame generator, shared by the CPU and CUDA paths.
// Every random value is addressed by (seed, stream, index) through Philox, with the index a
// function of the global frame number: results do not depend on backend or batch size.
#include <cstdint>

#include "mimorx/core/complex.hpp"
#include "mimorx/core/rng.hpp"
#include "mimorx/core/rounding.hpp"
#include "mimorx/modem/modulation.hpp"

namespace mimorx::sim::detail {

// Philox stream ids of the simulator (the seed is the user's --seed).
inline constexpr std::uint64_t kStreamBits = 0x5100000000000001ULL;
inline constexpr std::uint64_t kStreamChannel = 0x5100000000000002ULL;
inline constexpr std::uint64_t kStreamNoise = 0x5100000000000003ULL;
inline constexpr std::uint64_t kStreamTransportBits = 0x5100000000000004ULL;

MIMORX_HD std::uint8_t source_bit(std::uint64_t seed, std::uint64_t index) {
  return std::uint8_t(rng::philox_block(seed, kStreamBits, index >> 2).v[index & 3] >> 31);
}

// Information bit `index` of the coded simulator's transport blocks (block b, bit k: b*tbs+k).
MIMORX_HD std::uint8_t transport_bit(std::uint64_t seed, std::uint64_t index) {
  return std::uint8_t(rng::philox_block(seed, kStreamTransportBits, index >> 2).v[index & 3] >> 31);
}

// Entry (i, j) of the i.i.d. Rayleigh channel of frame f: CN(0, 1), no normalisation by nt.
MIMORX_HD cf32 rayleigh_entry(std::uint64_t seed, std::int64_t f, int nr, int nt, int i, int j) {
  const std::uint64_t e =
      (std::uint64_t(f) * std::uint64_t(nr * nt) + std::uint64_t(j * nr + i)) * 2;
  const float s = 0.70710678118654752f;
  float re, im;
  rng::gaussian_pair_at(seed, kStreamChannel, e, &re, &im);
  return {re * s, im * s};
}

// Noise sample i of frame f: CN(0, n0).
MIMORX_HD cf32 noise_entry(std::uint64_t seed, std::int64_t f, int nr, int i, float n0) {
  const std::uint64_t e = (std::uint64_t(f) * std::uint64_t(nr) + std::uint64_t(i)) * 2;
  // sqrt(n0 / 2) computed by the caller would differ between libm and CUDA; do it in double
  // with the correctly rounded operations of rounding.hpp.
  const float s = float(rounding::dsqrt(rounding::dmul(double(n0), 0.5)));
  float re, im;
  rng::gaussian_pair_at(seed, kStreamNoise, e, &re, &im);
  return {re * s, im * s};
}

// Channel and received vector of frame f for given bits (nt*m): H (nr x nt column-major) and
// y = H x + n (nr). The coded simulator calls this with encoded bits.
MIMORX_HD void make_received(std::uint64_t seed, std::int64_t f, int nt, int nr, Modulation mod,
                             float n0, const std::uint8_t* bits, cf32* h, cf32* y) {
  const int m = bits_per_symbol(mod);
  for (int j = 0; j < nt; ++j) {
    for (int i = 0; i < nr; ++i) h[j * nr + i] = rayleigh_entry(seed, f, nr, nt, i, j);
  }
  for (int i = 0; i < nr; ++i) {
    cf32 acc = noise_entry(seed, f, nr, i, n0);
    for (int j = 0; j < nt; ++j) {
      const cf32 p = rounding::cmul(h[j * nr + i], map_symbol(mod, bits + j * m));
      acc = rounding::cadd(acc, p);
    }
    y[i] = acc;
  }
}

// Row i of frame f's channel and received sample: H(i, 0..nt-1) and y_i, the values
// make_received writes for that row, in the same operation order (the GPU computes the rows of
// a frame in parallel, one thread each).
MIMORX_HD void make_received_row(std::uint64_t seed, std::int64_t f, int nt, int nr, Modulation mod,
                                 float n0, const std::uint8_t* bits, int i, cf32* h, cf32* y) {
  const int m = bits_per_symbol(mod);
  cf32 acc = noise_entry(seed, f, nr, i, n0);
  for (int j = 0; j < nt; ++j) {
    const cf32 hij = rayleigh_entry(seed, f, nr, nt, i, j);
    h[j * nr + i] = hij;
    const cf32 p = rounding::cmul(hij, map_symbol(mod, bits + j * m));
    acc = rounding::cadd(acc, p);
  }
  y[i] = acc;
}

// The two normal pairs of one Philox block of `stream`: pair indices 2q and 2q + 1, the values
// gaussian_pair_at gives for elements 4q..4q+3 (one Philox evaluation for both).
MIMORX_HD void gaussian_pairs_of_block(std::uint64_t seed, std::uint64_t stream, std::uint64_t q,
                                       float* z) {
  const rng::U32x4 b = rng::philox_block(seed, stream, q);
  rng::box_muller(rng::to_uniform(b.v[0]), rng::to_uniform(b.v[1]), z, z + 1);
  rng::box_muller(rng::to_uniform(b.v[2]), rng::to_uniform(b.v[3]), z + 2, z + 3);
}

// Rows i and i + 1 of frame f (nr even, i even), the values make_received_row writes for each:
// the channel entries (i, j) and (i + 1, j) are pairs 2q and 2q + 1 of one Philox block, and so
// are the two noise samples, so each block is evaluated once.
MIMORX_HD void make_received_row_pair(std::uint64_t seed, std::int64_t f, int nt, int nr,
                                      Modulation mod, float n0, const std::uint8_t* bits, int i,
                                      cf32* h, cf32* y) {
  const int m = bits_per_symbol(mod);
  const float s = 0.70710678118654752f;
  const float sn = float(rounding::dsqrt(rounding::dmul(double(n0), 0.5)));
  float z[4];
  gaussian_pairs_of_block(seed, kStreamNoise, (std::uint64_t(f) * std::uint64_t(nr) + i) >> 1, z);
  cf32 acc0{z[0] * sn, z[1] * sn}, acc1{z[2] * sn, z[3] * sn};
  for (int j = 0; j < nt; ++j) {
    gaussian_pairs_of_block(
        seed, kStreamChannel,
        (std::uint64_t(f) * std::uint64_t(nr * nt) + std::uint64_t(j * nr + i)) >> 1, z);
    const cf32 h0{z[0] * s, z[1] * s}, h1{z[2] * s, z[3] * s};
    h[j * nr + i] = h0;
    h[j * nr + i + 1] = h1;
    const cf32 x = map_symbol(mod, bits + j * m);
    const cf32 p0 = rounding::cmul(h0, x), p1 = rounding::cmul(h1, x);
    acc0 = rounding::cadd(acc0, p0);
    acc1 = rounding::cadd(acc1, p1);
  }
  y[i] = acc0;
  y[i + 1] = acc1;
}

// Bit errors (low byte) and symbol errors (high byte) of one received vector of nt symbols.
MIMORX_HD std::uint16_t vector_errors(const std::uint8_t* sent, const std::uint8_t* got, int nt,
                                      int m) {
  int bits = 0, symbols = 0;
  for (int t = 0; t < nt; ++t) {
    int e = 0;
    for (int k = 0; k < m; ++k) e += (sent[t * m + k] ^ got[t * m + k]) & 1;
    bits += e;
    symbols += e > 0;
  }
  return std::uint16_t(bits | (symbols << 8));
}

// Generates everything of one frame: source bits (nt*m), H and y.
MIMORX_HD void make_frame(std::uint64_t seed, std::int64_t f, int nt, int nr, Modulation mod,
                          float n0, std::uint8_t* bits, cf32* h, cf32* y) {
  const int m = bits_per_symbol(mod);
  const std::uint64_t bit0 = std::uint64_t(f) * std::uint64_t(nt * m);
  for (int k = 0; k < nt * m; ++k) bits[k] = source_bit(seed, bit0 + std::uint64_t(k));
  make_received(seed, f, nt, nr, mod, n0, bits, h, y);
}

}  // namespace mimorx::sim::detail

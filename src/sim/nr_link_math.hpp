#pragma once
// Per-RE arithmetic of the NR slot link, shared by the CPU steps (nr_link_grid.cpp) and the CUDA
// kernels (nr_link_cuda.cu). Every random value is addressed by (seed, stream, counter) through
// Philox, with counters that depend on the block and transmission only; every product and sum
// is rounded explicitly (core/rounding.hpp: -ffp-contract=off on the host,
// __fmul_rn/__fadd_rn on the GPU), so both backends give the same bits.
#include <cstdint>

#include "mimorx/core/complex.hpp"
#include "mimorx/core/rng.hpp"
#include "mimorx/core/rounding.hpp"

namespace mimorx::sim::detail {

inline constexpr std::uint64_t kStreamNrFlat = 0x5100000000000011ULL;
inline constexpr std::uint64_t kStreamNrNoise = 0x5100000000000012ULL;
inline constexpr int kNrMaxHarq = 4;  // noise slots per block (= kMaxHarqTransmissions)

// Noise slot of transmission `tx` of block `block` (independent of harq_transmissions).
MIMORX_HD std::uint64_t nr_noise_slot(std::int64_t block, int tx) {
  return std::uint64_t(block) * kNrMaxHarq + std::uint64_t(tx);
}

// sqrt(n0 / 2) in double with correctly rounded operations (libm and CUDA agree).
MIMORX_HD float nr_noise_scale(float n0) {
  return float(rounding::dsqrt(rounding::dmul(double(n0), 0.5)));
}

// Entry e (column-major n_rx x layers, e < per) of the flat Rayleigh channel of a noise slot:
// CN(0, 1), the same on every RE of the slot.
MIMORX_HD cf32 nr_flat_entry(std::uint64_t seed, std::uint64_t noise_slot, int per, int e) {
  const std::uint64_t i = (noise_slot * std::uint64_t(per) + std::uint64_t(e)) * 2;
  const float s = 0.70710678118654752f;
  float re, im;
  rng::gaussian_pair_at(seed, kStreamNrFlat, i, &re, &im);
  return {rounding::fmul(re, s), rounding::fmul(im, s)};
}

// y on receive antenna r of grid RE `re`: sum_j H(r, j) x_j + n, noise from the slot's counter
// (noise_slot * res + re) * n_rx + r. h_re: the RE's n_rx x layers matrix (column-major); x_re:
// its `layers` transmitted values; s = nr_noise_scale(n0).
MIMORX_HD cf32 nr_received(std::uint64_t seed, std::uint64_t noise_slot, std::int64_t res, int n_rx,
                           int layers, std::int64_t re, int r, const cf32* h_re, const cf32* x_re,
                           float s) {
  const std::uint64_t i =
      (noise_slot * std::uint64_t(res) * std::uint64_t(n_rx) + std::uint64_t(re * n_rx + r)) * 2;
  float nre, nim;
  rng::gaussian_pair_at(seed, kStreamNrNoise, i, &nre, &nim);
  cf32 acc{rounding::fmul(nre, s), rounding::fmul(nim, s)};
  for (int j = 0; j < layers; ++j) {
    acc = rounding::cadd(acc, rounding::cmul(h_re[j * n_rx + r], x_re[j]));
  }
  return acc;
}

// Layer mapping (TS 38.211 §6.3.1.3): codeword symbol v i + j is layer j's symbol i, sent on
// data RE i (grid position `pos`, re = l n_sc + k) from antenna j: x[pos * v + j].
MIMORX_HD std::int64_t nr_codeword_symbol(std::int64_t i, int layers, int j) {
  return std::int64_t(layers) * i + j;
}

// Detector LLR of data RE i, stream j, bit k ((i layers + j) m + k) -> its codeword position
// ((v i + j) m + k): stream j of data RE i is codeword symbol v i + j.
MIMORX_HD std::int64_t nr_codeword_llr(std::int64_t i, int layers, int j, int m, int k) {
  return nr_codeword_symbol(i, layers, j) * m + k;
}
MIMORX_HD std::int64_t nr_detector_llr(std::int64_t i, int layers, int j, int m, int k) {
  return (i * layers + j) * m + k;
}

}  // namespace mimorx::sim::detail

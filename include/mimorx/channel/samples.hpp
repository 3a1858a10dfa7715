#pragma once
// Where every random channel coefficient and noise sample comes from, as MIMORX_HD functions so
// that the CPU reference, the CUDA kernels and any test compute the same bits.
//
// Counter layout (Philox4x32-10 of core/rng.hpp, key = the caller's 64-bit seed):
//   fading  G: stream kFadingStream, channel c (absolute index, i.e. first_channel + batch
//              index), entry (i, j) of the nr x nt matrix (column-major, e = (c*nt + j)*nr + i):
//              real part = gaussian_at(seed, kFadingStream, 2e), imaginary part at 2e + 1,
//              g = (re + j im) / sqrt(2) ~ CN(0, 1).
//   noise   n: stream kNoiseStream, received vector v (absolute: first_vector + batch index),
//              antenna i, e = v*nr + i: n = sqrt(N0/2) (gaussian(2e) + j gaussian(2e + 1)).
// A sample therefore depends only on (seed, stream, absolute index, shape), never on the batch
// split, the thread count or the backend.
//
// Arithmetic that combines samples uses the correctly rounded operations of core/rounding.hpp,
// which no compiler contracts into fused multiply-adds, so CPU and CUDA agree to the bit.
#include <cstdint>

#include "mimorx/core/complex.hpp"
#include "mimorx/core/hd.hpp"
#include "mimorx/core/rng.hpp"
#include "mimorx/core/rounding.hpp"

namespace mimorx::channel {

inline constexpr std::uint64_t kFadingStream = 0x4348'0001ULL;  // "CH" 1
inline constexpr std::uint64_t kNoiseStream = 0x4348'0002ULL;   // "CH" 2

// Entry (i, j) of the i.i.d. CN(0, 1) matrix G of channel c.
MIMORX_HD cf32 fading_entry(std::uint64_t seed, std::int64_t c, int nr, int nt, int i, int j) {
  const std::uint64_t e =
      (std::uint64_t(c) * std::uint64_t(nt) + std::uint64_t(j)) * std::uint64_t(nr) +
      std::uint64_t(i);
  constexpr float kInvSqrt2 = 0.70710678118654752f;
  return {rounding::fmul(rng::gaussian_at(seed, kFadingStream, 2 * e), kInvSqrt2),
          rounding::fmul(rng::gaussian_at(seed, kFadingStream, 2 * e + 1), kInvSqrt2)};
}

// Noise sample of antenna i of received vector v, CN(0, noise_var).
MIMORX_HD cf32 noise_sample(std::uint64_t seed, std::int64_t v, int nr, int i, float noise_var) {
  const std::uint64_t e = std::uint64_t(v) * std::uint64_t(nr) + std::uint64_t(i);
  const float sigma = rounding::fsqrt(rounding::fmul(noise_var, 0.5f));
  return {rounding::fmul(rng::gaussian_at(seed, kNoiseStream, 2 * e), sigma),
          rounding::fmul(rng::gaussian_at(seed, kNoiseStream, 2 * e + 1), sigma)};
}

// Row i of H x + n for one received vector: sum_j H(i, j) x_j accumulated in j order, then the
// noise. `h` is the nr x nt column-major matrix.
MIMORX_HD cf32 received_entry(const cf32* h, const cf32* x, int nr, int nt, int i, cf32 noise) {
  cf32 acc{0.f, 0.f};
  for (int j = 0; j < nt; ++j) acc = rounding::cadd(acc, rounding::cmul(h[j * nr + i], x[j]));
  return rounding::cadd(acc, noise);
}

}  // namespace mimorx::channel

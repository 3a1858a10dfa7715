#pragma once
// Counter-based random numbers: Philox4x32-10 (Salmon et al., SC'11), the same bits on the CPU
// and the GPU for the same (seed, stream, index). Element i of a stream is a pure function of
// (seed, stream, i), so a simulation does not depend on batch size, thread count or backend.
//
// Uniforms are float32 in the open interval (0, 1): odd multiples of 2^-24. Gaussians use Box-Muller
// evaluated in float64 with our own log/sin/cos written with correctly rounded operations only
// (no libm, no fused multiply-add), so the CPU and CUDA results are bit-identical.
#include <cstdint>

#include "mimorx/core/backend.hpp"
#include "mimorx/core/hd.hpp"
#include "mimorx/core/tensor.hpp"

namespace mimorx::rng {

struct U32x4 {
  std::uint32_t v[4];
};

namespace detail {
MIMORX_HD std::uint32_t mulhilo(std::uint32_t a, std::uint32_t b, std::uint32_t* hi) {
  const std::uint64_t p = std::uint64_t(a) * b;
  *hi = std::uint32_t(p >> 32);
  return std::uint32_t(p);
}
// Correctly rounded double operations that the compiler may not contract into FMAs.
MIMORX_HD double dmul(double a, double b) {
#if MIMORX_DEVICE_CODE && defined(__CUDA_ARCH__)
  return __dmul_rn(a, b);
#else
  return a * b;
#endif
}
MIMORX_HD double dadd(double a, double b) {
#if MIMORX_DEVICE_CODE && defined(__CUDA_ARCH__)
  return __dadd_rn(a, b);
#else
  return a + b;
#endif
}
MIMORX_HD double ddiv(double a, double b) {
#if MIMORX_DEVICE_CODE && defined(__CUDA_ARCH__)
  return __ddiv_rn(a, b);
#else
  return a / b;
#endif
}
MIMORX_HD double dsqrt(double a) {
#if MIMORX_DEVICE_CODE && defined(__CUDA_ARCH__)
  return __dsqrt_rn(a);
#else
  return __builtin_sqrt(a);
#endif
}
MIMORX_HD std::uint64_t bits_of(double x) {
#if MIMORX_DEVICE_CODE && defined(__CUDA_ARCH__)
  return std::uint64_t(__double_as_longlong(x));
#else
  return __builtin_bit_cast(std::uint64_t, x);
#endif
}
MIMORX_HD double double_of(std::uint64_t b) {
#if MIMORX_DEVICE_CODE && defined(__CUDA_ARCH__)
  return __longlong_as_double((long long)b);
#else
  return __builtin_bit_cast(double, b);
#endif
}

// Natural log of x in (0, 1]: x = m 2^e with m in [sqrt(1/2), sqrt(2)), then
// log m = 2 atanh(s), s = (m-1)/(m+1), |s| < 0.172; the series to s^19 is exact to 1e-15.
MIMORX_HD double log_open01(double x) {
  std::uint64_t b = bits_of(x);
  int e = int((b >> 52) & 0x7ff) - 1023;
  double m = double_of((b & 0x000fffffffffffffULL) | 0x3ff0000000000000ULL);  // [1, 2)
  if (m > 1.4142135623730951) {
    m = dmul(m, 0.5);
    e += 1;
  }
  const double s = ddiv(dadd(m, -1.0), dadd(m, 1.0));
  const double s2 = dmul(s, s);
  double p = 1.0 / 19.0;
  p = dadd(dmul(p, s2), 1.0 / 17.0);
  p = dadd(dmul(p, s2), 1.0 / 15.0);
  p = dadd(dmul(p, s2), 1.0 / 13.0);
  p = dadd(dmul(p, s2), 1.0 / 11.0);
  p = dadd(dmul(p, s2), 1.0 / 9.0);
  p = dadd(dmul(p, s2), 1.0 / 7.0);
  p = dadd(dmul(p, s2), 1.0 / 5.0);
  p = dadd(dmul(p, s2), 1.0 / 3.0);
  p = dadd(dmul(p, s2), 1.0);
  return dadd(dmul(double(e), 0.69314718055994530942), dmul(dmul(2.0, s), p));
}

// sin and cos of t in [0, pi/2] by Taylor series to degree 21/22 (error < 1e-17).
MIMORX_HD void sincos_quarter(double t, double* s, double* c) {
  const double t2 = dmul(t, t);
  double ps = 1.0 / 51090942171709440000.0;  // 1/21!
  ps = dadd(dmul(ps, t2), -1.0 / 121645100408832000.0);
  ps = dadd(dmul(ps, t2), 1.0 / 355687428096000.0);
  ps = dadd(dmul(ps, t2), -1.0 / 1307674368000.0);
  ps = dadd(dmul(ps, t2), 1.0 / 6227020800.0);
  ps = dadd(dmul(ps, t2), -1.0 / 39916800.0);
  ps = dadd(dmul(ps, t2), 1.0 / 362880.0);
  ps = dadd(dmul(ps, t2), -1.0 / 5040.0);
  ps = dadd(dmul(ps, t2), 1.0 / 120.0);
  ps = dadd(dmul(ps, t2), -1.0 / 6.0);
  ps = dadd(dmul(ps, t2), 1.0);
  *s = dmul(ps, t);
  double pc = -1.0 / 1124000727777607680000.0;  // -1/22!
  pc = dadd(dmul(pc, t2), 1.0 / 2432902008176640000.0);
  pc = dadd(dmul(pc, t2), -1.0 / 6402373705728000.0);
  pc = dadd(dmul(pc, t2), 1.0 / 20922789888000.0);
  pc = dadd(dmul(pc, t2), -1.0 / 87178291200.0);
  pc = dadd(dmul(pc, t2), 1.0 / 479001600.0);
  pc = dadd(dmul(pc, t2), -1.0 / 3628800.0);
  pc = dadd(dmul(pc, t2), 1.0 / 40320.0);
  pc = dadd(dmul(pc, t2), -1.0 / 720.0);
  pc = dadd(dmul(pc, t2), 1.0 / 24.0);
  pc = dadd(dmul(pc, t2), -0.5);
  *c = dadd(dmul(pc, t2), 1.0);
}
}  // namespace detail

// The Philox4x32-10 bijection of a 128-bit counter under a 64-bit key.
MIMORX_HD U32x4 philox4x32_10(U32x4 ctr, std::uint32_t k0, std::uint32_t k1) {
  for (int round = 0; round < 10; ++round) {
    std::uint32_t hi0, hi1;
    const std::uint32_t lo0 = detail::mulhilo(0xD2511F53u, ctr.v[0], &hi0);
    const std::uint32_t lo1 = detail::mulhilo(0xCD9E8D57u, ctr.v[2], &hi1);
    ctr = U32x4{{hi1 ^ ctr.v[1] ^ k0, lo1, hi0 ^ ctr.v[3] ^ k1, lo0}};
    k0 += 0x9E3779B9u;
    k1 += 0xBB67AE85u;
  }
  return ctr;
}

// Block `block` (4 words) of stream `stream` under `seed`.
MIMORX_HD U32x4 philox_block(std::uint64_t seed, std::uint64_t stream, std::uint64_t block) {
  return philox4x32_10(U32x4{{std::uint32_t(block), std::uint32_t(block >> 32),
                              std::uint32_t(stream), std::uint32_t(stream >> 32)}},
                       std::uint32_t(seed), std::uint32_t(seed >> 32));
}

// Maps 32 random bits to a float in (0, 1): (2k + 1) 2^-24 with k the top 23 bits, exact.
MIMORX_HD float to_uniform(std::uint32_t x) {
  return float(2u * (x >> 9) + 1u) * (1.0f / 16777216.0f);
}

// Two independent N(0, 1) values from two uniforms (Box-Muller), bit-identical CPU/GPU.
MIMORX_HD void box_muller(float u1, float u2, float* z0, float* z1) {
  const double r = detail::dsqrt(detail::dmul(-2.0, detail::log_open01(double(u1))));
  const double q4 = detail::dmul(double(u2), 4.0);  // exact
  const int quadrant = int(q4);                       // 0..3
  const double t = detail::dmul(detail::dadd(q4, -double(quadrant)), 1.5707963267948966);
  double s, c;
  detail::sincos_quarter(t, &s, &c);
  double cs = c, sn = s;
  if (quadrant == 1) {
    cs = -s;
    sn = c;
  } else if (quadrant == 2) {
    cs = -c;
    sn = -s;
  } else if (quadrant == 3) {
    cs = s;
    sn = -c;
  }
  *z0 = float(detail::dmul(r, cs));
  *z1 = float(detail::dmul(r, sn));
}

// Element i of the uniform stream.
MIMORX_HD float uniform_at(std::uint64_t seed, std::uint64_t stream, std::uint64_t i) {
  const U32x4 b = philox_block(seed, stream, i >> 2);
  return to_uniform(b.v[i & 3]);
}

// Element i of the standard normal stream: block i/4 gives four normals.
MIMORX_HD float gaussian_at(std::uint64_t seed, std::uint64_t stream, std::uint64_t i) {
  const U32x4 b = philox_block(seed, stream, i >> 2);
  const int pair = int(i >> 1) & 1;
  float z0, z1;
  box_muller(to_uniform(b.v[2 * pair]), to_uniform(b.v[2 * pair + 1]), &z0, &z1);
  return (i & 1) ? z1 : z0;
}

// Elements i and i + 1 (i even) of the standard normal stream from one Box-Muller evaluation:
// the values gaussian_at gives for both, at half its cost.
MIMORX_HD void gaussian_pair_at(std::uint64_t seed, std::uint64_t stream, std::uint64_t i,
                                float* z0, float* z1) {
  const U32x4 b = philox_block(seed, stream, i >> 2);
  const int pair = int(i >> 1) & 1;
  box_muller(to_uniform(b.v[2 * pair]), to_uniform(b.v[2 * pair + 1]), z0, z1);
}

// Fill out[k] = element (offset + k) of a stream, on the backend where `out` lives.
void fill_uniform(const Backend& backend, std::uint64_t seed, std::uint64_t stream,
                  View<float> out, std::uint64_t offset = 0);
void fill_gaussian(const Backend& backend, std::uint64_t seed, std::uint64_t stream,
                   View<float> out, std::uint64_t offset = 0);

}  // namespace mimorx::rng

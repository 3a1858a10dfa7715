#pragma once
// Counter-based random numbers: Philox4x32-10 (Salmon et al., SC'11), the same bits on the CPU
// and the GPU for the same (seed, stream, index). Element i of a stream is a pure function of
// (seed, stream, i), so a simulation does not depend on batch size, thread count or backend.
//
// Uniforms are float32 in the open interval (0, 1): odd multiples of 2^-24. Gaussians use
// Box-Muller evaluated in float32 with our own log/sin/cos written with correctly rounded
// operations only (no libm, no fused multiply-add), so the CPU and CUDA results are bit-identical;
// they are within a few float ulps of the exact transform of the same uniforms.
#include <cstdint>

#include "mimorx/core/backend.hpp"
#include "mimorx/core/hd.hpp"
#include "mimorx/core/rounding.hpp"
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

// Every float operation of the log and sin/cos series below rounds on its own (rounding.hpp).
using rounding::bits_of_float;
using rounding::fadd;
using rounding::fdiv;
using rounding::float_of_bits;
using rounding::fmul;

// Natural log of a normal float x in (0, 1]: x = m 2^e with m in [sqrt(1/2), sqrt(2)), then
// log m = 2 atanh(s), s = (m-1)/(m+1), |s| < 0.172; the series to s^11 leaves < 1e-10 relative,
// so the result is within a few float ulps (m - 1 is exact; m + 1, the division and the
// series round).
MIMORX_HD float log_open01(float x) {
  const std::uint32_t b = bits_of_float(x);
  int e = int((b >> 23) & 0xffu) - 127;
  float m = float_of_bits((b & 0x007fffffu) | 0x3f800000u);  // [1, 2)
  if (m > 1.41421356f) {
    m = fmul(m, 0.5f);
    e += 1;
  }
  const float s = fdiv(fadd(m, -1.f), fadd(m, 1.f));
  const float s2 = fmul(s, s);
  float p = 1.f / 11.f;
  p = fadd(fmul(p, s2), 1.f / 9.f);
  p = fadd(fmul(p, s2), 1.f / 7.f);
  p = fadd(fmul(p, s2), 1.f / 5.f);
  p = fadd(fmul(p, s2), 1.f / 3.f);
  p = fadd(fmul(p, s2), 1.f);
  return fadd(fmul(float(e), 0.693147180559945f), fmul(fmul(2.f, s), p));
}

// sin and cos of t in [0, pi/4] by Taylor series to degree 9/10 (truncation < 2e-9, below
// half a float ulp of the results).
MIMORX_HD void sincos_octant(float t, float* s, float* c) {
  const float t2 = fmul(t, t);
  float ps = 1.f / 362880.f;  // 1/9!
  ps = fadd(fmul(ps, t2), -1.f / 5040.f);
  ps = fadd(fmul(ps, t2), 1.f / 120.f);
  ps = fadd(fmul(ps, t2), -1.f / 6.f);
  ps = fadd(fmul(ps, t2), 1.f);
  *s = fmul(ps, t);
  float pc = -1.f / 3628800.f;  // -1/10!
  pc = fadd(fmul(pc, t2), 1.f / 40320.f);
  pc = fadd(fmul(pc, t2), -1.f / 720.f);
  pc = fadd(fmul(pc, t2), 1.f / 24.f);
  pc = fadd(fmul(pc, t2), -0.5f);
  *c = fadd(fmul(pc, t2), 1.f);
}
// sin and cos of 2 pi u for u in [0, 1]: the quadrant and octant are split off exactly (4u and
// its fractional part are exact in float, 1 - f is exact by Sterbenz), the series of
// sincos_octant runs on [0, pi/4].
MIMORX_HD void sincos_turns(float u, float* s, float* c) {
  const float q4 = fmul(u, 4.f);
  const int quadrant = int(q4);
  float f = fadd(q4, -float(quadrant));  // [0, 1)
  const bool upper = f > 0.5f;
  if (upper) f = fadd(1.f, -f);
  float sn, cs;
  sincos_octant(fmul(f, 1.57079632679489662f), &sn, &cs);
  if (upper) {
    const float tmp = sn;
    sn = cs;
    cs = tmp;
  }
  switch (quadrant & 3) {
    case 1:
      *s = cs, *c = -sn;
      return;
    case 2:
      *s = -sn, *c = -cs;
      return;
    case 3:
      *s = -cs, *c = sn;
      return;
    default:
      *s = sn, *c = cs;
      return;
  }
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

// Two independent N(0, 1) values from two uniforms (Box-Muller), bit-identical CPU/GPU:
// r = sqrt(-2 log u1) and the angle 2 pi u2 (detail::sincos_turns).
MIMORX_HD void box_muller(float u1, float u2, float* z0, float* z1) {
  const float r = rounding::fsqrt(rounding::fmul(-2.f, detail::log_open01(u1)));
  float s, c;
  detail::sincos_turns(u2, &s, &c);
  *z0 = rounding::fmul(r, c);
  *z1 = rounding::fmul(r, s);
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
void fill_uniform(const Backend& backend, std::uint64_t seed, std::uint64_t stream, View<float> out,
                  std::uint64_t offset = 0);
void fill_gaussian(const Backend& backend, std::uint64_t seed, std::uint64_t stream,
                   View<float> out, std::uint64_t offset = 0);

}  // namespace mimorx::rng

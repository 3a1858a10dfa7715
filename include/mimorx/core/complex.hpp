#pragma once
// Interleaved (re, im) float32, layout-compatible with std::complex<float> and cuComplex, and
// usable in kernels (std::complex is not).
#include <cmath>

#include "mimorx/core/hd.hpp"

namespace mimorx {

struct cf32 {
  float re = 0.f;
  float im = 0.f;
  cf32() = default;
  MIMORX_HD constexpr cf32(float r, float i = 0.f) : re(r), im(i) {}
};

MIMORX_HD cf32 operator+(cf32 a, cf32 b) { return {a.re + b.re, a.im + b.im}; }
MIMORX_HD cf32 operator-(cf32 a, cf32 b) { return {a.re - b.re, a.im - b.im}; }
MIMORX_HD cf32 operator-(cf32 a) { return {-a.re, -a.im}; }
MIMORX_HD cf32 operator*(cf32 a, cf32 b) {
  return {a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re};
}
MIMORX_HD cf32 operator*(cf32 a, float s) { return {a.re * s, a.im * s}; }
MIMORX_HD cf32 operator*(float s, cf32 a) { return {a.re * s, a.im * s}; }
MIMORX_HD cf32& operator+=(cf32& a, cf32 b) { return a = a + b; }
MIMORX_HD cf32& operator-=(cf32& a, cf32 b) { return a = a - b; }
MIMORX_HD cf32 conj(cf32 a) { return {a.re, -a.im}; }
MIMORX_HD float norm2(cf32 a) { return a.re * a.re + a.im * a.im; }
// conj(a) * b, the building block of inner products.
MIMORX_HD cf32 cmul_conj(cf32 a, cf32 b) {
  return {a.re * b.re + a.im * b.im, a.re * b.im - a.im * b.re};
}
MIMORX_HD bool operator==(cf32 a, cf32 b) { return a.re == b.re && a.im == b.im; }

static_assert(sizeof(cf32) == 8, "cf32 must be two packed floats");

}  // namespace mimorx

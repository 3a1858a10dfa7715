#pragma once
// Correctly rounded arithmetic for code shared by the CPU reference and the CUDA kernels
// (MIMORX_HD): each function is one IEEE operation rounded to nearest, the same bits on both
// sides. On the device they are the __*_rn intrinsics, which nvcc never contracts into fused
// multiply-adds; the host build uses -ffp-contract=off (cmake/MimorxWarnings.cmake), so the
// plain operators round once each too. A fused multiply-add is written as ffma explicitly.
#include <cmath>
#include <cstdint>

#include "mimorx/core/complex.hpp"
#include "mimorx/core/hd.hpp"

namespace mimorx::rounding {

// ---- float ----------------------------------------------------------------------------------
MIMORX_HD float fadd(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fadd_rn(a, b);
#else
  return a + b;
#endif
}
MIMORX_HD float fsub(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fsub_rn(a, b);
#else
  return a - b;
#endif
}
MIMORX_HD float fmul(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fmul_rn(a, b);
#else
  return a * b;
#endif
}
MIMORX_HD float fdiv(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fdiv_rn(a, b);
#else
  return a / b;
#endif
}
// 1 / x; the same value as fdiv(1, x), one instruction on the device instead of a division.
MIMORX_HD float frcp(float x) {
#if defined(__CUDA_ARCH__)
  return __frcp_rn(x);
#else
  return 1.f / x;
#endif
}
MIMORX_HD float fsqrt(float a) {
#if defined(__CUDA_ARCH__)
  return __fsqrt_rn(a);
#else
  return std::sqrt(a);
#endif
}
// a * b + c rounded once.
MIMORX_HD float ffma(float a, float b, float c) {
#if defined(__CUDA_ARCH__)
  return __fmaf_rn(a, b, c);
#else
  return std::fma(a, b, c);
#endif
}
// IEEE minNum (fminf): a NaN operand yields the other one; one FMNMX instruction on the device
// where a compare-and-select takes two. Which of +0 and -0 it returns for a pair of zeros is
// unspecified, so callers must not depend on it.
MIMORX_HD float fmin_num(float a, float b) {
#if defined(__CUDA_ARCH__)
  return fminf(a, b);
#else
  return std::fmin(a, b);
#endif
}

// ---- double ---------------------------------------------------------------------------------
MIMORX_HD double dadd(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __dadd_rn(a, b);
#else
  return a + b;
#endif
}
MIMORX_HD double dmul(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __dmul_rn(a, b);
#else
  return a * b;
#endif
}
MIMORX_HD double dsqrt(double a) {
#if defined(__CUDA_ARCH__)
  return __dsqrt_rn(a);
#else
  return std::sqrt(a);
#endif
}

// ---- float bits -----------------------------------------------------------------------------
MIMORX_HD std::uint32_t bits_of_float(float x) {
#if defined(__CUDA_ARCH__)
  return std::uint32_t(__float_as_uint(x));
#else
  return __builtin_bit_cast(std::uint32_t, x);
#endif
}
MIMORX_HD float float_of_bits(std::uint32_t b) {
#if defined(__CUDA_ARCH__)
  return __uint_as_float(b);
#else
  return __builtin_bit_cast(float, b);
#endif
}
// Neither infinite nor NaN (exponent field not all ones).
MIMORX_HD bool is_finite(float x) { return (bits_of_float(x) & 0x7f800000u) != 0x7f800000u; }

// ---- cf32, each part rounded as the float functions above -----------------------------------
MIMORX_HD cf32 cadd(cf32 a, cf32 b) { return {fadd(a.re, b.re), fadd(a.im, b.im)}; }
MIMORX_HD cf32 csub(cf32 a, cf32 b) { return {fsub(a.re, b.re), fsub(a.im, b.im)}; }
// a * b = (ar br - ai bi, ar bi + ai br), every product rounded before the sum.
MIMORX_HD cf32 cmul(cf32 a, cf32 b) {
  return {fsub(fmul(a.re, b.re), fmul(a.im, b.im)), fadd(fmul(a.re, b.im), fmul(a.im, b.re))};
}
// conj(a) * b = (ar br + ai bi, ar bi - ai br).
MIMORX_HD cf32 cmul_conj(cf32 a, cf32 b) {
  return {fadd(fmul(a.re, b.re), fmul(a.im, b.im)), fsub(fmul(a.re, b.im), fmul(a.im, b.re))};
}
MIMORX_HD cf32 cscale(cf32 a, float s) { return {fmul(a.re, s), fmul(a.im, s)}; }

}  // namespace mimorx::rounding

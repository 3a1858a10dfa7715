#pragma once
// Modulations of TS 38.211 §5.1 and the per-symbol arithmetic shared by CPU and CUDA code.
//
// Bit order: symbol bits b0 b1 ... b(m-1) as in 38.211 (b0 first on the wire). As an integer,
// a symbol index is sum_k b_k << (m-1-k) (b0 is the most significant bit).
// Square QAM separates into two PAM axes: the real part carries b0 b2 b4 ..., the imaginary
// part b1 b3 b5 ...; each axis amplitude is an odd integer in {-(L-1), ..., L-1}, L = 2^(m/2),
// scaled by 1/sqrt(norm) for unit average symbol energy. BPSK maps b0 to (1-2b0)(1+j)/sqrt(2).
//
// LLR sign convention, everywhere in mimorx: LLR = log P(b=0) / P(b=1), positive means bit 0.
#include <cmath>
#include <cstdint>
#include <string>

#include "mimorx/core/complex.hpp"
#include "mimorx/core/hd.hpp"

namespace mimorx {

enum class Modulation : int { bpsk = 1, qpsk = 2, qam16 = 4, qam64 = 6, qam256 = 8 };

// Bits per symbol m.
MIMORX_HD constexpr int bits_per_symbol(Modulation m) { return static_cast<int>(m); }
// Constellation size M = 2^m.
MIMORX_HD constexpr int constellation_size(Modulation m) { return 1 << bits_per_symbol(m); }
// Bits per real axis (0 for BPSK, which is not separable into two independent axes).
MIMORX_HD constexpr int axis_bits(Modulation m) {
  return m == Modulation::bpsk ? 0 : bits_per_symbol(m) / 2;
}
// Levels per real axis L = sqrt(M) (2 for BPSK, as its single real dimension after rotation).
MIMORX_HD constexpr int axis_levels(Modulation m) {
  return m == Modulation::bpsk ? 2 : 1 << axis_bits(m);
}
// 1/sqrt of the mean energy of the integer constellation: 1/sqrt(2), 1/sqrt(10), ...
MIMORX_HD constexpr float qam_scale(Modulation m) {
  switch (m) {
    case Modulation::bpsk:
    case Modulation::qpsk:
      return 0.70710678118654752f;
    case Modulation::qam16:
      return 0.31622776601683794f;  // 1/sqrt(10)
    case Modulation::qam64:
      return 0.15430334996209191f;  // 1/sqrt(42)
    case Modulation::qam256:
      return 0.07669649888473704f;  // 1/sqrt(170)
  }
  return 0.f;
}

// Integer (unscaled) amplitude of one PAM axis from its k bits c0 c1 ... c(k-1), c0 first:
// (1-2c0) * (2^(k-1) - (1-2c1) * (2^(k-2) - (1-2c2) * (...))), 38.211 Table 5.1.x.
MIMORX_HD int pam_amplitude(int k, const std::uint8_t* c, int stride = 1) {
  int r = 1;
  for (int j = k - 1; j >= 1; --j) r = (1 << (k - j)) - (1 - 2 * int(c[j * stride])) * r;
  return (1 - 2 * int(c[0])) * r;
}

// Maps the m bits of one symbol (unpacked, 0/1) to the unit-energy constellation point.
MIMORX_HD cf32 map_symbol(Modulation m, const std::uint8_t* b) {
  const float s = qam_scale(m);
  if (m == Modulation::bpsk) {
    const float a = float(1 - 2 * int(b[0])) * s;
    return {a, a};
  }
  const int k = axis_bits(m);
  return {float(pam_amplitude(k, b, 2)) * s, float(pam_amplitude(k, b + 1, 2)) * s};
}

// "bpsk", "qpsk", "16qam", "64qam", "256qam" (also "4qam", "qam16", ...). Throws
// InvalidArgument naming the allowed values.
Modulation parse_modulation(const std::string& name);
std::string to_string(Modulation m);

}  // namespace mimorx

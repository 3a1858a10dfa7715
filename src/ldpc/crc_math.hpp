#pragma once
// The CRC shift register of TS 38.212 §5.1 (zero start, MSB first, no final XOR) and the GF(2)
// arithmetic that splits a CRC into parts computed in parallel, shared by crc.cpp, the batched
// transport chain's CPU loops and its CUDA kernels.
#include <cstdint>

#include "mimorx/core/hd.hpp"

namespace mimorx::ldpc::detail {

// One bit into the register (l bits, g's terms below x^l in poly).
MIMORX_HD std::uint32_t crc_push(std::uint32_t reg, unsigned bit, std::uint32_t poly, int l) {
  const std::uint32_t fb = ((reg >> (l - 1)) ^ bit) & 1u;
  reg = (reg << 1) & ((l == 32 ? 0u : (1u << l)) - 1u);
  return fb ? reg ^ poly : reg;
}

// Remainder of bits(D) D^L mod g(D) over n unpacked bits.
MIMORX_HD std::uint32_t crc_of_bits(const std::uint8_t* bits, int n, std::uint32_t poly, int l) {
  std::uint32_t reg = 0;
  for (int i = 0; i < n; ++i) reg = crc_push(reg, bits[i] & 1u, poly, l);
  return reg;
}

// a(x) b(x) mod g(x) over GF(2) for a, b of degree < l (g's terms below x^l in poly).
MIMORX_HD std::uint32_t gf2_mulmod(std::uint32_t a, std::uint32_t b, std::uint32_t poly, int l) {
  std::uint32_t r = 0;
  for (int i = l - 1; i >= 0; --i) {  // Horner over b's coefficients, highest first
    r = crc_push(r, 0u, poly, l);     // r x mod g
    if ((b >> i) & 1u) r ^= a;
  }
  return r;
}

// x^n mod g(x) by square and multiply.
MIMORX_HD std::uint32_t gf2_xpow(std::uint32_t n, std::uint32_t poly, int l) {
  std::uint32_t result = 1u, base = crc_push(1u, 0u, poly, l);  // x^0, x^1 mod g
  for (; n; n >>= 1) {
    if (n & 1u) result = gf2_mulmod(result, base, poly, l);
    base = gf2_mulmod(base, base, poly, l);
  }
  return result;
}

// The register of crc_of_bits over bits [lo, hi) of a longer message of n bits, moved to the
// message's end: crc(A || B) = crc(A) x^|B| + crc(B) mod g, so the parts of a message, computed
// in parallel, XOR to its CRC. bit(t) gives bit t of the message.
template <class Bits>
MIMORX_HD std::uint32_t crc_part(const Bits& bit, int lo, int hi, int n, std::uint32_t poly,
                                 int l) {
  std::uint32_t reg = 0;
  for (int t = lo; t < hi; ++t) reg = crc_push(reg, bit(t) & 1u, poly, l);
  return gf2_mulmod(reg, gf2_xpow(std::uint32_t(n - hi), poly, l), poly, l);
}

// Bit t of a bit array, and of a transport block's payloads in its decoded code blocks.
struct PlainBits {
  const std::uint8_t* p;
  MIMORX_HD unsigned operator()(int t) const { return p[t]; }
};
struct PayloadBits {
  const std::uint8_t* blocks;  // C blocks of k bits
  int payload, k;
  MIMORX_HD unsigned operator()(int t) const {
    const int r = t / payload;
    return blocks[std::int64_t(r) * k + (t - r * payload)];
  }
};

}  // namespace mimorx::ldpc::detail

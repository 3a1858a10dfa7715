#pragma once
// CRCs of 3GPP TS 38.212 §5.1: generator polynomials gCRC24A, gCRC24B, gCRC24C, gCRC16, gCRC11,
// gCRC6. The parity bits are the remainder of a(D) D^L divided by g(D): shift register starting
// at zero, no reflection, no final XOR; bits enter and leave MSB (highest power of D) first.
// Bits are unpacked bytes holding 0/1.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace mimorx::ldpc {

enum class CrcType { crc24a, crc24b, crc24c, crc16, crc11, crc6 };

int crc_length(CrcType t);                // L: 24, 24, 24, 16, 11, 6
std::uint32_t crc_polynomial(CrcType t);  // g(D) without the D^L term, bit i = coefficient of D^i
std::string crc_name(CrcType t);

// Remainder of bits(D) D^L mod g(D) (L bits, the D^(L-1) coefficient in bit L-1).
std::uint32_t crc_compute(CrcType t, std::span<const std::uint8_t> bits);
// The same over bytes, each byte's MSB first (for the usual "123456789" check values).
std::uint32_t crc_compute_bytes(CrcType t, std::span<const std::uint8_t> bytes);
// bits followed by their L parity bits, p_0 (the D^(L-1) coefficient) first (§5.1: b_k = p_(k-A)).
std::vector<std::uint8_t> crc_attach(CrcType t, std::span<const std::uint8_t> bits);
// True when bits_with_crc (payload then L parity bits) has a zero remainder.
bool crc_check(CrcType t, std::span<const std::uint8_t> bits_with_crc);

}  // namespace mimorx::ldpc

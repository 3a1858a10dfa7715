#include "mimorx/ldpc/crc.hpp"

#include "ldpc/crc_math.hpp"
#include "mimorx/core/error.hpp"

namespace mimorx::ldpc {

int crc_length(CrcType t) {
  switch (t) {
    case CrcType::crc24a:
    case CrcType::crc24b:
    case CrcType::crc24c:
      return 24;
    case CrcType::crc16:
      return 16;
    case CrcType::crc11:
      return 11;
    case CrcType::crc6:
      return 6;
  }
  throw InvalidArgument("crc: unknown CRC type");
}

// TS 38.212 §5.1, the terms below D^L of each generator.
std::uint32_t crc_polynomial(CrcType t) {
  switch (t) {
    case CrcType::crc24a:  // D24+D23+D18+D17+D14+D11+D10+D7+D6+D5+D4+D3+D+1
      return 0x864CFB;
    case CrcType::crc24b:  // D24+D23+D6+D5+D+1
      return 0x800063;
    case CrcType::crc24c:  // D24+D23+D21+D20+D17+D15+D13+D12+D8+D4+D2+D+1
      return 0xB2B117;
    case CrcType::crc16:  // D16+D12+D5+1
      return 0x1021;
    case CrcType::crc11:  // D11+D10+D9+D5+1
      return 0x621;
    case CrcType::crc6:  // D6+D5+1
      return 0x21;
  }
  throw InvalidArgument("crc: unknown CRC type");
}

std::string crc_name(CrcType t) {
  switch (t) {
    case CrcType::crc24a:
      return "CRC24A";
    case CrcType::crc24b:
      return "CRC24B";
    case CrcType::crc24c:
      return "CRC24C";
    case CrcType::crc16:
      return "CRC16";
    case CrcType::crc11:
      return "CRC11";
    case CrcType::crc6:
      return "CRC6";
  }
  return "?";
}

namespace {
struct Register {
  std::uint32_t reg = 0, poly;
  int l;
  explicit Register(CrcType t) : poly(crc_polynomial(t)), l(crc_length(t)) {}
  void push(unsigned bit) { reg = detail::crc_push(reg, bit & 1u, poly, l); }
};
}  // namespace

std::uint32_t crc_compute(CrcType t, std::span<const std::uint8_t> bits) {
  Register r(t);
  for (std::uint8_t b : bits) r.push(b);
  return r.reg;
}

std::uint32_t crc_compute_bytes(CrcType t, std::span<const std::uint8_t> bytes) {
  Register r(t);
  for (std::uint8_t b : bytes) {
    for (int i = 7; i >= 0; --i) r.push((b >> i) & 1u);
  }
  return r.reg;
}

std::vector<std::uint8_t> crc_attach(CrcType t, std::span<const std::uint8_t> bits) {
  const int l = crc_length(t);
  const std::uint32_t p = crc_compute(t, bits);
  std::vector<std::uint8_t> out(bits.size() + l);
  for (std::size_t i = 0; i < bits.size(); ++i) out[i] = bits[i] & 1;
  for (int i = 0; i < l; ++i) out[bits.size() + i] = std::uint8_t((p >> (l - 1 - i)) & 1u);
  return out;
}

bool crc_check(CrcType t, std::span<const std::uint8_t> bits_with_crc) {
  require(bits_with_crc.size() >= std::size_t(crc_length(t)), "bits_with_crc",
          "has " + std::to_string(bits_with_crc.size()) + " bits, fewer than the " +
              std::to_string(crc_length(t)) + " parity bits of " + crc_name(t));
  return crc_compute(t, bits_with_crc) == 0;
}

}  // namespace mimorx::ldpc

#pragma once
// The pseudo-random (Gold) sequence of TS 38.211 §5.2.1: c(n) = (x1(n + Nc) + x2(n + Nc)) mod 2
// with Nc = 1600, x1 initialised to 1, 0, ..., 0 and x2 to the bits of c_init (LSB first).
#include <cstdint>
#include <vector>

namespace mimorx::nr {

// c(0) .. c(length - 1) as 0/1 bytes. c_init must be below 2^31 (InvalidArgument otherwise).
std::vector<std::uint8_t> gold_sequence(std::uint32_t c_init, int length);

}  // namespace mimorx::nr

// TS 38.211 §5.2.1 with both m-sequences held as 31-bit shift registers (bit i = x(n + i)).
#include "mimorx/nr/gold.hpp"

#include <string>

#include "mimorx/core/error.hpp"

namespace mimorx::nr {
namespace {

constexpr int kNc = 1600;

// One step of each register: x1(n+31) = x1(n+3) + x1(n); x2(n+31) = x2(n+3) + x2(n+2) +
// x2(n+1) + x2(n) (mod 2).
struct Registers {
  std::uint32_t x1 = 1;
  std::uint32_t x2 = 0;
  void step() {
    const std::uint32_t f1 = (x1 ^ (x1 >> 3)) & 1u;
    const std::uint32_t f2 = (x2 ^ (x2 >> 1) ^ (x2 >> 2) ^ (x2 >> 3)) & 1u;
    x1 = (x1 >> 1) | (f1 << 30);
    x2 = (x2 >> 1) | (f2 << 30);
  }
};

}  // namespace

std::vector<std::uint8_t> gold_sequence(std::uint32_t c_init, int length) {
  require(c_init < (1u << 31), "c_init", std::to_string(c_init) + "; must be below 2^31");
  require(length >= 0, "length", std::to_string(length) + "; must be >= 0");
  Registers r;
  r.x2 = c_init;
  for (int n = 0; n < kNc; ++n) r.step();
  std::vector<std::uint8_t> c(static_cast<std::size_t>(length));
  for (auto& bit : c) {
    bit = static_cast<std::uint8_t>((r.x1 ^ r.x2) & 1u);
    r.step();
  }
  return c;
}

}  // namespace mimorx::nr

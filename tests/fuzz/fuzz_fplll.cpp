// libFuzzer target: fplll's matrix text (mimorx lll's input). Any input either parses or throws
// mimorx::Error; nothing else (a crash, a sanitizer report, another exception) is allowed.
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>

#include "mimorx/core/error.hpp"
#include "mimorx/lattice/fplll_format.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::istringstream in(std::string(reinterpret_cast<const char*>(data), size));
  try {
    int line = 1;
    for (mimorx::lattice::TextBasis b; mimorx::lattice::read_fplll(in, b, &line);) {
      std::ostringstream out;
      mimorx::lattice::write_fplll(out, b.n, b.m, b.b.data(), b.integer);
    }
  } catch (const mimorx::Error&) {
  }
  return 0;
}

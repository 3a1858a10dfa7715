// libFuzzer target: the block readers of mimorx ldpc (bits, LLR text, LLR float32). The first
// byte picks the reader and the block length; any input either parses or throws mimorx::Error.
#include <cstddef>
#include <cstdint>
#include <string>

#include "ldpc_io.hpp"
#include "mimorx/core/error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const int mode = data[0] % 3, length = 1 + data[0] / 3 % 16;
  const std::string text(reinterpret_cast<const char*>(data) + 1, size - 1);
  try {
    if (mode == 0) {
      mimorx::cli::read_bit_blocks(text, length);
    } else {
      mimorx::cli::read_llr_blocks(text, length, mode == 2);
    }
  } catch (const mimorx::Error&) {
  }
  return 0;
}

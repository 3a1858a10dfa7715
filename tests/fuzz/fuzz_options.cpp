// libFuzzer target: the option values the CLI parses itself: integers (every integer option),
// SNR lists (sim --snr, ldpc ber --snr), antenna configurations (--mimo). Any input is either
// accepted or refused (an error message, or mimorx::Error).
#include <cstddef>
#include <cstdint>
#include <string>

#include "mimorx/core/error.hpp"
#include "mimorx/sim/sweep.hpp"
#include "options.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  (void)mimorx::cli::check_integer<std::int64_t>(text);
  (void)mimorx::cli::check_integer<std::uint64_t>(text);
  try {
    (void)mimorx::sim::parse_snr_list(text);
  } catch (const mimorx::Error&) {
  }
  try {
    (void)mimorx::sim::parse_mimo(text);
  } catch (const mimorx::Error&) {
  }
  return 0;
}

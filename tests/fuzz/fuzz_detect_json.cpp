// libFuzzer target: the input file of mimorx detect, then the host-side scaling of its numbers.
// Any input either parses or throws mimorx::Error.
#include <cstddef>
#include <cstdint>
#include <string>

#include "detect_input.hpp"
#include "detect_scale.hpp"
#include "mimorx/core/error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    auto request = mimorx::cli::parse_detect_input(
        std::string(reinterpret_cast<const char*>(data), size), "fuzz.json");
    auto& d = request.numbers;
    const std::size_t vectors = d.y.size() / (2 * std::size_t(d.nr));
    const std::size_t channels = d.h.size() / (2 * std::size_t(d.nr) * d.nt);
    // The counts detect::validate demands before the scaling.
    if (channels * std::size_t(d.vectors_per_channel) != vectors) return 0;
    if (d.noise_var.size() != 1 && d.noise_var.size() != vectors) return 0;
    for (float n0 : d.noise_var)
      if (!(n0 > 0.f)) return 0;
    mimorx::cli::normalise_scale(d);
  } catch (const mimorx::Error&) {
  }
  return 0;
}

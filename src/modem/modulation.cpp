#include "mimorx/modem/modulation.hpp"

#include <algorithm>
#include <cctype>

#include "mimorx/core/error.hpp"

namespace mimorx {

Modulation parse_modulation(const std::string& name) {
  std::string s = name;
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  if (s == "bpsk") return Modulation::bpsk;
  if (s == "qpsk" || s == "4qam" || s == "qam4") return Modulation::qpsk;
  if (s == "16qam" || s == "qam16") return Modulation::qam16;
  if (s == "64qam" || s == "qam64") return Modulation::qam64;
  if (s == "256qam" || s == "qam256") return Modulation::qam256;
  throw InvalidArgument("modulation: '" + name +
                        "' is not supported; use bpsk, qpsk, 16qam, 64qam or 256qam");
}

std::string to_string(Modulation m) {
  switch (m) {
    case Modulation::bpsk:
      return "bpsk";
    case Modulation::qpsk:
      return "qpsk";
    case Modulation::qam16:
      return "16qam";
    case Modulation::qam64:
      return "64qam";
    case Modulation::qam256:
      return "256qam";
  }
  return "?";
}

}  // namespace mimorx

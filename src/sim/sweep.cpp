#include "mimorx/sim/sweep.hpp"

#include <charconv>
#include <cmath>
#include <sstream>

#include "mimorx/core/error.hpp"

namespace mimorx::sim {

namespace {
double to_number(const std::string& token, const std::string& whole) {
  double v = 0;
  const char* b = token.data();
  const char* e = b + token.size();
  auto [p, ec] = std::from_chars(b, e, v);
  require(ec == std::errc() && p == e && std::isfinite(v), "snr",
          "'" + token + "' in '" + whole +
              "' is not a number; use a list like 8,14 or a range "
              "like 0:2:20");
  return v;
}
}  // namespace

void check_snr_db(double snr_db) {
  require(std::isfinite(snr_db) && snr_db >= kMinSnrDb && snr_db <= kMaxSnrDb, "snr",
          std::to_string(snr_db) + " dB is outside " + std::to_string(int(kMinSnrDb)) + ".." +
              std::to_string(int(kMaxSnrDb)) + " dB");
}

std::vector<double> parse_snr_list(const std::string& text) {
  std::vector<double> out;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) {
    require(!item.empty(), "snr", "empty entry in '" + text + "'; use 8,14 or 0:2:20");
    const auto c1 = item.find(':');
    if (c1 == std::string::npos) {
      out.push_back(to_number(item, text));
      continue;
    }
    const auto c2 = item.find(':', c1 + 1);
    require(c2 != std::string::npos && item.find(':', c2 + 1) == std::string::npos, "snr",
            "'" + item + "' is not a range start:step:stop");
    const double a = to_number(item.substr(0, c1), text);
    const double step = to_number(item.substr(c1 + 1, c2 - c1 - 1), text);
    const double b = to_number(item.substr(c2 + 1), text);
    require(step != 0 && (b - a) / step >= 0, "snr",
            "range '" + item + "' never reaches its end; the step must move from start to stop");
    // Counted in double first: a huge count (or an infinite one) must not reach the cast.
    const double count = std::floor((b - a) / step + 1e-9) + 1;
    require(count <= double(kMaxSnrPoints), "snr",
            "range '" + item + "' has more than " + std::to_string(kMaxSnrPoints) + " points");
    const long n = long(count);
    for (long i = 0; i < n; ++i) out.push_back(a + double(i) * step);
  }
  require(out.size() <= kMaxSnrPoints, "snr",
          "more than " + std::to_string(kMaxSnrPoints) + " points; give fewer");
  require(!out.empty(), "snr", "no SNR given; use a list like 8,14 or a range like 0:2:20");
  for (double v : out) check_snr_db(v);
  return out;
}

AntennaConfig parse_mimo(const std::string& text) {
  const auto x = text.find_first_of("xX");
  auto bad = [&] {
    return "'" + text + "' is not <nt>x<nr> with 1..8 antennas on each side, e.g. 4x4 or 2x4";
  };
  require(x != std::string::npos, "mimo", bad());
  int nt = 0, nr = 0;
  const std::string a = text.substr(0, x), b = text.substr(x + 1);
  auto [p1, e1] = std::from_chars(a.data(), a.data() + a.size(), nt);
  auto [p2, e2] = std::from_chars(b.data(), b.data() + b.size(), nr);
  require(e1 == std::errc() && e2 == std::errc() && p1 == a.data() + a.size() &&
              p2 == b.data() + b.size() && nt >= 1 && nr >= 1 && nt <= 64 && nr <= 64,
          "mimo", bad());
  return {nt, nr};
}

}  // namespace mimorx::sim

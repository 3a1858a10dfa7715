#include "detect_input.hpp"

#include <fmt/format.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>

#include "mimorx/core/error.hpp"

namespace mimorx::cli {

namespace {

using nlohmann::json;

const json& field(const json& j, const std::string& key) {
  const auto it = j.find(key);
  require(it != j.end(), key,
          "missing from the input file (it needs nt, nr, modulation, h, y, noise_var)");
  return *it;
}

// An integer in lo..hi: 2, not "2", 2.5, 1e20 or true.
int integer_field(const json& j, const std::string& key, std::int64_t lo, std::int64_t hi) {
  const json& v = field(j, key);
  const auto range = fmt::format("an integer in {}..{}", lo, hi);
  require(v.is_number_integer(), key, "must be " + range + ", not " + v.dump().substr(0, 40));
  const bool huge = v.is_number_unsigned() && v.get<std::uint64_t>() > std::uint64_t(hi);
  const std::int64_t x = huge ? hi : v.get<std::int64_t>();
  require(!huge && x >= lo && x <= hi, key, v.dump() + " is out of range; must be " + range);
  return int(v.get<std::int64_t>());
}

float to_float(const json& v, const std::string& key) {
  require(v.is_number(), key, "must hold numbers only, not " + v.dump().substr(0, 40));
  const double d = v.get<double>();
  require(std::isfinite(d) && std::fabs(d) <= std::numeric_limits<float>::max(), key,
          fmt::format("{} is beyond float32's range (|x| <= 3.4e38)", d));
  return float(d);
}

// A number or an array of numbers, each within float32's range.
std::vector<float> numbers(const json& j, const std::string& key) {
  const json& v = field(j, key);
  if (v.is_number()) return {to_float(v, key)};
  require(v.is_array(), key, "must be a number or an array of numbers");
  std::vector<float> out;
  out.reserve(v.size());
  for (const auto& e : v) out.push_back(to_float(e, key));
  return out;
}

json parse_object(const std::string& text, const std::string& path) {
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  require(!j.is_discarded(), "in",
          "'" + path +
              "' is not one valid JSON document (check the syntax and that nothing "
              "follows the closing brace)");
  require(j.is_object(), "in", "'" + path + "' must hold one JSON object {\"nt\": ..., ...}");
  return j;
}

}  // namespace

DetectRequest parse_detect_input(const std::string& text, const std::string& path) {
  const json j = parse_object(text, path);
  const int nt = integer_field(j, "nt", 1, 64), nr = integer_field(j, "nr", 1, 64);
  const json& modulation = field(j, "modulation");
  require(modulation.is_string(), "modulation",
          "must be a string such as \"16qam\", not " + modulation.dump().substr(0, 40));
  const auto mod = parse_modulation(modulation.get<std::string>());
  const int vpc =
      j.contains("vectors_per_channel") ? integer_field(j, "vectors_per_channel", 1, INT32_MAX) : 1;
  DetectNumbers d{nt, nr, vpc, numbers(j, "h"), numbers(j, "y"), numbers(j, "noise_var")};
  const std::size_t per_h = std::size_t(2) * nr * nt, per_y = std::size_t(2) * nr;
  require(!d.h.empty() && d.h.size() % per_h == 0, "h",
          fmt::format("has {} numbers, not a multiple of 2*nr*nt = {}", d.h.size(), per_h));
  require(!d.y.empty() && d.y.size() % per_y == 0, "y",
          fmt::format("has {} numbers, not a multiple of 2*nr = {}", d.y.size(), per_y));
  return {std::move(d), mod};
}

}  // namespace mimorx::cli

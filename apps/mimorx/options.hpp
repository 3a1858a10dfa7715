#pragma once
// The check every integer option of the CLI goes through (main.cpp adds it to each).
#include <charconv>
#include <limits>
#include <string>
#include <type_traits>

namespace mimorx::cli {

// "" when `text` is an integer exactly as typed: decimal digits (a '-' only where negative
// values are allowed, an optional '+') that fit T; otherwise why not. CLI11 alone would wrap -1
// to 2^64-1 for an unsigned option and clamp 99999999999999999999 to the largest value; the
// option's own type narrows further.
template <class T>
std::string check_integer(const std::string& text) {
  T v{};
  const char* b = text.data() + (!text.empty() && text[0] == '+');
  const char* e = text.data() + text.size();
  if (b != text.data() && b < e && *b == '-') return "'" + text + "' is not an integer";
  const auto [p, ec] = std::from_chars(b, e, v);
  if (ec == std::errc::result_out_of_range)
    return "'" + text + "' is out of range (an integer of at most 64 bits" +
           (std::is_signed_v<T> ? "" : ", not negative") + ")";
  if (std::is_unsigned_v<T> && !text.empty() && text[0] == '-')
    return "'" + text + "' is negative; give 0.." + std::to_string(std::numeric_limits<T>::max());
  if (ec != std::errc() || p != e)
    return "'" + text + "' is not an integer; give decimal digits" +
           (std::is_signed_v<T> ? "" : " (not negative)");
  return "";
}

}  // namespace mimorx::cli

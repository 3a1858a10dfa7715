// fplll's text format for matrices (see lattice/fplll_format.hpp).
#include "mimorx/lattice/fplll_format.hpp"

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <iomanip>
#include <sstream>

#include "mimorx/core/error.hpp"

namespace mimorx::lattice {

namespace {

// Why `tok` is not an integer entry mimorx lll accepts ("" when it is one).
std::string integer_error(const std::string& tok) {
  const std::size_t sign = tok[0] == '-' || tok[0] == '+';
  const std::string digits = tok.substr(sign);
  if (digits.empty() || digits.find_first_not_of("0123456789") != std::string::npos) {
    char* end = nullptr;
    std::strtod(tok.c_str(), &end);
    if (end == tok.c_str() || *end != '\0') return "'" + tok + "' is not a number";
    if (tok.find_first_of("eE") != std::string::npos)
      return "'" + tok + "' is in exponent form; write the integer's digits";
    return "'" + tok + "' is not an integer; mimorx lll reduces integer bases";
  }
  const auto first = digits.find_first_not_of('0');
  const std::string value = first == std::string::npos ? "0" : digits.substr(first);
  // 2^53 = 9007199254740992 (16 digits): the largest magnitude every integer up to which
  // float64 holds exactly.
  const bool too_big =
      value.size() > 16 || (value.size() == 16 && value > std::string("9007199254740992"));
  if (too_big)
    return "integer '" + tok.substr(0, 40) + (tok.size() > 40 ? "...'" : "'") + " (" +
           std::to_string(value.size()) +
           " digits) exceeds 2^53 = 9007199254740992, the largest entry mimorx lll reduces "
           "exactly (float64); use fplll's multi-precision for larger entries";
  return "";
}

}  // namespace

bool read_fplll(std::istream& in, TextBasis& out, int* line_no) {
  int line = line_no ? *line_no : 1;
  auto fail = [&](const std::string& what) {
    throw InvalidArgument("input: line " + std::to_string(line) + ": " + what +
                          "; expected fplll's format [[a b c]\\n[d e f]\\n]");
  };
  int depth = 0;
  std::vector<std::vector<double>> rows;
  std::string tok;
  char c;
  while (in.get(c)) {
    if (c == '\n') ++line;
    if (std::isspace(static_cast<unsigned char>(c)) || c == ',') continue;
    if (c == '[') {
      if (depth >= 2) fail("a third level of '['");
      ++depth;
      if (depth == 2) rows.emplace_back();
      continue;
    }
    if (c == ']') {
      if (depth == 0) fail("']' without '['");
      --depth;
      if (depth == 0) break;
      continue;
    }
    if (depth != 2) fail(std::string("unexpected character '") + c + "' outside a row");
    tok.assign(1, c);
    while (in.peek() != EOF && !std::isspace(in.peek()) && in.peek() != ']' && in.peek() != '[' &&
           in.peek() != ',')
      tok.push_back(char(in.get()));
    if (const auto why = integer_error(tok); !why.empty()) fail(why);
    rows.back().push_back(std::strtod(tok.c_str(), nullptr));  // exact: |v| <= 2^53
  }
  if (line_no) *line_no = line;
  if (depth != 0) fail("unterminated matrix");
  if (rows.empty()) return false;
  const std::size_t n = rows[0].size();
  for (std::size_t r = 0; r < rows.size(); ++r)
    if (rows[r].size() != n || n == 0)
      fail("row " + std::to_string(r) + " has " + std::to_string(rows[r].size()) +
           " entries, row 0 has " + std::to_string(n) + " (rows must have equal, nonzero length)");
  out.n = int(n);
  out.m = int(rows.size());
  out.integer = true;
  out.b.assign(n * rows.size(), 0.0);
  for (std::size_t j = 0; j < rows.size(); ++j)
    for (std::size_t i = 0; i < n; ++i) out.b[j * n + i] = rows[j][i];
  return true;
}

void write_fplll(std::ostream& out, int n, int m, const double* b, bool integer) {
  std::ostringstream s;
  s << '[';
  for (int j = 0; j < m; ++j) {
    s << '[';
    for (int i = 0; i < n; ++i) {
      const double v = b[std::size_t(j) * n + i];
      if (integer) {
        s << std::int64_t(std::llround(v));
      } else {
        s << std::setprecision(17) << v;
      }
      s << ' ';  // fplll ends every entry with a space, the last one too
    }
    s << ']' << '\n';
  }
  s << "]\n";
  out << s.str();
}

void write_fplll_transform(std::ostream& out, int m, const std::int64_t* t) {
  std::ostringstream s;
  s << '[';
  for (int j = 0; j < m; ++j) {
    s << '[';
    for (int i = 0; i < m; ++i) s << t[std::size_t(j) * m + i] << ' ';
    s << ']' << '\n';
  }
  s << "]\n";
  out << s.str();
}

}  // namespace mimorx::lattice

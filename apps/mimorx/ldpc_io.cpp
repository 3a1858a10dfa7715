#include "ldpc_io.hpp"

#include <fmt/format.h>

#include <cctype>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <sstream>

#include "mimorx/core/error.hpp"

namespace mimorx::cli {

namespace {

std::vector<float> llrs_of_binary(const std::string& raw, int e) {
  const std::size_t block = std::size_t(e) * 4;
  require(!raw.empty() && raw.size() % block == 0, "input",
          fmt::format("{} bytes; expected a positive multiple of {} (float32 x {} per block)",
                      raw.size(), block, e));
  std::vector<float> llr(raw.size() / 4);
  for (std::size_t i = 0; i < llr.size(); ++i) {
    const unsigned char* b = reinterpret_cast<const unsigned char*>(raw.data()) + 4 * i;
    const std::uint32_t u = std::uint32_t(b[0]) | std::uint32_t(b[1]) << 8 |
                            std::uint32_t(b[2]) << 16 | std::uint32_t(b[3]) << 24;
    std::memcpy(&llr[i], &u, 4);
  }
  return llr;
}

std::vector<float> llrs_of_text(const std::string& raw, int e) {
  std::vector<float> llr;
  std::istringstream in(raw);
  std::string line;
  for (int ln = 1; std::getline(in, line); ++ln) {
    std::istringstream ls(line);
    const std::size_t before = llr.size();
    std::string tok;
    while (ls >> tok) {
      char* end = nullptr;
      const float v = std::strtof(tok.c_str(), &end);
      require(end && *end == '\0', "input", fmt::format("line {}: '{}' is not a number", ln, tok));
      llr.push_back(v);
    }
    const std::size_t count = llr.size() - before;
    require(count == 0 || count == std::size_t(e), "input",
            fmt::format("line {} has {} LLRs, expected {} per block", ln, count, e));
  }
  return llr;
}

}  // namespace

std::vector<std::uint8_t> read_bit_blocks(const std::string& text, int k) {
  std::vector<std::uint8_t> bits;
  std::istringstream in(text);
  std::string line;
  for (int ln = 1; std::getline(in, line); ++ln) {
    int count = 0;
    for (char ch : line) {
      if (ch == '0' || ch == '1') {
        bits.push_back(std::uint8_t(ch - '0'));
        ++count;
      } else {
        require(std::isspace(static_cast<unsigned char>(ch)), "input",
                fmt::format("line {}: character '{}'; bits are 0 or 1", ln, ch));
      }
    }
    require(count == 0 || count == k, "input",
            fmt::format("line {} has {} bits, expected K' = {}", ln, count, k));
  }
  require(!bits.empty(), "input",
          "no code block found; expected one line of K' 0/1 bits per block");
  return bits;
}

std::vector<float> read_llr_blocks(const std::string& text, int e, bool binary) {
  const auto llr = binary ? llrs_of_binary(text, e) : llrs_of_text(text, e);
  require(!llr.empty(), "input", "no code block found");
  for (std::size_t i = 0; i < llr.size(); ++i) {
    require(std::isfinite(llr[i]), "input",
            fmt::format("block {} LLR {} is NaN or Inf; LLRs must be finite", i / e, i % e));
  }
  return llr;
}

}  // namespace mimorx::cli

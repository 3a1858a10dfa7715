#include "mimorx/ldpc/segmentation.hpp"

#include <cmath>
#include <string>

#include "mimorx/core/error.hpp"

namespace mimorx::ldpc {

BaseGraph select_base_graph(int tbs, double code_rate) {
  require(tbs >= 1 && tbs <= kMaxTbs, "tbs",
          std::to_string(tbs) + " bits; allowed 1.." + std::to_string(kMaxTbs));
  require(std::isfinite(code_rate) && code_rate > 0.0 && code_rate < 1.0, "code_rate",
          std::to_string(code_rate) + "; must be in (0, 1)");
  if (tbs <= 292 || (tbs <= 3824 && code_rate <= 0.67) || code_rate <= 0.25) return BaseGraph::bg2;
  return BaseGraph::bg1;
}

CrcType tb_crc_type(int tbs) { return tbs > 3824 ? CrcType::crc24a : CrcType::crc16; }

Segmentation segment(int tbs, BaseGraph bg) {
  require(tbs >= 1 && tbs <= kMaxTbs, "tbs",
          std::to_string(tbs) + " bits; allowed 1.." + std::to_string(kMaxTbs));
  require(bg == BaseGraph::bg1 || bg == BaseGraph::bg2, "bg", "must be 1 or 2");
  Segmentation s{};
  s.bg = bg;
  s.a = tbs;
  s.l_tb = crc_length(tb_crc_type(tbs));
  s.b = s.a + s.l_tb;
  s.kcb = bg == BaseGraph::bg1 ? 8448 : 3840;
  if (s.b <= s.kcb) {
    s.l_cb = 0;
    s.c = 1;
  } else {
    s.l_cb = 24;
    s.c = (s.b + (s.kcb - s.l_cb) - 1) / (s.kcb - s.l_cb);
  }
  s.b_prime = s.b + s.c * s.l_cb;
  require(s.b_prime % s.c == 0, "tbs",
          std::to_string(tbs) + " gives B' = " + std::to_string(s.b_prime) +
              " for C = " + std::to_string(s.c) +
              " code blocks, not a multiple of C; use a TBS of TS 38.214 "
              "§5.1.3.2 (TBS + 24 a multiple of 8C)");
  s.k_prime = s.b_prime / s.c;
  if (bg == BaseGraph::bg1) {
    s.kb = 22;
  } else if (s.b > 640) {
    s.kb = 10;
  } else if (s.b > 560) {
    s.kb = 9;
  } else if (s.b > 192) {
    s.kb = 8;
  } else {
    s.kb = 6;
  }
  s.zc = 0;
  for (int z : lifting_sizes()) {
    if (s.kb * z >= s.k_prime) {
      s.zc = z;
      break;
    }
  }
  require(s.zc > 0, "tbs", "no lifting size fits K' = " + std::to_string(s.k_prime));
  s.ils = set_index(s.zc);
  s.k = (bg == BaseGraph::bg1 ? 22 : 10) * s.zc;
  s.f = s.k - s.k_prime;
  return s;
}

std::vector<std::uint8_t> segment_bits(const Segmentation& s,
                                       std::span<const std::uint8_t> tb_with_crc) {
  require(
      tb_with_crc.size() == std::size_t(s.b), "tb_with_crc",
      "has " + std::to_string(tb_with_crc.size()) + " bits, expected B = " + std::to_string(s.b));
  std::vector<std::uint8_t> out(std::size_t(s.c) * s.k, 0);
  const int payload = s.k_prime - s.l_cb;
  for (int r = 0; r < s.c; ++r) {
    std::span<const std::uint8_t> part = tb_with_crc.subspan(std::size_t(r) * payload, payload);
    std::uint8_t* dst = out.data() + std::size_t(r) * s.k;
    if (s.c > 1) {
      const auto with = crc_attach(CrcType::crc24b, part);
      std::copy(with.begin(), with.end(), dst);
    } else {
      for (int i = 0; i < payload; ++i) dst[i] = part[i] & 1;
    }
  }
  return out;
}

}  // namespace mimorx::ldpc

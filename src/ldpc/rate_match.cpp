#include "mimorx/ldpc/rate_match.hpp"

#include <cmath>
#include <string>

#include "mimorx/core/error.hpp"

namespace mimorx::ldpc {

namespace {
int mother_n(BaseGraph bg, int zc) { return (bg == BaseGraph::bg1 ? 66 : 50) * zc; }
int full_n(BaseGraph bg, int zc) { return (bg == BaseGraph::bg1 ? 68 : 52) * zc; }
int info_k(BaseGraph bg, int zc) { return (bg == BaseGraph::bg1 ? 22 : 10) * zc; }
}  // namespace

int circular_buffer_size(BaseGraph bg, int zc, int c, bool lbrm, std::int64_t tbs_lbrm) {
  require(is_lifting_size(zc), "zc", std::to_string(zc) + " is not a lifting size");
  require(c >= 1, "c", std::to_string(c) + " code blocks; must be >= 1");
  const int n = mother_n(bg, zc);
  if (!lbrm) return n;
  require(tbs_lbrm >= 1, "tbs_lbrm", std::to_string(tbs_lbrm) + "; must be >= 1 with LBRM");
  // Nref = floor(TBS_LBRM / (C * 2/3)) = floor(3 TBS_LBRM / (2 C)), in integers.
  const std::int64_t nref = (3 * tbs_lbrm) / (2 * std::int64_t(c));
  return int(std::min<std::int64_t>(n, nref));
}

int rv_start(BaseGraph bg, int zc, int ncb, int rv) {
  require(rv >= 0 && rv <= 3, "rv", std::to_string(rv) + "; allowed 0..3");
  // Table 5.4.2.1-2: k0 = floor(num * Ncb / (N_mult Zc)) Zc with num per rv and base graph.
  static constexpr int kBg1[4] = {0, 17, 33, 56};
  static constexpr int kBg2[4] = {0, 13, 25, 43};
  const int num = bg == BaseGraph::bg1 ? kBg1[rv] : kBg2[rv];
  const std::int64_t den = std::int64_t(bg == BaseGraph::bg1 ? 66 : 50) * zc;
  return int((std::int64_t(num) * ncb / den) * zc);
}

std::vector<int> code_block_e(std::int64_t g, int c, int layers, int qm) {
  require(c >= 1, "c", std::to_string(c) + " code blocks; must be >= 1");
  require(layers >= 1 && layers <= 4, "layers", std::to_string(layers) + "; allowed 1..4");
  require(qm == 1 || qm == 2 || qm == 4 || qm == 6 || qm == 8, "qm",
          std::to_string(qm) + "; allowed 1, 2, 4, 6, 8");
  const std::int64_t unit = std::int64_t(layers) * qm;
  require(g > 0 && g % unit == 0, "g",
          std::to_string(g) +
              " coded bits; must be a positive multiple of layers x Qm = " + std::to_string(unit));
  const std::int64_t symbols = g / unit;
  require(symbols >= c, "g",
          std::to_string(g) + " coded bits leave fewer than one symbol per code block (C = " +
              std::to_string(c) + ")");
  std::vector<int> e(c);
  const std::int64_t lo = symbols / c, hi = (symbols + c - 1) / c;
  for (int r = 0; r < c; ++r) e[r] = int(unit * (r <= c - int(symbols % c) - 1 ? lo : hi));
  return e;
}

void validate(const RateMatchConfig& cfg) {
  require(cfg.bg == BaseGraph::bg1 || cfg.bg == BaseGraph::bg2, "bg", "must be 1 or 2");
  require(is_lifting_size(cfg.zc), "zc", std::to_string(cfg.zc) + " is not a lifting size");
  const int k = info_k(cfg.bg, cfg.zc), n = mother_n(cfg.bg, cfg.zc);
  require(cfg.k_prime > 2 * cfg.zc && cfg.k_prime <= k, "k_prime",
          std::to_string(cfg.k_prime) + "; allowed " + std::to_string(2 * cfg.zc + 1) + ".." +
              std::to_string(k) + " for Zc = " + std::to_string(cfg.zc));
  // Ncb must hold every filler position (K - 2Zc) plus at least one parity column.
  require(cfg.ncb > k - 2 * cfg.zc && cfg.ncb <= n, "ncb",
          std::to_string(cfg.ncb) + "; allowed " + std::to_string(k - 2 * cfg.zc + 1) + ".." +
              std::to_string(n));
  require(cfg.qm == 1 || cfg.qm == 2 || cfg.qm == 4 || cfg.qm == 6 || cfg.qm == 8, "qm",
          std::to_string(cfg.qm) + "; allowed 1, 2, 4, 6, 8");
  require(
      cfg.e > 0 && cfg.e % cfg.qm == 0, "e",
      std::to_string(cfg.e) + "; must be a positive multiple of Qm = " + std::to_string(cfg.qm));
  require(cfg.rv >= 0 && cfg.rv <= 3, "rv", std::to_string(cfg.rv) + "; allowed 0..3");
}

std::vector<int> selected_positions(const RateMatchConfig& cfg) {
  validate(cfg);
  const int k0 = rv_start(cfg.bg, cfg.zc, cfg.ncb, cfg.rv);
  // Filler bits sit at d positions K' - 2Zc .. K - 2Zc - 1 and are skipped (§5.4.2.1).
  const int f_lo = cfg.k_prime - 2 * cfg.zc, f_hi = info_k(cfg.bg, cfg.zc) - 2 * cfg.zc;
  std::vector<int> pos(cfg.e);
  int pick = 0;
  for (std::int64_t j = 0; pick < cfg.e; ++j) {
    const int p = int((k0 + j) % cfg.ncb);
    if (p >= f_lo && p < f_hi) continue;
    pos[pick++] = p;
  }
  return pos;
}

void rate_match(const RateMatchConfig& cfg, std::span<const std::uint8_t> codeword,
                std::span<std::uint8_t> out) {
  const auto pos = selected_positions(cfg);
  const int n = full_n(cfg.bg, cfg.zc), skip = 2 * cfg.zc;
  require(codeword.size() == std::size_t(n), "codeword",
          "has " + std::to_string(codeword.size()) + " bits, expected " + std::to_string(n));
  require(out.size() == std::size_t(cfg.e), "out",
          "has " + std::to_string(out.size()) + " bits, expected E = " + std::to_string(cfg.e));
  // §5.4.2.2: e is written row by row into Qm rows of E/Qm, read column by column:
  // f_(i + j Qm) = e_(i E/Qm + j).
  const int rows = cfg.qm, cols = cfg.e / cfg.qm;
  for (int i = 0; i < rows; ++i) {
    for (int j = 0; j < cols; ++j)
      out[i + std::size_t(j) * rows] = codeword[skip + pos[i * cols + j]] & 1;
  }
}

void rate_recover(const RateMatchConfig& cfg, std::span<const float> llrs,
                  std::span<float> mother) {
  const auto pos = selected_positions(cfg);
  const int n = full_n(cfg.bg, cfg.zc), skip = 2 * cfg.zc;
  require(llrs.size() == std::size_t(cfg.e), "llrs",
          "has " + std::to_string(llrs.size()) + " values, expected E = " + std::to_string(cfg.e));
  require(mother.size() == std::size_t(n), "mother",
          "has " + std::to_string(mother.size()) + " values, expected " + std::to_string(n));
  for (std::size_t i = 0; i < llrs.size(); ++i) {
    require(std::isfinite(llrs[i]), "llrs",
            "value at index " + std::to_string(i) + " is NaN or Inf; LLRs must be finite");
  }
  const int rows = cfg.qm, cols = cfg.e / cfg.qm;
  for (int i = 0; i < rows; ++i) {
    for (int j = 0; j < cols; ++j)
      mother[skip + pos[i * cols + j]] += llrs[i + std::size_t(j) * rows];
  }
  for (int p = cfg.k_prime; p < info_k(cfg.bg, cfg.zc); ++p) mother[p] = kFillerLlr;
}

}  // namespace mimorx::ldpc

#pragma once
// LDPC rate matching (TS 38.212 §5.4.2: circular-buffer bit selection, §5.4.2.2 bit
// interleaving), code-block concatenation (§5.5), and the receiver's inverse with HARQ soft
// combining. Codewords here are the encoder's full mother codewords (68 Zc / 52 Zc bits); the
// circular buffer d_k = c_(k + 2 Zc) starts after the 2 Zc punctured systematic columns.
#include <cstdint>
#include <span>
#include <vector>

#include "mimorx/ldpc/base_graph.hpp"

namespace mimorx::ldpc {

// LLR written on filler positions (known zeros) by rate recovery; large against channel LLRs.
constexpr float kFillerLlr = 100.0f;

// N = 66 Zc (BG1) or 50 Zc (BG2); with LBRM Ncb = min(N, floor(TBS_LBRM / (C R_LBRM))),
// R_LBRM = 2/3 (§5.4.2.1).
int circular_buffer_size(BaseGraph bg, int zc, int c, bool lbrm, std::int64_t tbs_lbrm);
// k0 of Table 5.4.2.1-2 for rv 0..3.
int rv_start(BaseGraph bg, int zc, int ncb, int rv);
// E_r of every code block (§5.4.2.1, all C blocks scheduled): Nl Qm floor(G / (Nl Qm C)) for
// r <= C - mod(G / (Nl Qm), C) - 1, else Nl Qm ceil(G / (Nl Qm C)). G must be a multiple of Nl Qm.
std::vector<int> code_block_e(std::int64_t g, int c, int layers, int qm);

struct RateMatchConfig {
  BaseGraph bg;
  int zc;
  int k_prime;  // K': info bits incl. CRC; positions K'..K-1 are filler
  int ncb;
  int e;   // bits out
  int qm;  // bits per modulation symbol (interleaver columns)
  int rv;
};
// Throws InvalidArgument naming the field for anything out of range.
void validate(const RateMatchConfig& cfg);

// Circular-buffer positions (index k into d) of the E selected bits, in selection order.
std::vector<int> selected_positions(const RateMatchConfig& cfg);
// codeword: full mother codeword (n = 68 Zc or 52 Zc); out: E bits after interleaving.
void rate_match(const RateMatchConfig& cfg, std::span<const std::uint8_t> codeword,
                std::span<std::uint8_t> out);
// llrs: E received LLRs (interleaved order). mother: n LLRs of the full mother codeword, the
// HARQ buffer: selected positions are ADDED (soft combining across transmissions/rvs), filler
// positions are set to kFillerLlr, other positions (the 2 Zc punctured columns, unsent bits)
// are left as they are — zero the buffer before the first transmission. NaN/Inf are rejected.
void rate_recover(const RateMatchConfig& cfg, std::span<const float> llrs, std::span<float> mother);

}  // namespace mimorx::ldpc

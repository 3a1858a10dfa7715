#pragma once
// Per-element arithmetic of the batched transport chain (transport_batch.hpp), shared by its CPU
// loops and its CUDA kernels so that both produce TransportPlan's bits and LLRs exactly.
#include <cstdint>

#include "ldpc/crc_math.hpp"
#include "ldpc/decoder_quant.hpp"
#include "mimorx/core/hd.hpp"
#include "mimorx/ldpc/rate_match.hpp"

namespace mimorx::ldpc::detail {

// The sizes every step needs, passed to kernels by value.
struct ChainDims {
  int a;                  // TBS
  int l_tb;               // TB CRC length (24 or 16)
  std::uint32_t tb_poly;  // its generator without the D^L term
  int c;                  // code blocks
  int l_cb;               // CB CRC length: 24 when C > 1, else 0
  int payload;            // K' - L_CB: TB bits (with the TB CRC) per code block
  int k_prime;            // bits per code block incl. its CRC; K' .. K - 1 are filler
  int k;                  // encoder information length (22 Zc or 10 Zc)
  int n;                  // mother codeword length (68 Zc or 52 Zc)
  std::int64_t g;         // coded bits per transport block
};

inline constexpr std::uint32_t kCrc24bPoly = 0x800063;  // gCRC24B (TS 38.212 §5.1)

// The TB CRC remainder of a decoded transport block: the payloads of its C code blocks (stride k
// bytes) in order, B = C x payload bits; zero when the CRC holds.
MIMORX_HD std::uint32_t crc_of_payloads(const std::uint8_t* blocks, const ChainDims& d) {
  std::uint32_t reg = 0;
  for (int r = 0; r < d.c; ++r) {
    const std::uint8_t* p = blocks + std::int64_t(r) * d.k;
    for (int i = 0; i < d.payload; ++i) reg = crc_push(reg, p[i] & 1u, d.tb_poly, d.l_tb);
  }
  return reg;
}

// Encoder input bit kk of code block r (§5.2.2): the TB's bits then its CRC (tb_parity, the
// remainder of the A information bits), then L_CB CB CRC positions and the filler, written 0 here
// (the CB CRC is filled in afterwards).
MIMORX_HD std::uint8_t segment_bit(const std::uint8_t* tb, std::uint32_t tb_parity,
                                   const ChainDims& d, int r, int kk) {
  if (kk >= d.payload) return 0;
  const int t = r * d.payload + kk;
  if (t < d.a) return tb[t] & 1u;
  return std::uint8_t((tb_parity >> (d.l_tb - 1 - (t - d.a))) & 1u);
}

// Mother-codeword LLR at position p (of code block r, index cbp = r n + p in the block's C n
// values) after rate recovery: the filler's known zeros get kFillerLlr; every other position
// adds the received LLRs that the rate matcher read from it, in selection order, to `init` (the
// HARQ buffer's value, 0 for a fresh transmission) — the order of rate_recover(), so the sums
// are the same floats.
MIMORX_HD float recovered_llr(const float* block_llrs, const int* rx_start, const int* rx_idx,
                              int cbp, int p, const ChainDims& d, float init) {
  if (p >= d.k_prime && p < d.k) return kFillerLlr;
  float acc = init;
  for (int i = rx_start[cbp]; i < rx_start[cbp + 1]; ++i) acc = fadd(acc, block_llrs[rx_idx[i]]);
  return acc;
}

}  // namespace mimorx::ldpc::detail

#pragma once
// Transport-block CRC choice, LDPC base-graph selection and code-block segmentation
// (TS 38.212 §7.2.1, §7.2.2 (= §6.2.1, §6.2.2 for PUSCH) and §5.2.2).
#include <cstdint>
#include <span>
#include <vector>

#include "mimorx/ldpc/base_graph.hpp"
#include "mimorx/ldpc/crc.hpp"

namespace mimorx::ldpc {

// Largest transport block of TS 38.214 (§5.1.3.2 with 4 layers, 256QAM, 273 PRBs).
constexpr int kMaxTbs = 1277992;

// §7.2.2: BG2 when A <= 292, or A <= 3824 and R <= 0.67, or R <= 0.25; otherwise BG1.
BaseGraph select_base_graph(int tbs, double code_rate);
// §7.2.1: CRC24A for A > 3824, else CRC16.
CrcType tb_crc_type(int tbs);

struct Segmentation {
  BaseGraph bg;
  int a;        // TBS
  int l_tb;     // TB CRC length (24 or 16)
  int b;        // A + L_TB
  int kcb;      // 8448 (BG1) or 3840 (BG2)
  int c;        // code blocks
  int l_cb;     // CB CRC length (24 when C > 1, else 0)
  int b_prime;  // B + C L
  int k_prime;  // bits per code block incl. CB CRC
  int kb;       // systematic base columns used to pick Zc (22 for BG1; 10/9/8/6 for BG2)
  int zc;       // smallest lifting size with Kb Zc >= K'
  int ils;      // set index of Zc
  int k;        // 22 Zc or 10 Zc: the encoder's info length
  int f;        // filler bits per block, K - K'
};

// Throws InvalidArgument for A outside [1, kMaxTbs] or when B' is not a multiple of C (every
// TBS of TS 38.214 §5.1.3.2 satisfies it: TBS + 24 is a multiple of 8C when C > 1).
Segmentation segment(int tbs, BaseGraph bg);

// tb_with_crc (B bits) -> C x K encoder inputs: payload, CB CRC24B (C > 1), then F filler 0s.
std::vector<std::uint8_t> segment_bits(const Segmentation& s,
                                       std::span<const std::uint8_t> tb_with_crc);

}  // namespace mimorx::ldpc

#pragma once
// 5G NR LDPC decoders (TS 38.212 base graphs lifted by Z) on the CPU and on CUDA.
//
//   bp  : flooding sum-product with the tanh rule (CPU only; the quality oracle).
//   nms : layered normalized min-sum, R = alpha * min |q| (alpha default 0.75), optionally with
//         an iteration-dependent alpha (DecoderConfig::alpha_last).
//   oms : layered offset min-sum, R = max(min |q| - beta, 0).
// Layered decoding processes the base-graph rows in order; one layer is the Z rows of a block
// row, which share no variable, so they are updated in parallel (Z threads per codeword on CUDA,
// after Li Rongchun et al., "High-throughput LDPC decoder for 5G New Radio on GPU", J. National
// Univ. Defense Technology, 2024).
//
// quantized = true runs the two-level integer arithmetic (docs/ldpc.md): channel LLRs rounded to
// llr_bits-bit integers in units of 1/llr_scale (6 bits, 1/4 by default), APP and
// check-to-variable messages 8-bit saturating (APP at 127, messages at 47), the NMS scaling in
// integer ((m * round(16 alpha)) >> 4, i.e. *3>>2 for 0.75). The CPU and CUDA integer decoders are
// bit-exact; the CPU and CUDA float min-sum decoders use the same operations without contraction
// and agree bit for bit as well (tests/ldpc/test_decoder.cpp).
//
// LLR input: num_codewords x n() floats, positive = bit 0. n() = (info columns + rows) * Z: the
// whole mother codeword (68Z for BG1, 52Z for BG2) when all base rows are decoded, including the
// 2Z punctured systematic columns, which carry 0. With `rows` < base rows only the first `rows`
// check rows are decoded (rates above the mother rate, as in the paper) and only the columns they
// touch are read.
#include <cstdint>
#include <memory>
#include <string>

#include "mimorx/core/backend.hpp"
#include "mimorx/core/buffer.hpp"
#include "mimorx/core/tensor.hpp"
#include "mimorx/ldpc/base_graph.hpp"

namespace mimorx::ldpc {

enum class DecoderAlgo { bp, nms, oms };

// "bp", "nms" or "oms"; anything else throws InvalidArgument naming `argument` (the option
// or field the name came from) and the allowed names.
DecoderAlgo parse_decoder_algo(const std::string& name, const std::string& argument = "algo");

// Order of the layers (base rows) within one iteration of the layered decoders (nms, oms; the
// flooding bp has no order).
//  extension_first (default): the extension rows from the last decoded row down to row 4,
//    then the core rows 0..3. At low rates it converges much faster than the natural order
//    (the punctured systematic columns, which start at LLR 0, first gather evidence from the
//    many extension rows before the core rows use them): measured with 10 iterations, BG1
//    K=8448 R=1/3 at 0.88 dB NMS alpha 0.625 FER 3.0e-2 vs 0.41, BG2 K=3840 R=1/5 at 0.73 dB
//    NMS 0.75 4.1e-2 vs 0.47 (docs/ldpc_decoder.md).
//  natural: rows 0, 1, 2, ... (the paper's order).
enum class LayerOrder : int { extension_first = 0, natural = 1 };

// "extension-first" or "natural"; anything else throws InvalidArgument naming `argument`.
LayerOrder parse_layer_order(const std::string& name, const std::string& argument = "layer-order");

// Arithmetic of the nms/oms decoders on float LLRs (quantized = false; docs/ldpc_half.md).
//  automatic (default): the plan picks (DecoderPlan::arithmetic() reports it); today single
//    on every backend.
//  single: float32 (FloatArith), bit-exact between the CPU and CUDA.
//  half: IEEE binary16 in pairs, two codewords per 32-bit word: on CUDA the f16x2 kernel (two
//    codewords per thread, min.xorsign.abs.f16x2 for the check-node minimum and sign; sm_86+),
//    on the CPU a slow model of it that rounds every operation to half as the GPU does, so the
//    two are bit-exact. Channel LLRs and APP clamped to +-16384, messages to 2048.
enum class DecoderArithmetic : int { automatic = 0, single = 1, half = 2 };

// "auto", "single" or "half"; anything else throws InvalidArgument naming `argument`.
DecoderArithmetic parse_decoder_arithmetic(const std::string& name,
                                           const std::string& argument = "arithmetic");

// The decoder choices that layers above the decoder (the transport chain, the link simulator)
// pass down to it: one struct, copied as a whole, rather than the same fields repeated in every
// configuration on the way. The fields mean what DecoderConfig's of the same names mean.
struct DecoderSettings {
  DecoderAlgo algo = DecoderAlgo::nms;
  int max_iters = 10;
  float alpha = 0.75f;            // nms factor
  float alpha_last = 0.f;         // nms per-iteration ramp to this factor; 0 = constant alpha
  float beta = 0.5f;              // oms offset
  bool quantized = false;         // integer path (6-bit channel LLRs, 8-bit messages; nms, oms)
  bool early_termination = true;  // stop a word once its syndrome is zero
  DecoderArithmetic arithmetic = DecoderArithmetic::automatic;  // float path: single or half
};

// The most decoder iterations a configuration may ask for (max_iters in 1..kMaxDecoderIters).
inline constexpr int kMaxDecoderIters = 1000;

struct DecoderConfig {
  BaseGraph bg;
  int z;
  DecoderAlgo algo = DecoderAlgo::nms;
  int max_iters = 10;
  float alpha = 0.75f;
  // NMS normalisation schedule. 0 (default): alpha in every iteration. In (0, 1]: alpha moves
  // linearly from `alpha` in iteration 1 to alpha_last in iteration max_iters,
  //   alpha_t = float(alpha + (alpha_last - alpha) * (t - 1) / (max_iters - 1))  (in double),
  // and the integer path uses round(16 alpha_t). Small early factors keep the first, unreliable
  // messages small; larger late ones stop the decoder from under-using converged evidence. At
  // low rates this is worth ~0.15-0.25 dB over the best constant alpha with 10 iterations
  // (0.5 -> 0.875: BG1 K=8448 R=1/3 and BG2 K=3840 R=1/5 within 0.3 dB of BP with 20
  // flooding iterations; the best constant alpha is 0.36-0.40 dB away; docs/ldpc_decoder.md).
  // Only nms reads it.
  float alpha_last = 0.f;
  float beta = 0.5f;
  bool early_termination = true;
  bool quantized = false;
  // Extensions (defaults keep the full mother code and the documented quantisation).
  int rows = 0;  // base rows decoded, 4..base rows; 0 = all (the mother code)
  LayerOrder layer_order = LayerOrder::extension_first;
  // Integer path: channel LLR = round(llr * llr_scale) in llr_bits bits, saturated: by default
  // step 1/4, range +-7.75. Against step 1/2 (range +-15.5) the integer decoders lose far less
  // to float at rates 1/5..0.85, where the channel LLRs are ~1-3 (docs/ldpc_decoder.md,
  // "Quantisation").
  int llr_bits = 6;             // channel LLR width of the integer path, 2..8
  float llr_scale = 4.0f;       // integer channel LLR = round(llr * llr_scale), saturated
  int codewords_per_block = 0;  // CUDA Np override; 0 = chosen by the plan (docs/ldpc.md)
  // CUDA: where the C2V messages live (compressed records, or full messages for the paired
  // kernel): 1 shared memory, 0 a global (L2) workspace, -1 chosen by the plan (docs/ldpc.md).
  int c2v_shared = -1;
  // CUDA, the f16x2 kernel (arithmetic = half): how its global workspace holds the messages:
  // 0 one half pair per edge, 1 compressed records per row (two minima, an index and the signs:
  // 3 words instead of the row's degree), -1 chosen by the plan (records when the full messages
  // of the resident blocks would not fit in two thirds of L2; docs/ldpc_half.md). Other
  // kernels have one layout each: any value but -1 is an error there.
  int c2v_records = -1;
  // CUDA: largest thread block, 512 or 1024 (register budget 128 or 64 per thread, the f16x2
  // kernel 80 or 64); 0 = 1024, or 512 for the paired kernel on codes with degree-19 rows (BG1)
  // and for the f16x2 kernel. Bounds the threads per block: Np Z (one codeword per thread) or
  // Np Z / 2 (paired).
  int max_block_threads = 0;
  // CUDA: codewords per thread. 2 = the paired integer kernel (two codewords in the 16-bit lanes
  // of each register, messages stored in full; needs quantized and an even
  // codewords_per_block) or, with arithmetic = half, the f16x2 kernel; 1 = one codeword per
  // thread (the paper's layout; the single-precision float path), 0 = automatic: 2 on the
  // integer path unless codewords_per_block is odd, and with half (docs/ldpc_decoder.md).
  int codewords_per_thread = 0;
  // Float path (quantized = false, nms/oms): single or half precision (DecoderArithmetic).
  // half needs codewords_per_thread 0 or 2 and an even (or automatic) codewords_per_block.
  DecoderArithmetic arithmetic = DecoderArithmetic::automatic;
  // CUDA: reject NaN/Inf LLRs with InvalidArgument. The kernel flags them as it reads them (it
  // decodes them as 0), and the check synchronises the stream; turn off for asynchronous use.
  bool check_input = true;

  // The fields of `s` set here; the others keep their values.
  DecoderConfig& with(const DecoderSettings& s) {
    algo = s.algo;
    max_iters = s.max_iters;
    alpha = s.alpha;
    alpha_last = s.alpha_last;
    beta = s.beta;
    quantized = s.quantized;
    early_termination = s.early_termination;
    arithmetic = s.arithmetic;
    return *this;
  }
};

// A CUDA plan owns a workspace (C2V records when they do not fit in shared memory, the NaN
// flag) shared by its calls: calls that may overlap on different streams need one plan each.
class DecoderPlan {
 public:
  DecoderPlan(const DecoderConfig&, Backend);
  ~DecoderPlan();
  DecoderPlan(DecoderPlan&&) noexcept;
  DecoderPlan& operator=(DecoderPlan&&) noexcept;
  DecoderPlan(const DecoderPlan&) = delete;
  DecoderPlan& operator=(const DecoderPlan&) = delete;

  // llrs: num_codewords x n() floats (full mother codeword incl. the 2Z punctured columns, which
  // carry 0), positive = bit 0. info_bits: num_codewords x k() unpacked 0/1.
  // iterations (optional, size num_codewords): iterations run per word.
  void decode(View<const float> llrs, int num_codewords, View<std::uint8_t> info_bits,
              View<int> iterations = {}, const Stream& stream = {});
  // packed_info_bits: ceil(k/8) bytes per codeword, bit i in byte i/8 at 0x80 >> (i%8).
  void decode_packed(View<const float> llrs, int num_codewords, View<std::uint8_t> packed_info_bits,
                     View<int> iterations = {}, const Stream& stream = {});
  // Every decoded bit (num_codewords x n(), unpacked 0/1) and, optionally, one byte per word:
  // 1 when the hard decision satisfies the decoded check rows.
  void decode_codeword(View<const float> llrs, int num_codewords, View<std::uint8_t> bits,
                       View<int> iterations = {}, View<std::uint8_t> syndrome_ok = {},
                       const Stream& stream = {});

  // Pre-quantised channel LLRs for the integer path (quantized = true only): num_codewords x
  // n() int8 values in units of 1/llr_scale, i.e. what quantize_llrs() makes of float LLRs;
  // values beyond +-(2^(llr_bits-1) - 1) are saturated to it. Decodes bit for bit as the float
  // LLRs they came from, from a quarter of the bytes: a GPU decoder fed from the host is bound by
  // that copy (docs/ldpc_decoder.md, end-to-end). No NaN check, so no synchronisation.
  void decode(View<const std::int8_t> llrs, int num_codewords, View<std::uint8_t> info_bits,
              View<int> iterations = {}, const Stream& stream = {});
  void decode_packed(View<const std::int8_t> llrs, int num_codewords,
                     View<std::uint8_t> packed_info_bits, View<int> iterations = {},
                     const Stream& stream = {});
  void decode_codeword(View<const std::int8_t> llrs, int num_codewords, View<std::uint8_t> bits,
                       View<int> iterations = {}, View<std::uint8_t> syndrome_ok = {},
                       const Stream& stream = {});
  // The integer path's channel quantiser, on the host (any plan, host memory, same sizes):
  // out[i] = round(llrs[i] * llr_scale) half away from zero, saturated at +-(2^(llr_bits-1) - 1).
  // NaN or Inf -> InvalidArgument.
  void quantize_llrs(View<const float> llrs, View<std::int8_t> out) const;

  const DecoderConfig& config() const;
  const Backend& backend() const;
  int n() const;     // LLRs per codeword
  int k() const;     // information bits per codeword
  int rows() const;  // base rows decoded
  int packed_bytes() const { return (k() + 7) / 8; }
  // CUDA: codewords per thread block (Np) and thread blocks resident per SM; 0 on the CPU.
  int codewords_per_block() const;
  int blocks_per_sm() const;
  int codewords_per_thread() const;  // CUDA: 1 or 2 (the kernel chosen); 0 on the CPU
  // The float path's arithmetic the plan runs, single or half (automatic resolved); single for
  // the integer path and bp.
  DecoderArithmetic arithmetic() const;
  bool c2v_in_shared() const;  // CUDA: where the plan put the C2V records
  // CUDA: the C2V data are compressed records per row (the one-codeword kernel, the f16x2 kernel
  // when c2v_records resolves to 1), not one message per edge; false on the CPU.
  bool c2v_records() const;
  // Check-to-variable edges per iteration per codeword (base edges of the decoded rows x Z).
  std::int64_t edges() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace mimorx::ldpc

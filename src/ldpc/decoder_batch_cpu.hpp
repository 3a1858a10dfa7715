#pragma once
// The CPU layered decoders (nms, oms; integer and float) over a batch of codewords at once:
// codeword w of the batch is lane w of int16 or float vectors, so that one vector instruction
// updates the same edge of kCpuBatch codewords (AVX2 where the CPU has it, SSE2 otherwise, chosen
// at run time). They compute IntArith's / FloatArith's numbers (decoder_quant.hpp) exactly: the
// same hard decisions, iteration counts and syndrome flags as the one-codeword layered decoder in
// decoder_cpu.cpp, which stays the reference (tests/ldpc/test_decoder_batch_cpu.cpp compares
// them).
#include <cstdint>
#include <vector>

#include "ldpc/decoder_cuda.hpp"

namespace mimorx::ldpc::detail {

constexpr int kCpuBatch = 16;

struct CpuBatchScratch {
  std::vector<std::int16_t> app, msg;  // n_used x kCpuBatch, edges x z x kCpuBatch
  std::vector<float> fapp, fmsg;       // the same for the float path
};

// Layered min-sum on `count` (1..kCpuBatch) codewords of the integer path. channel[w]: codeword
// w's n_used channel values, already quantised and saturated to +-llr_limit. On return app_out[w]
// (n_used values) holds codeword w's APP as the one-codeword decoder leaves it: at the first
// iteration whose syndrome holds (with early termination), else after the last; iters[w] the
// iterations it ran. `a` carries alpha16 (constant alpha), beta_q, offset and msg_max.
void layered_int_batch(const DecodeTables& t, const IntArith& a, const std::int8_t* const* channel,
                       int count, std::int8_t* const* app_out, int* iters, CpuBatchScratch& s);

// The same for the float path: channel[w] holds codeword w's n_used float LLRs, app_out[w]
// receives its float APP.
void layered_float_batch(const DecodeTables& t, const FloatArith& a, const float* const* channel,
                         int count, float* const* app_out, int* iters, CpuBatchScratch& s);

// Test knob: false makes DecoderPlan's CPU layered decoders decode one codeword at a time (the
// reference) instead of in batches. On by default; not thread-safe with running plans.
void set_cpu_batch_enabled(bool enabled);
bool cpu_batch_enabled();

}  // namespace mimorx::ldpc::detail

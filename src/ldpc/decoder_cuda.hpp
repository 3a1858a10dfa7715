#pragma once
// Internal interface between the decoder plan (decoder_cpu.cpp) and the CUDA kernels.
#include <cstdint>
#include <memory>
#include <vector>

#include "ldpc/decoder_quant.hpp"

namespace mimorx::ldpc::detail {

enum class OutMode { info_unpacked, info_packed, codeword };

// Everything the kernels need, fixed when the plan is built.
struct DecodeTables {
  int z = 0;
  int rows = 0;                // base rows decoded (layers)
  int n_used = 0;              // LLRs per codeword
  int k = 0;                   // information bits
  std::vector<DecEdge> edges;  // edges of the decoded rows, row by row
  std::vector<int> row_start;  // CSR into edges, rows + 1 entries
  bool quantized = false;
  bool offset = false;  // OMS instead of NMS
  float alpha = 0.75f, beta = 0.5f;
  int alpha16 = 12, beta_q = 1;  // integer NMS/OMS parameters
  // Iteration-dependent NMS factors (DecoderConfig::alpha_last), max_iters entries each; empty
  // when alpha is constant.
  std::vector<float> alpha_iter;
  std::vector<int> alpha16_iter;
  float llr_scale = 4.f;
  int llr_limit = 31;
  int max_iters = 10;
  bool early_termination = true;
  int np_override = 0;
  int c2v_shared = -1;
  int c2v_records = -1;  // the f16x2 kernel's global workspace (DecoderConfig::c2v_records)
  int max_block_threads = 0;
  int codewords_per_thread = 1;  // 2: the paired integer kernel (decoder_pair_cuda.cu)
  // The float path in half-precision pairs (decoder_half.hpp; codewords_per_thread is 2): the
  // f16x2 kernel on CUDA, its model on the CPU.
  bool half = false;
  int device = 0;
};

// The decoders' arithmetic as the tables set it (constant alpha; set_iteration_alpha applies
// the per-iteration factors).
inline IntArith int_arith(const DecodeTables& t) {
  IntArith a;
  a.alpha16 = t.alpha16;
  a.beta_q = t.beta_q;
  a.offset = t.offset;
  return a;
}
inline FloatArith float_arith(const DecodeTables& t) {
  FloatArith a;
  a.alpha = t.alpha;
  a.beta = t.beta;
  a.offset = t.offset;
  return a;
}

class CudaDecoder {
 public:
  explicit CudaDecoder(const DecodeTables& t);
  ~CudaDecoder();
  CudaDecoder(const CudaDecoder&) = delete;
  CudaDecoder& operator=(const CudaDecoder&) = delete;
  // All pointers are device memory; iterations and syndrome_ok may be null. When check_input is
  // set the call synchronises the stream and returns false if an LLR was NaN or infinite.
  // llrs: float LLRs, or llrs8: pre-quantised int8 ones (integer path; the other is null).
  bool run(const float* llrs, const std::int8_t* llrs8, int num, OutMode mode, std::uint8_t* out,
           int* iterations, std::uint8_t* syndrome_ok, void* stream, bool check_input);
  int codewords_per_block() const;
  int codewords_per_thread() const;
  int blocks_per_sm() const;
  bool c2v_in_shared() const;
  bool c2v_records() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace mimorx::ldpc::detail

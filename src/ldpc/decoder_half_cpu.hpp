#pragma once
// The CPU model of the f16x2 kernel (DecoderConfig::arithmetic = half on the CPU backend).
#include <cstdint>

#include "ldpc/decoder_cuda.hpp"

namespace mimorx::ldpc::detail {

// Layered nms/oms in half-precision pairs (decoder_half.hpp) on num codewords of float LLRs
// (num x n_used, finite), outputs as DecoderPlan writes them; bit-exact with the CUDA kernel.
void decode_half_cpu(const DecodeTables& t, const float* llrs, int num, OutMode mode,
                     std::uint8_t* out, int* iterations, std::uint8_t* syndrome_ok);

}  // namespace mimorx::ldpc::detail

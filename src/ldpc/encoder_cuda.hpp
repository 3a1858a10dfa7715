#pragma once
// CUDA entry of the LDPC encoder (src/ldpc/encoder_cuda.cu).
#include <cstdint>

#include "mimorx/ldpc/encoder.hpp"

namespace mimorx::ldpc::detail {

// tables_dev: edge_col | edge_shift | row_start | target_shift, as EncoderPlan lays them out.
void encode_cuda(const EncoderPlan::Tables& t, const int* tables_dev, const std::uint8_t* info,
                 int num, std::uint8_t* codewords, void* stream);

}  // namespace mimorx::ldpc::detail

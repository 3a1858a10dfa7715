#pragma once
// CUDA entries of the batched transport chain (transport_batch_cuda.cu). All asynchronous on
// `stream` except count_nonfinite_cuda, which returns a count.
#include <cstdint>

#include "ldpc/transport_batch_math.hpp"

namespace mimorx::ldpc::detail {

// TB CRCs (parity: num words of workspace), segmentation, CB CRCs: enc_in is num x C x k bits.
void batch_segment_cuda(const ChainDims& d, const std::uint8_t* tb, int num,
                        std::uint32_t* parity, std::uint8_t* enc_in, void* stream);
// coded[b g + i] = cw[b C n + tx_map[i]].
void batch_rate_match_cuda(const ChainDims& d, const std::uint8_t* cw, int num, const int* tx_map,
                           std::uint8_t* coded, void* stream);
// Rate recovery of num blocks into num x C x stride values (the first `stride` of each code
// block's n): out_f (floats) or out_q (the integer decoder's quantised channel values, scale and
// limit as DecoderConfig's). harq_in: the values to add to (stride n; may alias out_f), or null
// for a fresh transmission.
void batch_rate_recover_cuda(const ChainDims& d, const float* llrs, int num, const int* rx_start,
                             const int* rx_idx, const float* harq_in, float* out_f,
                             std::int8_t* out_q, int stride, float scale, int limit, void* stream);
// From num x C decoded blocks of k bits: cb_ok (num x C, may be null), tb_ok (num), tb (num x a).
void batch_check_cuda(const ChainDims& d, const std::uint8_t* dec, int num, std::uint8_t* tb,
                      std::uint8_t* tb_ok, std::uint8_t* cb_ok, void* stream);
// Number of NaN/Inf values among x[0..n) (synchronises).
std::int64_t count_nonfinite_cuda(const float* x, std::int64_t n, int device, void* stream);

}  // namespace mimorx::ldpc::detail

#pragma once
// CUDA backend of ChannelEstimator: the four stages of estimate_math.hpp as kernels on one
// stream. Pointers are device memory; `args` points at device tables.
#include <cstdint>

#include "nr/estimate_math.hpp"

namespace mimorx::nr::detail {

// y: slots grids; g, c (pilot estimates as measured, corrected): slots * D * Qs * n_rx; f: slots *
// D * n_sc * layers * n_rx; partial: slots * D * noise_rows * n_rx; h: matrices with stride
// h_stride; noise: slots.
void estimate_cuda(const EstimateArgs& args, const cf32* y, std::int64_t slots, cf32* g, cf32* c,
                   cf32* f, double* partial, cf32* h, std::int64_t h_stride, float* noise,
                   int device, void* stream);

}  // namespace mimorx::nr::detail

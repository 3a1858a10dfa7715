#pragma once
// The NR slot link's grid steps on the GPU, the kernels of nr_link_grid.hpp's host functions
// with the same per-RE arithmetic (nr_link_math.hpp): for a batch of `num` slots in compact
// order, slot p carrying transmission `tx` of block blocks[p]. Layouts are nr_link_grid.hpp's,
// slot after slot. Every pointer is device memory; every entry runs on `stream` (cudaStream_t).
#include <cstdint>

#include "mimorx/core/complex.hpp"

namespace mimorx::sim::detail {

// The plan's tables on the device (uploaded once per plan).
struct NrGridTables {
  const int* data_pos = nullptr;  // grid position of each data RE (data_re_positions)
  const int* dmrs_at = nullptr;   // DM-RS entries of x (dmrs_table)
  const cf32* dmrs_value = nullptr;
  int data_res = 0, dmrs_count = 0;
  std::int64_t res = 0;  // grid REs per slot
  int layers = 0, n_rx = 0;
};

// x (num x res x layers): zeroed, codeword symbols d (num x data_res x layers) placed by the
// layer mapping, DM-RS added (place_layers then place_dmrs).
void nr_place_cuda(const NrGridTables& t, int num, const cf32* d, cf32* x, void* stream);
// h (num x res matrices n_rx x layers): the flat Rayleigh channel of each slot
// (NrSlotChannel::generate without a TDL).
void nr_flat_channel_cuda(const NrGridTables& t, std::uint64_t seed, const std::int64_t* blocks,
                          int tx, int num, cf32* h, void* stream);
// y = H x + n on every RE of each slot (receive_grid with noise slot nr_noise_slot(blocks[p], tx)).
void nr_receive_cuda(const NrGridTables& t, std::uint64_t seed, const std::int64_t* blocks, int tx,
                     int num, const cf32* h, const cf32* x, float n0, cf32* y, void* stream);
// The data REs' y (gather_data_y) and H and N0 (data_re_csi) of each slot; N0 is n0_slot[p]
// where n0_slot is given (the estimator's), else n0.
void nr_gather_cuda(const NrGridTables& t, int num, const cf32* y, const cf32* h, float n0,
                    const float* n0_slot, cf32* y_data, cf32* h_data, float* noise_var,
                    void* stream);
// Detector LLRs to codeword order (llrs_to_codeword) for `num` codewords of g LLRs.
void nr_llrs_to_codeword_cuda(const float* detected, std::int64_t num, std::int64_t g, int layers,
                              int m, float* codeword, void* stream);
// out[p] = in[index[p]] for rows of `width` elements (the HARQ compaction of pending blocks).
void nr_gather_rows_cuda(const std::uint8_t* in, const int* index, int rows, std::int64_t width,
                         std::uint8_t* out, void* stream);
void nr_gather_rows_cuda(const float* in, const int* index, int rows, std::int64_t width,
                         float* out, void* stream);

}  // namespace mimorx::sim::detail

#pragma once
// Shared between the CUDA decoder kernels (decoder_cuda.cu: one codeword per thread;
// decoder_pair_cuda.cu: two per thread on the integer path; decoder_half_cuda.cu: two per thread
// in half precision): launch parameters and the paired kernels' entry points.
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "ldpc/decoder_cuda.hpp"

namespace mimorx::ldpc::detail {

struct KParams {
  const float* llr;
  const std::int8_t* llr8;  // pre-quantised channel LLRs instead of llr (integer path), or null
  int num, n_used, z, rows, nedges, k;
  int np;  // codewords per block (one-per-thread kernel) or codeword pairs (paired kernel)
  const DecEdge* edges;
  const int* row_start;
  void* c2v_global;  // per-block message workspace, or null when the messages are in shared memory
  OutMode mode;
  std::uint8_t* out;
  int* iterations;
  std::uint8_t* syndrome_ok;
  int max_iters;
  // Per-iteration NMS factors (DecodeTables::alpha_iter / alpha16_iter), null when constant.
  const float* alpha_iter;
  const int* alpha16_iter;
  bool early_termination;
  float llr_scale;
  int llr_limit;
  int* bad_flag;
};

// Paired kernel: dynamic shared memory for `pairs` codeword pairs per block (messages included
// when msg_shared), the global message workspace one pair needs, the kernel symbol for the
// occupancy calculator (lb = 512 or 1024 threads), and the launch (p.np = pairs per block).
std::size_t paired_smem_bytes(const DecodeTables& t, int pairs, bool msg_shared);
std::size_t paired_msg_bytes_per_pair(const DecodeTables& t);
const void* paired_kernel_symbol(int lb, bool msg_shared);
void launch_paired(const KParams& p, const IntArith& a, int lb, int grid, int smem, cudaStream_t s);

// The f16x2 kernel (decoder_half_cuda.cu), the same entry points with the place of its
// messages: p.np = pairs per block, the scaling (alpha, beta, offset; p.alpha_iter per
// iteration) from the tables. half_msg_bytes_per_pair: the global workspace one pair needs.
enum class HalfLayout {
  shared_messages,       // one half pair per edge, in shared memory
  global_messages,       // one half pair per edge, in the global workspace
  global_records,        // compressed records per row (decoder_half_records.cuh), global workspace
  global_records_ahead,  // the same, each layer's records loaded one layer ahead (for
                         // workspaces beyond L2: the load latency passes under a layer's work)
};
std::size_t half_smem_bytes(const DecodeTables& t, int pairs, bool msg_shared);
std::size_t half_msg_bytes_per_pair(const DecodeTables& t, HalfLayout layout);
const void* half_kernel_symbol(int lb, HalfLayout layout);
void launch_half(const KParams& p, const DecodeTables& t, HalfLayout layout, int lb, int grid,
                 int smem, cudaStream_t s);

}  // namespace mimorx::ldpc::detail

// CUDA LDPC encoder: one thread block per code block. The codeword is built in shared memory
// (at most 68 x 384 = 26112 bytes), the tables are staged there too, then the codeword is
// streamed out with coalesced stores. The per-bit arithmetic is the CPU's (encoder_math.hpp).
#include <cuda_runtime.h>

#include "core/cuda_check.hpp"
#include "ldpc/encoder_cuda.hpp"
#include "ldpc/encoder_math.hpp"

namespace mimorx::ldpc::detail {
namespace {

constexpr int kThreads = 256;
constexpr int kMaxEdges = 320;  // BG1 has 316 non-zero entries, BG2 197
constexpr int kMaxRows = 46;

struct KernelArgs {
  int z, kb, rows, cols, edges;
  int p0_col, p0_shift;
  int core_row[3], core_col[3], core_shift[3];
};

__global__ void __launch_bounds__(kThreads)
    encode_kernel(KernelArgs a, const int* __restrict__ tables,
                  const std::uint8_t* __restrict__ info, std::uint8_t* __restrict__ out) {
  extern __shared__ std::uint8_t cw[];
  __shared__ int s_col[kMaxEdges], s_shift[kMaxEdges], s_start[kMaxRows + 1], s_target[kMaxRows];
  const int z = a.z, kb = a.kb, k = kb * z, n = a.cols * z;
  const std::int64_t w = blockIdx.x;
  for (int e = threadIdx.x; e < a.edges; e += blockDim.x) {
    s_col[e] = tables[e];
    s_shift[e] = tables[a.edges + e];
  }
  for (int i = threadIdx.x; i <= a.rows; i += blockDim.x) s_start[i] = tables[2 * a.edges + i];
  for (int i = threadIdx.x; i < a.rows - 4; i += blockDim.x) {
    s_target[i] = tables[2 * a.edges + a.rows + 1 + i];
  }
  const std::uint8_t* in = info + w * k;
  for (int j = threadIdx.x; j < k; j += blockDim.x) cw[j] = in[j] & 1;
  __syncthreads();
  for (int r = threadIdx.x; r < z; r += blockDim.x) {
    int v = 0;
    for (int i = 0; i < 4; ++i) {
      v ^= row_parity(cw, s_col, s_shift, s_start[i], s_start[i + 1], kb, -1, r, z);
    }
    cw[a.p0_col * z + landing(r, a.p0_shift, z)] = std::uint8_t(v);
  }
  __syncthreads();
  for (int s = 0; s < 3; ++s) {
    const int i = a.core_row[s], c = a.core_col[s];
    for (int r = threadIdx.x; r < z; r += blockDim.x) {
      const int v = row_parity(cw, s_col, s_shift, s_start[i], s_start[i + 1], a.cols, c, r, z);
      cw[c * z + landing(r, a.core_shift[s], z)] = std::uint8_t(v);
    }
    __syncthreads();
  }
  // Extension rows only read information and core columns: all (row, r) pairs in parallel.
  const int ext = (a.rows - 4) * z;
  for (int idx = threadIdx.x; idx < ext; idx += blockDim.x) {
    const int i = 4 + idx / z, r = idx - (i - 4) * z, c = kb + i;
    const int v = row_parity(cw, s_col, s_shift, s_start[i], s_start[i + 1], a.cols, c, r, z);
    cw[c * z + landing(r, s_target[i - 4], z)] = std::uint8_t(v);
  }
  __syncthreads();
  std::uint8_t* o = out + w * n;
  for (int j = threadIdx.x; j < n; j += blockDim.x) o[j] = cw[j];
}

}  // namespace

void encode_cuda(const EncoderPlan::Tables& t, const int* tables_dev, const std::uint8_t* info,
                 int num, std::uint8_t* codewords, void* stream) {
  KernelArgs a{};
  a.z = t.z;
  a.kb = t.kb;
  a.rows = t.rows;
  a.cols = t.cols;
  a.edges = int(t.edge_col.size());
  a.p0_col = t.p0_col;
  a.p0_shift = t.p0_shift;
  for (int s = 0; s < 3; ++s) {
    a.core_row[s] = t.core_row[s];
    a.core_col[s] = t.core_col[s];
    a.core_shift[s] = t.core_shift[s];
  }
  const std::size_t smem = std::size_t(t.cols) * t.z;
  encode_kernel<<<num, kThreads, smem, ::mimorx::detail::as_stream(stream)>>>(a, tables_dev, info,
                                                                              codewords);
  MIMORX_CUDA_CHECK_LAUNCH();
}

}  // namespace mimorx::ldpc::detail

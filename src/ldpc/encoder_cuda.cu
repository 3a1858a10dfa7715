// CUDA LDPC encoder: one thread block per code block, bit-packed. Each column of the codeword is
// a few 32-bit words in shared memory (with a wrap-around copy, encoder_math.hpp), so one
// funnel shift gives 32 lifted rows of one edge: 316 x ceil(Z/32) word operations per BG1
// codeword instead of 316 x Z byte gathers (the byte-wise kernel is instruction-bound, 3.6x
// slower at Z = 384; docs/ldpc.md). Phases and their order are exactly
// encoder_packed.hpp's host emulation, which the CPU tests check against the byte encoder.
#include <cuda_runtime.h>

#include <cstdint>

#include "core/cuda_check.hpp"
#include "ldpc/encoder_cuda.hpp"
#include "ldpc/encoder_math.hpp"
#include "ldpc/encoder_packed.hpp"

namespace mimorx::ldpc::detail {
namespace {

constexpr int kThreads = 128;
constexpr int kMaxEdges = 320;  // BG1 has 316 non-zero entries, BG2 197
constexpr int kMaxRows = 46;

__global__ void __launch_bounds__(kThreads)
    encode_packed_kernel(PackedArgs a, const int* __restrict__ tables,
                         const std::uint8_t* __restrict__ info, std::uint8_t* __restrict__ out,
                         int aligned) {
  extern __shared__ std::uint32_t words[];
  __shared__ int s_col[kMaxEdges], s_shift[kMaxEdges], s_start[kMaxRows + 1], s_target[kMaxRows];
  const int z = a.z, kb = a.kb, w = packed_words(z), groups = (z + 31) / 32, wc = 32 * w - z;
  const int k = kb * z, n = a.cols * z, tid = threadIdx.x, nt = blockDim.x;
  const std::int64_t cw = blockIdx.x;
  for (int e = tid; e < a.edges; e += nt) {
    s_col[e] = tables[e];
    s_shift[e] = tables[a.edges + e];
  }
  for (int i = tid; i <= a.rows; i += nt) s_start[i] = tables[2 * a.edges + i];
  for (int i = tid; i < a.rows - 4; i += nt) s_target[i] = tables[2 * a.edges + a.rows + 1 + i];
  for (int i = tid; i < a.cols * w; i += nt) words[i] = 0;
  __syncthreads();
  // Pack: one warp per (column, 32-row group); coalesced byte loads, one ballot per word.
  const std::uint8_t* in = info + cw * k;
  const int lane = tid & 31, warp = tid >> 5, warps = nt >> 5;
  for (int item = warp; item < kb * groups; item += warps) {
    const int j = item / groups, g = item - j * groups, r = 32 * g + lane;
    const bool bit = r < z && (in[j * z + r] & 1);
    const std::uint32_t m = __ballot_sync(0xFFFFFFFFu, bit);
    if (lane == 0) words[j * w + g] = m;
  }
  __syncthreads();
  for (int item = tid; item < kb * wc; item += nt) {
    const int j = item / wc;
    wrap_fill(words + j * w, item - j * wc, z);
  }
  __syncthreads();
  for (int g = tid; g < groups; g += nt) {
    std::uint32_t v = 0;
    for (int i = 0; i < 4; ++i) {
      v ^= group_parity(words, w, s_col, s_shift, s_start[i], s_start[i + 1], kb, -1, g, z);
    }
    store_group(words + a.p0_col * w, v, g, a.p0_shift, z);
  }
  __syncthreads();
  for (int x = tid; x < wc; x += nt) wrap_fill(words + a.p0_col * w, x, z);
  __syncthreads();
  for (int s = 0; s < 3; ++s) {
    const int i = a.core_row[s], c = a.core_col[s];
    for (int g = tid; g < groups; g += nt) {
      const std::uint32_t v =
          group_parity(words, w, s_col, s_shift, s_start[i], s_start[i + 1], a.cols, c, g, z);
      store_group(words + c * w, v, g, a.core_shift[s], z);
    }
    __syncthreads();
    for (int x = tid; x < wc; x += nt) wrap_fill(words + c * w, x, z);
    __syncthreads();
  }
  // Extension rows read only information and core columns: all (row, group) items at once.
  for (int item = tid; item < (a.rows - 4) * groups; item += nt) {
    const int q = item / groups, i = 4 + q, g = item - q * groups, c = kb + i;
    const std::uint32_t v =
        group_parity(words, w, s_col, s_shift, s_start[i], s_start[i + 1], a.cols, c, g, z);
    store_group(words + c * w, v, g, s_target[q], z);
  }
  __syncthreads();
  // Unpack: 4 bytes per store (n = 68 Z or 52 Z is a multiple of 4).
  std::uint8_t* o = out + cw * n;
  if (aligned) {
    std::uint32_t* o4 = reinterpret_cast<std::uint32_t*>(o);
    for (int ch = tid; ch < n / 4; ch += nt) {
      const int p = 4 * ch;
      int col = div_by_z(p, a.magic), r = p - col * z;
      std::uint32_t v = 0;
      for (int b = 0; b < 4; ++b) {
        v |= std::uint32_t(packed_bit(words + col * w, r)) << (8 * b);
        if (++r == z) {
          r = 0;
          ++col;
        }
      }
      o4[ch] = v;
    }
  } else {
    for (int p = tid; p < n; p += nt) {
      const int col = div_by_z(p, a.magic);
      o[p] = packed_bit(words + col * w, p - col * z);
    }
  }
}

}  // namespace

void encode_cuda(const EncoderPlan::Tables& t, const int* tables_dev, const std::uint8_t* info,
                 int num, std::uint8_t* codewords, void* stream) {
  const PackedArgs a = packed_args(t);
  const std::size_t smem = std::size_t(t.cols) * packed_words(t.z) * sizeof(std::uint32_t);
  const int aligned = (reinterpret_cast<std::uintptr_t>(codewords) % 4) == 0;
  encode_packed_kernel<<<num, kThreads, smem, ::mimorx::detail::as_stream(stream)>>>(
      a, tables_dev, info, codewords, aligned);
  MIMORX_CUDA_CHECK_LAUNCH();
}

}  // namespace mimorx::ldpc::detail

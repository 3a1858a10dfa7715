// Kernels of the batched transport chain: a few bits or LLRs per thread for the data movement
// (segmentation, rate matching, rate recovery, the TB bits out), one warp per code block or
// transport block for the CRC registers, which are sequential by nature. The arithmetic is
// transport_batch_math.hpp's, shared with the CPU loops.
#include <algorithm>

#include "core/cuda_check.hpp"
#include "ldpc/transport_batch_cuda.hpp"

namespace mimorx::ldpc::detail {
namespace {

constexpr int kThreads = 256;

int grid_for(std::int64_t n) {
  return int(std::clamp<std::int64_t>((n + kThreads - 1) / kThreads, 1, std::int64_t(1) << 20));
}
// Items of `per_row` elements in `rows` rows: x over the elements, y over the rows (grid-stride
// in both), so that kernels index without 64-bit divisions.
dim3 grid_2d(std::int64_t per_row, std::int64_t rows) {
  return dim3(unsigned(std::clamp<std::int64_t>((per_row + kThreads - 1) / kThreads, 1, 1024)),
              unsigned(std::clamp<std::int64_t>(rows, 1, 65535)));
}
// One warp per item: the items of a grid of kThreads-thread blocks.
int grid_warps(std::int64_t items) { return grid_for(items * 32); }

// Columns per thread in the data-movement kernels (see ilp_cols).
constexpr int kIlp = 4;
// Rows x columns items where each thread takes kIlp columns: x over the columns, y over the rows.
dim3 grid_2d_ilp(std::int64_t per_row, std::int64_t rows) {
  return grid_2d((per_row + kIlp - 1) / kIlp, rows);
}

#define MIMORX_ROWS(row, rows) for (std::int64_t row = blockIdx.y; row < (rows); row += gridDim.y)
#define MIMORX_WARP_ITEMS(item, items)                                                 \
  for (std::int64_t item = (blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x) / 32; \
       item < (items); item += std::int64_t(gridDim.x) * blockDim.x / 32)

// Columns [0, cols) of one row, kIlp per thread, blockDim.x apart (each access of a warp stays
// coalesced): all kIlp values are computed before any is stored, so their loads are in flight
// together. The items here are a load or two and a one-byte store each, which leaves a thread
// per item latency-bound.
template <class T, class Value, class Store>
__device__ void ilp_cols(int cols, Value value, Store store) {
  const int step = int(gridDim.x * blockDim.x) * kIlp;
  for (int c0 = int(blockIdx.x * blockDim.x) * kIlp + int(threadIdx.x); c0 < cols; c0 += step) {
    T v[kIlp];
#pragma unroll
    for (int k = 0; k < kIlp; ++k) {
      const int c = c0 + k * int(blockDim.x);
      if (c < cols) v[k] = value(c);
    }
#pragma unroll
    for (int k = 0; k < kIlp; ++k) {
      const int c = c0 + k * int(blockDim.x);
      if (c < cols) store(c, v[k]);
    }
  }
}

// The CRC of an n-bit message, the 32 lanes of a warp a part each (crc_part), XOR-reduced.
template <class Bits>
__device__ std::uint32_t warp_crc(const Bits& bit, int n, std::uint32_t poly, int l) {
  const int lane = threadIdx.x & 31, chunk = (n + 31) / 32;
  const int lo = min(n, lane * chunk), hi = min(n, lo + chunk);
  std::uint32_t r = crc_part(bit, lo, hi, n, poly, l);
  for (int off = 16; off > 0; off >>= 1) r ^= __shfl_xor_sync(0xffffffffu, r, off);
  return r;
}

__global__ void tb_crc_kernel(ChainDims d, const std::uint8_t* tb, int num, std::uint32_t* parity) {
  MIMORX_WARP_ITEMS(b, num) {
    const std::uint32_t p = warp_crc(PlainBits{tb + b * d.a}, d.a, d.tb_poly, d.l_tb);
    if ((threadIdx.x & 31) == 0) parity[b] = p;
  }
}

__global__ void segment_kernel(ChainDims d, const std::uint8_t* tb, std::int64_t words,
                               const std::uint32_t* parity, std::uint8_t* enc_in) {
  MIMORX_ROWS(w, words) {
    const std::int64_t b = w / d.c;
    const int r = int(w - b * d.c);
    const std::uint8_t* t = tb + b * d.a;
    const std::uint32_t par = parity[b];
    std::uint8_t* out = enc_in + w * d.k;
    ilp_cols<std::uint8_t>(
        d.k, [&](int kk) { return segment_bit(t, par, d, r, kk); },
        [&](int kk, std::uint8_t v) { out[kk] = v; });
  }
}

__global__ void cb_crc_kernel(ChainDims d, std::int64_t words, std::uint8_t* enc_in) {
  MIMORX_WARP_ITEMS(w, words) {
    std::uint8_t* blk = enc_in + w * d.k;
    const std::uint32_t p = warp_crc(PlainBits{blk}, d.payload, kCrc24bPoly, 24);
    const int lane = threadIdx.x & 31;
    if (lane < 24) blk[d.payload + lane] = std::uint8_t((p >> (23 - lane)) & 1u);
  }
}

__global__ void rate_match_kernel(ChainDims d, const std::uint8_t* cw, int num, const int* tx_map,
                                  std::uint8_t* coded) {
  const std::int64_t per_tb = std::int64_t(d.c) * d.n;
  MIMORX_ROWS(b, num) {
    const std::uint8_t* in = cw + b * per_tb;
    std::uint8_t* out = coded + b * d.g;
    ilp_cols<std::uint8_t>(
        d.g, [&](int i) { return in[tx_map[i]]; }, [&](int i, std::uint8_t v) { out[i] = v; });
  }
}

__global__ void rate_recover_kernel(ChainDims d, const float* llrs, std::int64_t words,
                                    const int* rx_start, const int* rx_idx, const float* harq_in,
                                    float* out_f, std::int8_t* out_q, int stride, float scale,
                                    int limit) {
  MIMORX_ROWS(w, words) {
    const std::int64_t b = w / d.c;
    const int r = int(w - b * d.c);
    const float* block_llrs = llrs + b * d.g;
    const std::int64_t row = w * stride;
    ilp_cols<float>(
        stride,
        [&](int p) {
          return recovered_llr(block_llrs, rx_start, rx_idx, r * d.n + p, p, d,
                               harq_in ? harq_in[row + p] : 0.f);
        },
        [&](int p, float v) {
          if (out_f) {
            out_f[row + p] = v;
          } else {
            out_q[row + p] = std::int8_t(quantize_llr(v, scale, limit));
          }
        });
  }
}

__global__ void cb_check_kernel(ChainDims d, const std::uint8_t* dec, std::int64_t words,
                                std::uint8_t* cb_ok) {
  MIMORX_WARP_ITEMS(w, words) {
    const bool ok = d.c == 1 || warp_crc(PlainBits{dec + w * d.k}, d.k_prime, kCrc24bPoly, 24) == 0;
    if ((threadIdx.x & 31) == 0) cb_ok[w] = ok;
  }
}

__global__ void tb_check_kernel(ChainDims d, const std::uint8_t* dec, int num,
                                std::uint8_t* tb_ok) {
  MIMORX_WARP_ITEMS(b, num) {
    const PayloadBits bits{dec + b * d.c * d.k, d.payload, d.k};
    const bool ok = warp_crc(bits, d.c * d.payload, d.tb_poly, d.l_tb) == 0;
    if ((threadIdx.x & 31) == 0) tb_ok[b] = ok;
  }
}

__global__ void tb_out_kernel(ChainDims d, const std::uint8_t* dec, int num, std::uint8_t* tb) {
  MIMORX_ROWS(b, num) {
    const std::uint8_t* in = dec + b * d.c * d.k;
    std::uint8_t* out = tb + b * d.a;
    ilp_cols<std::uint8_t>(
        d.a,
        [&](int t) {
          const int r = t / d.payload;
          return in[r * d.k + (t - r * d.payload)];
        },
        [&](int t, std::uint8_t v) { out[t] = v; });
  }
}

__global__ void nonfinite_kernel(const float* x, std::int64_t n, unsigned long long* count) {
  unsigned long long local = 0;
  for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < n;
       i += std::int64_t(gridDim.x) * blockDim.x) {
    local += !isfinite(x[i]);
  }
  if (local) atomicAdd(count, local);
}

}  // namespace

void batch_segment_cuda(const ChainDims& d, const std::uint8_t* tb, int num, std::uint32_t* parity,
                        std::uint8_t* enc_in, void* stream) {
  if (num == 0) return;
  const cudaStream_t s = mimorx::detail::as_stream(stream);
  tb_crc_kernel<<<grid_warps(num), kThreads, 0, s>>>(d, tb, num, parity);
  MIMORX_CUDA_CHECK_LAUNCH();
  const std::int64_t words = std::int64_t(num) * d.c;
  segment_kernel<<<grid_2d_ilp(d.k, words), kThreads, 0, s>>>(d, tb, words, parity, enc_in);
  MIMORX_CUDA_CHECK_LAUNCH();
  if (d.c > 1) {
    cb_crc_kernel<<<grid_warps(words), kThreads, 0, s>>>(d, words, enc_in);
    MIMORX_CUDA_CHECK_LAUNCH();
  }
}

void batch_rate_match_cuda(const ChainDims& d, const std::uint8_t* cw, int num, const int* tx_map,
                           std::uint8_t* coded, void* stream) {
  if (num == 0) return;
  rate_match_kernel<<<grid_2d_ilp(d.g, num), kThreads, 0, mimorx::detail::as_stream(stream)>>>(
      d, cw, num, tx_map, coded);
  MIMORX_CUDA_CHECK_LAUNCH();
}

void batch_rate_recover_cuda(const ChainDims& d, const float* llrs, int num, const int* rx_start,
                             const int* rx_idx, const float* harq_in, float* out_f,
                             std::int8_t* out_q, int stride, float scale, int limit, void* stream) {
  const std::int64_t words = std::int64_t(num) * d.c;
  if (words == 0) return;
  rate_recover_kernel<<<grid_2d_ilp(stride, words), kThreads, 0,
                        mimorx::detail::as_stream(stream)>>>(
      d, llrs, words, rx_start, rx_idx, harq_in, out_f, out_q, stride, scale, limit);
  MIMORX_CUDA_CHECK_LAUNCH();
}

void batch_check_cuda(const ChainDims& d, const std::uint8_t* dec, int num, std::uint8_t* tb,
                      std::uint8_t* tb_ok, std::uint8_t* cb_ok, void* stream) {
  if (num == 0) return;
  const cudaStream_t s = mimorx::detail::as_stream(stream);
  if (cb_ok) {
    const std::int64_t words = std::int64_t(num) * d.c;
    cb_check_kernel<<<grid_warps(words), kThreads, 0, s>>>(d, dec, words, cb_ok);
    MIMORX_CUDA_CHECK_LAUNCH();
  }
  tb_check_kernel<<<grid_warps(num), kThreads, 0, s>>>(d, dec, num, tb_ok);
  MIMORX_CUDA_CHECK_LAUNCH();
  tb_out_kernel<<<grid_2d_ilp(d.a, num), kThreads, 0, s>>>(d, dec, num, tb);
  MIMORX_CUDA_CHECK_LAUNCH();
}

std::int64_t count_nonfinite_cuda(const float* x, std::int64_t n, int device, void* stream) {
  if (n == 0) return 0;
  MIMORX_CUDA_CHECK(cudaSetDevice(device));
  const cudaStream_t s = mimorx::detail::as_stream(stream);
  unsigned long long* count = nullptr;
  MIMORX_CUDA_CHECK(cudaMallocAsync(reinterpret_cast<void**>(&count), sizeof(*count), s));
  MIMORX_CUDA_CHECK(cudaMemsetAsync(count, 0, sizeof(*count), s));
  nonfinite_kernel<<<std::min(grid_for(n), 1024), kThreads, 0, s>>>(x, n, count);
  MIMORX_CUDA_CHECK_LAUNCH();
  unsigned long long host = 0;
  MIMORX_CUDA_CHECK(cudaMemcpyAsync(&host, count, sizeof(host), cudaMemcpyDeviceToHost, s));
  MIMORX_CUDA_CHECK(cudaFreeAsync(count, s));
  MIMORX_CUDA_CHECK(cudaStreamSynchronize(s));
  return std::int64_t(host);
}

}  // namespace mimorx::ldpc::detail

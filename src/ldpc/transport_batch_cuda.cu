// Kernels of the batched transport chain: one thread per bit or LLR for the data movement
// (segmentation, rate matching, rate recovery, the TB bits out), one thread per code block or
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

__global__ void tb_crc_kernel(ChainDims d, const std::uint8_t* tb, int num, std::uint32_t* parity) {
  const int b = blockIdx.x * blockDim.x + threadIdx.x;
  if (b < num) parity[b] = crc_of_bits(tb + std::int64_t(b) * d.a, d.a, d.tb_poly, d.l_tb);
}

__global__ void segment_kernel(ChainDims d, const std::uint8_t* tb, std::int64_t total,
                               const std::uint32_t* parity, std::uint8_t* enc_in) {
  const std::int64_t per_tb = std::int64_t(d.c) * d.k;
  for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < total;
       i += std::int64_t(gridDim.x) * blockDim.x) {
    const std::int64_t b = i / per_tb;
    const int rest = int(i - b * per_tb), r = rest / d.k, kk = rest - r * d.k;
    enc_in[i] = segment_bit(tb + b * d.a, parity[b], d, r, kk);
  }
}

__global__ void cb_crc_kernel(ChainDims d, std::int64_t blocks, std::uint8_t* enc_in) {
  const std::int64_t cb = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x;
  if (cb >= blocks) return;
  std::uint8_t* blk = enc_in + cb * d.k;
  const std::uint32_t p = crc_of_bits(blk, d.payload, kCrc24bPoly, 24);
  for (int i = 0; i < 24; ++i) blk[d.payload + i] = std::uint8_t((p >> (23 - i)) & 1u);
}

__global__ void rate_match_kernel(ChainDims d, const std::uint8_t* cw, std::int64_t total,
                                  const int* tx_map, std::uint8_t* coded) {
  const std::int64_t per_tb = std::int64_t(d.c) * d.n;
  for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < total;
       i += std::int64_t(gridDim.x) * blockDim.x) {
    const std::int64_t b = i / d.g;
    coded[i] = cw[b * per_tb + tx_map[i - b * d.g]];
  }
}

__global__ void rate_recover_kernel(ChainDims d, const float* llrs, std::int64_t total,
                                    const int* rx_start, const int* rx_idx, const float* harq_in,
                                    float* out_f, std::int8_t* out_q, int stride, float scale,
                                    int limit) {
  const std::int64_t per_tb = std::int64_t(d.c) * stride;
  for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < total;
       i += std::int64_t(gridDim.x) * blockDim.x) {
    const std::int64_t b = i / per_tb;
    const int rest = int(i - b * per_tb), r = rest / stride, p = rest - r * stride;
    const float v = recovered_llr(llrs + b * d.g, rx_start, rx_idx, r * d.n + p, p, d,
                                  harq_in ? harq_in[i] : 0.f);
    if (out_f) {
      out_f[i] = v;
    } else {
      out_q[i] = std::int8_t(quantize_llr(v, scale, limit));
    }
  }
}

__global__ void cb_check_kernel(ChainDims d, const std::uint8_t* dec, std::int64_t blocks,
                                std::uint8_t* cb_ok) {
  const std::int64_t cb = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x;
  if (cb >= blocks) return;
  cb_ok[cb] = d.c == 1 || crc_of_bits(dec + cb * d.k, d.k_prime, kCrc24bPoly, 24) == 0;
}

__global__ void tb_check_kernel(ChainDims d, const std::uint8_t* dec, int num, std::uint8_t* tb_ok) {
  const int b = blockIdx.x * blockDim.x + threadIdx.x;
  if (b < num) tb_ok[b] = crc_of_payloads(dec + std::int64_t(b) * d.c * d.k, d) == 0;
}

__global__ void tb_out_kernel(ChainDims d, const std::uint8_t* dec, std::int64_t total,
                              std::uint8_t* tb) {
  for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < total;
       i += std::int64_t(gridDim.x) * blockDim.x) {
    const std::int64_t b = i / d.a;
    const int t = int(i - b * d.a), r = t / d.payload;
    tb[i] = dec[(b * d.c + r) * d.k + (t - r * d.payload)];
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

void batch_segment_cuda(const ChainDims& d, const std::uint8_t* tb, int num,
                        std::uint32_t* parity, std::uint8_t* enc_in, void* stream) {
  if (num == 0) return;
  const cudaStream_t s = mimorx::detail::as_stream(stream);
  tb_crc_kernel<<<grid_for(num), kThreads, 0, s>>>(d, tb, num, parity);
  MIMORX_CUDA_CHECK_LAUNCH();
  const std::int64_t total = std::int64_t(num) * d.c * d.k;
  segment_kernel<<<grid_for(total), kThreads, 0, s>>>(d, tb, total, parity, enc_in);
  MIMORX_CUDA_CHECK_LAUNCH();
  if (d.c > 1) {
    const std::int64_t blocks = std::int64_t(num) * d.c;
    cb_crc_kernel<<<grid_for(blocks), kThreads, 0, s>>>(d, blocks, enc_in);
    MIMORX_CUDA_CHECK_LAUNCH();
  }
}

void batch_rate_match_cuda(const ChainDims& d, const std::uint8_t* cw, int num, const int* tx_map,
                           std::uint8_t* coded, void* stream) {
  const std::int64_t total = std::int64_t(num) * d.g;
  if (total == 0) return;
  rate_match_kernel<<<grid_for(total), kThreads, 0, mimorx::detail::as_stream(stream)>>>(d, cw, total, tx_map,
                                                                          coded);
  MIMORX_CUDA_CHECK_LAUNCH();
}

void batch_rate_recover_cuda(const ChainDims& d, const float* llrs, int num, const int* rx_start,
                             const int* rx_idx, const float* harq_in, float* out_f,
                             std::int8_t* out_q, int stride, float scale, int limit, void* stream) {
  const std::int64_t total = std::int64_t(num) * d.c * stride;
  if (total == 0) return;
  rate_recover_kernel<<<grid_for(total), kThreads, 0, mimorx::detail::as_stream(stream)>>>(
      d, llrs, total, rx_start, rx_idx, harq_in, out_f, out_q, stride, scale, limit);
  MIMORX_CUDA_CHECK_LAUNCH();
}

void batch_check_cuda(const ChainDims& d, const std::uint8_t* dec, int num, std::uint8_t* tb,
                      std::uint8_t* tb_ok, std::uint8_t* cb_ok, void* stream) {
  if (num == 0) return;
  const cudaStream_t s = mimorx::detail::as_stream(stream);
  if (cb_ok) {
    const std::int64_t blocks = std::int64_t(num) * d.c;
    cb_check_kernel<<<grid_for(blocks), kThreads, 0, s>>>(d, dec, blocks, cb_ok);
    MIMORX_CUDA_CHECK_LAUNCH();
  }
  tb_check_kernel<<<grid_for(num), kThreads, 0, s>>>(d, dec, num, tb_ok);
  MIMORX_CUDA_CHECK_LAUNCH();
  const std::int64_t total = std::int64_t(num) * d.a;
  tb_out_kernel<<<grid_for(total), kThreads, 0, s>>>(d, dec, total, tb);
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

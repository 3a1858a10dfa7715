// The simulator's generators and error counters on the GPU: one thread per frame or received
// vector (their Philox streams are addressed by the global index), one warp per transport block
// for the bit-error counts.
#include <algorithm>

#include "core/cuda_check.hpp"
#include "sim/frames.hpp"
#include "sim/frames_math.hpp"

namespace mimorx::sim::detail {

namespace {
constexpr int kThreads = 128;

int grid_for(std::int64_t n, int per_block = kThreads) {
  return int(std::clamp<std::int64_t>((n + per_block - 1) / per_block, 1, 65536));
}

#define MIMORX_GRID_STRIDE(i, n)                                                      \
  for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < (n); \
       i += std::int64_t(gridDim.x) * blockDim.x)

// One thread per (frame, receive antenna): the Box-Muller evaluations of a frame's rows run in
// parallel; every thread draws the frame's source bits (a few Philox blocks), row 0 stores them.
__global__ void frames_kernel(std::uint64_t seed, std::int64_t first, std::int64_t count, int nt,
                              int nr, Modulation mod, float n0, FrameBatch out) {
  const int m = bits_per_symbol(mod);
  std::uint8_t bits[8 * 8];
  MIMORX_GRID_STRIDE(t, count * nr) {
    const std::int64_t f = t / nr;
    const int i = int(t - f * nr);
    const std::uint64_t bit0 = std::uint64_t(first + f) * std::uint64_t(nt * m);
    for (int k = 0; k < nt * m; ++k) bits[k] = source_bit(seed, bit0 + std::uint64_t(k));
    if (i == 0) {
      for (int k = 0; k < nt * m; ++k) out.bits[f * nt * m + k] = bits[k];
    }
    make_received_row(seed, first + f, nt, nr, mod, n0, bits, i, out.h + f * nr * nt,
                      out.y + f * nr);
  }
}

__global__ void vector_errors_kernel(const std::uint8_t* sent, const std::uint8_t* got,
                                     std::int64_t count, int nt, int m, std::uint16_t* errors) {
  MIMORX_GRID_STRIDE(v, count) {
    errors[v] = vector_errors(sent + v * nt * m, got + v * nt * m, nt, m);
  }
}

// One thread per Philox block of four bits.
__global__ void transport_bits_kernel(std::uint64_t seed, std::uint64_t begin, std::uint64_t end,
                                      std::uint8_t* tb) {
  const std::int64_t groups = std::int64_t((end + 3) / 4 - begin / 4);
  MIMORX_GRID_STRIDE(g, groups) {
    const std::uint64_t block = begin / 4 + std::uint64_t(g);
    const rng::U32x4 r = rng::philox_block(seed, kStreamTransportBits, block);
    for (int j = 0; j < 4; ++j) {
      const std::uint64_t i = block * 4 + std::uint64_t(j);
      if (i >= begin && i < end) tb[i - begin] = std::uint8_t(r.v[j] >> 31);
    }
  }
}

// One thread per (vector, receive antenna), as frames_kernel; with nr even, one per (vector,
// pair of receive antennas), which share their Philox blocks.
__global__ void received_kernel(std::uint64_t seed, std::int64_t first, std::int64_t count, int nt,
                                int nr, Modulation mod, float n0, const std::uint8_t* bits, cf32* h,
                                cf32* y) {
  const int m = bits_per_symbol(mod);
  const int rows = nr % 2 == 0 ? 2 : 1, per_vector = nr / rows;
  MIMORX_GRID_STRIDE(t, count * per_vector) {
    const std::int64_t v = t / per_vector;
    const int i = int(t - v * per_vector) * rows;
    const std::uint8_t* vb = bits + v * nt * m;
    if (rows == 2) {
      make_received_row_pair(seed, first + v, nt, nr, mod, n0, vb, i, h + v * nr * nt, y + v * nr);
    } else {
      make_received_row(seed, first + v, nt, nr, mod, n0, vb, i, h + v * nr * nt, y + v * nr);
    }
  }
}

__global__ void block_errors_kernel(const std::uint8_t* sent, const std::uint8_t* got,
                                    std::int64_t count, int tbs, int* errors) {
  const int lane = threadIdx.x & 31;
  const std::int64_t warps = std::int64_t(gridDim.x) * (blockDim.x / 32);
  for (std::int64_t b = (blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x) / 32; b < count;
       b += warps) {
    int e = 0;
    for (int k = lane; k < tbs; k += 32) e += (sent[b * tbs + k] ^ got[b * tbs + k]) & 1;
    e = __reduce_add_sync(0xffffffffu, unsigned(e));
    if (lane == 0) errors[b] = e;
  }
}
}  // namespace

void make_frames_cuda(std::uint64_t seed, std::int64_t first, std::int64_t count, int nt, int nr,
                      Modulation mod, float n0, FrameBatch out, int device, void* stream) {
  MIMORX_CUDA_CHECK(cudaSetDevice(device));
  frames_kernel<<<grid_for(count * nr), kThreads, 0, mimorx::detail::as_stream(stream)>>>(
      seed, first, count, nt, nr, mod, n0, out);
  MIMORX_CUDA_CHECK_LAUNCH();
}

void vector_errors_cuda(const std::uint8_t* sent, const std::uint8_t* got, std::int64_t count,
                        int nt, int m, std::uint16_t* errors, void* stream) {
  vector_errors_kernel<<<grid_for(count), kThreads, 0, mimorx::detail::as_stream(stream)>>>(
      sent, got, count, nt, m, errors);
  MIMORX_CUDA_CHECK_LAUNCH();
}

void transport_bits_cuda(std::uint64_t seed, std::int64_t first, std::int64_t count, int tbs,
                         std::uint8_t* tb, void* stream) {
  const std::uint64_t begin = std::uint64_t(first) * std::uint64_t(tbs);
  const std::uint64_t end = begin + std::uint64_t(count) * std::uint64_t(tbs);
  transport_bits_kernel<<<grid_for(std::int64_t((end - begin) / 4 + 2)), kThreads, 0,
                          mimorx::detail::as_stream(stream)>>>(seed, begin, end, tb);
  MIMORX_CUDA_CHECK_LAUNCH();
}

void make_received_cuda(std::uint64_t seed, std::int64_t first, std::int64_t count, int nt, int nr,
                        Modulation mod, float n0, const std::uint8_t* bits, cf32* h, cf32* y,
                        void* stream) {
  received_kernel<<<grid_for(count * (nr % 2 == 0 ? nr / 2 : nr)), kThreads, 0,
                    mimorx::detail::as_stream(stream)>>>(seed, first, count, nt, nr, mod, n0, bits,
                                                         h, y);
  MIMORX_CUDA_CHECK_LAUNCH();
}

void block_errors_cuda(const std::uint8_t* sent, const std::uint8_t* got, std::int64_t count,
                       int tbs, int* errors, void* stream) {
  block_errors_kernel<<<grid_for(count, kThreads / 32), kThreads, 0,
                        mimorx::detail::as_stream(stream)>>>(sent, got, count, tbs, errors);
  MIMORX_CUDA_CHECK_LAUNCH();
}

}  // namespace mimorx::sim::detail

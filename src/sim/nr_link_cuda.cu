// The NR slot link's grid kernels: one thread per (slot, RE) or (slot, RE, antenna) element,
// each computing what the host loop computes for that element (nr_link_math.hpp).
#include <algorithm>

#include "core/cuda_check.hpp"
#include "core/cuda_grid.cuh"
#include "sim/nr_link_cuda.hpp"
#include "sim/nr_link_math.hpp"

namespace mimorx::sim::detail {

namespace {
constexpr int kThreads = 256;

int grid_for(std::int64_t n) {
  return int(std::clamp<std::int64_t>((n + kThreads - 1) / kThreads, 1, 65536 * 4));
}

__global__ void zero_kernel(cf32* x, std::int64_t n) {
  MIMORX_GRID_STRIDE(i, n) { x[i] = cf32{0.f, 0.f}; }
}

// One thread per (slot, data RE, layer).
__global__ void place_layers_kernel(NrGridTables t, int num, const cf32* d, cf32* x) {
  const int v = t.layers;
  MIMORX_GRID_STRIDE(e, std::int64_t(num) * t.data_res * v) {
    const std::int64_t p = e / (std::int64_t(t.data_res) * v);
    const std::int64_t rest = e - p * t.data_res * v;
    const std::int64_t i = rest / v;
    const int j = int(rest - i * v);
    x[(p * t.res + t.data_pos[i]) * v + j] = d[p * t.data_res * v + nr_codeword_symbol(i, v, j)];
  }
}

// One thread per (slot, DM-RS entry): entries of one slot are distinct elements of x.
__global__ void place_dmrs_kernel(NrGridTables t, int num, cf32* x) {
  MIMORX_GRID_STRIDE(e, std::int64_t(num) * t.dmrs_count) {
    const std::int64_t p = e / t.dmrs_count;
    const int q = int(e - p * t.dmrs_count);
    cf32& at = x[p * t.res * t.layers + t.dmrs_at[q]];
    at = rounding::cadd(at, t.dmrs_value[q]);
  }
}

// One thread per (slot, RE, entry) of h.
__global__ void flat_channel_kernel(NrGridTables t, std::uint64_t seed, const std::int64_t* blocks,
                                    int tx, int num, cf32* h) {
  const int per = t.n_rx * t.layers;
  MIMORX_GRID_STRIDE(e, std::int64_t(num) * t.res * per) {
    const std::int64_t p = e / (t.res * per);
    const int k = int(e % per);
    h[e] = nr_flat_entry(seed, nr_noise_slot(blocks[p], tx), per, k);
  }
}

// One thread per (slot, RE, receive antenna).
__global__ void receive_kernel(NrGridTables t, std::uint64_t seed, const std::int64_t* blocks,
                               int tx, int num, const cf32* h, const cf32* x, float s, cf32* y) {
  const int n_rx = t.n_rx, v = t.layers;
  MIMORX_GRID_STRIDE(e, std::int64_t(num) * t.res * n_rx) {
    const std::int64_t g = e / n_rx;  // slot p, RE re
    const int r = int(e - g * n_rx);
    const std::int64_t p = g / t.res, re = g - p * t.res;
    y[e] = nr_received(seed, nr_noise_slot(blocks[p], tx), t.res, n_rx, v, re, r, h + g * n_rx * v,
                       x + g * v, s);
  }
}

// One thread per (slot, data RE, element of H): the first n_rx threads of an RE copy y as well.
__global__ void gather_kernel(NrGridTables t, int num, const cf32* y, const cf32* h, float n0,
                              const float* n0_slot, cf32* y_data, cf32* h_data, float* noise_var) {
  const int n_rx = t.n_rx, per = n_rx * t.layers;
  MIMORX_GRID_STRIDE(e, std::int64_t(num) * t.data_res * per) {
    const std::int64_t g = e / per;  // slot p, data RE i
    const int k = int(e - g * per);
    const std::int64_t p = g / t.data_res, i = g - p * t.data_res;
    const std::int64_t re = p * t.res + t.data_pos[i];
    h_data[e] = h[re * per + k];
    if (k < n_rx) y_data[g * n_rx + k] = y[re * n_rx + k];
    if (k == 0) noise_var[g] = n0_slot ? n0_slot[p] : n0;
  }
}

// One thread per LLR.
__global__ void llrs_kernel(const float* detected, std::int64_t num, std::int64_t g, int v, int m,
                            float* codeword) {
  MIMORX_GRID_STRIDE(e, num * g) {
    const std::int64_t b = e / g, rest = e - b * g;
    const std::int64_t i = rest / (std::int64_t(v) * m);
    const int jk = int(rest - i * v * m);
    const int j = jk / m, k = jk - j * m;
    codeword[b * g + nr_codeword_llr(i, v, j, m, k)] =
        detected[b * g + nr_detector_llr(i, v, j, m, k)];
  }
}

template <class T>
__global__ void gather_rows_kernel(const T* in, const int* index, int rows, std::int64_t width,
                                   T* out) {
  MIMORX_GRID_STRIDE(e, std::int64_t(rows) * width) {
    const std::int64_t p = e / width;
    out[e] = in[std::int64_t(index[p]) * width + (e - p * width)];
  }
}
}  // namespace

void nr_place_cuda(const NrGridTables& t, int num, const cf32* d, cf32* x, void* stream) {
  const auto st = mimorx::detail::as_stream(stream);
  const std::int64_t n = std::int64_t(num) * t.res * t.layers;
  zero_kernel<<<grid_for(n), kThreads, 0, st>>>(x, n);
  MIMORX_CUDA_CHECK_LAUNCH();
  place_layers_kernel<<<grid_for(std::int64_t(num) * t.data_res * t.layers), kThreads, 0, st>>>(
      t, num, d, x);
  MIMORX_CUDA_CHECK_LAUNCH();
  if (t.dmrs_count > 0) {
    place_dmrs_kernel<<<grid_for(std::int64_t(num) * t.dmrs_count), kThreads, 0, st>>>(t, num, x);
    MIMORX_CUDA_CHECK_LAUNCH();
  }
}

void nr_flat_channel_cuda(const NrGridTables& t, std::uint64_t seed, const std::int64_t* blocks,
                          int tx, int num, cf32* h, void* stream) {
  flat_channel_kernel<<<grid_for(std::int64_t(num) * t.res * t.n_rx * t.layers), kThreads, 0,
                        mimorx::detail::as_stream(stream)>>>(t, seed, blocks, tx, num, h);
  MIMORX_CUDA_CHECK_LAUNCH();
}

void nr_receive_cuda(const NrGridTables& t, std::uint64_t seed, const std::int64_t* blocks, int tx,
                     int num, const cf32* h, const cf32* x, float n0, cf32* y, void* stream) {
  receive_kernel<<<grid_for(std::int64_t(num) * t.res * t.n_rx), kThreads, 0,
                   mimorx::detail::as_stream(stream)>>>(t, seed, blocks, tx, num, h, x,
                                                        nr_noise_scale(n0), y);
  MIMORX_CUDA_CHECK_LAUNCH();
}

void nr_gather_cuda(const NrGridTables& t, int num, const cf32* y, const cf32* h, float n0,
                    const float* n0_slot, cf32* y_data, cf32* h_data, float* noise_var,
                    void* stream) {
  gather_kernel<<<grid_for(std::int64_t(num) * t.data_res * t.n_rx * t.layers), kThreads, 0,
                  mimorx::detail::as_stream(stream)>>>(t, num, y, h, n0, n0_slot, y_data, h_data,
                                                       noise_var);
  MIMORX_CUDA_CHECK_LAUNCH();
}

void nr_llrs_to_codeword_cuda(const float* detected, std::int64_t num, std::int64_t g, int layers,
                              int m, float* codeword, void* stream) {
  llrs_kernel<<<grid_for(num * g), kThreads, 0, mimorx::detail::as_stream(stream)>>>(
      detected, num, g, layers, m, codeword);
  MIMORX_CUDA_CHECK_LAUNCH();
}

void nr_gather_rows_cuda(const std::uint8_t* in, const int* index, int rows, std::int64_t width,
                         std::uint8_t* out, void* stream) {
  gather_rows_kernel<<<grid_for(std::int64_t(rows) * width), kThreads, 0,
                       mimorx::detail::as_stream(stream)>>>(in, index, rows, width, out);
  MIMORX_CUDA_CHECK_LAUNCH();
}

void nr_gather_rows_cuda(const float* in, const int* index, int rows, std::int64_t width,
                         float* out, void* stream) {
  gather_rows_kernel<<<grid_for(std::int64_t(rows) * width), kThreads, 0,
                       mimorx::detail::as_stream(stream)>>>(in, index, rows, width, out);
  MIMORX_CUDA_CHECK_LAUNCH();
}

}  // namespace mimorx::sim::detail

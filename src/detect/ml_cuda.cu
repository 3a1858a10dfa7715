#include <cstdint>
#include <type_traits>

#include "core/cuda_check.hpp"
#include "core/cuda_grid.cuh"
#include "detect/ml_cuda.hpp"
#include "detect/ml_math.hpp"

namespace mimorx::detect::detail {
namespace {
using ml::Acc;
using ml::ModParams;

constexpr int kThreads = 256;

// One thread per (vector, chunk); chunks of one vector are consecutive threads, T = chunks per
// vector is a power of two, so a warp holds whole vectors (T <= 32) or 32 chunks of one vector;
// `seg` = min(T, 32) lanes reduce by xor shuffles, then one atomic per segment.
template <int NR, bool SOFT, int LV>
__global__ void __launch_bounds__(kThreads)
    ml_kernel(ModParams p, int nt, const cf32* h, std::int64_t h_stride, const cf32* y,
              std::int64_t y_stride, int vpc, std::int64_t vectors, int tpv_log2, int per_thread,
              int seg, unsigned long long* hard_ws, float* soft_ws) {
  // 2^tpv_log2 threads per vector, each running `per_thread` consecutive chunks (hard only: a
  // thread's chunks share one running minimum, which amortises the loads and the reduction).
  const std::int64_t gid = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x;
  const std::int64_t v = gid >> tpv_log2;
  const std::int64_t c = (gid - (v << tpv_log2)) * per_thread;
  const bool valid = v < vectors;
  Acc acc;
  acc.reset();
  if (valid) {
    const cf32* hv = h + (v / vpc) * h_stride;
    const ml::VecConsts<NR> k = ml::vec_consts<NR>(p, nt, hv);
    for (int j = 0; j < per_thread; ++j) {
      ml::run_chunk<NR, SOFT, LV>(p, nt, hv, y + v * y_stride, k, c + j, acc);
    }
  }
  const bool leader = valid && (threadIdx.x & 31) % seg == 0;
  if constexpr (!SOFT) {
    unsigned long long k = acc.key();
    for (int off = seg / 2; off > 0; off >>= 1) {
      const unsigned long long o = __shfl_xor_sync(0xffffffffu, k, off);
      k = o < k ? o : k;
    }
    if (leader) atomicMin(hard_ws + v, k);
  } else {
    const int slots = 2 * nt * p.m;
    for (int s = 0; s < slots; ++s) {
      float val = valid ? ml::soft_slot(p, nt, c, acc, s) : ml::kBig;
      for (int off = seg / 2; off > 0; off >>= 1)
        val = fminf(val, __shfl_xor_sync(0xffffffffu, val, off));
      // Metrics are >= 0, so their int bit patterns order like the floats.
      if (leader) atomicMin(reinterpret_cast<int*>(soft_ws + v * slots + s), __float_as_int(val));
    }
  }
}

__global__ void finalize_hard(ModParams p, int nt, std::int64_t vectors,
                              const unsigned long long* ws, std::uint8_t* bits) {
  for (std::int64_t v = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; v < vectors;
       v += std::int64_t(gridDim.x) * blockDim.x) {
    ml::decode_code(p, nt, unsigned(ws[v] & 0xffffffffull), bits + v * nt * p.m);
  }
}

__global__ void finalize_soft(ModParams p, int nt, std::int64_t vectors, const float* ws,
                              const float* n0, std::int64_t n0_size, std::uint8_t* bits,
                              float* llrs) {
  const std::int64_t per = std::int64_t(nt) * p.m;
  for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < vectors * per;
       i += std::int64_t(gridDim.x) * blockDim.x) {
    const std::int64_t v = i / per;
    const float l = (ws[2 * i + 1] - ws[2 * i]) / n0[n0_size == 1 ? 0 : v];
    llrs[i] = l;
    if (bits) bits[i] = l < 0.f ? 1 : 0;
  }
}

using mimorx::detail::grid_for;

template <bool SOFT, int LV>
void launch_ml(int nr, dim3 grid, cudaStream_t st, ModParams p, int nt, const cf32* h,
               std::int64_t hs, const cf32* y, std::int64_t ys, int vpc, std::int64_t vectors,
               int tpv_log2, int per_thread, int seg, unsigned long long* hw, float* sw) {
  switch (nr) {
#define MIMORX_ML_CASE(N)                                                                          \
  case N:                                                                                          \
    ml_kernel<N, SOFT, LV><<<grid, kThreads, 0, st>>>(p, nt, h, hs, y, ys, vpc, vectors, tpv_log2, \
                                                      per_thread, seg, hw, sw);                    \
    break;
    MIMORX_ML_CASE(1)
    MIMORX_ML_CASE(2)
    MIMORX_ML_CASE(3)
    MIMORX_ML_CASE(4)
    MIMORX_ML_CASE(5)
    MIMORX_ML_CASE(6)
    MIMORX_ML_CASE(7)
    MIMORX_ML_CASE(8)
#undef MIMORX_ML_CASE
    default:
      break;
  }
  MIMORX_CUDA_CHECK_LAUNCH();
}
}  // namespace

std::size_t ml_workspace_bytes(std::int64_t vectors, int nt, Modulation mod, bool soft) {
  return soft ? std::size_t(vectors) * 2 * nt * bits_per_symbol(mod) * sizeof(float)
              : std::size_t(vectors) * sizeof(unsigned long long);
}

void ml_cuda(Modulation mod, int nt, int nr, bool soft, const cf32* h, std::int64_t h_stride,
             const cf32* y, std::int64_t y_stride, int vectors_per_channel, std::int64_t vectors,
             const float* n0, std::int64_t n0_size, std::uint8_t* bits, float* llrs,
             void* workspace, int device, void* stream, int max_hypotheses_per_thread) {
  if (vectors == 0) return;
  MIMORX_CUDA_CHECK(cudaSetDevice(device));
  cudaStream_t st = mimorx::detail::as_stream(stream);
  const ModParams p = ml::mod_params(mod);
  std::int64_t chunks = 1;
  for (int t = 1; t < nt - 1; ++t) chunks *= p.size;
  // Hard: a thread runs consecutive chunks, up to max_hypotheses_per_thread (256) column-0
  // hypotheses, while >= 2^20 threads remain (about four waves of 2048 threads on 132 SMs) and
  // >= 16 threads share a vector (their H loads are broadcasts): more chunks per thread help
  // large problems, but fewer than 16 threads a vector leave too few threads (4x4 QPSK with all
  // 16 chunks in one thread runs at less than half the speed; docs/ml.md).
  // Soft keeps one chunk per thread (its middle-column slots are per chunk).
  std::int64_t per_thread = 1;
  while (!soft && chunks / (per_thread * 2) >= 16 &&
         per_thread * 2 * p.size <= max_hypotheses_per_thread &&
         vectors * chunks / (per_thread * 2) >= (std::int64_t(1) << 20)) {
    per_thread *= 2;
  }
  const std::int64_t tpv = chunks / per_thread;
  int tpv_log2 = 0;
  while ((std::int64_t(1) << tpv_log2) < tpv) ++tpv_log2;
  const int seg = int(tpv < 32 ? tpv : 32);
  const std::int64_t threads = vectors * tpv;
  const std::int64_t blocks = (threads + kThreads - 1) / kThreads;
  const dim3 grid(static_cast<unsigned>(blocks));
  // 0xFF.. is the largest hard key; 0x7F7F7F7F (3.39e38) is above every soft metric.
  MIMORX_CUDA_CHECK(cudaMemsetAsync(workspace, soft ? 0x7F : 0xFF,
                                    ml_workspace_bytes(vectors, nt, mod, soft), st));
  if (soft) {
    float* ws = static_cast<float*>(workspace);
    launch_ml<true, 0>(nr, grid, st, p, nt, h, h_stride, y, y_stride, vectors_per_channel, vectors,
                       tpv_log2, int(per_thread), seg, nullptr, ws);
    finalize_soft<<<grid_for(vectors * nt * p.m), kThreads, 0, st>>>(p, nt, vectors, ws, n0,
                                                                     n0_size, bits, llrs);
  } else {
    auto* ws = static_cast<unsigned long long*>(workspace);
    // Hard QAM with 2, 4 or 8 levels per axis: column 0's loops fully unrolled (ml_math.hpp).
    const int lv = p.bpsk ? 0 : p.levels;
    auto hard = [&](auto tag) {
      launch_ml<false, decltype(tag)::value>(nr, grid, st, p, nt, h, h_stride, y, y_stride,
                                             vectors_per_channel, vectors, tpv_log2,
                                             int(per_thread), seg, ws, nullptr);
    };
    if (lv == 2) {
      hard(std::integral_constant<int, 2>{});
    } else if (lv == 4) {
      hard(std::integral_constant<int, 4>{});
    } else if (lv == 8) {
      hard(std::integral_constant<int, 8>{});
    } else {
      hard(std::integral_constant<int, 0>{});
    }
    finalize_hard<<<grid_for(vectors), kThreads, 0, st>>>(p, nt, vectors, ws, bits);
  }
  MIMORX_CUDA_CHECK_LAUNCH();
}
}  // namespace mimorx::detect::detail

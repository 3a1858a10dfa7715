// CUDA layered min-sum after Li Rongchun et al. (J. NUDT 2024): a thread block holds Np
// codewords; codeword w gets Z threads, thread r updates row r of every layer (the Z rows of a
// block row share no variable, so they run in parallel; the row's edges run sequentially in the
// thread). APP LLRs live in shared memory (int8 on the integer path, float otherwise), the
// compressed check-to-variable records (decoder_quant.hpp) in shared memory when they fit and in
// a per-block global workspace (L2-resident) otherwise, hard decisions leave packed 8 per byte.
// The row arithmetic is the CPU reference's (layer_row in decoder_quant.hpp).
#include <algorithm>
#include <initializer_list>
#include <string>
#include <type_traits>

#include "core/cuda_check.hpp"
#include "ldpc/decoder_cuda.hpp"
#include "ldpc/decoder_cuda_internal.hpp"
#include "ldpc/decoder_kernel_common.cuh"
#include "mimorx/core/buffer.hpp"
#include "mimorx/core/error.hpp"

namespace mimorx::ldpc::detail {
namespace {

__host__ __device__ inline std::size_t header_bytes(int nedges, int rows, int np) {
  return align16(sizeof(DecEdge) * nedges + sizeof(int) * (rows + 1) + sizeof(int) * np);
}

template <class A>
std::size_t smem_bytes(int nedges, int rows, int n_used, int z, int np, bool c2v_shared) {
  std::size_t b = header_bytes(nedges, rows, np) + align16(sizeof(typename A::T) * n_used * np);
  if (c2v_shared) b += sizeof(typename A::Rec) * std::size_t(rows) * z * np;
  return b;
}

template <class A>
__device__ __forceinline__ typename A::T channel_value(const A&, float x, const KParams&);
template <>
__device__ __forceinline__ std::int8_t channel_value(const IntArith&, float x, const KParams& p) {
  return std::int8_t(quantize_llr(x, p.llr_scale, p.llr_limit));
}
template <>
__device__ __forceinline__ float channel_value(const FloatArith&, float x, const KParams&) {
  return x;
}

// LB bounds the block size and so the register budget: 1024 threads leave 64 registers per
// thread, 512 leave 128. With register arrays for 19-edge rows the 1024 variant spilled ~120
// bytes (106 registers needed); those rows now update in place and ptxas reports 58-64
// registers, 0-20 bytes of spills (sm_90, nvcc 13). DecoderConfig::max_block_threads picks.
template <class A, int LB>
__global__ void __launch_bounds__(LB) layered_kernel(KParams p, A a) {
  using T = typename A::T;
  using Rec = typename A::Rec;
  extern __shared__ __align__(16) unsigned char smem[];
  DecEdge* s_edges = reinterpret_cast<DecEdge*>(smem);
  int* s_rs = reinterpret_cast<int*>(s_edges + p.nedges);
  int* s_flag = s_rs + (p.rows + 1);
  T* s_app = reinterpret_cast<T*>(smem + header_bytes(p.nedges, p.rows, p.np));
  Rec* s_rec = reinterpret_cast<Rec*>(reinterpret_cast<unsigned char*>(s_app) +
                                      align16(sizeof(T) * std::size_t(p.n_used) * p.np));
  const int z = p.z;
  const int r = threadIdx.x;
  const int w = threadIdx.y;
  const int tid = w * z + r;
  const int nthreads = z * p.np;
  for (int i = tid; i < p.nedges; i += nthreads) s_edges[i] = p.edges[i];
  for (int i = tid; i <= p.rows; i += nthreads) s_rs[i] = p.row_start[i];
  T* app = s_app + std::size_t(w) * p.n_used;
  Rec* rec = p.c2v_global ? static_cast<Rec*>(p.c2v_global) +
                                (std::size_t(blockIdx.x) * p.np + w) * std::size_t(p.rows) * z
                          : s_rec + std::size_t(w) * p.rows * z;
  int bad = 0;
  for (int g = blockIdx.x; g * p.np < p.num; g += gridDim.x) {
    const int cw = g * p.np + w;
    const bool valid = cw < p.num;
    const std::size_t base = std::size_t(valid ? cw : 0) * p.n_used;
    if (std::is_same_v<A, IntArith> && p.llr8) {  // pre-quantised input: the integer path only
      for (int i = r; i < p.n_used; i += z)
        app[i] = T(channel_q8(p.llr8 + base, valid, i, p.llr_limit));
    } else {
      for (int i = r; i < p.n_used; i += z)
        app[i] = channel_value(a, channel_llr(p.llr + base, valid, i, bad), p);
    }
    for (int l = 0; l < p.rows; ++l) rec[l * z + r] = A::zero_rec();
    bool done = !valid;
    int iters = p.max_iters;
    __syncthreads();
    for (int it = 1; it <= p.max_iters; ++it) {
      set_iteration_alpha(a, p.alpha_iter, p.alpha16_iter, it);
      for (int l = 0; l < p.rows; ++l) {
        if (!done) {
          const int e0 = s_rs[l];
          Rec rr = rec[l * z + r];
          layer_row(app, s_edges + e0, s_rs[l + 1] - e0, r, z, rr, a);
          rec[l * z + r] = rr;
        }
        __syncthreads();  // the next layer reads variables this layer's other rows wrote
      }
      if (p.early_termination) {
        if (r == 0) s_flag[w] = 0;
        __syncthreads();
        int par = 0;
        if (!done) {
          for (int l = 0; l < p.rows && !par; ++l) {
            const int e0 = s_rs[l];
            par |= row_parity(app, s_edges + e0, s_rs[l + 1] - e0, r, z);
          }
        }
        if (par) s_flag[w] = 1;
        __syncthreads();
        if (!done && s_flag[w] == 0) {
          done = true;
          iters = it;
        }
        if (__syncthreads_and(done ? 1 : 0)) break;
      }
    }
    if (p.syndrome_ok) {
      __syncthreads();
      if (r == 0) s_flag[w] = 0;
      __syncthreads();
      int par = 0;
      for (int l = 0; l < p.rows && !par; ++l) {
        const int e0 = s_rs[l];
        par |= row_parity(app, s_edges + e0, s_rs[l + 1] - e0, r, z);
      }
      if (par) s_flag[w] = 1;
      __syncthreads();
      if (valid && r == 0) p.syndrome_ok[cw] = s_flag[w] == 0 ? 1 : 0;
    }
    if (valid) {
      if (r == 0 && p.iterations) p.iterations[cw] = iters;
      write_decisions(app, 1, cw, r, p);
    }
    __syncthreads();  // the next group overwrites app
  }
  if (bad && p.bad_flag) atomicOr(p.bad_flag, 1);
}

}  // namespace

struct CudaDecoder::Impl {
  DecodeTables t;
  Buffer<DecEdge> edges;
  Buffer<int> row_start;
  Buffer<unsigned char> c2v;
  Buffer<int> bad;
  Buffer<float> alpha_iter;  // empty when alpha is constant
  Buffer<int> alpha16_iter;
  // np: codewords per block (one-per-thread kernel) or pairs per block (paired kernel).
  int np = 1, bps = 1, grid_max = 1, sms = 1, lb = 1024;
  bool paired = false;
  bool c2v_shared = true;
  bool c2v_records = false;    // f16x2 kernel: compressed records in the global workspace
  bool records_ahead = false;  // ... loaded a layer ahead: their workspace exceeds the L2 budget
  std::size_t smem = 0;

  // Chooses the block shape. `kernel_for(shared)` is the kernel's symbol (for C2V data in shared
  // or global memory), `bytes(units, shared)` its dynamic
  // shared memory for `units` codewords (or pairs) per block, `global_bytes` the global workspace
  // one unit needs when its C2V data is not in shared memory.
  // records_bytes (the f16x2 kernel only, else 0): the workspace one unit needs with compressed
  // records, taken instead of global_bytes when the full messages of the resident blocks do not
  // fit in two thirds of L2; records_kernels: the kernels that run them, with the shared memory
  // and registers of kernel_for(false), so that its occupancy stands for theirs.
  template <class KernelFor, class SmemBytes>
  void configure(KernelFor kernel_for, SmemBytes bytes, std::size_t global_bytes,
                 int override_units, int words_per_unit, std::size_t records_bytes = 0,
                 std::initializer_list<const void*> records_kernels = {}) {
    MIMORX_CUDA_CHECK(cudaSetDevice(t.device));
    int optin = 0;
    MIMORX_CUDA_CHECK(
        cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, t.device));
    MIMORX_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, t.device));
    for (bool shared : {true, false}) {
      MIMORX_CUDA_CHECK(cudaFuncSetAttribute(kernel_for(shared),
                                             cudaFuncAttributeMaxDynamicSharedMemorySize, optin));
    }
    for (const void* k : records_kernels) {
      MIMORX_CUDA_CHECK(
          cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, optin));
    }
    const int units_max = std::max(1, lb / t.z);
    require(t.z <= lb, "z", std::to_string(t.z) + " exceeds the block size " + std::to_string(lb));
    if (override_units) {
      require(override_units * t.z <= lb, "codewords_per_block",
              std::to_string(t.np_override) + " codewords need " +
                  std::to_string(override_units * t.z) + " threads; a block holds at most " +
                  std::to_string(lb) +
                  " (codewords_per_block <= " + std::to_string(units_max * words_per_unit) + ")");
    }
    // The unit count maximises the threads resident per SM, units x Z x blocks/SM, where
    // blocks/SM is the CUDA occupancy calculator's min over threads (2048/SM), registers
    // (64K/SM), shared memory (228 KB/SM, optin per block) and 32 blocks/SM. For one codeword per
    // thread the C2V records stay in shared memory unless a global (L2) workspace at least doubles
    // the resident threads: that kernel is latency-bound at one 384-thread block per SM (BG1 Z=384
    // R=1/3 with records in shared memory: 2.0 Gbit/s).
    int best[2] = {0, 0}, best_units[2] = {0, 0}, best_nb[2] = {0, 0};
    std::size_t best_smem[2] = {0, 0};
    for (int pass = 0; pass < 2; ++pass) {
      const bool shared = pass == 0;
      if (t.c2v_shared == (shared ? 0 : 1)) continue;
      if (shared && records_bytes > 0 && t.c2v_records == 1) continue;  // records are global
      for (int cand = 1; cand <= units_max; ++cand) {
        if (override_units && cand != override_units) continue;
        const std::size_t b = bytes(cand, shared);
        if (b > std::size_t(optin)) continue;
        int nb = 0;
        MIMORX_CUDA_CHECK(
            cudaOccupancyMaxActiveBlocksPerMultiprocessor(&nb, kernel_for(shared), t.z * cand, b));
        // Ties: fewer units for one codeword per thread. Paired kernels with messages in
        // shared memory: two or more blocks per SM first (a barrier of one block leaves the
        // SM to the other), then more units. With a global workspace fewer units, more blocks
        // (docs/ldpc_half.md).
        const int resident = nb * cand * t.z;
        bool take = resident > best[pass];
        if (words_per_unit == 2 && shared && resident > 0 && resident == best[pass]) {
          const bool two = nb >= 2, best_two = best_nb[pass] >= 2;
          take = two || !best_two;
        }
        if (take) {
          best[pass] = resident;
          best_units[pass] = cand;
          best_nb[pass] = nb;
          best_smem[pass] = b;
        }
      }
    }
    if (best[0] == 0 && best[1] == 0) {
      throw Unsupported("z: " + std::to_string(t.z) + " with " + std::to_string(t.rows) +
                        " rows needs more shared memory than this GPU offers per block");
    }
    int l2 = 0;
    MIMORX_CUDA_CHECK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, t.device));
    // The workspace of the resident blocks, `unit_bytes` per unit, within two thirds of L2.
    auto in_l2_budget = [&](std::size_t unit_bytes) {
      return std::size_t(best_nb[1]) * sms * best_units[1] * unit_bytes <= std::size_t(l2) / 3 * 2;
    };
    const bool full_in_l2 = best[1] > 0 && in_l2_budget(global_bytes);
    // The integer paired kernel keeps its messages in shared memory whenever they fit: its
    // global variant waits on L2 for every message, which costs more than a second resident
    // block gains. The f16x2 kernel's messages take twice the bytes and often leave one block
    // per SM in shared memory: it takes the global workspace when that at least doubles the
    // resident threads and the messages stay in L2, or when it triples them (small Z, where
    // shared memory holds few pairs; docs/ldpc_half.md).
    int pick = 1;
    if (best[0] > 0) {
      if (words_per_unit == 1) {
        pick = best[1] < 2 * best[0] ? 0 : 1;
      } else if (records_bytes > 0) {
        pick = best[1] >= 3 * best[0] || (best[1] >= 2 * best[0] && full_in_l2) ? 1 : 0;
      } else {
        pick = 0;
      }
    }
    c2v_shared = pick == 0;
    c2v_records = !c2v_shared && records_bytes > 0 &&
                  (t.c2v_records == -1 ? !full_in_l2 : t.c2v_records == 1);
    // Records beyond the L2 budget are loaded a layer ahead, so that their latency passes under
    // a layer's work; within it the early loads cost more than they hide (docs/ldpc_half.md).
    records_ahead = c2v_records && !in_l2_budget(records_bytes);
    np = best_units[pick];
    bps = best_nb[pick];
    smem = best_smem[pick];
    grid_max = bps * sms;
    if (!c2v_shared) {
      c2v = Buffer<unsigned char>::device(
          std::size_t(grid_max) * np * (c2v_records ? records_bytes : global_bytes), t.device);
    }
  }

  void configure_single() {
    const bool q = t.quantized;
    const void* kernel =
        q ? (lb == 1024 ? reinterpret_cast<const void*>(layered_kernel<IntArith, 1024>)
                        : reinterpret_cast<const void*>(layered_kernel<IntArith, 512>))
          : (lb == 1024 ? reinterpret_cast<const void*>(layered_kernel<FloatArith, 1024>)
                        : reinterpret_cast<const void*>(layered_kernel<FloatArith, 512>));
    const int nedges = int(t.edges.size());
    auto bytes = [&](int units, bool shared) {
      return q ? smem_bytes<IntArith>(nedges, t.rows, t.n_used, t.z, units, shared)
               : smem_bytes<FloatArith>(nedges, t.rows, t.n_used, t.z, units, shared);
    };
    const std::size_t rec = q ? sizeof(IntArith::Rec) : sizeof(FloatArith::Rec);
    configure([&](bool) { return kernel; }, bytes, std::size_t(t.rows) * t.z * rec, t.np_override,
              1);
  }

  void configure_paired() {
    if (t.half) {
      auto bytes = [&](int pairs, bool shared) { return half_smem_bytes(t, pairs, shared); };
      // The record kernels have the shared memory and registers (ptxas: 80 or 64) of the
      // global-message kernel.
      configure(
          [&](bool shared) {
            return half_kernel_symbol(
                lb, shared ? HalfLayout::shared_messages : HalfLayout::global_messages);
          },
          bytes, half_msg_bytes_per_pair(t, HalfLayout::global_messages), t.np_override / 2, 2,
          half_msg_bytes_per_pair(t, HalfLayout::global_records),
          {half_kernel_symbol(lb, HalfLayout::global_records),
           half_kernel_symbol(lb, HalfLayout::global_records_ahead)});
      return;
    }
    auto bytes = [&](int pairs, bool shared) { return paired_smem_bytes(t, pairs, shared); };
    configure([&](bool shared) { return paired_kernel_symbol(lb, shared); }, bytes,
              paired_msg_bytes_per_pair(t), t.np_override / 2, 2);
  }

  template <class A>
  void launch(const A& a, const KParams& p0, cudaStream_t s, int num) {
    KParams p = p0;
    p.np = np;
    p.c2v_global = c2v_shared ? nullptr : c2v.data();
    const int per_block = paired ? 2 * np : np;
    const int groups = (num + per_block - 1) / per_block;
    const int grid = std::min(groups, grid_max);
    if constexpr (std::is_same_v<A, FloatArith>) {
      if (t.half) {
        const HalfLayout layout = c2v_shared      ? HalfLayout::shared_messages
                                  : records_ahead ? HalfLayout::global_records_ahead
                                  : c2v_records   ? HalfLayout::global_records
                                                  : HalfLayout::global_messages;
        launch_half(p, t, layout, lb, grid, int(smem), s);
        return;
      }
    }
    if constexpr (std::is_same_v<A, IntArith>) {
      if (paired) {
        launch_paired(p, a, lb, grid, int(smem), s);
        return;
      }
    }
    if (lb == 1024) {
      layered_kernel<A, 1024><<<grid, dim3(t.z, np), smem, s>>>(p, a);
    } else {
      layered_kernel<A, 512><<<grid, dim3(t.z, np), smem, s>>>(p, a);
    }
    MIMORX_CUDA_CHECK_LAUNCH();
  }
};

CudaDecoder::CudaDecoder(const DecodeTables& t) : impl_(std::make_unique<Impl>()) {
  impl_->t = t;
  MIMORX_CUDA_CHECK(cudaSetDevice(t.device));
  impl_->edges = Buffer<DecEdge>::device(t.edges.size(), t.device);
  impl_->edges.copy_from_host(t.edges.data(), t.edges.size());
  impl_->row_start = Buffer<int>::device(t.row_start.size(), t.device);
  impl_->row_start.copy_from_host(t.row_start.data(), t.row_start.size());
  impl_->bad = Buffer<int>::device(1, t.device);
  if (!t.alpha_iter.empty()) {
    impl_->alpha_iter = Buffer<float>::device(t.alpha_iter.size(), t.device);
    impl_->alpha_iter.copy_from_host(t.alpha_iter.data(), t.alpha_iter.size());
    impl_->alpha16_iter = Buffer<int>::device(t.alpha16_iter.size(), t.device);
    impl_->alpha16_iter.copy_from_host(t.alpha16_iter.data(), t.alpha16_iter.size());
  }
  impl_->paired = t.codewords_per_thread == 2 || t.half;
  int max_degree = 0;
  for (std::size_t l = 0; l + 1 < t.row_start.size(); ++l) {
    max_degree = std::max(max_degree, t.row_start[l + 1] - t.row_start[l]);
  }
  // Automatic block limit: 1024 threads (64 registers), except for the paired kernel on codes
  // with rows longer than 10 (BG1 rows 0-3, degree 19): the 512-thread variant's 128 registers
  // hold those rows in registers instead of updating them in place, which is worth more than
  // the lost occupancy (10-15 % on BG1 codes). The f16x2 kernel takes the 512-thread variant
  // (80 registers) on every code: as fast or faster than the 1024-thread one on BG1 and BG2
  // from R = 1/5 to 0.92 (BG2 Z=384 R=2/3: 25.9 against 23.8 Gbit/s; docs/ldpc_half.md).
  impl_->lb = t.max_block_threads == 512                     ? 512
              : t.max_block_threads == 1024                  ? 1024
              : t.half || (impl_->paired && max_degree > 10) ? 512
                                                             : 1024;
  if (impl_->paired) {
    impl_->configure_paired();
  } else {
    impl_->configure_single();
  }
}

CudaDecoder::~CudaDecoder() = default;
int CudaDecoder::codewords_per_block() const { return impl_->paired ? 2 * impl_->np : impl_->np; }
int CudaDecoder::codewords_per_thread() const { return impl_->paired ? 2 : 1; }
int CudaDecoder::blocks_per_sm() const { return impl_->bps; }
bool CudaDecoder::c2v_in_shared() const { return impl_->c2v_shared; }
bool CudaDecoder::c2v_records() const {
  return impl_->t.half ? impl_->c2v_records : !impl_->paired;
}

bool CudaDecoder::run(const float* llrs, const std::int8_t* llrs8, int num, OutMode mode,
                      std::uint8_t* out, int* iterations, std::uint8_t* syndrome_ok, void* stream,
                      bool check_input) {
  const DecodeTables& t = impl_->t;
  MIMORX_CUDA_CHECK(cudaSetDevice(t.device));
  cudaStream_t s = mimorx::detail::as_stream(stream);
  if (check_input) MIMORX_CUDA_CHECK(cudaMemsetAsync(impl_->bad.data(), 0, sizeof(int), s));
  KParams p{};
  p.llr = llrs;
  p.llr8 = llrs8;
  p.num = num;
  p.n_used = t.n_used;
  p.z = t.z;
  p.rows = t.rows;
  p.nedges = int(t.edges.size());
  p.k = t.k;
  p.edges = impl_->edges.data();
  p.row_start = impl_->row_start.data();
  p.mode = mode;
  p.out = out;
  p.iterations = iterations;
  p.syndrome_ok = syndrome_ok;
  p.max_iters = t.max_iters;
  p.alpha_iter = t.alpha_iter.empty() ? nullptr : impl_->alpha_iter.data();
  p.alpha16_iter = t.alpha16_iter.empty() ? nullptr : impl_->alpha16_iter.data();
  p.early_termination = t.early_termination;
  p.llr_scale = t.llr_scale;
  p.llr_limit = t.llr_limit;
  p.bad_flag = check_input ? impl_->bad.data() : nullptr;
  if (t.quantized) {
    impl_->launch(int_arith(t), p, s, num);
  } else {
    impl_->launch(float_arith(t), p, s, num);
  }
  if (!check_input) return true;
  int flag = 0;
  MIMORX_CUDA_CHECK(
      cudaMemcpyAsync(&flag, impl_->bad.data(), sizeof(int), cudaMemcpyDeviceToHost, s));
  MIMORX_CUDA_CHECK(cudaStreamSynchronize(s));
  return flag == 0;
}

}  // namespace mimorx::ldpc::detail

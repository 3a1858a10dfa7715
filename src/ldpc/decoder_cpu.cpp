// The decoder plan: validation, the CPU reference decoders (flooding sum-product, layered
// normalized / offset min-sum in float and in the integer arithmetic of decoder_quant.hpp), and
// dispatch to the CUDA kernels (decoder_cuda.cu).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "ldpc/decoder_batch_cpu.hpp"
#include "ldpc/decoder_cuda.hpp"
#include "ldpc/decoder_half_cpu.hpp"
#include "ldpc/decoder_quant.hpp"
#include "mimorx/config.hpp"
#include "mimorx/core/error.hpp"
#include "mimorx/ldpc/decoder.hpp"

namespace mimorx::ldpc {
namespace {

using detail::DecEdge;
using detail::DecodeTables;
using detail::OutMode;

struct Scratch {
  std::vector<float> fapp;
  std::vector<std::int8_t> iapp;
  std::vector<detail::FloatRec> frec;
  std::vector<detail::IntRec> irec;
  std::vector<float> ch, tot, msg;  // BP
};

template <class T>
bool syndrome_ok(const DecodeTables& t, const T* app) {
  for (int l = 0; l < t.rows; ++l) {
    const DecEdge* e = t.edges.data() + t.row_start[l];
    const int deg = t.row_start[l + 1] - t.row_start[l];
    for (int r = 0; r < t.z; ++r) {
      if (detail::row_parity(app, e, deg, r, t.z)) return false;
    }
  }
  return true;
}

// Layered min-sum on one codeword, in place on `app` (already loaded with the channel values).
template <class A>
int layered(const DecodeTables& t, A a, typename A::T* app, std::vector<typename A::Rec>& rec) {
  rec.assign(std::size_t(t.rows) * t.z, A::zero_rec());
  const float* alpha_iter = t.alpha_iter.empty() ? nullptr : t.alpha_iter.data();
  const int* alpha16_iter = t.alpha16_iter.empty() ? nullptr : t.alpha16_iter.data();
  for (int it = 1; it <= t.max_iters; ++it) {
    detail::set_iteration_alpha(a, alpha_iter, alpha16_iter, it);
    for (int l = 0; l < t.rows; ++l) {
      const DecEdge* e = t.edges.data() + t.row_start[l];
      const int deg = t.row_start[l + 1] - t.row_start[l];
      for (int r = 0; r < t.z; ++r) {
        detail::layer_row(app, e, deg, r, t.z, rec[std::size_t(l) * t.z + r], a);
      }
    }
    if (t.early_termination && syndrome_ok(t, app)) return it;
  }
  return t.max_iters;
}

// Flooding sum-product with the tanh rule: every check row computes all its messages from the
// previous iteration's totals, then every variable sums them (Gallager / MacKay-Neal schedule).
int flooding_bp(const DecodeTables& t, const float* llr, Scratch& s, std::vector<float>& out_tot) {
  const int n = t.n_used;
  const int z = t.z;
  s.ch.assign(llr, llr + n);
  s.tot.assign(llr, llr + n);
  s.msg.assign(t.edges.size() * std::size_t(z), 0.f);
  std::vector<float> next(n);
  // A message is at most 2 atanh(1 - 2^-20) ~ 29: the product is clamped to keep atanh finite.
  const float clamp = 1.f - 1.f / 1048576.f;
  int iters = t.max_iters;
  for (int it = 1; it <= t.max_iters; ++it) {
    next = s.ch;
    for (int l = 0; l < t.rows; ++l) {
      const int e0 = t.row_start[l];
      const int deg = t.row_start[l + 1] - e0;
      for (int r = 0; r < z; ++r) {
        float th[32], pre[33], suf[33];
        int v[32];
        for (int j = 0; j < deg; ++j) {
          const DecEdge& e = t.edges[e0 + j];
          v[j] = e.colz + detail::wrap_index(r, e.shift, z);
          const float q = s.tot[v[j]] - s.msg[std::size_t(e0 + j) * z + r];
          th[j] = std::tanh(0.5f * std::clamp(q, -60.f, 60.f));
        }
        pre[0] = 1.f;
        for (int j = 0; j < deg; ++j) pre[j + 1] = pre[j] * th[j];
        suf[deg] = 1.f;
        for (int j = deg - 1; j >= 0; --j) suf[j] = suf[j + 1] * th[j];
        for (int j = 0; j < deg; ++j) {
          const float p = std::clamp(pre[j] * suf[j + 1], -clamp, clamp);
          const float m = 2.f * std::atanh(p);
          s.msg[std::size_t(e0 + j) * z + r] = m;
          next[v[j]] += m;
        }
      }
    }
    s.tot.swap(next);
    if (t.early_termination && syndrome_ok(t, s.tot.data())) {
      iters = it;
      break;
    }
  }
  out_tot = s.tot;
  return iters;
}

void write_outputs(const DecodeTables& t, OutMode mode, std::int64_t w, const auto* app,
                   std::uint8_t* out) {
  using T = std::remove_cvref_t<decltype(app[0])>;
  if (mode == OutMode::info_unpacked) {
    std::uint8_t* o = out + w * t.k;
    for (int i = 0; i < t.k; ++i) o[i] = app[i] < T(0) ? 1 : 0;
  } else if (mode == OutMode::codeword) {
    std::uint8_t* o = out + w * t.n_used;
    for (int i = 0; i < t.n_used; ++i) o[i] = app[i] < T(0) ? 1 : 0;
  } else {
    const int bytes = (t.k + 7) / 8;
    std::uint8_t* o = out + w * bytes;
    for (int b = 0; b < bytes; ++b) {
      unsigned v = 0;
      for (int j = 0; j < 8; ++j) {
        const int i = 8 * b + j;
        if (i < t.k && app[i] < T(0)) v |= 0x80u >> j;
      }
      o[b] = std::uint8_t(v);
    }
  }
}

// The float path's arithmetic when the config leaves it automatic: the one place to switch the
// default by measured figures (e.g. half for nms/oms on CUDA where gpubench_decoder_ldpc shows
// the f16x2 kernel ahead). Single precision everywhere for now: the f16x2 kernel is not
// bit-exact with the single-precision decoders, and the CPU half model is a slow reference, so
// the CPU should stay single in any case. Tests that compare CPU and CUDA float decoding set
// the arithmetic explicitly.
DecoderArithmetic automatic_arithmetic(const DecoderConfig& c, const Backend& b) {
  (void)c;
  (void)b;
  return DecoderArithmetic::single;
}

}  // namespace

struct DecoderPlan::Impl {
  DecoderConfig cfg;
  Backend backend;
  DecodeTables t;
  std::int64_t edge_count = 0;
#if MIMORX_HAS_CUDA
  std::unique_ptr<detail::CudaDecoder> cuda;
#endif
  Impl(const DecoderConfig& c, Backend b) : cfg(c), backend(b) {}

  // In: float (any algorithm) or std::int8_t (pre-quantised, integer path only).
  template <class In>
  void run(View<const In> llrs, int num, OutMode mode, View<std::uint8_t> out, View<int> iterations,
           View<std::uint8_t> synd, const Stream& stream);
  template <class In>
  void run_cpu(const In* llrs, int num, OutMode mode, std::uint8_t* out, int* iterations,
               std::uint8_t* synd);
  template <bool Q, class In>
  void run_cpu_batched(const In* llrs, int num, OutMode mode, std::uint8_t* out, int* iterations,
                       std::uint8_t* synd);
};

DecoderPlan::DecoderPlan(const DecoderConfig& c, Backend b) : impl_(std::make_unique<Impl>(c, b)) {
  require(c.bg == BaseGraph::bg1 || c.bg == BaseGraph::bg2, "bg",
          "value " + std::to_string(int(c.bg)) + "; allowed 1 (BG1) or 2 (BG2)");
  const LiftedGraph g(c.bg, c.z);  // throws InvalidArgument naming z
  require(c.algo == DecoderAlgo::bp || c.algo == DecoderAlgo::nms || c.algo == DecoderAlgo::oms,
          "algo", "value " + std::to_string(int(c.algo)) + "; allowed bp, nms, oms");
  require(c.max_iters >= 1 && c.max_iters <= kMaxDecoderIters, "max_iters",
          std::to_string(c.max_iters) + "; allowed 1.." + std::to_string(kMaxDecoderIters));
  require(std::isfinite(c.alpha) && c.alpha > 0.f && c.alpha <= 1.f, "alpha",
          value_text(c.alpha) + "; the NMS scaling must be in (0, 1]");
  require(
      c.alpha_last == 0.f ||
          (std::isfinite(c.alpha_last) && c.alpha_last > 0.f && c.alpha_last <= 1.f),
      "alpha_last",
      value_text(c.alpha_last) + "; allowed 0 (constant alpha) or a final NMS scaling in (0, 1]");
  require(std::isfinite(c.beta) && c.beta >= 0.f && c.beta < 100.f, "beta",
          value_text(c.beta) + "; the OMS offset must be finite and in [0, 100)");
  require(c.rows == 0 || (c.rows >= 4 && c.rows <= g.base_rows()), "rows",
          std::to_string(c.rows) + "; allowed 0 (all) or 4.." + std::to_string(g.base_rows()) +
              " (the 4 core rows are always needed)");
  require(c.layer_order == LayerOrder::extension_first || c.layer_order == LayerOrder::natural,
          "layer_order",
          std::to_string(int(c.layer_order)) + "; allowed extension_first or natural");
  require(c.llr_bits >= 2 && c.llr_bits <= 8, "llr_bits",
          std::to_string(c.llr_bits) + "; allowed 2..8");
  require(std::isfinite(c.llr_scale) && c.llr_scale > 0.f && c.llr_scale < 1e6f, "llr_scale",
          std::to_string(c.llr_scale) + "; must be finite and > 0");
  require(c.max_block_threads == 0 || c.max_block_threads == 512 || c.max_block_threads == 1024,
          "max_block_threads",
          std::to_string(c.max_block_threads) + "; allowed 0 (automatic), 512 or 1024");
  require(c.c2v_shared >= -1 && c.c2v_shared <= 1, "c2v_shared",
          std::to_string(c.c2v_shared) + "; allowed -1 (automatic), 0 (global) or 1 (shared)");
  require(c.c2v_records >= -1 && c.c2v_records <= 1, "c2v_records",
          std::to_string(c.c2v_records) +
              "; allowed -1 (automatic), 0 (full messages) or 1 (compressed records)");
  require(c.c2v_records != 1 || c.c2v_shared != 1, "c2v_records",
          "1 (compressed records) lives in the global workspace; c2v_shared = 1 asks for shared "
          "memory");
  require(c.codewords_per_block >= 0 && c.codewords_per_block <= 512, "codewords_per_block",
          std::to_string(c.codewords_per_block) + "; allowed 0 (automatic) or 1..512");
  require(c.codewords_per_thread >= 0 && c.codewords_per_thread <= 2, "codewords_per_thread",
          std::to_string(c.codewords_per_thread) + "; allowed 0 (automatic), 1 or 2");
  require(c.codewords_per_thread != 2 || c.quantized || c.arithmetic == DecoderArithmetic::half,
          "codewords_per_thread",
          "2 (a paired kernel) needs the integer path or arithmetic = half: set one, or use 0 "
          "or 1");
  require(c.codewords_per_thread != 2 || c.codewords_per_block % 2 == 0, "codewords_per_thread",
          "2 needs an even codewords_per_block (got " + std::to_string(c.codewords_per_block) +
              "); use 0 (automatic) or an even number");
  require(c.arithmetic == DecoderArithmetic::automatic ||
              c.arithmetic == DecoderArithmetic::single || c.arithmetic == DecoderArithmetic::half,
          "arithmetic", std::to_string(int(c.arithmetic)) + "; allowed automatic, single, half");
  if (c.arithmetic == DecoderArithmetic::half) {
    require(!c.quantized, "arithmetic",
            "half is a float-LLR path; quantized = true selects the integer path instead");
    require(
        c.codewords_per_thread != 1, "codewords_per_thread",
        "1 with arithmetic = half; the half path carries two codewords per thread (use 0 or 2)");
    require(c.codewords_per_block % 2 == 0, "codewords_per_block",
            std::to_string(c.codewords_per_block) +
                " with arithmetic = half; give 0 (automatic) or an even number");
    if (c.algo == DecoderAlgo::bp) {
      throw Unsupported("arithmetic: half runs nms or oms only; bp is single precision");
    }
  }
  if (c.algo == DecoderAlgo::bp && c.quantized) {
    throw Unsupported("algo: bp has no quantised version; use nms or oms with quantized = true");
  }
  if (c.algo == DecoderAlgo::bp && b.is_cuda()) {
    throw Unsupported(
        "algo: bp (flooding sum-product) runs on the CPU only; use nms or oms on cuda");
  }
  DecodeTables& t = impl_->t;
  t.z = c.z;
  t.rows = c.rows == 0 ? g.base_rows() : c.rows;
  t.n_used = (g.info_cols() + t.rows) * c.z;
  t.k = g.k();
  // The tables list the layers in processing order (LayerOrder); every decoder walks them
  // front to back, so the order needs no other code.
  t.row_start.assign(1, 0);
  for (int p = 0; p < t.rows; ++p) {
    const int ext = t.rows - 4;
    const int l = c.layer_order == LayerOrder::natural ? p : (p < ext ? t.rows - 1 - p : p - ext);
    for (int e = g.row_start()[l]; e < g.row_start()[l + 1]; ++e) {
      const Edge& ed = g.edges()[e];
      t.edges.push_back(DecEdge{ed.col * c.z, ed.shift});
    }
    t.row_start.push_back(int(t.edges.size()));
  }
  t.quantized = c.quantized;
  t.offset = c.algo == DecoderAlgo::oms;
  t.alpha = c.alpha;
  t.beta = c.beta;
  t.alpha16 = std::max(1, int(std::lround(c.alpha * 16.f)));
  if (c.algo == DecoderAlgo::nms && c.alpha_last != 0.f) {
    for (int it = 1; it <= c.max_iters; ++it) {
      const double frac = c.max_iters > 1 ? double(it - 1) / double(c.max_iters - 1) : 0.0;
      const float a = float(double(c.alpha) + (double(c.alpha_last) - double(c.alpha)) * frac);
      t.alpha_iter.push_back(a);
      t.alpha16_iter.push_back(std::max(1, int(std::lround(a * 16.f))));
    }
  }
  t.llr_scale = c.llr_scale;
  t.llr_limit = (1 << (c.llr_bits - 1)) - 1;
  t.beta_q = int(std::lround(c.beta * c.llr_scale));
  t.max_iters = c.max_iters;
  t.early_termination = c.early_termination;
  t.np_override = c.codewords_per_block;
  t.c2v_shared = c.c2v_shared;
  t.c2v_records = c.c2v_records;
  t.max_block_threads = c.max_block_threads;
  t.codewords_per_thread = c.codewords_per_thread != 0
                               ? c.codewords_per_thread
                               : (c.quantized && c.codewords_per_block % 2 == 0 ? 2 : 1);
  // An automatic choice never overrides a layout the config fixed (one codeword per thread).
  const bool pairs_allowed = c.codewords_per_thread != 1 && c.codewords_per_block % 2 == 0;
  const DecoderArithmetic arith = c.arithmetic != DecoderArithmetic::automatic ? c.arithmetic
                                  : pairs_allowed ? automatic_arithmetic(c, b)
                                                  : DecoderArithmetic::single;
  t.half = arith == DecoderArithmetic::half && !c.quantized && c.algo != DecoderAlgo::bp;
  if (t.half) t.codewords_per_thread = 2;
  require(c.c2v_records == -1 || t.half, "c2v_records",
          std::to_string(c.c2v_records) +
              ": only the f16x2 kernel (arithmetic = half) has a choice of message layout; use "
              "-1");
  t.device = b.is_cuda() ? b.device() : 0;
  impl_->edge_count = std::int64_t(t.edges.size()) * c.z;
  if (b.is_cuda()) {
#if MIMORX_HAS_CUDA
    impl_->cuda = std::make_unique<detail::CudaDecoder>(t);
#else
    throw Unsupported("backend: this build of mimorx has no CUDA backend");
#endif
  }
}

DecoderPlan::~DecoderPlan() = default;
DecoderPlan::DecoderPlan(DecoderPlan&&) noexcept = default;
DecoderPlan& DecoderPlan::operator=(DecoderPlan&&) noexcept = default;

const DecoderConfig& DecoderPlan::config() const { return impl_->cfg; }
const Backend& DecoderPlan::backend() const { return impl_->backend; }
int DecoderPlan::n() const { return impl_->t.n_used; }
int DecoderPlan::k() const { return impl_->t.k; }
int DecoderPlan::rows() const { return impl_->t.rows; }
std::int64_t DecoderPlan::edges() const { return impl_->edge_count; }
int DecoderPlan::codewords_per_block() const {
#if MIMORX_HAS_CUDA
  if (impl_->cuda) return impl_->cuda->codewords_per_block();
#endif
  return 0;
}
bool DecoderPlan::c2v_in_shared() const {
#if MIMORX_HAS_CUDA
  if (impl_->cuda) return impl_->cuda->c2v_in_shared();
#endif
  return false;
}
bool DecoderPlan::c2v_records() const {
#if MIMORX_HAS_CUDA
  if (impl_->cuda) return impl_->cuda->c2v_records();
#endif
  return false;
}
int DecoderPlan::codewords_per_thread() const {
#if MIMORX_HAS_CUDA
  if (impl_->cuda) return impl_->cuda->codewords_per_thread();
#endif
  return 0;
}
DecoderArithmetic DecoderPlan::arithmetic() const {
  return impl_->t.half ? DecoderArithmetic::half : DecoderArithmetic::single;
}
int DecoderPlan::blocks_per_sm() const {
#if MIMORX_HAS_CUDA
  if (impl_->cuda) return impl_->cuda->blocks_per_sm();
#endif
  return 0;
}

void DecoderPlan::decode(View<const float> llrs, int num, View<std::uint8_t> info_bits,
                         View<int> iterations, const Stream& stream) {
  impl_->run(llrs, num, OutMode::info_unpacked, info_bits, iterations, {}, stream);
}

void DecoderPlan::decode_packed(View<const float> llrs, int num, View<std::uint8_t> packed,
                                View<int> iterations, const Stream& stream) {
  impl_->run(llrs, num, OutMode::info_packed, packed, iterations, {}, stream);
}

void DecoderPlan::decode_codeword(View<const float> llrs, int num, View<std::uint8_t> bits,
                                  View<int> iterations, View<std::uint8_t> synd,
                                  const Stream& stream) {
  impl_->run(llrs, num, OutMode::codeword, bits, iterations, synd, stream);
}

void DecoderPlan::decode(View<const std::int8_t> llrs, int num, View<std::uint8_t> info_bits,
                         View<int> iterations, const Stream& stream) {
  impl_->run(llrs, num, OutMode::info_unpacked, info_bits, iterations, {}, stream);
}

void DecoderPlan::decode_packed(View<const std::int8_t> llrs, int num, View<std::uint8_t> packed,
                                View<int> iterations, const Stream& stream) {
  impl_->run(llrs, num, OutMode::info_packed, packed, iterations, {}, stream);
}

void DecoderPlan::decode_codeword(View<const std::int8_t> llrs, int num, View<std::uint8_t> bits,
                                  View<int> iterations, View<std::uint8_t> synd,
                                  const Stream& stream) {
  impl_->run(llrs, num, OutMode::codeword, bits, iterations, synd, stream);
}

namespace {
// The integer path's channel value: float LLRs are quantised, pre-quantised ones saturated.
std::int8_t channel_int(float x, const DecodeTables& t) {
  return std::int8_t(detail::quantize_llr(x, t.llr_scale, t.llr_limit));
}
std::int8_t channel_int(std::int8_t x, const DecodeTables& t) {
  return std::int8_t(detail::clamp_llr(x, t.llr_limit));
}
}  // namespace

void DecoderPlan::quantize_llrs(View<const float> llrs, View<std::int8_t> out) const {
  require_memory(llrs.where, Memory::host, "llrs");
  require_memory(out.where, Memory::host, "out");
  require_size(out, llrs.size, "out");
  const DecodeTables& t = impl_->t;
  for (std::int64_t i = 0; i < llrs.size; ++i) {
    require(std::isfinite(llrs.data[i]), "llrs",
            "value " + std::to_string(llrs.data[i]) + " at index " + std::to_string(i) +
                "; every LLR must be finite");
    out.data[i] = channel_int(llrs.data[i], t);
  }
}

template <class In>
void DecoderPlan::Impl::run(View<const In> llrs, int num, OutMode mode, View<std::uint8_t> out,
                            View<int> iterations, View<std::uint8_t> synd, const Stream& stream) {
  constexpr bool pre_quantized = std::is_same_v<In, std::int8_t>;
  if constexpr (pre_quantized) {
    require(t.quantized, "llrs",
            "int8 (pre-quantised) LLRs need the integer path; set quantized = true or pass "
            "float LLRs");
  }
  require(num >= 0, "num_codewords", std::to_string(num) + "; must be >= 0");
  require_size(llrs, std::int64_t(num) * t.n_used, "llrs");
  if (mode == OutMode::info_unpacked) {
    require_size(out, std::int64_t(num) * t.k, "info_bits");
  } else if (mode == OutMode::info_packed) {
    require_size(out, std::int64_t(num) * ((t.k + 7) / 8), "packed_info_bits");
  } else {
    require_size(out, std::int64_t(num) * t.n_used, "bits");
  }
  require(iterations.size == 0 || iterations.size == num, "iterations",
          "has " + std::to_string(iterations.size) + " elements; give 0 or num_codewords (" +
              std::to_string(num) + ")");
  require(synd.size == 0 || synd.size == num, "syndrome_ok",
          "has " + std::to_string(synd.size) + " elements; give 0 or num_codewords (" +
              std::to_string(num) + ")");
  const Memory mem = memory_of(backend);
  require_memory(llrs.where, mem, "llrs");
  require_memory(out.where, mem, "output bits");
  if (iterations.size) require_memory(iterations.where, mem, "iterations");
  if (synd.size) require_memory(synd.where, mem, "syndrome_ok");
  if (num == 0) return;
  if (backend.is_cpu()) {
    if constexpr (!pre_quantized) {
      const std::int64_t total = std::int64_t(num) * t.n_used;
      for (std::int64_t i = 0; i < total; ++i) {
        if (!std::isfinite(llrs.data[i])) {
          throw InvalidArgument("llrs: value " + std::to_string(llrs.data[i]) + " at index " +
                                std::to_string(i) + " (codeword " + std::to_string(i / t.n_used) +
                                "); every LLR must be finite");
        }
      }
    }
    run_cpu(llrs.data, num, mode, out.data, iterations.size ? iterations.data : nullptr,
            synd.size ? synd.data : nullptr);
    return;
  }
#if MIMORX_HAS_CUDA
  const float* f32 = nullptr;
  const std::int8_t* i8 = nullptr;
  if constexpr (pre_quantized) {
    i8 = llrs.data;
  } else {
    f32 = llrs.data;
  }
  const bool ok =
      cuda->run(f32, i8, num, mode, out.data, iterations.size ? iterations.data : nullptr,
                synd.size ? synd.data : nullptr, stream.handle(), cfg.check_input && !i8);
  require(ok, "llrs", "contains NaN or Inf; every LLR must be finite");
#else
  (void)stream;
  throw Unsupported("backend: this build of mimorx has no CUDA backend");
#endif
}

// The layered decoders, kCpuBatch codewords per call of the lane decoders
// (decoder_batch_cpu.hpp), one batch per OpenMP iteration; outputs as the one-codeword loop below
// writes them. Q: the integer path (int8 channel values and APP) or the float path.
template <bool Q, class In>
void DecoderPlan::Impl::run_cpu_batched(const In* llrs, int num, OutMode mode, std::uint8_t* out,
                                        int* iterations, std::uint8_t* synd) {
  using T = std::conditional_t<Q, std::int8_t, float>;
  constexpr int B = detail::kCpuBatch;
  const int batches = (num + B - 1) / B;
  const auto a = [this] {
    if constexpr (Q) {
      return detail::int_arith(t);
    } else {
      return detail::float_arith(t);
    }
  }();
#pragma omp parallel
  {
    detail::CpuBatchScratch s;
    std::vector<T> ch(std::size_t(B) * t.n_used), app(std::size_t(B) * t.n_used);
    const T* chp[B];
    T* appp[B];
    for (int k = 0; k < B; ++k) {
      chp[k] = ch.data() + std::size_t(k) * t.n_used;
      appp[k] = app.data() + std::size_t(k) * t.n_used;
    }
#pragma omp for schedule(dynamic, 1)
    for (int b = 0; b < batches; ++b) {
      const int w0 = b * B, count = std::min(B, num - w0);
      for (int k = 0; k < count; ++k) {
        const In* llr = llrs + std::int64_t(w0 + k) * t.n_used;
        T* c = ch.data() + std::size_t(k) * t.n_used;
        if constexpr (Q) {
          for (int i = 0; i < t.n_used; ++i) c[i] = channel_int(llr[i], t);
        } else {
          std::copy(llr, llr + t.n_used, c);
        }
      }
      int its[B] = {};
      if constexpr (Q) {
        detail::layered_int_batch(t, a, chp, count, appp, its, s);
      } else {
        detail::layered_float_batch(t, a, chp, count, appp, its, s);
      }
      for (int k = 0; k < count; ++k) {
        write_outputs(t, mode, w0 + k, appp[k], out);
        if (iterations) iterations[w0 + k] = its[k];
        if (synd) synd[w0 + k] = syndrome_ok(t, appp[k]) ? 1 : 0;
      }
    }
  }
}

template <class In>
void DecoderPlan::Impl::run_cpu(const In* llrs, int num, OutMode mode, std::uint8_t* out,
                                int* iterations, std::uint8_t* synd) {
  constexpr bool pre_quantized = std::is_same_v<In, std::int8_t>;
  const DecoderAlgo algo = cfg.algo;
  if constexpr (!pre_quantized) {
    if (t.half) {
      detail::decode_half_cpu(t, llrs, num, mode, out, iterations, synd);
      return;
    }
  }
  if (detail::cpu_batch_enabled()) {
    if (pre_quantized || t.quantized) {
      run_cpu_batched<true>(llrs, num, mode, out, iterations, synd);
      return;
    }
    if constexpr (!pre_quantized) {
      if (algo != DecoderAlgo::bp) {
        run_cpu_batched<false>(llrs, num, mode, out, iterations, synd);
        return;
      }
    }
  }
#pragma omp parallel
  {
    Scratch s;
    std::vector<float> tot;
#pragma omp for schedule(dynamic, 1)
    for (int w = 0; w < num; ++w) {
      const In* llr = llrs + std::int64_t(w) * t.n_used;
      int it = 0;
      bool ok = false;
      if (pre_quantized || t.quantized) {
        const detail::IntArith a = detail::int_arith(t);
        s.iapp.resize(t.n_used);
        for (int i = 0; i < t.n_used; ++i) s.iapp[i] = channel_int(llr[i], t);
        it = layered(t, a, s.iapp.data(), s.irec);
        write_outputs(t, mode, w, s.iapp.data(), out);
        if (synd) ok = syndrome_ok(t, s.iapp.data());
      } else if constexpr (!pre_quantized) {
        if (algo == DecoderAlgo::bp) {
          it = flooding_bp(t, llr, s, tot);
          write_outputs(t, mode, w, tot.data(), out);
          if (synd) ok = syndrome_ok(t, tot.data());
        } else {
          const detail::FloatArith a = detail::float_arith(t);
          s.fapp.assign(llr, llr + t.n_used);
          it = layered(t, a, s.fapp.data(), s.frec);
          write_outputs(t, mode, w, s.fapp.data(), out);
          if (synd) ok = syndrome_ok(t, s.fapp.data());
        }
      }
      if (iterations) iterations[w] = it;
      if (synd) synd[w] = ok ? 1 : 0;
    }
  }
}

}  // namespace mimorx::ldpc

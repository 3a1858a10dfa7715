#include <algorithm>
#include <string>
#include <vector>

#include "detect/ml_cuda.hpp"
#include "detect/ml_math.hpp"
#include "mimorx/config.hpp"
#include "mimorx/core/error.hpp"
#include "mimorx/detect/ml.hpp"

namespace mimorx::detect {

namespace {
std::int64_t count_hypotheses(const MimoShape& s) {
  std::int64_t n = 1;
  for (int t = 0; t < s.nt && n <= MlPlan::kMaxHypotheses; ++t) n *= constellation_size(s.mod);
  return n;
}

// One received vector on the CPU: every chunk in order, then the per-vector minima.
template <int NR, bool SOFT, int LV>
void detect_vector(const ml::ModParams& p, int nt, const cf32* h, const cf32* y, float n0,
                   std::uint8_t* bits, float* llrs) {
  const ml::VecConsts<NR> k = ml::vec_consts<NR>(p, nt, h);
  std::int64_t chunks = 1;
  for (int t = 1; t < nt - 1; ++t) chunks *= p.size;
  const int slots = 2 * nt * p.m;
  float mins[2 * ml::kMaxBits];
  std::fill(mins, mins + slots, ml::kBig);
  ml::Acc acc;
  acc.reset();
  for (std::int64_t c = 0; c < chunks; ++c) {
    if constexpr (SOFT) {
      acc.reset();
      ml::run_chunk<NR, SOFT, LV>(p, nt, h, y, k, c, acc);
      for (int s = 0; s < slots; ++s) mins[s] = std::min(mins[s], ml::soft_slot(p, nt, c, acc, s));
    } else {
      ml::run_chunk<NR, SOFT, LV>(p, nt, h, y, k, c, acc);  // chunks in code order
    }
  }
  const unsigned long long best = acc.key();
  if constexpr (SOFT) {
    for (int i = 0; i < nt * p.m; ++i) {
      const float l = (mins[2 * i + 1] - mins[2 * i]) / n0;
      llrs[i] = l;
      if (bits) bits[i] = l < 0.f ? 1 : 0;
    }
  } else {
    ml::decode_code(p, nt, unsigned(best & 0xffffffffull), bits);
  }
}

template <int NR, bool SOFT, int LV>
void detect_all(const ml::ModParams& p, int nt, const DetectInput& in, std::uint8_t* bits,
                float* llrs) {
  const std::int64_t V = num_vectors(in);
  const int per = nt * p.m;
#pragma omp parallel for schedule(dynamic, 16)
  for (std::int64_t v = 0; v < V; ++v) {
    const float n0 = in.noise_var[in.noise_var.size == 1 ? 0 : v];
    detect_vector<NR, SOFT, LV>(p, nt, in.h.matrix(v / in.vectors_per_channel), in.y.matrix(v), n0,
                                bits ? bits + v * per : nullptr, llrs ? llrs + v * per : nullptr);
  }
}

template <bool SOFT, int LV>
void detect_cpu_lv(int nr, const ml::ModParams& p, int nt, const DetectInput& in,
                   std::uint8_t* bits, float* llrs) {
  switch (nr) {
    case 1:
      return detect_all<1, SOFT, LV>(p, nt, in, bits, llrs);
    case 2:
      return detect_all<2, SOFT, LV>(p, nt, in, bits, llrs);
    case 3:
      return detect_all<3, SOFT, LV>(p, nt, in, bits, llrs);
    case 4:
      return detect_all<4, SOFT, LV>(p, nt, in, bits, llrs);
    case 5:
      return detect_all<5, SOFT, LV>(p, nt, in, bits, llrs);
    case 6:
      return detect_all<6, SOFT, LV>(p, nt, in, bits, llrs);
    case 7:
      return detect_all<7, SOFT, LV>(p, nt, in, bits, llrs);
    case 8:
      return detect_all<8, SOFT, LV>(p, nt, in, bits, llrs);
    default:
      break;
  }
}
// The same specialisations as the CUDA launch (ml_cuda.cu): hard QAM with 2, 4 or 8 levels per
// axis runs the fully unrolled column-0 loops, everything else the generic ones.
template <bool SOFT>
void detect_cpu(int nr, const ml::ModParams& p, int nt, const DetectInput& in, std::uint8_t* bits,
                float* llrs) {
  const int lv = SOFT || p.bpsk ? 0 : p.levels;
  if (lv == 2) return detect_cpu_lv<SOFT, 2>(nr, p, nt, in, bits, llrs);
  if (lv == 4) return detect_cpu_lv<SOFT, 4>(nr, p, nt, in, bits, llrs);
  if (lv == 8) return detect_cpu_lv<SOFT, 8>(nr, p, nt, in, bits, llrs);
  detect_cpu_lv<SOFT, 0>(nr, p, nt, in, bits, llrs);
}
}  // namespace

MlPlan::MlPlan(const MlConfig& config, Backend backend) : config_(config), backend_(backend) {
  const MimoShape& s = config.shape;
  const int m = bits_per_symbol(s.mod);
  require(m == 1 || m == 2 || m == 4 || m == 6 || m == 8, "mod",
          "enum value " + std::to_string(m) + " is not a modulation");
  require(s.nt >= 1 && s.nt <= kMaxAntennas, "nt",
          std::to_string(s.nt) + " transmit antennas; exhaustive ML allows 1..8");
  require(s.nr >= 1 && s.nr <= kMaxAntennas, "nr",
          std::to_string(s.nr) + " receive antennas; exhaustive ML allows 1..8");
  const std::int64_t n = count_hypotheses(s);
  if (n > kMaxHypotheses) {
    throw Unsupported("ml: " + to_string(s.mod) + " with nt = " + std::to_string(s.nt) +
                      " has M^nt = " + std::to_string(constellation_size(s.mod)) + "^" +
                      std::to_string(s.nt) + " hypotheses, above the limit of 2^24 = " +
                      std::to_string(kMaxHypotheses) + "; use psd, kbest or nway");
  }
  if (backend.is_cuda()) {
#if !MIMORX_HAS_CUDA
    throw Unsupported("backend: this build of mimorx has no CUDA backend");
#endif
  }
}

std::int64_t MlPlan::hypotheses() const { return count_hypotheses(config_.shape); }

void MlPlan::run(const DetectInput& in, View<std::uint8_t> bits, View<float> llrs,
                 const Stream& stream) {
  const MimoShape& s = config_.shape;
  validate(in, s, backend_, config_.check_device_values);
  const std::int64_t V = num_vectors(in);
  const std::int64_t per = s.bits_per_vector();
  const Memory mem = memory_of(backend_);
  const bool soft = config_.soft;
  const bool want_bits = !soft || bits.size != 0;
  if (want_bits) {
    require_memory(bits.where, mem, "bits");
    require_size(bits, V * per, "bits");
  }
  if (soft) {
    require_memory(llrs.where, mem, "llrs");
    require_size(llrs, V * per, "llrs");
  }
  // The kernels address matrices as dense nr x nt columns; strides between matrices are free.
  const ml::ModParams p = ml::mod_params(s.mod);
  if (backend_.is_cuda()) {
#if MIMORX_HAS_CUDA
    const std::size_t need = detail::ml_workspace_bytes(V, s.nt, s.mod, soft);
    if (workspace_.size() < need) {
      workspace_ = Buffer<unsigned char>::device(need, backend_.device());
    }
    detail::ml_cuda(s.mod, s.nt, s.nr, soft, in.h.data, in.h.batch_stride, in.y.data,
                    in.y.batch_stride, in.vectors_per_channel, V, in.noise_var.data,
                    in.noise_var.size, want_bits ? bits.data : nullptr, soft ? llrs.data : nullptr,
                    workspace_.data(), backend_.device(), stream.handle());
#endif
    return;
  }
  (void)stream;
  if (soft) {
    detect_cpu<true>(s.nr, p, s.nt, in, want_bits ? bits.data : nullptr, llrs.data);
  } else {
    detect_cpu<false>(s.nr, p, s.nt, in, bits.data, nullptr);
  }
}

}  // namespace mimorx::detect

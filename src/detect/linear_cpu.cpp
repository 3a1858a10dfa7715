#include <string>
#include <vector>

#include "detect/linear_internal.hpp"
#include "detect/linear_math.hpp"
#include "mimorx/config.hpp"
#include "mimorx/core/error.hpp"
#include "mimorx/detect/linear.hpp"

namespace mimorx::detect {

namespace {

void run_cpu(const detail::LinearArgs& a) {
  const int nr = a.nr, nt = a.nt, mb = bits_per_symbol(a.mod);
  const std::int64_t per_vec = std::int64_t(nt) * mb;
#pragma omp parallel
  {
    std::vector<cf32> wk(std::size_t(detail::linear_work_cf32(a.mmse, nr, nt)));
    std::vector<float> nrm(nt);
    std::vector<int> perm(nt);
    std::vector<cf32> w(std::size_t(nt) * nr), wv(std::size_t(nt) * nr);
    std::vector<float> d(nt), dv(nt);
#pragma omp for schedule(dynamic, 16)
    for (std::int64_t c = 0; c < a.channels; ++c) {
      const cf32* h = a.h + c * a.h_stride;
      const std::int64_t first = c * a.vpc;
      const float n0_first = a.n0[a.n0_per_vector ? first : 0];
      detail::linear_prepare(a.mmse, h, nr, nt, n0_first, wk.data(), nrm.data(), perm.data(), 1,
                             w.data(), d.data());
      for (std::int64_t v = first; v < first + a.vpc; ++v) {
        const float n0 = a.n0[a.n0_per_vector ? v : 0];
        const cf32* wu = w.data();
        const float* du = d.data();
        if (a.mmse && n0 != n0_first) {
          // The MMSE equaliser depends on N0: a vector with its own N0 gets its own.
          detail::linear_prepare(true, h, nr, nt, n0, wk.data(), nrm.data(), perm.data(), 1,
                                 wv.data(), dv.data());
          wu = wv.data();
          du = dv.data();
        }
        detail::linear_vector(a.mmse, a.mod, wu, du, a.y + v * a.y_stride, nr, nt, n0,
                              a.bits ? a.bits + v * per_vec : nullptr,
                              a.llrs ? a.llrs + v * per_vec : nullptr);
      }
    }
  }
}

}  // namespace

LinearPlan::LinearPlan(const LinearConfig& config, Backend backend)
    : cfg_(config), backend_(backend) {
  const MimoShape& s = cfg_.shape;
  require(s.nt >= 1 && s.nt <= 64, "nt", std::to_string(s.nt) + " transmit streams; allowed 1..64");
  require(s.nr >= 1 && s.nr <= 64, "nr", std::to_string(s.nr) + " receive antennas; allowed 1..64");
  require(cfg_.kind == LinearKind::zf || cfg_.kind == LinearKind::mmse, "kind",
          std::to_string(int(cfg_.kind)) + "; allowed zf, mmse");
  require(cfg_.kind != LinearKind::zf || s.nt <= s.nr, "nt",
          "zero forcing needs nt <= nr (H^H H must be invertible); got nt=" + std::to_string(s.nt) +
              ", nr=" + std::to_string(s.nr) + "; use MMSE instead");
  const int m = bits_per_symbol(s.mod);
  require(m == 1 || m == 2 || m == 4 || m == 6 || m == 8, "mod",
          std::to_string(m) + " bits per symbol; allowed bpsk, qpsk, 16qam, 64qam, 256qam");
#if !MIMORX_HAS_CUDA
  if (backend_.is_cuda()) throw Unsupported("LinearPlan: this build has no CUDA backend");
#endif
}

LinearPlan::LinearPlan(LinearPlan&&) noexcept = default;
LinearPlan& LinearPlan::operator=(LinearPlan&&) noexcept = default;
LinearPlan::~LinearPlan() = default;

void LinearPlan::run(const DetectInput& in, View<std::uint8_t> bits, View<float> llrs,
                     const Stream& stream) {
  const MimoShape& s = cfg_.shape;
  validate(in, s, backend_, cfg_.check_device_values);
  const std::int64_t V = num_vectors(in);
  const std::int64_t nbits = V * s.bits_per_vector();
  const Memory mem = memory_of(backend_);
  if (cfg_.soft) {
    require_size(llrs, nbits, "llrs");
    require_memory(llrs.where, mem, "llrs");
    if (bits.size != 0) {
      require_size(bits, nbits, "bits");
      require_memory(bits.where, mem, "bits");
    }
  } else {
    require_size(bits, nbits, "bits");
    require_memory(bits.where, mem, "bits");
  }
  if (V == 0) return;

  detail::LinearArgs a;
  a.mmse = cfg_.kind == LinearKind::mmse;
  a.mod = s.mod;
  a.nr = s.nr;
  a.nt = s.nt;
  a.h = in.h.data;
  a.h_stride = in.h.batch_stride;
  a.channels = in.h.batch;
  a.y = in.y.data;
  a.y_stride = in.y.batch_stride;
  a.vectors = V;
  a.vpc = in.vectors_per_channel;
  a.n0 = in.noise_var.data;
  a.n0_per_vector = in.noise_var.size != 1;
  a.bits = bits.size ? bits.data : nullptr;
  a.llrs = cfg_.soft ? llrs.data : nullptr;
  if (backend_.is_cpu()) {
    run_cpu(a);
    return;
  }
#if MIMORX_HAS_CUDA
  a.slot_per_vector = a.mmse && a.n0_per_vector && a.vpc > 1;
  const std::int64_t slots = a.slot_per_vector ? V : a.channels;
  const std::size_t wn = std::size_t(slots) * s.nt * s.nr, dn = std::size_t(slots) * s.nt;
  if (w_.size() < wn) w_ = Buffer<cf32>::device(wn, backend_.device());
  if (d_.size() < dn) d_ = Buffer<float>::device(dn, backend_.device());
  a.w = w_.data();
  a.d = d_.data();
  detail::linear_run_cuda(a, backend_.device(), stream.handle());
#else
  (void)stream;
  throw Unsupported("LinearPlan: this build has no CUDA backend");
#endif
}

}  // namespace mimorx::detect

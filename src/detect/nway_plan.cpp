// N-way detector: config validation, the CPU reference and dispatch to the CUDA kernels.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "detect/nway_cuda.hpp"
#include "detect/nway_math.hpp"
#include "detect/nway_qr_fixed.hpp"
#include "mimorx/config.hpp"
#include "mimorx/core/error.hpp"
#include "mimorx/detect/nway.hpp"

namespace mimorx::detect {

namespace {

template <class F>
void dispatch_shape(int nt, int levels, F&& f) {
  auto with_l = [&](auto nt_c) {
    switch (levels) {
      case 2:
        return f(nt_c, std::integral_constant<int, 2>{});
      case 4:
        return f(nt_c, std::integral_constant<int, 4>{});
      case 8:
        return f(nt_c, std::integral_constant<int, 8>{});
      case 16:
        return f(nt_c, std::integral_constant<int, 16>{});
    }
    throw Unsupported("levels: " + std::to_string(levels));
  };
  switch (nt) {
    case 2:
      return with_l(std::integral_constant<int, 2>{});
    case 4:
      return with_l(std::integral_constant<int, 4>{});
    case 8:
      return with_l(std::integral_constant<int, 8>{});
  }
  throw Unsupported("nt: " + std::to_string(nt));
}

void validate_config(const NwayConfig& c) {
  const auto& s = c.shape;
  if (!(s.nt == 2 || s.nt == 4 || s.nt == 8)) {
    throw Unsupported("nt: " + std::to_string(s.nt) +
                      " transmit antennas; the N-way detector supports nt = 2, 4 or 8");
  }
  require(s.nr >= s.nt && s.nr <= 64, "nr",
          std::to_string(s.nr) + " receive antennas; the QR-based tree search needs nt (" +
              std::to_string(s.nt) + ") <= nr <= 64");
  if (s.mod == Modulation::bpsk) {
    throw Unsupported(
        "mod: bpsk is not supported by the N-way detector (it is not two independent PAM axes); "
        "use qpsk, 16qam, 64qam or 256qam");
  }
  require(c.n_ways >= 1 && c.n_ways <= s.nt, "n_ways",
          std::to_string(c.n_ways) + "; allowed 1..nt = 1.." + std::to_string(s.nt));
  require(std::isfinite(c.llr_clip) && c.llr_clip > 0.f, "llr_clip",
          std::to_string(c.llr_clip) + "; must be finite and > 0");
}

}  // namespace

struct NwayPlan::Impl {
  NwayConfig cfg;
  Backend backend;
  nway::Layout lay;
  int levels, axis_k, m, nbits, cands;
  Buffer<float> work;
  std::int64_t qr_vectors = -1;  // vectors whose QR the workspace holds (for search())

  Impl(const NwayConfig& c, Backend b)
      : cfg(c),
        backend(b),
        lay(c.shape.nt),
        levels(axis_levels(c.shape.mod)),
        axis_k(axis_bits(c.shape.mod)),
        m(bits_per_symbol(c.shape.mod)),
        nbits(c.shape.nt * m),
        cands(levels * levels) {}

  void ensure_work(std::int64_t vectors) {
    const std::size_t need = std::size_t(vectors) * cfg.n_ways * lay.es;
    if (work.size() < need) work = Buffer<float>::on(backend, need);
  }

  void check_outputs(std::int64_t v, View<std::uint8_t> bits, View<float> llrs) const {
    const Memory mem = memory_of(backend);
    require_size(bits, v * nbits, "bits");
    require_memory(bits.where, mem, "bits");
    require(llrs.size == 0 || llrs.size == v * nbits, "llrs",
            "has " + std::to_string(llrs.size) + " elements, expected " +
                std::to_string(v * nbits) + " (or 0 for hard output only)");
    if (llrs.size) require_memory(llrs.where, mem, "llrs");
  }

  void qr(const DetectInput& in, const Stream& s) {
    const std::int64_t nv = num_vectors(in);
    ensure_work(nv);
    const int nt = cfg.shape.nt, nr = cfg.shape.nr, nw = cfg.n_ways;
    const float scale = qam_scale(cfg.shape.mod);
    if (backend.is_cpu()) {
      float* e = work.data();
      const int es = lay.es;
      const int vpc = in.vectors_per_channel;
      // Shapes with a register-resident QR: the code the GPU kernel runs, one (channel, pass)
      // at a time (nway_qr_fixed.hpp).
      if (nway::fixed_qr_dispatch(nt, nr, [&]<int NR, int NT>() {
            const std::int64_t problems = (nv / vpc) * nw;
#pragma omp parallel for schedule(static)
            for (std::int64_t p = 0; p < problems; ++p) {
              const std::int64_t c = p / nw;
              const int n = int(p % nw);
              const cf32* hm = in.h.matrix(c);
              nway::PassQr<NR, NT> st;
              nway::fixed_pass_qr<NR, NT>([hm](int i) { return hm[i]; }, n, st);
              for (int u = 0; u < vpc; ++u) {
                const std::int64_t vec = c * vpc + u;
                nway::fixed_pass_store<NR, NT>(st, in.y.matrix(vec), scale,
                                               e + (vec * nw + n) * es);
              }
            }
          })) {
        qr_vectors = nv;
        return;
      }
      const std::int64_t problems = nv * nw;
#pragma omp parallel
      {
        std::vector<float> v(std::size_t(2 * nr) * (2 * nt + 1));
#pragma omp for schedule(static)
        for (std::int64_t p = 0; p < problems; ++p) {
          const std::int64_t vec = p / nw;
          const int n = int(p % nw);
          nway::qr_problem(in.h.matrix(vec / in.vectors_per_channel), in.y.matrix(vec), nr, nt, n,
                           scale, v.data(), e + p * es);
        }
      }
    } else {
#if MIMORX_HAS_CUDA
      if (!nway_cuda::qr_fixed(in.h.data, in.h.batch_stride, in.y.data, in.y.batch_stride, nv,
                               in.vectors_per_channel, nt, nr, nw, scale, work.data(),
                               backend.device(), s.handle())) {
        nway_cuda::qr(in.h.data, in.h.batch_stride, in.y.data, in.y.batch_stride, nv,
                      in.vectors_per_channel, nt, nr, nw, scale, work.data(), backend.device(),
                      s.handle());
      }
#else
      (void)s;
      throw Unsupported("backend: this build of mimorx has no CUDA backend");
#endif
    }
    qr_vectors = nv;
  }

  void search(const DetectInput& in, View<std::uint8_t> bits, View<float> llrs, float* cand_d,
              std::uint8_t* cand_sym, const Stream& s) {
    const std::int64_t nv = num_vectors(in);
    require(qr_vectors == nv, "search",
            "the workspace holds the QR of " + std::to_string(qr_vectors) +
                " vectors, this input has " + std::to_string(nv) + "; call qr() first");
    if (backend.is_cuda()) {
#if MIMORX_HAS_CUDA
      if (!cand_d && nway_cuda::search_fast(
                         work.data(), nv, cfg.shape.nt, cfg.shape.nr, cfg.n_ways, cfg.shape.mod,
                         in.noise_var.data, in.noise_var.size, cfg.llr_clip, bits.data,
                         llrs.size ? llrs.data : nullptr, backend.device(), s.handle())) {
        return;
      }
      nway_cuda::search(work.data(), nv, cfg.shape.nt, cfg.n_ways, cfg.shape.mod, in.noise_var.data,
                        in.noise_var.size, cfg.llr_clip, bits.data, llrs.size ? llrs.data : nullptr,
                        cand_d, cand_sym, backend.device(), s.handle());
      return;
#else
      (void)s;
      throw Unsupported("backend: this build of mimorx has no CUDA backend");
#endif
    }
    dispatch_shape(cfg.shape.nt, levels, [&](auto nt_c, auto l_c) {
      constexpr int NT = decltype(nt_c)::value, L = decltype(l_c)::value, D = 2 * NT;
      constexpr int M = L * L, KA = nway::log2_pow2(L);
      const int nw = cfg.n_ways, es = lay.es, nb = nbits, mm = m;
      const float clip = cfg.llr_clip;
      const float* e = work.data();
#pragma omp parallel for schedule(static)
      for (std::int64_t v = 0; v < nv; ++v) {
        float min0[64], min1[64];
        for (int j = 0; j < nb; ++j) min0[j] = min1[j] = std::numeric_limits<float>::infinity();
        // The best candidate (nway::candidate_key: metric, then index n M + k) and its levels.
        std::uint64_t best = ~std::uint64_t(0);
        int lev[D], best_lev[D] = {}, best_n = 0;
        for (int n = 0; n < nw; ++n) {
          const float* ep = e + (v * nw + n) * es;
          for (int k = 0; k < M; ++k) {
            const float d = nway::search_path<D, L>(ep, k, lev);
            const std::uint64_t w = nway::path_bits<NT, KA>(lev, n);
            if (cand_d) {
              const std::int64_t c = (v * nw + n) * M + k;
              cand_d[c] = d;
              for (int t = 0; t < NT; ++t) {
                cand_sym[c * NT + t] = std::uint8_t(
                    nway::symbol_index_of_bits(mm, unsigned(w >> (t * mm)) & ((1u << mm) - 1)));
              }
              continue;
            }
            nway::fold_minima(w, d, nb, min0, min1);
            const std::uint64_t key = nway::candidate_key(d, unsigned(n * M + k));
            if (key < best) {
              best = key;
              best_n = n;
              std::copy_n(lev, D, best_lev);
            }
          }
        }
        if (cand_d) continue;
        const float n0 = in.noise_var[in.noise_var.size == 1 ? 0 : v];
        const float inv_n0 = nway::fdiv(1.f, n0);
        for (int j = 0; j < nb; ++j) {
          nway::complete_minima(e + (v * nw + best_n) * es, lay, KA, NT, best_n, best_lev, j,
                                &min0[j], &min1[j]);
        }
        nway::write_minima(min0, min1, nb, inv_n0, clip, bits.data + v * nb,
                           llrs.size ? llrs.data + v * nb : nullptr);
      }
    });
  }
};

NwayPlan::NwayPlan(const NwayConfig& config, Backend backend) {
  validate_config(config);
  impl_ = std::make_unique<Impl>(config, backend);
}
NwayPlan::~NwayPlan() = default;
NwayPlan::NwayPlan(NwayPlan&&) noexcept = default;
NwayPlan& NwayPlan::operator=(NwayPlan&&) noexcept = default;

void NwayPlan::run(const DetectInput& in, View<std::uint8_t> bits, View<float> llrs,
                   const Stream& stream) {
  validate(in, impl_->cfg.shape, impl_->backend, impl_->cfg.check_device_values);
  impl_->check_outputs(num_vectors(in), bits, llrs);
  impl_->qr(in, stream);
  impl_->search(in, bits, llrs, nullptr, nullptr, stream);
}

void NwayPlan::qr(const DetectInput& in, const Stream& stream) {
  validate(in, impl_->cfg.shape, impl_->backend, false);
  impl_->qr(in, stream);
}

void NwayPlan::search(const DetectInput& in, View<std::uint8_t> bits, View<float> llrs,
                      const Stream& stream) {
  impl_->check_outputs(num_vectors(in), bits, llrs);
  impl_->search(in, bits, llrs, nullptr, nullptr, stream);
}

void NwayPlan::candidates(const DetectInput& in, View<float> distances, View<std::uint8_t> symbols,
                          const Stream& stream) {
  const std::int64_t n = num_vectors(in) * impl_->cfg.n_ways * impl_->cands;
  const Memory mem = memory_of(impl_->backend);
  require_size(distances, n, "distances");
  require_size(symbols, n * impl_->cfg.shape.nt, "symbols");
  require_memory(distances.where, mem, "distances");
  require_memory(symbols.where, mem, "symbols");
  impl_->search(in, View<std::uint8_t>(), View<float>(), distances.data, symbols.data, stream);
}

const NwayConfig& NwayPlan::config() const { return impl_->cfg; }
const Backend& NwayPlan::backend() const { return impl_->backend; }
int NwayPlan::candidates_per_pass() const { return impl_->cands; }
int NwayPlan::workspace_floats_per_problem() const { return impl_->lay.es; }

}  // namespace mimorx::detect

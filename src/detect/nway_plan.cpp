// N-way detector: config validation, the CPU reference and dispatch to the CUDA kernels.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "detect/common_list.hpp"
#include "detect/nway_cuda.hpp"
#include "detect/nway_math.hpp"
#include "detect/nway_qr_fixed.hpp"
#include "mimorx/config.hpp"
#include "mimorx/core/error.hpp"
#include "mimorx/detect/nway.hpp"

namespace mimorx::detect {

namespace {

// The config, after checking it (InvalidArgument / Unsupported naming the value).
const NwayConfig& validated(const NwayConfig& c) {
  detail::validate_list_config(c.shape, c.llr_clip, "the N-way detector");
  require(c.n_ways >= 1 && c.n_ways <= c.shape.nt, "n_ways",
          std::to_string(c.n_ways) + "; allowed 1..nt = 1.." + std::to_string(c.shape.nt));
  return c;
}

struct NwaySearch final : detail::ListSearch {
  NwayConfig cfg;
  nway::Layout lay;
  int levels, axis_k, m, cands;
  Buffer<float> work;
  std::int64_t qr_vectors = -1;  // vectors whose QR the workspace holds (for search())

  NwaySearch(const NwayConfig& c, Backend b)
      : ListSearch(c.shape, std::move(b), c.check_device_values,
                   std::int64_t(c.n_ways) * axis_levels(c.shape.mod) * axis_levels(c.shape.mod)),
        cfg(c),
        lay(c.shape.nt),
        levels(axis_levels(c.shape.mod)),
        axis_k(axis_bits(c.shape.mod)),
        m(bits_per_symbol(c.shape.mod)),
        cands(levels * levels) {}

  void ensure_work(std::int64_t vectors) {
    const std::size_t need = std::size_t(vectors) * cfg.n_ways * lay.es;
    if (work.size() < need) work = Buffer<float>::on(backend, need);
  }

  void qr(const DetectInput& in, const Stream& s) override {
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
              std::uint8_t* cand_sym, const Stream& s) override {
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
    detail::dispatch_nt_levels(cfg.shape.nt, levels, [&](auto nt_c, auto l_c) {
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
        nway::PathErrors pe;
        for (int j = 0; j < nb; ++j) {
          nway::complete_minima(e + (v * nw + best_n) * es, lay, KA, NT, best_n, best_lev, j,
                                &min0[j], &min1[j], pe);
        }
        nway::write_minima(min0, min1, nb, inv_n0, clip, bits.data + v * nb,
                           llrs.size ? llrs.data + v * nb : nullptr);
      }
    });
  }
};

}  // namespace

NwayPlan::NwayPlan(const NwayConfig& config, Backend backend)
    : ListDetectorPlan(std::make_unique<NwaySearch>(validated(config), std::move(backend))) {}

const NwayConfig& NwayPlan::config() const {
  return static_cast<const NwaySearch&>(list_search()).cfg;
}
int NwayPlan::candidates_per_pass() const {
  return static_cast<const NwaySearch&>(list_search()).cands;
}
int NwayPlan::workspace_floats_per_problem() const {
  return static_cast<const NwaySearch&>(list_search()).lay.es;
}

}  // namespace mimorx::detect

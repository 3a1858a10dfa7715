// K-best detector: config validation, CPU reference, dispatch to CUDA.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "detect/common_list.hpp"
#include "detect/kbest_cuda.hpp"
#include "detect/kbest_math.hpp"
#include "detect/nway_math.hpp"
#include "mimorx/config.hpp"
#include "mimorx/core/error.hpp"
#include "mimorx/detect/kbest.hpp"

namespace mimorx::detect {

int KbestPlan::max_k(const MimoShape& s) {
  const int levels = axis_levels(s.mod);
  return std::min(kbest::kMaxChildren / levels, kbest::kMaxPathBytes / (2 * 2 * s.nt));
}

namespace {
// The config, after checking it (InvalidArgument / Unsupported naming the value).
const KbestConfig& validated(const KbestConfig& c) {
  detail::validate_list_config(c.shape, c.llr_clip, "the K-best detector");
  const auto& s = c.shape;
  const int kmax = KbestPlan::max_k(s);
  require(c.k >= 1 && c.k <= kmax, "k",
          std::to_string(c.k) + "; allowed 1.." + std::to_string(kmax) + " for " +
              to_string(s.mod) + " with nt = " + std::to_string(s.nt) +
              " (k * sqrt(M) children are sorted in one GPU block's shared memory)");
  return c;
}

struct KbestSearch final : detail::ListSearch {
  KbestConfig cfg;
  nway::Layout lay;
  int levels, axis_k, m;
  Buffer<float> work;
  std::int64_t qr_vectors = -1;

  KbestSearch(const KbestConfig& c, Backend b)
      : ListSearch(c.shape, std::move(b), c.check_device_values, c.k),
        cfg(c),
        lay(c.shape.nt),
        levels(axis_levels(c.shape.mod)),
        axis_k(axis_bits(c.shape.mod)),
        m(bits_per_symbol(c.shape.mod)) {}

  void qr(const DetectInput& in, const Stream& s) override {
    const std::int64_t nv = num_vectors(in);
    const std::size_t need = std::size_t(nv) * lay.es;
    if (work.size() < need) work = Buffer<float>::on(backend, need);
    const int nt = cfg.shape.nt, nr = cfg.shape.nr;
    const float scale = qam_scale(cfg.shape.mod);
    if (backend.is_cpu()) {
      float* e = work.data();
      const int es = lay.es;
#pragma omp parallel
      {
        std::vector<float> v(std::size_t(2 * nr) * (2 * nt + 1));
#pragma omp for schedule(static)
        for (std::int64_t p = 0; p < nv; ++p) {
          nway::qr_problem(in.h.matrix(p / in.vectors_per_channel), in.y.matrix(p), nr, nt, 0,
                           scale, v.data(), e + p * es);
        }
      }
    } else {
#if MIMORX_HAS_CUDA
      kbest_cuda::qr(in.h.data, in.h.batch_stride, in.y.data, in.y.batch_stride, nv,
                     in.vectors_per_channel, nt, nr, scale, work.data(), backend.device(),
                     s.handle());
#else
      (void)s;
      throw Unsupported("backend: this build of mimorx has no CUDA backend");
#endif
    }
    qr_vectors = nv;
  }

  // The breadth-first search of one vector; returns the final list size (sorted by distance).
  int search_one(const float* e, std::vector<std::uint8_t>& paths, std::vector<float>& dist,
                 std::vector<std::pair<std::uint32_t, int>>& children,
                 std::vector<std::uint8_t>& next_paths, std::vector<float>& next_dist) const {
    const int d = lay.d, kk = cfg.k, L = levels;
    int count = 1;
    dist[0] = 0.f;
    std::fill(paths.begin(), paths.begin() + d, std::uint8_t(0));
    for (int l = d - 1; l >= 0; --l) {
      children.clear();
      for (int p = 0; p < count; ++p) {
        const float z = kbest::parent_z(e, lay, l, L, &paths[std::size_t(p) * d]);
        for (int i = 0; i < L; ++i) {
          children.emplace_back(kbest::key_of(kbest::child_distance(e, lay, l, L, z, i, dist[p])),
                                p * L + i);
        }
      }
      // Stable by key: ties keep child order, as the kernel's stable radix sort does. Above the
      // last level a list that keeps every child keeps child order: the next level's selection
      // does not depend on its parents' order but for ties, and only the final list is sorted.
      const int nc = std::min(kk, int(children.size()));
      if (l == 0 || nc < int(children.size())) {
        std::stable_sort(children.begin(), children.end(),
                         [](const auto& a, const auto& b) { return a.first < b.first; });
      }
      for (int r = 0; r < nc; ++r) {
        const int c = children[r].second, p = c / L;
        std::copy_n(&paths[std::size_t(p) * d], d, &next_paths[std::size_t(r) * d]);
        next_paths[std::size_t(r) * d + l] = std::uint8_t(c % L);
        next_dist[r] = kbest::distance_of_key(children[r].first);
      }
      std::swap(paths, next_paths);
      std::swap(dist, next_dist);
      count = nc;
    }
    return count;
  }

  void search(const DetectInput& in, View<std::uint8_t> bits, View<float> llrs, float* cand_d,
              std::uint8_t* cand_sym, const Stream& s) override {
    const std::int64_t nv = num_vectors(in);
    require(qr_vectors == nv, "search",
            "the workspace holds the QR of " + std::to_string(qr_vectors) +
                " vectors, this input has " + std::to_string(nv) + "; call qr() first");
    if (backend.is_cuda()) {
#if MIMORX_HAS_CUDA
      kbest_cuda::search(work.data(), nv, cfg.shape.nt, cfg.shape.mod, cfg.k, in.noise_var.data,
                         in.noise_var.size, cfg.llr_clip, bits.data,
                         llrs.size ? llrs.data : nullptr, cand_d, cand_sym, backend.device(),
                         s.handle());
      return;
#else
      (void)s;
      throw Unsupported("backend: this build of mimorx has no CUDA backend");
#endif
    }
    const int d = lay.d, kk = cfg.k, nt = cfg.shape.nt, nb = nbits, mm = m;
    const float* e = work.data();
#pragma omp parallel
    {
      std::vector<std::uint8_t> paths(std::size_t(kk) * d), next_paths(paths.size());
      std::vector<float> dist(kk), next_dist(kk);
      std::vector<std::pair<std::uint32_t, int>> children;
      children.reserve(std::size_t(kk) * levels);
#pragma omp for schedule(static)
      for (std::int64_t v = 0; v < nv; ++v) {
        const int count = search_one(e + v * lay.es, paths, dist, children, next_paths, next_dist);
        if (cand_d) {
          for (int r = 0; r < kk; ++r) {
            const std::int64_t c = v * kk + r;
            cand_d[c] = r < count ? dist[r] : std::numeric_limits<float>::infinity();
            const std::uint64_t w =
                r < count ? kbest::path_bits(&paths[std::size_t(r) * d], nt, axis_k) : 0;
            for (int t = 0; t < nt; ++t) {
              cand_sym[c * nt + t] = r < count
                                         ? std::uint8_t(nway::symbol_index_of_bits(
                                               mm, unsigned(w >> (t * mm)) & ((1u << mm) - 1)))
                                         : std::uint8_t(0);
            }
          }
          continue;
        }
        float min0[64], min1[64];
        for (int j = 0; j < nb; ++j) min0[j] = min1[j] = std::numeric_limits<float>::infinity();
        for (int r = 0; r < count; ++r) {
          nway::fold_minima(kbest::path_bits(&paths[std::size_t(r) * d], nt, axis_k), dist[r], nb,
                            min0, min1);
        }
        // The list is sorted: path 0 is the best candidate, whose single-coordinate flips
        // supply the missing counter-hypotheses.
        nway::PathErrors pe;
        for (int j = 0; j < nb; ++j) {
          nway::complete_minima(e + v * lay.es, lay, axis_k, nt, 0, &paths[0], j, &min0[j],
                                &min1[j], pe);
        }
        const float inv_n0 = nway::fdiv(1.f, in.noise_var[in.noise_var.size == 1 ? 0 : v]);
        nway::write_minima(min0, min1, nb, inv_n0, cfg.llr_clip, bits.data + v * nb,
                           llrs.size ? llrs.data + v * nb : nullptr);
      }
    }
  }
};

}  // namespace

KbestPlan::KbestPlan(const KbestConfig& config, Backend backend)
    : ListDetectorPlan(std::make_unique<KbestSearch>(validated(config), std::move(backend))) {}
const KbestConfig& KbestPlan::config() const {
  return static_cast<const KbestSearch&>(list_search()).cfg;
}

}  // namespace mimorx::detect

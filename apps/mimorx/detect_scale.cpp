#include "detect_scale.hpp"

#include <fmt/format.h>

#include <Eigen/Dense>
#include <algorithm>
#include <cfloat>
#include <cmath>
#include <complex>

#include "mimorx/core/error.hpp"

namespace mimorx::cli {

namespace {

float largest_magnitude(const float* p, std::size_t n) {
  float top = 0.f;
  for (std::size_t i = 0; i < n; ++i) top = std::max(top, std::fabs(p[i]));
  return top;
}

void scale(float* p, std::size_t n, int exponent) {
  for (std::size_t i = 0; i < n; ++i) p[i] = std::ldexp(p[i], exponent);
}

}  // namespace

void normalise_scale(DetectNumbers& d) {
  const std::size_t per_h = std::size_t(2) * d.nr * d.nt, per_y = std::size_t(2) * d.nr;
  const std::size_t channels = d.h.size() / per_h, vectors = d.y.size() / per_y;
  if (d.noise_var.size() == 1) d.noise_var.assign(vectors, d.noise_var[0]);
  for (std::size_t c = 0; c < channels; ++c) {
    const float top = largest_magnitude(d.h.data() + c * per_h, per_h);
    const int e = top > 0.f ? -(std::ilogb(top) + 1) : 0;  // top * 2^e in [0.5, 1)
    scale(d.h.data() + c * per_h, per_h, e);
    for (std::size_t v = c * d.vectors_per_channel; v < (c + 1) * d.vectors_per_channel; ++v) {
      scale(d.y.data() + v * per_y, per_y, e);
      const float n0 = std::ldexp(d.noise_var[v], 2 * e);
      d.noise_var[v] = std::clamp(std::isfinite(n0) ? n0 : FLT_MAX, kMinNoiseVar, FLT_MAX);
      require(largest_magnitude(d.y.data() + v * per_y, per_y) <= FLT_MAX, "y",
              fmt::format("vector {} is more than 2^127 times its channel's largest entry; "
                          "the detectors' float32 cannot hold it",
                          v));
    }
  }
}

void require_full_rank(const DetectNumbers& d, const std::string& detector) {
  const std::size_t per_h = std::size_t(2) * d.nr * d.nt;
  for (std::size_t c = 0; c < d.h.size() / per_h; ++c) {
    Eigen::MatrixXcd h(d.nr, d.nt);
    for (int j = 0; j < d.nt; ++j)
      for (int i = 0; i < d.nr; ++i) {
        const float* p = d.h.data() + c * per_h + 2 * (std::size_t(j) * d.nr + i);
        h(i, j) = {p[0], p[1]};
      }
    const Eigen::VectorXd s = Eigen::JacobiSVD<Eigen::MatrixXcd>(h).singularValues();
    // Numerical rank as numpy's matrix_rank counts it, at float32's epsilon.
    const double tol = s.size() ? s(0) * std::max(d.nr, d.nt) * FLT_EPSILON : 0.0;
    const int rank = int((s.array() > tol).count());
    require(rank == d.nt, "h",
            fmt::format("channel {} has rank {} < nt = {}; {} needs full column rank (use mmse, "
                        "which is defined for every channel)",
                        c, rank, d.nt, detector));
  }
}

void saturate_llrs(std::vector<float>& llrs) {
  for (float& l : llrs) l = std::isnan(l) ? 0.f : std::clamp(l, -kMaxLlr, kMaxLlr);
}

}  // namespace mimorx::cli

#pragma once
// Test inputs, their device copies and independent max-log oracles for the list detectors
// (N-way, K-best, trellis: mimorx/detect/list_plan.hpp).
#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "mimorx/core/buffer.hpp"
#include "mimorx/core/complex.hpp"
#include "mimorx/core/tensor.hpp"
#include "mimorx/detect/common.hpp"
#include "mimorx/detect/ml.hpp"
#include "mimorx/modem/modulation.hpp"

namespace mimorx::test {

// y = H x + n, H i.i.d. CN(0,1), SNR = 10 log10(nt / N0) (mean received SNR per antenna).
struct Problem {
  detect::MimoShape shape;
  std::int64_t vectors = 0;
  int vpc = 1;
  std::vector<cf32> h, y;
  std::vector<float> n0;
  std::vector<std::uint8_t> tx_bits;  // V * nt * m
  int nbits() const { return shape.nt * bits_per_symbol(shape.mod); }
  detect::DetectInput input() const {
    detect::DetectInput in;
    in.h = ConstMatrixBatch<cf32>(h.data(), vectors / vpc, shape.nr, shape.nt, Memory::host);
    in.y = ConstMatrixBatch<cf32>(y.data(), vectors, shape.nr, 1, Memory::host);
    in.noise_var = View<const float>(n0.data(), std::int64_t(n0.size()), Memory::host);
    in.vectors_per_channel = vpc;
    return in;
  }
};

inline Problem make_problem(detect::MimoShape s, std::int64_t vectors, int vpc, double snr_db,
                            std::uint64_t seed, bool per_vector_n0 = false) {
  Problem p;
  p.shape = s;
  p.vectors = vectors;
  p.vpc = vpc;
  std::mt19937_64 g(seed);
  std::normal_distribution<float> nd(0.f, 1.f);
  const float hs = std::sqrt(0.5f);
  const std::int64_t nc = vectors / vpc;
  p.h.resize(std::size_t(nc) * s.nr * s.nt);
  for (auto& x : p.h) x = cf32(nd(g) * hs, nd(g) * hs);
  const int m = bits_per_symbol(s.mod);
  p.tx_bits.resize(std::size_t(vectors) * s.nt * m);
  for (auto& b : p.tx_bits) b = std::uint8_t(g() & 1);
  const float n0 = float(s.nt / std::pow(10.0, snr_db / 10.0));
  p.n0.assign(per_vector_n0 ? std::size_t(vectors) : 1, n0);
  if (per_vector_n0) {
    std::uniform_real_distribution<float> u(0.5f, 2.f);
    for (auto& v : p.n0) v = n0 * u(g);
  }
  p.y.resize(std::size_t(vectors) * s.nr);
  for (std::int64_t v = 0; v < vectors; ++v) {
    const cf32* hm = &p.h[std::size_t(v / vpc) * s.nr * s.nt];
    const float nv = p.n0[per_vector_n0 ? v : 0];
    for (int i = 0; i < s.nr; ++i) {
      cf32 acc(0.f, 0.f);
      for (int j = 0; j < s.nt; ++j) {
        acc += hm[j * s.nr + i] * map_symbol(s.mod, &p.tx_bits[std::size_t(v * s.nt + j) * m]);
      }
      const float ns = std::sqrt(nv / 2);
      p.y[std::size_t(v) * s.nr + i] = acc + cf32(nd(g) * ns, nd(g) * ns);
    }
  }
  return p;
}

// Hard bits and LLRs of one run.
struct Out {
  std::vector<std::uint8_t> bits;
  std::vector<float> llrs;
};

// plan.run on the host copy of p; the outputs start as 0xEE / NaN so that a value the plan
// does not write shows.
template <class Plan>
Out run_plan(Plan& plan, const Problem& p) {
  Out o;
  o.bits.assign(std::size_t(p.vectors) * p.nbits(), 0xEE);
  o.llrs.assign(o.bits.size(), std::nanf(""));
  plan.run(p.input(), View<std::uint8_t>(o.bits.data(), std::int64_t(o.bits.size()), Memory::host),
           View<float>(o.llrs.data(), std::int64_t(o.llrs.size()), Memory::host));
  return o;
}

// A device copy of a problem and its DetectInput.
struct DeviceProblem {
  Buffer<cf32> h, y;
  Buffer<float> n0;
  detect::DetectInput in;
  explicit DeviceProblem(const Problem& p) {
    h = Buffer<cf32>::device(p.h.size());
    y = Buffer<cf32>::device(p.y.size());
    n0 = Buffer<float>::device(p.n0.size());
    h.copy_from_host(p.h.data(), p.h.size());
    y.copy_from_host(p.y.data(), p.y.size());
    n0.copy_from_host(p.n0.data(), p.n0.size());
    in.h =
        ConstMatrixBatch<cf32>(h.data(), p.vectors / p.vpc, p.shape.nr, p.shape.nt, Memory::device);
    in.y = ConstMatrixBatch<cf32>(y.data(), p.vectors, p.shape.nr, 1, Memory::device);
    in.noise_var = View<const float>(n0.data(), std::int64_t(p.n0.size()), Memory::device);
    in.vectors_per_channel = p.vpc;
  }
};

template <class T>
std::vector<T> to_host(const Buffer<T>& b) {
  std::vector<T> v(b.size());
  b.copy_to_host(v.data(), v.size());
  return v;
}

// Exact max-log by exhaustive enumeration of all M^nt vectors in double.
inline void naive_maxlog(const Problem& p, float clip, std::vector<float>& llr,
                         std::vector<std::uint8_t>& hard) {
  const auto& s = p.shape;
  const int m = bits_per_symbol(s.mod), M = 1 << m, nb = p.nbits();
  std::vector<std::complex<double>> pts(M);
  for (int i = 0; i < M; ++i) {
    std::uint8_t b[8] = {};
    for (int k = 0; k < m; ++k) b[k] = std::uint8_t((i >> (m - 1 - k)) & 1);
    const cf32 x = map_symbol(s.mod, b);
    pts[i] = {x.re, x.im};
  }
  llr.assign(std::size_t(p.vectors) * nb, 0.f);
  hard.assign(std::size_t(p.vectors) * nb, 0);
  std::int64_t total = 1;
  for (int j = 0; j < s.nt; ++j) total *= M;
  for (std::int64_t v = 0; v < p.vectors; ++v) {
    const cf32* hm = &p.h[std::size_t(v / p.vpc) * s.nr * s.nt];
    std::vector<double> min0(nb, 1e300), min1(nb, 1e300);
    std::vector<int> idx(s.nt);
    for (std::int64_t c = 0; c < total; ++c) {
      std::int64_t r = c;
      for (int j = 0; j < s.nt; ++j) {
        idx[j] = int(r % M);
        r /= M;
      }
      double d = 0;
      for (int i = 0; i < s.nr; ++i) {
        const cf32 yy = p.y[std::size_t(v) * s.nr + i];
        std::complex<double> acc(yy.re, yy.im);
        for (int j = 0; j < s.nt; ++j) {
          const cf32 hh = hm[j * s.nr + i];
          acc -= std::complex<double>(hh.re, hh.im) * pts[idx[j]];
        }
        d += std::norm(acc);
      }
      for (int j = 0; j < s.nt; ++j) {
        for (int k = 0; k < m; ++k) {
          const int bit = (idx[j] >> (m - 1 - k)) & 1;
          double& mm = bit ? min1[j * m + k] : min0[j * m + k];
          mm = std::min(mm, d);
        }
      }
    }
    const double n0 = p.n0[p.n0.size() == 1 ? 0 : v];
    for (int j = 0; j < nb; ++j) {
      const double l = (min1[j] - min0[j]) / n0;
      llr[v * nb + j] = float(std::clamp(l, -double(clip), double(clip)));
      hard[v * nb + j] = min1[j] < min0[j] ? 1 : 0;
    }
  }
}

// Exact max-log for larger problems: complex QR (Eigen, double), depth-first enumeration of the
// top nt-1 symbols; the bottom symbol's two axes are independent given the rest, so its best
// level per axis (and per axis-bit value) is found by scanning the L levels.
inline void fast_maxlog(const Problem& p, float clip, std::vector<float>& llr,
                        std::vector<std::uint8_t>& hard) {
  using C = std::complex<double>;
  const auto& s = p.shape;
  const int m = bits_per_symbol(s.mod), M = 1 << m, nb = p.nbits(), ka = m / 2, L = 1 << ka;
  const double sc = qam_scale(s.mod);
  std::vector<C> pts(M);
  std::vector<int> bits_of(M);
  for (int i = 0; i < M; ++i) {
    std::uint8_t b[8] = {};
    for (int k = 0; k < m; ++k) b[k] = std::uint8_t((i >> (m - 1 - k)) & 1);
    const cf32 x = map_symbol(s.mod, b);
    pts[i] = {x.re, x.im};
  }
  // Axis level l (amplitude 2l-(L-1)) -> its axis bits, by searching the mapping.
  std::vector<int> axis_bits_of(L);
  for (int c = 0; c < L; ++c) {
    std::uint8_t b[8] = {};
    for (int k = 0; k < ka; ++k) b[k] = std::uint8_t((c >> k) & 1);
    const int a = pam_amplitude(ka, b);
    axis_bits_of[(a + L - 1) / 2] = c;
  }
  llr.assign(std::size_t(p.vectors) * nb, 0.f);
  hard.assign(std::size_t(p.vectors) * nb, 0);
#pragma omp parallel for schedule(dynamic, 16)
  for (std::int64_t v = 0; v < p.vectors; ++v) {
    const cf32* hm = &p.h[std::size_t(v / p.vpc) * s.nr * s.nt];
    Eigen::MatrixXcd H(s.nr, s.nt);
    Eigen::VectorXcd y(s.nr);
    for (int i = 0; i < s.nr; ++i) {
      for (int j = 0; j < s.nt; ++j) H(i, j) = C(hm[j * s.nr + i].re, hm[j * s.nr + i].im);
      y(i) = C(p.y[v * s.nr + i].re, p.y[v * s.nr + i].im);
    }
    Eigen::HouseholderQR<Eigen::MatrixXcd> qr(H);
    const Eigen::MatrixXcd R = qr.matrixQR().topRows(s.nt).triangularView<Eigen::Upper>();
    const Eigen::VectorXcd z = (qr.householderQ().adjoint() * y).head(s.nt);
    std::vector<double> min0(nb, 1e300), min1(nb, 1e300);
    std::vector<int> idx(s.nt, 0);
    std::vector<double> part(s.nt + 1, 0.0);
    // Iterative DFS over symbols nt-1 .. 1.
    const int top = s.nt - 1;
    std::vector<int> cur(s.nt, -1);
    int lvl = top;
    while (lvl <= top) {
      if (lvl == 0) {
        C u = z(0);
        for (int j = 1; j < s.nt; ++j) u -= R(0, j) * pts[cur[j]];
        const C r00 = R(0, 0);
        const double g = std::norm(r00);
        const C w = u / r00;
        double cr[16], ci[16];
        for (int l = 0; l < L; ++l) {
          const double a = (2 * l - (L - 1)) * sc;
          cr[l] = g * (w.real() - a) * (w.real() - a);
          ci[l] = g * (w.imag() - a) * (w.imag() - a);
        }
        const double bre = *std::min_element(cr, cr + L), bim = *std::min_element(ci, ci + L);
        const double best = part[1] + bre + bim;
        for (int j = 1; j < s.nt; ++j) {
          for (int k = 0; k < m; ++k) {
            const int bit = (cur[j] >> (m - 1 - k)) & 1;
            double& mm = bit ? min1[j * m + k] : min0[j * m + k];
            mm = std::min(mm, best);
          }
        }
        // Bottom symbol: bit 2q on the real axis, 2q+1 on the imaginary axis.
        for (int q = 0; q < ka; ++q) {
          for (int bv = 0; bv < 2; ++bv) {
            double mr = 1e300, mi = 1e300;
            for (int l = 0; l < L; ++l) {
              if (((axis_bits_of[l] >> q) & 1) == bv) {
                mr = std::min(mr, cr[l]);
                mi = std::min(mi, ci[l]);
              }
            }
            double& a = bv ? min1[2 * q] : min0[2 * q];
            a = std::min(a, part[1] + mr + bim);
            double& b = bv ? min1[2 * q + 1] : min0[2 * q + 1];
            b = std::min(b, part[1] + bre + mi);
          }
        }
        ++lvl;
        continue;
      }
      if (++cur[lvl] >= M) {
        cur[lvl] = -1;
        ++lvl;
        continue;
      }
      C u = z(lvl);
      for (int j = lvl + 1; j < s.nt; ++j) u -= R(lvl, j) * pts[cur[j]];
      u -= R(lvl, lvl) * pts[cur[lvl]];
      part[lvl] = part[lvl + 1] + std::norm(u);
      --lvl;
    }
    const double n0 = p.n0[p.n0.size() == 1 ? 0 : v];
    for (int j = 0; j < nb; ++j) {
      const double l = (min1[j] - min0[j]) / n0;
      llr[v * nb + j] = float(std::clamp(l, -double(clip), double(clip)));
      hard[v * nb + j] = min1[j] < min0[j] ? 1 : 0;
    }
  }
}

// Exact max-log LLRs of the exhaustive ML detector (the oracle), unclipped.
inline std::vector<float> ml_llrs(const Problem& p) {
  detect::MlPlan ml(detect::MlConfig{p.shape, true}, Backend::cpu());
  std::vector<float> llrs(std::size_t(p.vectors) * p.nbits());
  ml.run(p.input(), View<std::uint8_t>(),
         View<float>(llrs.data(), std::int64_t(llrs.size()), Memory::host));
  return llrs;
}

// A list detector's LLRs against its own candidate list (nc candidates per vector: distances
// `d`, nt symbol indices each in `sym`; +inf distances are padding, not list members) and the
// exact max-log LLRs `exact`:
// * a bit with both values in the list: max-log over the list, clipped, exactly (float
//   arithmetic in the detectors' order: difference, times 1 / N0);
// * a bit with one value: the flip rule, recomputed here in double in the H domain: x' = the
//   best member (least distance, then index) with the coordinate carrying the bit moved to the
//   nearest amplitude (the lower of two) whose bit is the counter value c, and
//   LLR = clip(+-(|y - H x'|^2 - |y - H x_b|^2) / N0), sign from c (tolerance: float rounding
//   of the tree's metrics);
// * accuracy: |LLR - exact| <= |clip rule - exact| + tolerance on every missing bit of a vector
//   whose best member is the ML solution (its bits are the exact LLRs' signs), the clip rule
//   being +-clip with the sign of the value the list holds (docs/kbest.md: the bound needs the
//   best member to be the best hypothesis with that value; other vectors are counted only).
struct ListLlrCheck {
  std::int64_t both = 0, missing = 0;
  std::int64_t missing_inside = 0;  // 0 < |LLR| < clip
  std::int64_t closer = 0;          // strictly closer to exact max-log than the clip rule
  std::int64_t not_ml = 0;          // missing bits of vectors whose best member is not ML
  std::int64_t mismatches = 0, farther = 0;
  std::string first;  // the first mismatch or accuracy failure, described
};
inline ListLlrCheck check_list_llrs(const Problem& p, int nc, const std::vector<float>& d,
                                    const std::vector<std::uint8_t>& sym,
                                    const std::vector<float>& llrs, const std::vector<float>& exact,
                                    float clip) {
  using C = std::complex<double>;
  const auto& s = p.shape;
  const int nt = s.nt, m = bits_per_symbol(s.mod), nb = p.nbits(), M = 1 << m;
  constexpr float kInf = std::numeric_limits<float>::infinity();
  std::vector<C> pts(M);
  for (int i = 0; i < M; ++i) {
    std::uint8_t b[8] = {};
    for (int k = 0; k < m; ++k) b[k] = std::uint8_t((i >> (m - 1 - k)) & 1);
    const cf32 x = map_symbol(s.mod, b);
    pts[i] = {x.re, x.im};
  }
  ListLlrCheck r;
  auto fail = [&r](std::int64_t& counter, const std::string& what) {
    if (r.mismatches + r.farther == 0) r.first = what;
    ++counter;
  };
  for (std::int64_t v = 0; v < p.vectors; ++v) {
    std::vector<float> min0(nb, kInf), min1(nb, kInf);
    int best = -1;
    for (int c = 0; c < nc; ++c) {
      const float dc = d[std::size_t(v) * nc + c];
      if (std::isinf(dc)) continue;
      if (best < 0 || dc < d[std::size_t(v) * nc + best]) best = c;
      for (int t = 0; t < nt; ++t) {
        const int sy = sym[(std::size_t(v) * nc + c) * nt + t];
        for (int b = 0; b < m; ++b) {
          float& mm = ((sy >> (m - 1 - b)) & 1) ? min1[t * m + b] : min0[t * m + b];
          mm = std::min(mm, dc);
        }
      }
    }
    const cf32* hm = &p.h[std::size_t(v / p.vpc) * s.nr * nt];
    auto metric = [&](const std::vector<int>& x) {
      double acc = 0;
      for (int i = 0; i < s.nr; ++i) {
        const cf32 yy = p.y[std::size_t(v) * s.nr + i];
        C e(yy.re, yy.im);
        for (int t = 0; t < nt; ++t) {
          const cf32 hh = hm[t * s.nr + i];
          e -= C(hh.re, hh.im) * pts[x[t]];
        }
        acc += std::norm(e);
      }
      return acc;
    };
    std::vector<int> xb(nt);
    for (int t = 0; t < nt; ++t) xb[t] = sym[(std::size_t(v) * nc + best) * nt + t];
    const double db = metric(xb);
    bool best_is_ml = true;
    for (int j = 0; j < nb; ++j) {
      const int bit = (xb[j / m] >> (m - 1 - j % m)) & 1;
      best_is_ml = best_is_ml && bit == (exact[std::size_t(v) * nb + j] < 0.f ? 1 : 0);
    }
    const float n0 = p.n0[p.n0.size() == 1 ? 0 : std::size_t(v)];
    const float inv_n0 = 1.f / n0;
    for (int j = 0; j < nb; ++j) {
      const bool has0 = !std::isinf(min0[j]), has1 = !std::isinf(min1[j]);
      const float got = llrs[std::size_t(v) * nb + j];
      const std::string where = "vector " + std::to_string(v) + " bit " + std::to_string(j) +
                                ": LLR " + std::to_string(got);
      if (has0 && has1) {
        ++r.both;
        const float l = std::clamp((min1[j] - min0[j]) * inv_n0, -clip, clip);
        if (got != l) {
          fail(r.mismatches, where + ", expected " + std::to_string(l) + " (both values listed)");
        }
        continue;
      }
      ++r.missing;
      const int t = j / m, b = j % m, c = has0 ? 1 : 0;
      // x': the other axis kept, this axis' amplitude nearest (then lower) with bit b = c.
      const bool re_axis = (b & 1) == 0;
      const C pb = pts[xb[t]];
      int to = -1;
      for (int i = 0; i < M; ++i) {
        if (((i >> (m - 1 - b)) & 1) != c) continue;
        const C q = pts[i];
        if (re_axis ? q.imag() != pb.imag() : q.real() != pb.real()) continue;
        const double dist =
            re_axis ? std::abs(q.real() - pb.real()) : std::abs(q.imag() - pb.imag());
        const double lvl = re_axis ? q.real() : q.imag();
        if (to < 0) {
          to = i;
          continue;
        }
        const C o = pts[to];
        const double od = re_axis ? std::abs(o.real() - pb.real()) : std::abs(o.imag() - pb.imag());
        const double ol = re_axis ? o.real() : o.imag();
        if (dist < od - 1e-9 || (std::abs(dist - od) <= 1e-9 && lvl < ol)) to = i;
      }
      std::vector<int> xf = xb;
      xf[t] = to;
      const double delta = metric(xf) - db;
      const double l = std::clamp((c == 1 ? delta : -delta) / n0, -double(clip), double(clip));
      const double tol = 1e-4 * (1.0 + (db + std::abs(delta)) / n0);
      if (std::abs(got - l) > tol) {
        fail(r.mismatches, where + ", expected " + std::to_string(l) + " (one value listed)");
      }
      const double ex = exact[std::size_t(v) * nb + j];
      const double clip_rule = c == 1 ? clip : -clip;
      const double err = std::abs(got - ex), err_clip = std::abs(clip_rule - ex);
      if (!best_is_ml) {
        ++r.not_ml;
      } else if (err > err_clip + tol) {
        fail(r.farther, where + ", exact max-log " + std::to_string(ex) + ", clip rule " +
                            std::to_string(clip_rule) + " is closer");
      }
      if (best_is_ml && err < err_clip - tol) ++r.closer;
      if (got != 0.f && std::abs(got) < clip) ++r.missing_inside;
    }
  }
  return r;
}

// The problem with the channels c, c + every, c + 2 every, ... set to 0 (c = 0 if every = 1).
inline Problem with_zero_channels(Problem p, int every) {
  const std::size_t per = std::size_t(p.shape.nr) * p.shape.nt;
  for (std::size_t c = 0; c * per < p.h.size(); c += std::size_t(every)) {
    std::fill(p.h.begin() + std::ptrdiff_t(c * per), p.h.begin() + std::ptrdiff_t((c + 1) * per),
              cf32(0.f, 0.f));
  }
  return p;
}

}  // namespace mimorx::test

// Trellis detector: config validation, the complex QR (linalg's QrPlan), the CPU reference of
// the search and dispatch to the CUDA kernel.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>

#include "detect/trellis_cuda.hpp"
#include "detect/trellis_math.hpp"
#include "mimorx/config.hpp"
#include "mimorx/core/error.hpp"
#include "mimorx/detect/trellis.hpp"
#include "mimorx/linalg/qr.hpp"

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

void validate_config(const TrellisConfig& c) {
  const auto& s = c.shape;
  if (!(s.nt == 2 || s.nt == 4 || s.nt == 8)) {
    throw Unsupported("nt: " + std::to_string(s.nt) +
                      " transmit antennas; the trellis detector supports nt = 2, 4 or 8");
  }
  require(s.nr >= s.nt && s.nr <= 64, "nr",
          std::to_string(s.nr) + " receive antennas; the QR-based trellis search needs nt (" +
              std::to_string(s.nt) + ") <= nr <= 64");
  if (s.mod == Modulation::bpsk) {
    throw Unsupported(
        "mod: bpsk is not supported by the trellis detector (its slicer needs two independent "
        "PAM axes); use qpsk, 16qam, 64qam or 256qam");
  }
  require(std::isfinite(c.llr_clip) && c.llr_clip > 0.f, "llr_clip",
          std::to_string(c.llr_clip) + "; must be finite and > 0");
}

// The search of one vector, in the order of the kernel's operations (thread q of the kernel
// is vertex q here). emit(t, vertex, distance, path) receives the nt * Q list paths.
template <int NT, int L, class Emit>
void search_vector(const cf32* r, const cf32* z, float scale, Emit&& emit) {
  using namespace trellis;
  constexpr int Q = L * L;
  cf32 rs[NT * NT], yh[NT];
  float inv_top[NT];
  for (int j = 0; j < NT; ++j) {
    for (int i = 0; i <= j; ++i) rs[j * NT + i] = scaled(r[j * NT + i], scale);
    for (int i = j + 1; i < NT; ++i) rs[j * NT + i] = cf32(0.f, 0.f);
  }
  for (int i = 0; i < NT; ++i) {
    yh[i] = z[i];
    inv_top[i] = nway::slice_scale(inv_half(rs[i * NT + i].re), L);
  }
  float dist[Q], nd[Q];
  Path path[Q], np[Q];
  cf32 u[Q];
  for (int q = 0; q < Q; ++q) {
    dist[q] = edge_weight(yh[NT - 1], rs[(NT - 1) * NT + NT - 1].re, amp_re<L>(q), amp_im<L>(q));
    path[q] = with_vertex(0, NT - 1, q);
  }
  for (int i = NT - 1; i >= 0; --i) {
    // State: path q ends at vertex q of row i. Its residual at row i-1 serves both the
    // extension of list L_i and the reduction into row i-1.
    if (i > 0) {
      for (int k = 0; k < Q; ++k) u[k] = residual<NT, L>(rs, yh[i - 1], i - 1, path[k]);
    }
    for (int q = 0; q < Q; ++q) {
      float d = dist[q];
      Path p = path[q];
      if (i > 0) extend<NT, L>(rs, yh, inv_top, i - 1, u[q], &d, &p);
      emit(i, q, d, p);
    }
    if (i == 0) break;
    const float dr = rs[(i - 1) * NT + i - 1].re;
    for (int q = 0; q < Q; ++q) {
      int arg = 0;
      nd[q] = reduce_vertex<Q>(
          [&](int k, float* dk, cf32* uk) {
            *dk = dist[k];
            *uk = u[k];
          },
          dr, amp_re<L>(q), amp_im<L>(q), &arg);
      np[q] = with_vertex(path[arg], i - 1, q);
    }
    std::copy(nd, nd + Q, dist);
    std::copy(np, np + Q, path);
  }
}

}  // namespace

struct TrellisPlan::Impl {
  TrellisConfig cfg;
  Backend backend;
  int levels, m, nbits, q_count;
  linalg::QrPlan qr_plan;
  Buffer<cf32> r, z;
  Buffer<int> status;
  std::int64_t qr_vectors = -1;  // vectors whose QR the workspace holds (for search())
  std::int64_t qr_channels = -1;

  static linalg::QrConfig qr_config(const TrellisConfig& c) {
    linalg::QrConfig q;
    q.nr = c.shape.nr;
    q.nt = c.shape.nt;
    q.model = linalg::QrModel::complex;
    q.want_q = false;
    q.want_qhy = true;
    return q;
  }

  Impl(const TrellisConfig& c, Backend b)
      : cfg(c),
        backend(b),
        levels(axis_levels(c.shape.mod)),
        m(bits_per_symbol(c.shape.mod)),
        nbits(c.shape.nt * m),
        q_count(levels * levels),
        qr_plan(qr_config(c), b) {}

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
    const std::int64_t nv = num_vectors(in), nc = in.h.batch;
    const int nt = cfg.shape.nt;
    if (r.size() < std::size_t(nc) * nt * nt)
      r = Buffer<cf32>::on(backend, std::size_t(nc) * nt * nt);
    if (z.size() < std::size_t(nv) * nt) z = Buffer<cf32>::on(backend, std::size_t(nv) * nt);
    if (status.size() < std::size_t(nc)) status = Buffer<int>::on(backend, std::size_t(nc));
    const Memory mem = memory_of(backend);
    linalg::QrInput qi;
    qi.h = in.h;
    qi.y = in.y;
    qi.vectors_per_channel = in.vectors_per_channel;
    linalg::QrOutput qo;
    qo.r = MatrixBatch<cf32>(r.data(), nc, nt, nt, mem);
    qo.z = MatrixBatch<cf32>(z.data(), nv, nt, 1, mem);
    // With a status view the QR neither synchronises nor throws for a rank-deficient channel:
    // its R has a zero row, every point of that stage then weighs the same.
    qo.status = View<int>(status.data(), nc, mem);
    qr_plan.run(qi, qo, s);
    qr_vectors = nv;
    qr_channels = nc;
  }

  void search(const DetectInput& in, View<std::uint8_t> bits, View<float> llrs, float* cand_d,
              std::uint8_t* cand_sym, const Stream& s) {
    const std::int64_t nv = num_vectors(in);
    require(qr_vectors == nv && qr_channels == in.h.batch, "search",
            "the workspace holds the QR of " + std::to_string(qr_vectors) +
                " vectors, this input has " + std::to_string(nv) + "; call qr() first");
    const int nt = cfg.shape.nt, vpc = in.vectors_per_channel;
    if (backend.is_cuda()) {
#if MIMORX_HAS_CUDA
      trellis_cuda::search(r.data(), std::int64_t(nt) * nt, z.data(), nt, nv, vpc, nt,
                           cfg.shape.mod, in.noise_var.data, in.noise_var.size, cfg.llr_clip,
                           bits.data, llrs.size ? llrs.data : nullptr, cand_d, cand_sym,
                           backend.device(), s.handle());
      return;
#else
      (void)s;
      throw Unsupported("backend: this build of mimorx has no CUDA backend");
#endif
    }
    const float scale = qam_scale(cfg.shape.mod);
    dispatch_shape(nt, levels, [&](auto nt_c, auto l_c) {
      constexpr int NT = decltype(nt_c)::value, L = decltype(l_c)::value, Q = L * L;
      const int nb = nbits;
      const float clip = cfg.llr_clip;
      const cf32* rp = r.data();
      const cf32* zp = z.data();
#pragma omp parallel for schedule(static)
      for (std::int64_t v = 0; v < nv; ++v) {
        float min0[64], min1[64];
        for (int j = 0; j < nb; ++j) min0[j] = min1[j] = std::numeric_limits<float>::infinity();
        search_vector<NT, L>(
            rp + (v / vpc) * NT * NT, zp + v * NT, scale,
            [&](int t, int q, float d, trellis::Path p) {
              if (cand_d) {
                const std::int64_t c = (v * NT + t) * Q + trellis::vertex_symbol<L>(q);
                cand_d[c] = d;
                for (int j = 0; j < NT; ++j)
                  cand_sym[c * NT + j] =
                      std::uint8_t(trellis::vertex_symbol<L>(trellis::vertex_of(p, j)));
                return;
              }
              nway::fold_minima(trellis::path_bits<NT, L>(p), d, nb, min0, min1);
            });
        if (cand_d) continue;
        const float n0 = in.noise_var[in.noise_var.size == 1 ? 0 : v];
        const float inv_n0 = nway::fdiv(1.f, n0);
        nway::write_minima(min0, min1, nb, inv_n0, clip, bits.data + v * nb,
                           llrs.size ? llrs.data + v * nb : nullptr);
      }
    });
  }
};

TrellisPlan::TrellisPlan(const TrellisConfig& config, Backend backend) {
  validate_config(config);
  impl_ = std::make_unique<Impl>(config, backend);
}
TrellisPlan::~TrellisPlan() = default;
TrellisPlan::TrellisPlan(TrellisPlan&&) noexcept = default;
TrellisPlan& TrellisPlan::operator=(TrellisPlan&&) noexcept = default;

void TrellisPlan::run(const DetectInput& in, View<std::uint8_t> bits, View<float> llrs,
                      const Stream& stream) {
  validate(in, impl_->cfg.shape, impl_->backend, impl_->cfg.check_device_values);
  impl_->check_outputs(num_vectors(in), bits, llrs);
  impl_->qr(in, stream);
  impl_->search(in, bits, llrs, nullptr, nullptr, stream);
}

void TrellisPlan::qr(const DetectInput& in, const Stream& stream) {
  validate(in, impl_->cfg.shape, impl_->backend, false);
  impl_->qr(in, stream);
}

void TrellisPlan::search(const DetectInput& in, View<std::uint8_t> bits, View<float> llrs,
                         const Stream& stream) {
  impl_->check_outputs(num_vectors(in), bits, llrs);
  impl_->search(in, bits, llrs, nullptr, nullptr, stream);
}

void TrellisPlan::candidates(const DetectInput& in, View<float> distances,
                             View<std::uint8_t> symbols, const Stream& stream) {
  const std::int64_t n = num_vectors(in) * impl_->cfg.shape.nt * impl_->q_count;
  const Memory mem = memory_of(impl_->backend);
  require_size(distances, n, "distances");
  require_size(symbols, n * impl_->cfg.shape.nt, "symbols");
  require_memory(distances.where, mem, "distances");
  require_memory(symbols.where, mem, "symbols");
  impl_->search(in, View<std::uint8_t>(), View<float>(), distances.data, symbols.data, stream);
}

const TrellisConfig& TrellisPlan::config() const { return impl_->cfg; }
const Backend& TrellisPlan::backend() const { return impl_->backend; }
int TrellisPlan::vertices() const { return impl_->q_count; }

}  // namespace mimorx::detect

// StsPlan: config validation, the CPU reference (OpenMP over received vectors) and the dispatch
// to the CUDA backend (sts_cuda.cu).
#include <cmath>
#include <string>
#include <vector>

#include "detect/common_list.hpp"
#include "detect/sphere_math.hpp"
#include "detect/sts_cuda.hpp"
#include "detect/sts_math.hpp"
#include "mimorx/config.hpp"
#include "mimorx/core/buffer.hpp"
#include "mimorx/core/error.hpp"
#include "mimorx/detect/sts.hpp"

namespace mimorx::detect {

struct StsPlan::Workspace {
  sts::BitTable tab;
  std::vector<float> q, r;  // per channel: Q (2nr x n) and R (n x n)
  std::vector<int> perm;    // per channel: tree column -> real column
#if MIMORX_HAS_CUDA
  Buffer<unsigned char> dws;  // sts_cuda_workspace_bytes for the largest batch so far
#endif
};

StsPlan::StsPlan(const StsConfig& cfg, Backend backend)
    : cfg_(cfg), backend_(backend), ws_(std::make_unique<Workspace>()) {
  const MimoShape& s = cfg.shape;
  require(s.nt >= 1 && s.nt <= 8, "nt",
          std::to_string(s.nt) + " transmit antennas; the sts detector supports 1..8");
  require(s.nr >= s.nt && s.nr <= 64, "nr",
          std::to_string(s.nr) + " receive antennas for nt = " + std::to_string(s.nt) +
              "; the sts detector needs nt <= nr <= 64");
  const int b = bits_per_symbol(s.mod);
  require(b == 1 || b == 2 || b == 4 || b == 6 || b == 8, "mod",
          std::to_string(b) + " bits per symbol; allowed BPSK, QPSK, 16-, 64-, 256-QAM");
  require(std::isfinite(cfg.clip) && cfg.clip >= 0.f, "clip",
          std::to_string(cfg.clip) + "; the LLR clipping must be finite and >= 0 (0 = none)");
  require(cfg.node_cap >= 0, "node_cap",
          std::to_string(cfg.node_cap) + "; must be >= 0 (0 = no cap)");
  require(std::isfinite(cfg.capped_llr) && cfg.capped_llr > 0.f, "capped_llr",
          std::to_string(cfg.capped_llr) + "; must be finite and > 0");
#if !MIMORX_HAS_CUDA
  if (backend.is_cuda()) throw Unsupported("backend: this build has no CUDA backend");
#endif
  sts::make_bit_table(s.mod, s.nt, ws_->tab);
}

StsPlan::~StsPlan() = default;
StsPlan::StsPlan(StsPlan&&) noexcept = default;
StsPlan& StsPlan::operator=(StsPlan&&) noexcept = default;

void StsPlan::run(const DetectInput& in, View<std::uint8_t> bits, View<float> llrs,
                  View<SearchStats> stats, const Stream& stream) {
  const MimoShape& s = cfg_.shape;
  validate(in, s, backend_, cfg_.check_device_values);
  const std::int64_t V = num_vectors(in), C = in.h.batch;
  const int nt = s.nt, nr = s.nr, per = s.bits_per_vector();
  const Memory mem = memory_of(backend_);
  detail::check_soft_outputs(backend_, V, per, bits, llrs);
  require(
      stats.size == 0 || stats.size == V, "stats",
      "has " + std::to_string(stats.size) + " elements, expected " + std::to_string(V) + " (or 0)");
  if (stats.size) require_memory(stats.where, mem, "stats");
  if (V == 0) return;
  if (backend_.is_cuda()) return run_cuda(in, bits, llrs, stats, stream);
  (void)stream;

  const int n = sphere::real_dim(s.mod, nt), m = 2 * nr, L = axis_levels(s.mod);
  Workspace& w = *ws_;
  w.q.resize(std::size_t(C) * m * n);
  w.r.resize(std::size_t(C) * n * n);
  w.perm.resize(std::size_t(C) * n);
  const bool sorted = cfg_.sorted_qr;
#pragma omp parallel for schedule(static)
  for (std::int64_t c = 0; c < C; ++c) {
    float* q = &w.q[std::size_t(c * m * n)];
    sphere::real_model(s.mod, in.h.matrix(c), nr, nt, q);
    sphere::sorted_qr(q, m, n, &w.r[std::size_t(c * n * n)], &w.perm[std::size_t(c * n)], 1, 1,
                      sorted);
  }
  const float clip = cfg_.clip, capped_llr = cfg_.capped_llr;
  const std::int64_t cap = cfg_.node_cap;
  const sts::BitTable* tab = &w.tab;
#pragma omp parallel for schedule(dynamic, 16)
  for (std::int64_t v = 0; v < V; ++v) {
    const std::int64_t c = v / in.vectors_per_channel;
    const float* q = &w.q[std::size_t(c * m * n)];
    const float n0 = in.noise_var[in.noise_var.size == 1 ? 0 : v];
    float z[sts::kMaxReal];
    for (int k = 0; k < n; ++k) z[k] = sphere::project(q, m, nr, in.y.matrix(v), k);
    sts::Params p;
    p.n = n;
    p.L = L;
    p.nbits = per;
    p.r = &w.r[std::size_t(c * n * n)];
    p.perm = &w.perm[std::size_t(c * n)];
    p.tab = tab;
    p.clip_n0 = clip * n0;
    p.node_cap = cap;
    sts::State st;
    st.zp = z;
    const sts::Outcome o = sts::search(p, st);
    sts::write_outputs(p, o, st, n0, clip, capped_llr, &bits[v * per],
                       llrs.size ? &llrs[v * per] : nullptr);
    if (stats.size) stats[v] = SearchStats{o.nodes, o.leaves, o.updates, o.capped};
  }
}

#if MIMORX_HAS_CUDA
namespace {
// The automatic schedule (H200, docs/sts.md): one thread per vector only for clipped searches of
// at most 16 bits a vector, whose searches are short (tens of nodes) and whose per-vector cost
// the queue would raise; the queue everywhere else, where node counts have long tails.
bool refills(const StsConfig& c) {
  if (c.schedule != StsSchedule::automatic) return c.schedule == StsSchedule::refill;
  return !(c.clip > 0.f && c.shape.bits_per_vector() <= 16);
}
}  // namespace
#endif

void StsPlan::run_cuda(const DetectInput& in, View<std::uint8_t> bits, View<float> llrs,
                       View<SearchStats> stats, const Stream& stream) {
#if MIMORX_HAS_CUDA
  const MimoShape& s = cfg_.shape;
  const std::int64_t C = in.h.batch;
  const std::size_t bytes = sts::sts_cuda_workspace_bytes(s.mod, s.nt, s.nr, C);
  Workspace& w = *ws_;
  if (w.dws.size() < bytes) w.dws = Buffer<unsigned char>::device(bytes, backend_.device());
  sts::StsCudaArgs a;
  a.mod = s.mod;
  a.nt = s.nt;
  a.nr = s.nr;
  a.clip = cfg_.clip;
  a.capped_llr = cfg_.capped_llr;
  a.node_cap = cfg_.node_cap;
  a.sorted_qr = cfg_.sorted_qr;
  a.refill_lanes = refills(cfg_);
  a.channels = C;
  a.vectors = num_vectors(in);
  a.vectors_per_channel = in.vectors_per_channel;
  a.h = in.h.data;
  a.h_stride = in.h.batch_stride;
  a.y = in.y.data;
  a.y_stride = in.y.batch_stride;
  a.n0 = in.noise_var.data;
  a.n0_size = in.noise_var.size;
  a.bits = bits.data;
  a.llrs = llrs.size ? llrs.data : nullptr;
  a.stats = stats.size ? stats.data : nullptr;
  a.workspace = w.dws.data();
  a.workspace_bytes = w.dws.size();
  a.device = backend_.device();
  sts::sts_run_cuda(a, stream.handle());
#else
  (void)in, (void)bits, (void)llrs, (void)stats, (void)stream;
  throw Unsupported("backend: this build has no CUDA backend");
#endif
}

}  // namespace mimorx::detect

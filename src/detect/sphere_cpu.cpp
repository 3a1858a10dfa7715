// SpherePlan: the Schnorr-Euchner reference on the CPU, the lane and team kernels on CUDA, and
// the sequential emulation of the team kernel's PSD search used by the tests.
#include <omp.h>

#include <algorithm>
#include <atomic>
#include <string>
#include <utility>
#include <vector>

#include "detect/sphere_internal.hpp"
#include "detect/sphere_se.hpp"
#include "mimorx/config.hpp"
#include "mimorx/core/error.hpp"
#include "mimorx/detect/sphere.hpp"

namespace mimorx::detect {

namespace sphere {

void qr_channel(Modulation mod, const cf32* h, int nr, int nt, float* q, float* r, int* inv_perm) {
  const int n = real_dim(mod, nt);
  int perm[kMaxReal];
  real_model(mod, h, nr, nt, q);
  sorted_qr(q, 2 * nr, n, r, perm);
  for (int k = 0; k < n; ++k) inv_perm[perm[k]] = k;
}

namespace {
// The search state of one vector on the CPU: arrays on the stack.
struct StackState {
  const float* zp;
  float wv[kMaxReal], pmv[kMaxReal + 1], ampv[kMaxReal];
  int spanv[kMaxReal];
  float z(int k) const { return zp[k]; }
  float& w(int k) { return wv[k]; }
  int& span(int k) { return spanv[k]; }
  float& pm(int k) { return pmv[k]; }
  float& amp(int k) { return ampv[k]; }
};
}  // namespace

PsdOutcome se_search(const float* r, const float* z, int n, int L, float d2, std::uint64_t best,
                     std::int64_t node_cap) {
  StackState st{z, {}, {}, {}, {}};
  return schnorr_euchner<0>(r, st, n, L, d2, best, node_cap);
}

namespace {
std::atomic<int> g_team_override{0};
std::atomic<int> g_order_override{0};
std::atomic<int> g_min_blocks_override{0};
std::atomic<int> g_phase_override{0};
std::atomic<int> g_qr_mode_override{0};
std::atomic<int> g_lane_block_override{0};
std::atomic<int> g_lane_order_override{0};
}  // namespace
void set_lane_order_override(int mode) { g_lane_order_override = mode; }
int lane_order_override() { return g_lane_order_override; }
void set_lane_block_override(int threads) { g_lane_block_override = threads; }
int lane_block_override() { return g_lane_block_override; }
void set_phase_override(int phases) { g_phase_override = phases; }
int phase_override() { return g_phase_override; }
void set_qr_mode_override(int mode) { g_qr_mode_override = mode; }
int qr_mode_override() { return g_qr_mode_override; }
void set_min_blocks_override(int blocks) { g_min_blocks_override = blocks; }
int min_blocks_override() { return g_min_blocks_override; }
void set_team_override(int team) { g_team_override = team; }
int team_override() { return g_team_override; }
void set_order_override(int order) { g_order_override = order; }
int order_override() { return g_order_override; }

namespace {
// The PSD team emulated by one CPU thread, computing what the kernel's team computes (the same
// parents' targets, child metrics and order): a stable sort of the children in index order
// replaces the bitonic sort on (metric, index), a loop the shuffle argmin.
struct HostTeam {
  const PsdSchedule& s;
  const float* r;
  const float* z;
  bool lazy;
  std::vector<std::pair<float, std::uint64_t>> buf[kMaxLevels];
  std::vector<float> tgt;

  int take(int x, int pos, int cnt, int paths, float d2) {
    auto& b = buf[x];
    int np = 0;
    if (!lazy) {
      while (np < paths && pos + np < cnt && b[std::size_t(pos + np)].first < d2) ++np;
      return np;
    }
    for (; np < paths && pos + np < cnt; ++np) {
      const auto lo = b.begin() + pos + np;
      const auto it = std::min_element(
          lo, b.begin() + cnt, [](const auto& u, const auto& v) { return u.first < v.first; });
      if (!(it->first < d2)) break;
      std::iter_swap(lo, it);
    }
    return np;
  }
  std::pair<float, std::uint64_t> parent(int x, int i) const {
    return x < 0 ? std::pair<float, std::uint64_t>{0.f, 0} : buf[x][std::size_t(i)];
  }
  // The columns lo..top an expansion from level x to level y sets, and the parents' targets.
  void targets(int x, int first, int np, int y, int* lo, int* top, int* shift) {
    *top = (x < 0 ? s.n + 1 : s.lvl[x]) - 2;
    *lo = s.lvl[y] - 1;
    const int d = *top - *lo + 1;
    *shift = d * s.log2q;
    tgt.assign(std::size_t(np * d), 0.f);
    for (int t = 0; t < np * d; ++t) {
      const int p = t / d;
      tgt[std::size_t(t)] =
          partial_target(r, z, s.n, s.q, parent(x, first + p).second, *lo + t - p * d, *top + 1);
    }
  }
  float child(int x, int first, int lo, int top, int shift, int c, float d2) const {
    const int p = c >> shift;
    return child_metric(r, s.n, s.q, s.log2q, &tgt[std::size_t(p * (top - lo + 1))],
                        parent(x, first + p).first, lo, top, c & ((1 << shift) - 1), d2);
  }
  std::uint64_t child_vec(int x, int first, int lo, int top, int shift, int c) const {
    return child_vector(parent(x, first + (c >> shift)).second, lo, top, c & ((1 << shift) - 1),
                        s.log2q, s.q);
  }
  int expand_sort(int x, int first, int np, int y, float d2) {
    int lo, top, shift;
    targets(x, first, np, y, &lo, &top, &shift);
    auto& out = buf[y];
    out.clear();
    const int nch = np << shift;
    int count = 0;
    for (int c = 0; c < nch; ++c) {
      const float m = child(x, first, lo, top, shift, c, d2);
      out.emplace_back(m, child_vec(x, first, lo, top, shift, c));
      count += m < d2 ? 1 : 0;
    }
    if (lazy) return nch;
    std::stable_sort(out.begin(), out.end(),
                     [](const auto& u, const auto& v) { return u.first < v.first; });
    return count;
  }
  void expand_leaves(int x, int first, int np, int y, float d2, float* m, std::uint64_t* v) {
    int lo, top, shift;
    targets(x, first, np, y, &lo, &top, &shift);
    const int nch = np << shift;
    float bm = inf_metric();
    int bi = -1;
    for (int c = 0; c < nch; ++c) {
      const float cm = child(x, first, lo, top, shift, c, d2);
      if (cm < bm) {
        bm = cm;
        bi = c;
      }
    }
    *m = bm;
    *v = bi >= 0 ? child_vec(x, first, lo, top, shift, bi) : 0;
  }
};
}  // namespace

PsdOutcome psd_search_host(const PsdSchedule& s, const float* r, const float* z, float d2,
                           std::uint64_t best, std::int64_t node_cap, bool lazy) {
  HostTeam team{s, r, z, lazy, {}, {}};
  PsdSearchParams p;
  p.nlev = s.nlev;
  p.lvl = s.lvl;
  p.paths = s.paths;
  p.nodes_per_parent = s.nodes_per_parent;
  p.children_per_parent = s.children_per_parent;
  p.node_cap = node_cap;
  return psd_search(team, p, d2, best);
}

}  // namespace sphere

struct SpherePlan::Workspace {
  std::vector<float> q, r;
  std::vector<int> inv_perm;
#if MIMORX_HAS_CUDA
  Buffer<float> dq, dr;
  Buffer<int> dperm, counter;
  Buffer<unsigned char> lane_ws;  // the lane kernel's channel order
  std::int64_t channels = 0;
#endif
};

namespace {
constexpr std::size_t kCpuNominalShared = 48 * 1024;

std::size_t shared_limit(const Backend& b) {
  if (!b.is_cuda()) return kCpuNominalShared;
  const auto devs = cuda_devices();
  require(b.device() >= 0 && std::size_t(b.device()) < devs.size(), "backend",
          "CUDA device " + std::to_string(b.device()) + " is not present");
  return devs[std::size_t(b.device())].shared_memory_per_block_optin;
}
}  // namespace

SpherePlan::SpherePlan(const SphereConfig& cfg, Backend backend)
    : cfg_(cfg), backend_(backend), ws_(std::make_unique<Workspace>()) {
  const MimoShape& s = cfg.shape;
  require(s.nt >= 1 && s.nt <= 8, "nt",
          std::to_string(s.nt) + " transmit antennas; the sphere detector supports 1..8");
  require(s.nr >= s.nt && s.nr <= 64, "nr",
          std::to_string(s.nr) + " receive antennas for nt = " + std::to_string(s.nt) +
              "; the sphere detector needs nt <= nr <= 64");
  const int b = bits_per_symbol(s.mod);
  require(b == 1 || b == 2 || b == 4 || b == 6 || b == 8, "mod",
          std::to_string(b) + " bits per symbol; allowed BPSK, QPSK, 16-, 64-, 256-QAM");
  require(cfg.node_cap >= 0, "node_cap",
          std::to_string(cfg.node_cap) + "; must be >= 0 (0 = no cap)");
  require(cfg.lanes == 0 || cfg.lanes == 1 || cfg.lanes == 8 || cfg.lanes == 16 || cfg.lanes == 32,
          "lanes",
          std::to_string(cfg.lanes) + " threads per vector; allowed 0 (automatic), 1, 8, 16, 32");
  require(!(cfg.lanes == 1 && cfg.levels), "lanes",
          "1 (depth-first on every level) with explicit PSD levels; use 8, 16 or 32 lanes for "
          "explicit levels, or leave the levels empty");
  lanes_ = cfg.lanes ? cfg.lanes : sphere::psd_auto_lanes(s, cfg.levels.has_value());
  const int n = sphere::real_dim(s.mod, s.nt);
  const int q = axis_levels(s.mod);
  const std::size_t limit = shared_limit(backend);
  if (cfg.levels) {
    validate_psd_levels(*cfg.levels, n, q, limit);
    levels_ = *cfg.levels;
  } else {
    levels_ = choose_psd_levels(s, limit);
    validate_psd_levels(levels_, n, q, limit);
  }
#if !MIMORX_HAS_CUDA
  require(!backend.is_cuda(), "backend", "this build has no CUDA backend");
#endif
}

SpherePlan::~SpherePlan() = default;
SpherePlan::SpherePlan(SpherePlan&&) noexcept = default;
SpherePlan& SpherePlan::operator=(SpherePlan&&) noexcept = default;

void SpherePlan::run(const DetectInput& in, View<std::uint8_t> bits, View<float> metrics,
                     View<SearchStats> stats, View<cf32> symbols, const Stream& stream) {
  const MimoShape& s = cfg_.shape;
  validate(in, s, backend_);
  const std::int64_t V = num_vectors(in);
  const std::int64_t C = in.h.batch;
  const int nt = s.nt, nr = s.nr, mb = bits_per_symbol(s.mod);
  const Memory mem = memory_of(backend_);
  require_size(bits, V * nt * mb, "bits");
  require_memory(bits.where, mem, "bits");
  if (metrics.data) {
    require_size(metrics, V, "metrics");
    require_memory(metrics.where, mem, "metrics");
  }
  if (stats.data) {
    require_size(stats, V, "stats");
    require_memory(stats.where, mem, "stats");
  }
  if (symbols.data) {
    require_size(symbols, V * nt, "symbols");
    require_memory(symbols.where, mem, "symbols");
  }
  if (V == 0) return;
  const int n = sphere::real_dim(s.mod, nt);
  const int m = 2 * nr;
  const int L = axis_levels(s.mod);

  if (backend_.is_cuda()) {
#if MIMORX_HAS_CUDA
    Workspace& w = *ws_;
    if (w.channels < C) {
      w.dq = Buffer<float>::device(std::size_t(C) * m * n, backend_.device());
      w.dr = Buffer<float>::device(std::size_t(C) * n * n, backend_.device());
      w.dperm = Buffer<int>::device(std::size_t(C) * n, backend_.device());
      w.channels = C;
    }
    if (w.counter.empty()) w.counter = Buffer<int>::device(1, backend_.device());
    sphere::PsdCudaArgs a;
    a.mod = s.mod;
    a.nt = nt;
    a.nr = nr;
    a.sched = sphere::make_schedule(levels_, n, L);
    a.node_cap = cfg_.node_cap;
    a.babai = cfg_.babai_initial_radius;
    a.channels = C;
    a.vectors = V;
    a.vectors_per_channel = in.vectors_per_channel;
    a.h = in.h.data;
    a.h_stride = in.h.batch_stride;
    a.y = in.y.data;
    a.y_stride = in.y.batch_stride;
    a.q = w.dq.data();
    a.r = w.dr.data();
    a.inv_perm = w.dperm.data();
    a.counter = w.counter.data();
    a.bits = bits.data;
    a.metrics = metrics.data;
    a.stats = stats.data;
    a.symbols = symbols.data;
    a.device = backend_.device();
    a.team_override = sphere::team_override() ? sphere::team_override() : lanes_;
    a.lane_block = sphere::lane_block_override();
    if (sphere::psd_team_width(a.sched, a.team_override) == 1) {
      const std::size_t bytes = sphere::psd_lane_workspace_bytes(C);
      if (bytes > 0 && sphere::lane_order_override() != 1) {
        if (w.lane_ws.size() < bytes)
          w.lane_ws = Buffer<unsigned char>::device(bytes, backend_.device());
        a.lane_ws = w.lane_ws.data();
        a.lane_ws_bytes = w.lane_ws.size();
      }
    }
    a.min_blocks = sphere::min_blocks_override();
    a.phases = sphere::phase_override() ? sphere::phase_override() : 3;
    a.qr_mode = sphere::qr_mode_override();
    a.lazy_select =
        sphere::order_override() == 0 ? sphere::kDefaultLazySelect : sphere::order_override() == 2;
    sphere::psd_run_cuda(a, stream.handle());
    return;
#else
    throw Unsupported("backend: this build has no CUDA backend");
#endif
  }

  (void)stream;
  Workspace& w = *ws_;
  w.q.resize(std::size_t(C) * m * n);
  w.r.resize(std::size_t(C) * n * n);
  w.inv_perm.resize(std::size_t(C) * n);
#pragma omp parallel for schedule(static)
  for (std::int64_t c = 0; c < C; ++c) {
    sphere::qr_channel(s.mod, in.h.matrix(c), nr, nt, &w.q[std::size_t(c * m * n)],
                       &w.r[std::size_t(c * n * n)], &w.inv_perm[std::size_t(c * n)]);
  }
  const bool babai = cfg_.babai_initial_radius;
  const std::int64_t cap = cfg_.node_cap;
#pragma omp parallel for schedule(dynamic, 64)
  for (std::int64_t v = 0; v < V; ++v) {
    const std::int64_t c = v / in.vectors_per_channel;
    const float* q = &w.q[std::size_t(c * m * n)];
    const float* r = &w.r[std::size_t(c * n * n)];
    const int* ip = &w.inv_perm[std::size_t(c * n)];
    const cf32* y = in.y.matrix(v);
    float z[sphere::kMaxReal];
    for (int k = 0; k < n; ++k) z[k] = sphere::project(q, m, nr, y, k);
    float d2 = sphere::inf_metric();
    std::uint64_t best = 0;
    if (babai) best = sphere::babai_point(r, z, n, L, &d2);
    const sphere::PsdOutcome o = sphere::se_search(r, z, n, L, d2, best, cap);
    cf32 x[8];
    for (int t = 0; t < nt; ++t) {
      sphere::write_stream(s.mod, nt, t, o.best, ip, &bits[(v * nt + t) * mb], &x[t]);
      if (symbols.data) symbols[v * nt + t] = x[t];
    }
    if (metrics.data) metrics[v] = sphere::residual_metric(in.h.matrix(c), nr, nt, y, x);
    if (stats.data) stats[v] = SearchStats{o.nodes, o.leaves, o.updates, o.capped};
  }
}

}  // namespace mimorx::detect

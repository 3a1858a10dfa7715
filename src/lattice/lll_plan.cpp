// LllPlan: validation, method choice and the dispatch to the CPU and CUDA reductions (the CPU
// block method: block_lll_cpu.cpp; the float32 lattice check: float32_check.cpp).
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "lattice/float32_check.hpp"
#include "lattice/lll_internal.hpp"
#include "mimorx/config.hpp"
#include "mimorx/core/error.hpp"

namespace mimorx::lattice {

int automatic_block(int m) {
  // l = 32 beats 64 on Gaussian float32 bases, CPU and GPU, and is within a few % of 16 on the
  // GPU (docs/lll.md): the passes stay at 4-5 either way, so the cheaper block reductions win.
  if (m <= 64) return m;
  return 32;
}

LllPlan::LllPlan(const LllConfig& c, Backend backend, const LllOptions& options)
    : cfg_(c), opt_(options), backend_(backend) {
  require(c.n >= 1 && c.n <= 4096, "n", std::to_string(c.n) + " rows; allowed 1..4096");
  require(c.m >= 1 && c.m <= c.n, "m",
          std::to_string(c.m) + " basis vectors in dimension " + std::to_string(c.n) +
              "; need 1 <= m <= n (more vectors than the dimension are linearly dependent)");
  require(c.delta >= 0.25 && c.delta < 1.0, "delta",
          std::to_string(c.delta) + "; LLL needs delta in [0.25, 1)");
  detail::check_eta(c.eta, c.delta);
  require(c.block == 0 || (c.block >= 4 && c.block % 2 == 0 && c.block <= 64), "block",
          std::to_string(c.block) + "; allowed 0 (automatic) or an even size 4..64");
  require(c.cpu_threads >= 0, "cpu_threads", std::to_string(c.cpu_threads) + "; must be >= 0");
  require(c.max_sweeps >= 0, "max_sweeps", std::to_string(c.max_sweeps) + "; must be >= 0");
  method_ = c.method;
  if (method_ == LllMethod::automatic) {
    if (backend.is_cuda()) {
      method_ = c.m <= 64 ? LllMethod::all_swap : LllMethod::block;
    } else {
      method_ = c.m < 128 ? LllMethod::sequential : LllMethod::block;
    }
  }
  if (backend.is_cuda()) {
#if MIMORX_HAS_CUDA
    if (method_ == LllMethod::sequential)
      throw Unsupported("method: 'sequential' runs on the CPU only; use all-swap or block on CUDA");
    if (method_ == LllMethod::all_swap &&
        !detail::all_swap_cuda_fits(c.n, c.m, c.transform, true, backend.device(), options))
      throw Unsupported("m, n: a " + std::to_string(c.n) + "x" + std::to_string(c.m) +
                        " basis does not fit one thread block's shared memory for all-swap; "
                        "use method block");
#else
    throw Unsupported("backend: this build has no CUDA backend");
#endif
  }
  block_ = c.block ? c.block : automatic_block(c.m);
  block_ = std::min(block_, c.m);
  if (block_ % 2) ++block_;
  block_ = std::max(2, std::min(block_, 64));
}

void LllPlan::run(MatrixBatch<double> basis, MatrixBatch<std::int64_t> transform,
                  View<LllStatus> status, const Stream& stream) {
  run_impl(basis, transform, status, stream);
}
void LllPlan::run(MatrixBatch<float> basis, MatrixBatch<std::int64_t> transform,
                  View<LllStatus> status, const Stream& stream) {
  run_impl(basis, transform, status, stream);
}

namespace {
int threads_of(const LllConfig& c) {
  return c.cpu_threads > 0 ? c.cpu_threads : omp_get_max_threads();
}

// The calling thread's OpenMP team size for the duration of a run: Eigen's products (the block
// method's Gram matrix and factorisations) take omp_get_max_threads() threads, not the plan's
// cpu_threads; without this scope cpu_threads = 1 would still run multi-thread products, with
// unbound threads' erratic timings on small VMs (docs/lll.md, "Limits and known issues").
class OmpTeamScope {
 public:
  explicit OmpTeamScope(int threads) : saved_(omp_get_max_threads()) {
    omp_set_num_threads(threads);
  }
  OmpTeamScope(const OmpTeamScope&) = delete;
  OmpTeamScope& operator=(const OmpTeamScope&) = delete;
  ~OmpTeamScope() { omp_set_num_threads(saved_); }

 private:
  int saved_;
};

template <class F>
detail::BlockReducer<F> cpu_reducer(double delta, int threads) {
  return [delta, threads](F* blocks, std::int64_t* u, LllStatus* stat, int count, int l) {
    std::int64_t swaps = 0;
#pragma omp parallel for num_threads(threads) schedule(dynamic) reduction(+ : swaps) if (count > 1)
    for (int c = 0; c < count; ++c) {
      const std::size_t bs = std::size_t(l) * l;
      const auto s = detail::all_swap_cpu<F>(l, l, blocks + c * bs, u + c * bs, delta,
                                             detail::default_max_iter(l), 1);
      stat[c] = s.status;
      swaps += s.swaps;
    }
    return swaps;
  };
}

#if MIMORX_HAS_CUDA
// The GPU half of the CPU+GPU scheduler: one CPU thread's blocks reduced by the CR-AS-LLL kernel
// on that thread's stream; buffers grow as needed and are reused across passes.
template <class F>
struct GpuReducer {
  int device;
  double delta;
  LllOptions options;
  Stream stream;
  Buffer<F> hb, db;
  Buffer<std::int64_t> hu, du;
  Buffer<std::int32_t> hs, ds;
  std::int64_t operator()(F* blocks, std::int64_t* u, LllStatus* stat, int count, int l) {
    const std::size_t bs = std::size_t(l) * l, total = bs * count;
    if (db.size() < total) {
      hb = Buffer<F>::pinned(total);
      db = Buffer<F>::device(total, device);
      hu = Buffer<std::int64_t>::pinned(total);
      du = Buffer<std::int64_t>::device(total, device);
    }
    if (ds.size() < std::size_t(count)) {
      hs = Buffer<std::int32_t>::pinned(count);
      ds = Buffer<std::int32_t>::device(count, device);
    }
    std::copy(blocks, blocks + total, hb.data());
    mimorx::detail::copy_bytes(db.data(), Memory::device, hb.data(), Memory::host,
                               total * sizeof(F), stream.handle());
    detail::all_swap_cuda<F>(db.data(), du.data(), ds.data(), count, l, l, bs, bs, delta,
                             detail::default_max_iter(l), stream.handle(), device, false, nullptr,
                             options);
    mimorx::detail::copy_bytes(hu.data(), Memory::host, du.data(), Memory::device,
                               total * sizeof(std::int64_t), stream.handle());
    mimorx::detail::copy_bytes(hs.data(), Memory::host, ds.data(), Memory::device,
                               count * sizeof(std::int32_t), stream.handle());
    stream.synchronize();
    std::copy(hu.data(), hu.data() + total, u);
    for (int c = 0; c < count; ++c) stat[c] = LllStatus(hs[c]);
    // Count blocks whose U is not upper triangular (they swapped).
    std::int64_t swapped = 0;
    for (int c = 0; c < count; ++c) {
      const std::int64_t* uc = u + c * bs;
      bool lower = false;
      for (int j = 0; j < l && !lower; ++j)
        for (int i = j + 1; i < l; ++i)
          if (uc[std::size_t(j) * l + i] != 0) {
            lower = true;
            break;
          }
      swapped += lower;
    }
    return swapped;
  }
};

// One CPU worker of the CUDA block method: its stream, the GPU-resident method's workspace and
// the host-side fallback's buffers. The plan keeps them between runs: creating them (a stream,
// pinned memory, about ten device buffers of m x m doubles, zero-filled host copies) costs
// milliseconds at m = 1024, more than a run.
template <class F>
struct BlockWorker {
  BlockWorker(int device, double delta, const LllOptions& options)
      : reducer{device, delta, options, Stream::create(device), {}, {}, {}, {}, {}, {}} {}
  GpuReducer<F> reducer;
  detail::GramWorkspace<F> gram;
  detail::BlockLllWorkspace<F> device;
  Buffer<std::int32_t> rank;  // presort: the basis's ranks and keys (device)
  Buffer<double> keys;
  Buffer<std::int64_t> t;  // float32 checked without the caller's T: the worker's own T
  std::vector<F> hb;       // the fallback's host copies, sized on first use
  std::vector<std::int64_t> ht;
};
#endif

template <class F>
bool all_finite(const F* p, std::int64_t n, std::int64_t* where) {
  for (std::int64_t i = 0; i < n; ++i)
    if (!std::isfinite(p[i])) {
      *where = i;
      return false;
    }
  return true;
}
}  // namespace

struct LllPlan::BlockWorkers {
#if MIMORX_HAS_CUDA
  // The caller's work on its stream up to the run (the basis' upload, say), which the workers'
  // streams wait for on the device.
  detail::OrderEvent input_ready;
  std::vector<std::unique_ptr<BlockWorker<float>>> f32;
  std::vector<std::unique_ptr<BlockWorker<double>>> f64;
  template <class F>
  std::vector<std::unique_ptr<BlockWorker<F>>>& of() {
    if constexpr (std::is_same_v<F, float>) {
      return f32;
    } else {
      return f64;
    }
  }
#endif
};

// CUDA all-swap, float32 checked: the bases that failed the device's re-check, packed
// (indices, B', input, T, status), and the device polish's workspace; kept so that a run does
// not allocate and free them.
struct LllPlan::FailedBases {
#if MIMORX_HAS_CUDA
  Buffer<std::int64_t> idx;
  Buffer<float> b, in;
  Buffer<std::int64_t> t;
  Buffer<std::int32_t> status;
  detail::PolishWorkspace polish;
#endif
};

LllPlan::~LllPlan() = default;
LllPlan::LllPlan(LllPlan&&) noexcept = default;
LllPlan& LllPlan::operator=(LllPlan&&) noexcept = default;

template <class F>
void LllPlan::run_impl(MatrixBatch<F> basis, MatrixBatch<std::int64_t> transform,
                       View<LllStatus> status, const Stream& stream) {
  const int n = cfg_.n, m = cfg_.m;
  const std::int64_t nb = basis.batch;
  require(basis.rows == n && basis.cols == m, "basis",
          "matrices are " + std::to_string(basis.rows) + "x" + std::to_string(basis.cols) +
              ", the plan was built for n x m = " + std::to_string(n) + "x" + std::to_string(m));
  require(nb >= 0, "basis", "negative batch size");
  require(basis.batch_stride >= std::int64_t(n) * m, "basis", "batch stride smaller than a matrix");
  const Memory mem = memory_of(backend_);
  require_memory(basis.where, mem, "basis");
  if (cfg_.transform) {
    require_shape(transform, nb, m, m, "transform");
    require_memory(transform.where, mem, "transform");
  }
  require(status.size == 0 || status.size == nb, "status",
          "has " + std::to_string(status.size) + " entries; give 0 or one per basis (" +
              std::to_string(nb) + ")");
  if (status.size) require_memory(status.where, Memory::host, "status");
  if (nb == 0) return;
  const long max_iter = cfg_.max_sweeps ? cfg_.max_sweeps : detail::default_max_iter(m);
  const int threads = threads_of(cfg_);
  std::vector<LllStatus> st(nb, LllStatus::reduced);
  const std::int64_t tstride = cfg_.transform ? transform.batch_stride : 0;
  // float32: the check of the outputs against the input lattice (LllConfig::lattice_check).
  const bool check = std::is_same_v<F, float> && cfg_.lattice_check;

  if (mem == Memory::host) {
    const OmpTeamScope team(threads);
    for (std::int64_t k = 0; k < nb; ++k) {
      std::int64_t where = 0;
      require(all_finite(basis.matrix(k), std::int64_t(n) * m, &where), "basis",
              "basis " + std::to_string(k) + " entry (" + std::to_string(where % n) + ", " +
                  std::to_string(where / n) + ") is NaN or Inf; every entry must be finite");
    }
    std::int64_t* tdata = cfg_.transform ? transform.data : nullptr;
    // Presort: every method below reduces the sorted basis (its float32 epilogue keeps the
    // sorted input), and T is taken back to the input order at the end.
    std::vector<std::int32_t> rank(cfg_.presort ? std::size_t(nb) * m : 0);
    if (cfg_.presort) {
#pragma omp parallel for num_threads(threads) schedule(static) if (threads > 1 && nb > 1)
      for (std::int64_t k = 0; k < nb; ++k)
        detail::presort_columns(n, m, basis.matrix(k), rank.data() + k * m);
    }
    if (method_ == LllMethod::sequential || method_ == LllMethod::all_swap) {
      // Bases in parallel; a lone large basis gets the threads inside (two-level nesting).
      const int outer = int(std::min<std::int64_t>(threads, nb));
      const int inner =
          method_ == LllMethod::all_swap && m >= 96 ? std::max(1, threads / outer) : 1;
      if (inner > 1) omp_set_max_active_levels(2);
#pragma omp parallel for num_threads(outer) schedule(dynamic) if (outer > 1)
      for (std::int64_t k = 0; k < nb; ++k) {
        F* bk = basis.matrix(k);
        std::int64_t* tk = tdata ? tdata + k * tstride : nullptr;
        if (method_ == LllMethod::all_swap) {
          // float32: the input is kept for the rebuild from T and to tell a singular basis
          // from a precision failure.
          std::vector<double> b_in;
          if (std::is_same_v<F, float>) b_in.assign(bk, bk + std::size_t(n) * m);
          st[k] = detail::all_swap_cpu<F>(n, m, bk, tk, cfg_.delta, max_iter, inner).status;
          if constexpr (std::is_same_v<F, float>)
            st[k] = detail::finish_float32(n, m, b_in.data(), tk, bk, cfg_.delta, st[k], check);
        } else {
          // The reference always computes in float64; a float basis is converted both ways.
          std::vector<double> bd(bk, bk + std::size_t(n) * m);
          std::vector<double> td(tk ? std::size_t(m) * m : 0);
          auto s = detail::se_lll_double(n, m, bd.data(), tk ? td.data() : nullptr, cfg_.delta,
                                         cfg_.eta);
          for (std::size_t i = 0; i < bd.size(); ++i) bk[i] = F(bd[i]);
          if (tk) {
            for (std::size_t i = 0; i < td.size(); ++i) {
              if (!(std::abs(td[i]) < 9.2e18)) s.status = LllStatus::precision_loss;
              tk[i] = std::int64_t(td[i]);
            }
          }
          st[k] = s.status;
        }
      }
    } else {
      const int outer = int(std::min<std::int64_t>(threads, nb));
      const int inner = std::max(1, threads / outer);
      if (outer > 1 && inner > 1) omp_set_max_active_levels(2);
      const auto reducer = cpu_reducer<F>(cfg_.delta, inner);
#pragma omp parallel for num_threads(outer) schedule(dynamic) if (outer > 1)
      for (std::int64_t k = 0; k < nb; ++k) {
        F* bk = basis.matrix(k);
        std::int64_t* tk = tdata ? tdata + k * tstride : nullptr;
        std::vector<double> b_in;  // float32: as in the all-swap branch above
        if (std::is_same_v<F, float>) b_in.assign(bk, bk + std::size_t(n) * m);
        st[k] =
            detail::block_lll<F>(n, m, bk, tk, cfg_.delta, block_, max_iter, inner, reducer).status;
        if constexpr (std::is_same_v<F, float>)
          st[k] = detail::finish_float32(n, m, b_in.data(), tk, bk, cfg_.delta, st[k], check);
      }
    }
    if (cfg_.presort && tdata) {
#pragma omp parallel for num_threads(threads) schedule(static) if (threads > 1 && nb > 1)
      for (std::int64_t k = 0; k < nb; ++k)
        detail::unsort_transform(m, tdata + k * tstride, rank.data() + k * m);
    }
  } else {
#if MIMORX_HAS_CUDA
    if (method_ == LllMethod::all_swap) {
      if (dstatus_.size() < std::size_t(nb))
        dstatus_ = Buffer<std::int32_t>::device(nb, backend_.device());
      // float32 checked: the inputs are kept for the rebuild of drifted bases from B T (as on
      // the CPU). Without the caller's T the kernel tracks one of its own (dtransform_, the batch
      // in chunks of ~256 MB of T). It always fits: the plan admits only shapes whose float64
      // kernel fits without T, and float32 with T needs less shared memory than that.
      constexpr bool f32 = std::is_same_v<F, float>;
      const std::size_t nm = std::size_t(n) * m, mm = std::size_t(m) * m;
      const bool own_t = check && !cfg_.transform;
      const std::int64_t chunk =
          own_t ? std::max<std::int64_t>(1, std::int64_t((std::size_t(256) << 20) / (mm * 8))) : nb;
      if constexpr (f32) {
        // The kernel copies the inputs as it loads them.
        if (check) detail::ensure_device(dinput_, nm * nb, backend_.device());
        if (own_t) detail::ensure_device(dtransform_, mm * std::min(chunk, nb), backend_.device());
      }
      // The statuses on the host: copied only for chunks where some basis did not reduce
      // (reduced is 0, so the zeroed vector already says reduced for the others): for small
      // bases an unconditional copy and scan would be a large part of a checked run.
      static_assert(int(LllStatus::reduced) == 0, "hs starts as all reduced");
      std::vector<std::int32_t> hs(nb);
      bool any_unreduced = false;
      detail::ensure_device(dcount_, 1, backend_.device());
      // The rebuilt bases of one chunk that failed the device's re-check, checked on the host
      // (generic in bk0 so that it is instantiated for float32 only).
      auto recheck_on_host = [&](auto* bk0, std::int64_t k0, std::int64_t cnt, std::int64_t* tk,
                                 std::int64_t ts) {
        std::vector<std::int64_t> idx;  // within the chunk
        for (std::int64_t k = k0; k < k0 + cnt; ++k)
          if (hs[k] == detail::kStatusRecheck) idx.push_back(k - k0);
        const std::int64_t nf = std::int64_t(idx.size());
        if (nf == 0) return;
        if (!failed_) failed_ = std::make_unique<FailedBases>();
        auto& didx = failed_->idx;
        auto& db = failed_->b;
        auto& din = failed_->in;
        auto& dt = failed_->t;
        const int dev = backend_.device();
        detail::ensure_device(didx, std::size_t(nf), dev);
        detail::ensure_device(db, std::size_t(nf) * nm, dev);
        detail::ensure_device(din, std::size_t(nf) * nm, dev);
        detail::ensure_device(dt, std::size_t(nf) * mm, dev);
        mimorx::detail::copy_bytes(didx.data(), Memory::device, idx.data(), Memory::host,
                                   std::size_t(nf) * sizeof(std::int64_t), stream.handle());
        detail::gather_bases_cuda(bk0, basis.batch_stride, didx.data(), nf, nm, db.data(),
                                  stream.handle(), backend_.device());
        detail::gather_bases_cuda(dinput_.data() + k0 * nm, std::int64_t(nm), didx.data(), nf, nm,
                                  din.data(), stream.handle(), backend_.device());
        detail::gather_bases_cuda(tk, ts, didx.data(), nf, mm, dt.data(), stream.handle(),
                                  backend_.device());
        // First the float64 polish on the device (a handful of bases per batch of thousands:
        // one copy and the host's float64 reduction cost more than the whole checked batch);
        // what it leaves goes to the host.
        std::vector<std::int32_t> pst(std::size_t(nf), detail::kStatusHost);
        if (opt_.device_polish && detail::polish_fits_cuda(n, m, dev, opt_)) {
          std::fill(pst.begin(), pst.end(), detail::kStatusRecheck);
          detail::ensure_device(failed_->status, std::size_t(nf), dev);
          mimorx::detail::copy_bytes(failed_->status.data(), Memory::device, pst.data(),
                                     Memory::host, pst.size() * sizeof(std::int32_t),
                                     stream.handle());
          detail::polish_float64_cuda(din.data(), db.data(), dt.data(), failed_->status.data(), nf,
                                      n, m, cfg_.delta, failed_->polish, stream.handle(), dev,
                                      opt_);
          mimorx::detail::copy_bytes(pst.data(), Memory::host, failed_->status.data(),
                                     Memory::device, pst.size() * sizeof(std::int32_t),
                                     stream.handle());
        }
        stream.synchronize();  // pst
        // What the device did not finish goes to the host (all of them without the polish):
        // only those bases make the round trip, on at most one CPU thread each (an OpenMP team
        // woken for nothing cost milliseconds now and then).
        std::vector<std::int64_t> on_host;
        for (std::int64_t c = 0; c < nf; ++c) {
          if (pst[c] == std::int32_t(LllStatus::reduced)) {
            hs[k0 + idx[c]] = pst[c];
          } else {
            on_host.push_back(c);
          }
        }
        if (!on_host.empty()) {
          std::vector<float> hb(std::size_t(nf) * nm), hin(hb.size());
          std::vector<std::int64_t> ht(std::size_t(nf) * mm);
          mimorx::detail::copy_bytes(hb.data(), Memory::host, db.data(), Memory::device,
                                     hb.size() * sizeof(float), stream.handle());
          mimorx::detail::copy_bytes(hin.data(), Memory::host, din.data(), Memory::device,
                                     hin.size() * sizeof(float), stream.handle());
          mimorx::detail::copy_bytes(ht.data(), Memory::host, dt.data(), Memory::device,
                                     ht.size() * sizeof(std::int64_t), stream.handle());
          stream.synchronize();
          const std::int64_t nh = std::int64_t(on_host.size());
          const int team = int(std::min<std::int64_t>(threads, nh));
#pragma omp parallel for num_threads(team) schedule(dynamic) if (team > 1)
          for (std::int64_t h = 0; h < nh; ++h) {
            const std::int64_t c = on_host[h];
            hs[k0 + idx[c]] = std::int32_t(detail::recheck_rebuilt_host(
                n, m, hin.data() + c * nm, ht.data() + c * mm, hb.data() + c * nm, cfg_.delta));
          }
          mimorx::detail::copy_bytes(db.data(), Memory::device, hb.data(), Memory::host,
                                     hb.size() * sizeof(float), stream.handle());
          mimorx::detail::copy_bytes(dt.data(), Memory::device, ht.data(), Memory::host,
                                     ht.size() * sizeof(std::int64_t), stream.handle());
        }
        detail::scatter_bases_cuda(db.data(), bk0, basis.batch_stride, didx.data(), nf, nm,
                                   stream.handle(), backend_.device());
        detail::scatter_bases_cuda(dt.data(), tk, ts, didx.data(), nf, mm, stream.handle(),
                                   backend_.device());
        stream.synchronize();
      };
      for (std::int64_t k0 = 0; k0 < nb; k0 += chunk) {
        const std::int64_t cnt = std::min(chunk, nb - k0);
        std::int64_t* tk = cfg_.transform ? transform.data + k0 * tstride
                           : own_t        ? dtransform_.data()
                                          : nullptr;
        const std::int64_t ts = cfg_.transform ? tstride : own_t ? std::int64_t(mm) : 0;
        F* keep = nullptr;
        if constexpr (f32) keep = check ? dinput_.data() + k0 * nm : nullptr;
        detail::all_swap_cuda<F>(basis.matrix(k0), tk, dstatus_.data() + k0, cnt, n, m,
                                 basis.batch_stride, ts, cfg_.delta, max_iter, stream.handle(),
                                 backend_.device(), cfg_.presort, keep, opt_);
        if constexpr (f32) {
          if (check && tk)
            detail::rebuild_from_transform_cuda(
                dinput_.data() + k0 * nm, basis.matrix(k0), tk, dstatus_.data() + k0, cnt, n, m,
                basis.batch_stride, ts, cfg_.delta, stream.handle(), backend_.device(), opt_);
        }
        dcount_.fill_bytes(0, stream);
        detail::count_unreduced_cuda(dstatus_.data() + k0, cnt, dcount_.data(), stream.handle(),
                                     backend_.device());
        unsigned unreduced = 0;
        mimorx::detail::copy_bytes(&unreduced, Memory::host, dcount_.data(), Memory::device,
                                   sizeof(unsigned), stream.handle());
        stream.synchronize();
        if (unreduced == 0) continue;
        any_unreduced = true;
        mimorx::detail::copy_bytes(hs.data() + k0, Memory::host, dstatus_.data() + k0,
                                   Memory::device, cnt * sizeof(std::int32_t), stream.handle());
        stream.synchronize();
        if constexpr (f32) {
          // The rebuilt bases that failed the device's re-check (ill-conditioned inputs; most of
          // a block-Toeplitz 64x64 batch): checked on the host and polished in float64, on the
          // CPU threads, gathered and scattered in one copy each (before the next chunk reuses
          // the plan's T).
          if (check && tk) recheck_on_host(basis.matrix(k0), k0, cnt, tk, ts);
        }
      }
      std::vector<std::int64_t> singular;
      for (std::int64_t k = 0; any_unreduced && k < nb; ++k) {
        st[k] = LllStatus(hs[k]);
        if (f32 && st[k] == LllStatus::singular) singular.push_back(k);
      }
      if constexpr (f32) {
        // The "singular" bases, judged by their inputs where the plan kept them (checked runs):
        // gathered on the device and copied in chunks of ~64 MB, classified on the CPU threads.
        // Not rare on block-Toeplitz bases (most of the 64x64 ones are flagged in float32), so
        // not one copy and sync per basis.
        const float* src = check ? dinput_.data() : basis.data;
        const std::int64_t stride = check ? std::int64_t(nm) : basis.batch_stride;
        const std::int64_t chunk_bases =
            std::max<std::int64_t>(1, std::int64_t((std::size_t(64) << 20) / (nm * sizeof(float))));
        Buffer<std::int64_t> didx;
        Buffer<float> dpacked;
        std::vector<float> packed;
        for (std::size_t c0 = 0; c0 < singular.size(); c0 += std::size_t(chunk_bases)) {
          const std::int64_t cnt =
              std::min<std::int64_t>(chunk_bases, std::int64_t(singular.size() - c0));
          detail::ensure_device(didx, std::size_t(cnt), backend_.device());
          detail::ensure_device(dpacked, std::size_t(cnt) * nm, backend_.device());
          packed.resize(std::size_t(cnt) * nm);
          mimorx::detail::copy_bytes(didx.data(), Memory::device, singular.data() + c0,
                                     Memory::host, std::size_t(cnt) * sizeof(std::int64_t),
                                     stream.handle());
          detail::gather_bases_cuda(src, stride, didx.data(), cnt, nm, dpacked.data(),
                                    stream.handle(), backend_.device());
          mimorx::detail::copy_bytes(packed.data(), Memory::host, dpacked.data(), Memory::device,
                                     packed.size() * sizeof(float), stream.handle());
          stream.synchronize();
#pragma omp parallel for num_threads(threads) schedule(dynamic) if (threads > 1 && cnt > 1)
          for (std::int64_t c = 0; c < cnt; ++c)
            st[singular[c0 + c]] = detail::classify_float32_singular(n, m, packed.data() + c * nm);
        }
      }
    } else {
      // CPU+GPU scheduler: CPU threads each own a CUDA stream and a share of the bases; the
      // block reductions of a pass go to the GPU as one batched launch per block size, the
      // GSC-Update and the products with U stay on the CPU thread.
      const int workers = int(std::min<std::int64_t>(threads, nb));
      const int inner = std::max(1, threads / workers);
      if (inner > 1) omp_set_max_active_levels(2);
      if (!workers_) workers_ = std::make_unique<BlockWorkers>();
      auto& pool = workers_->of<F>();
      // The workers' streams start after the caller's work on `stream` by an event, not a host
      // synchronisation: on the legacy default stream that would be cudaDeviceSynchronize, host
      // time at the start of every run.
      detail::OrderEvent& input_ready = workers_->input_ready;
      input_ready.record(stream.handle());
      while (int(pool.size()) < workers)
        pool.push_back(std::make_unique<BlockWorker<F>>(backend_.device(), cfg_.delta, opt_));
#pragma omp parallel num_threads(workers)
      {
        BlockWorker<F>& wk = *pool[omp_get_thread_num()];
        GpuReducer<F>& gr = wk.reducer;
        input_ready.wait(gr.stream.handle());
        detail::BlockReducer<F> reduce = [&gr](F* bl, std::int64_t* u, LllStatus* s, int c, int l) {
          return gr(bl, u, s, c, l);
        };
        const int dev = backend_.device();
        const LllOptions& opt = opt_;
        detail::GramFactor<F> gram = [&wk, dev, &opt](const F* bb, int nn, int mm, double* r) {
          return detail::gram_cholesky_cuda<F>(bb, nn, mm, r, wk.gram, wk.reducer.stream.handle(),
                                               dev, opt);
        };
        detail::BlockLllWorkspace<F>& dws = wk.device;
#pragma omp for schedule(dynamic)
        for (std::int64_t k = 0; k < nb; ++k) {
          // The whole reduction on the GPU where its float64 Cholesky factor is good enough;
          // otherwise (and when disabled) the host-side block method below. float32 checked
          // without the caller's T: both track one of their own, for the check against B T.
          const bool own_t = check && !cfg_.transform;
          if (own_t) detail::ensure_device(wk.t, std::size_t(m) * m, dev);
          std::int64_t* tk = cfg_.transform ? transform.data + k * tstride
                             : own_t        ? wk.t.data()
                                            : nullptr;
          // Presort on the device: both paths below reduce the sorted basis (and keep it as
          // their float32 input); T goes back to the input order at the end.
          // On the GPU-resident path it goes first in the block method's captured start.
          F* bk = basis.matrix(k);
          // Where the presort runs follows the path (LllOptions::block_device).
          const bool device_block = opt_.block_device;
          detail::StartPrologue presort;
          if (cfg_.presort) {
            detail::ensure_device(wk.rank, m, dev);
            detail::ensure_device(wk.keys, m, dev);
            std::int32_t* rank = wk.rank.data();
            double* keys = wk.keys.data();
            presort.enqueue = [=](void* s, void* copy, void* scratch) {
              detail::presort_columns_cuda(bk, n, m, rank, keys, s, static_cast<F*>(copy),
                                           static_cast<F*>(scratch));
            };
            presort.key = {std::uint64_t(reinterpret_cast<std::uintptr_t>(rank)),
                           std::uint64_t(reinterpret_cast<std::uintptr_t>(keys))};
            if (!device_block) presort.enqueue(gr.stream.handle(), nullptr, nullptr);
          }
          auto unsort = [&] {
            if (!cfg_.presort || !cfg_.transform) return;
            detail::unsort_transform_cuda(tk, m, wk.rank.data(), gr.stream.handle());
            gr.stream.synchronize();
          };
          if (device_block) {
            LllStats ds;
            if (detail::block_lll_device<F>(n, m, bk, tk, cfg_.delta, block_, max_iter, dws,
                                            gr.stream.handle(), dev, &ds, opt_,
                                            cfg_.presort ? &presort : nullptr)) {
              st[k] = ds.status;
              if constexpr (std::is_same_v<F, float>)
                st[k] = detail::finish_float32_device(n, m, dws.b_in.data(), tk, basis.matrix(k),
                                                      cfg_.delta, st[k], check, dws.drift,
                                                      gr.stream, dev, opt_);
              unsort();
              continue;
            }
          }
          std::vector<F>& hb = wk.hb;
          std::vector<std::int64_t>& ht = wk.ht;
          hb.resize(std::size_t(n) * m);
          ht.resize(tk ? std::size_t(m) * m : 0);
          mimorx::detail::copy_bytes(hb.data(), Memory::host, basis.matrix(k), Memory::device,
                                     hb.size() * sizeof(F), gr.stream.handle());
          gr.stream.synchronize();
          std::vector<double> b_in;  // float32: as in the CPU branches
          if (std::is_same_v<F, float>) b_in.assign(hb.begin(), hb.end());
          st[k] = detail::block_lll<F>(n, m, hb.data(), ht.empty() ? nullptr : ht.data(),
                                       cfg_.delta, block_, max_iter, inner, reduce, gram)
                      .status;
          if constexpr (std::is_same_v<F, float>)
            st[k] = detail::finish_float32(n, m, b_in.data(), ht.empty() ? nullptr : ht.data(),
                                           hb.data(), cfg_.delta, st[k], check);
          mimorx::detail::copy_bytes(basis.matrix(k), Memory::device, hb.data(), Memory::host,
                                     hb.size() * sizeof(F), gr.stream.handle());
          if (cfg_.transform)
            mimorx::detail::copy_bytes(transform.data + k * tstride, Memory::device, ht.data(),
                                       Memory::host, ht.size() * sizeof(std::int64_t),
                                       gr.stream.handle());
          gr.stream.synchronize();
          unsort();
        }
      }
    }
#else
    (void)stream;
    throw Unsupported("backend: this build has no CUDA backend");
#endif
  }
  if (status.size) {
    std::copy(st.begin(), st.end(), status.data);
    return;
  }
  for (std::int64_t k = 0; k < nb; ++k) {
    if (st[k] == LllStatus::reduced) continue;
    const std::string msg = "basis " + std::to_string(k) + ": " + to_string(st[k]);
    if (st[k] == LllStatus::singular)
      throw InvalidArgument("basis: " + msg + "; LLL needs linearly independent finite vectors");
    throw NumericalError("lll: " + msg +
                         "; try float64 (precision double) or the sequential method");
  }
}

template void LllPlan::run_impl<float>(MatrixBatch<float>, MatrixBatch<std::int64_t>,
                                       View<LllStatus>, const Stream&);
template void LllPlan::run_impl<double>(MatrixBatch<double>, MatrixBatch<std::int64_t>,
                                        View<LllStatus>, const Stream&);

LllResult lll_reduce(int n, int m, const std::vector<double>& b, double delta, bool transform,
                     LllMethod method, bool presort, double eta) {
  require(b.size() == std::size_t(n) * m, "basis",
          "has " + std::to_string(b.size()) +
              " entries, expected n*m = " + std::to_string(std::size_t(n) * m));
  LllConfig c;
  c.n = n;
  c.m = m;
  c.delta = delta;
  c.transform = transform;
  c.method = method;
  c.presort = presort;
  c.eta = eta;
  LllPlan plan(c, Backend::cpu());
  LllResult r;
  r.basis = b;
  r.transform.resize(transform ? std::size_t(m) * m : 0);
  MatrixBatch<double> bb(r.basis.data(), 1, n, m, Memory::host);
  MatrixBatch<std::int64_t> tb(transform ? r.transform.data() : nullptr, transform ? 1 : 0,
                               transform ? m : 0, transform ? m : 0, Memory::host);
  View<LllStatus> sv(&r.status, 1, Memory::host);
  plan.run(bb, tb, sv);
  return r;
}

}  // namespace mimorx::lattice

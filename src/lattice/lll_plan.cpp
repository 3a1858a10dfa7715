// LllPlan: validation, method choice, the CR-MB-LLL block driver (CPU and CPU+GPU) and the
// dispatch to the CPU and CUDA reductions.
#include <omp.h>

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "lattice/lll_internal.hpp"
#include "lattice/lll_math.hpp"
#include "mimorx/config.hpp"
#include "mimorx/core/error.hpp"
#include "mimorx/lattice/quality.hpp"

namespace mimorx::lattice {

int automatic_block(int m) {
  // l = 32 beats 64 on Gaussian float32 bases, CPU and GPU, and is within a few % of 16 on the
  // GPU (docs/lll.md): the passes stay at 4-5 either way, so the cheaper block reductions win.
  if (m <= 64) return m;
  return 32;
}

namespace detail {

namespace {

// Size reduction of all columns against the float64 R (m x m, upper), applied to B and T.
// Every column k is reduced against the columns j < k as they were on entry (a snapshot of R,
// B and T): those are lattice vectors with the same r_jj, so the result is size-reduced, and
// the columns are independent, with no barrier between the m - 1 steps of the in-place form
// (whose barriers dominate at large m). Columns whose multipliers are all zero (most of them
// after the first pass) cost one pass over their column of R.
template <class F>
bool size_reduce_global(int n, int m, Eigen::MatrixXd& R, F* b, std::int64_t* t, int threads) {
  const Eigen::MatrixXd R0 = R;
  const std::vector<F> b0(b, b + std::size_t(n) * m);
  std::vector<std::int64_t> t0;
  if (t) t0.assign(t, t + std::size_t(m) * m);
  bool overflow = false;
#pragma omp parallel for num_threads(threads) schedule(dynamic, 8) if (threads > 1 && m >= 128)
  for (int k = 1; k < m; ++k) {
    F* bk = b + std::size_t(k) * n;
    std::int64_t* tk = t ? t + std::size_t(k) * m : nullptr;
    for (int j = k - 1; j >= 0; --j) {
      const double q = round_nearest(R(j, k) / R0(j, j));
      if (q == 0) continue;
      for (int i = 0; i <= j; ++i) R(i, k) -= q * R0(i, j);
      const F* bj = b0.data() + std::size_t(j) * n;
      for (int i = 0; i < n; ++i) bk[i] -= F(q) * bj[i];
      if (tk) {
        if (!(std::abs(q) < 4.0e18)) {
#pragma omp atomic write
          overflow = true;
          continue;
        }
        const auto qi = std::int64_t(q);
        const std::int64_t* tj = t0.data() + std::size_t(j) * m;
        for (int i = 0; i < m; ++i) {
          std::int64_t p = 0, s = 0;
          if (__builtin_mul_overflow(qi, tj[i], &p) || __builtin_sub_overflow(tk[i], p, &s)) {
#pragma omp atomic write
            overflow = true;
          }
          tk[i] = s;
        }
      }
    }
  }
  return !overflow;
}

// GSC-Update: the R factor of B in float64 (Householder QR); false when a column is zero to
// working precision.
template <class F>
bool gs_update(int n, int m, const F* b, Eigen::MatrixXd& R, const GramFactor<F>& gram) {
  auto basis = [&] {
    Eigen::MatrixXd B(n, m);
    for (int j = 0; j < m; ++j)
      for (int i = 0; i < n; ++i) B(i, j) = double(b[std::size_t(j) * n + i]);
    return B;
  };
  auto accurate = [&] {
    const double cmin = R.diagonal().cwiseAbs().minCoeff(),
                 cmax = R.diagonal().cwiseAbs().maxCoeff();
    return cmin >
           1e-6 * cmax;  // diag ratio as a cheap conditioning proxy (eps^(1/2) of float64 ~ 1e-8)
  };
  bool ok = false;
  if (gram) {
    // The same Gram matrix and Cholesky factor, on the GPU.
    R.resize(m, m);
    ok = gram(b, n, m, R.data()) && R.allFinite() && accurate();
  } else {
    // R from the Cholesky factor of the Gram matrix: one GEMM (multi-threaded in Eigen) and an
    // m^3/3 factorisation, 4-5x faster than Householder QR at m = 512 on the build machine. Its
    // error grows with cond(B)^2, harmless for the bases LLL produces (cond ~ 1e2..1e4 here);
    // when the factorisation fails or loses accuracy, Householder QR takes over.
    const Eigen::MatrixXd B = basis();
    Eigen::MatrixXd G(m, m);
    G.noalias() = B.transpose() * B;
    Eigen::LLT<Eigen::MatrixXd> llt(G);
    ok = llt.info() == Eigen::Success;
    if (ok) {
      R = llt.matrixU();
      ok = accurate();
    }
  }
  if (!ok) {
    Eigen::HouseholderQR<Eigen::MatrixXd> qr(basis());
    R = qr.matrixQR().topRows(m).triangularView<Eigen::Upper>();
  }
  for (int j = 0; j < m; ++j) {
    double nj = 0;
    for (int i = 0; i < n; ++i)
      nj += double(b[std::size_t(j) * n + i]) * double(b[std::size_t(j) * n + i]);
    nj = std::sqrt(nj);
    if (!(std::abs(R(j, j)) > double(singular_fraction<F>()) * nj) || !std::isfinite(R(j, j)))
      return false;
  }
  return true;
}

}  // namespace

template <class F>
LllStats block_lll(int n, int m, F* b, std::int64_t* t, double delta, int l, long max_passes,
                   int threads, const BlockReducer<F>& reduce, const GramFactor<F>& gram) {
  LllStats st;
  if (t) {
    std::fill(t, t + std::size_t(m) * m, 0);
    for (int i = 0; i < m; ++i) t[std::size_t(i) * m + i] = 1;
  }
  // float32 blocks see R rounded to float: the final float64 check allows that rounding.
  const double delta_check = sizeof(F) == 4 ? delta * (1 - 1e-5) : delta * (1 - 1e-12);
  Eigen::MatrixXd R;
  std::vector<F> blocks;
  std::vector<std::int64_t> U;
  std::vector<LllStatus> bstat;
  int quiet = 0, checks = 0;
  long last_full = 0;
  constexpr long kFullQrEvery = 8;
  for (long pass = 0;; ++pass) {
    if (pass >= max_passes) {
      st.status = LllStatus::not_converged;
      return st;
    }
    st.iterations = pass + 1;
    // Full recomputation of R (Householder, O(n m^2)) at the start, every kFullQrEvery passes
    // against drift, and before the final check; otherwise R follows the block reductions
    // through the GSC-Update below (O(m^2 l)).
    if (pass == 0 || quiet >= 2 || pass - last_full >= kFullQrEvery) {
      if (!gs_update(n, m, b, R, gram)) {
        st.status = LllStatus::singular;
        return st;
      }
      last_full = pass;
    }
    if (!size_reduce_global(n, m, R, b, t, threads)) {
      st.status = LllStatus::precision_loss;
      return st;
    }
    if (quiet >= 2) {
      // Both block offsets made no swap: every adjacent pair lay inside some block. Confirm on
      // fresh float64 GS data of the size-reduced basis.
      bool ok = true;
      for (int k = 1; k < m && ok; ++k)
        ok = !lovasz_violated(delta_check, R(k - 1, k - 1), R(k - 1, k), R(k, k));
      if (ok) {
        st.status = LllStatus::reduced;
        return st;
      }
      quiet = 0;
      if (++checks > 16) {
        st.status = LllStatus::precision_loss;
        return st;
      }
    }
    std::int64_t swaps = 0;
    // The pass's diagonal blocks, one reducer call (one kernel launch) per group.
    for (const BlockGroup& g : block_groups(m, l, pass)) {
      if (g.count == 0) continue;
      const int sz = g.size, cnt = g.count;
      std::vector<int> starts(cnt);
      for (int c = 0; c < cnt; ++c) starts[c] = g.start + c * g.stride;
      const std::size_t bs = std::size_t(sz) * sz;
      blocks.assign(bs * cnt, F(0));
      U.assign(bs * cnt, 0);
      bstat.assign(cnt, LllStatus::reduced);
      for (int c = 0; c < cnt; ++c)
        for (int j = 0; j < sz; ++j)
          for (int i = 0; i <= j; ++i)
            blocks[c * bs + std::size_t(j) * sz + i] = F(R(starts[c] + i, starts[c] + j));
      swaps += reduce(blocks.data(), U.data(), bstat.data(), cnt, sz);
      for (int c = 0; c < cnt; ++c) {
        if (bstat[c] != LllStatus::reduced) {
          st.status = bstat[c];
          return st;
        }
      }
      // B[:, s:s+sz] <- B[:, s:s+sz] U, T likewise (exact in int64, overflow checked).
      bool overflow = false;
#pragma omp parallel for num_threads(threads) schedule(static) if (threads > 1)
      for (int c = 0; c < cnt; ++c) {
        const int s0 = starts[c];
        const std::int64_t* u = &U[c * bs];
        std::vector<double> tmp(std::size_t(n) * sz);
        for (int j = 0; j < sz; ++j)
          for (int kk = 0; kk < sz; ++kk) {
            const double f = double(u[std::size_t(j) * sz + kk]);
            if (f == 0) continue;
            const F* src = b + std::size_t(s0 + kk) * n;
            for (int i = 0; i < n; ++i) tmp[std::size_t(j) * n + i] += f * double(src[i]);
          }
        for (std::size_t i = 0; i < tmp.size(); ++i) b[std::size_t(s0) * n + i] = F(tmp[i]);
        if (t) {
          std::vector<std::int64_t> tt(std::size_t(m) * sz, 0);
          bool ov = false;
          for (int j = 0; j < sz; ++j)
            for (int kk = 0; kk < sz; ++kk) {
              const std::int64_t f = u[std::size_t(j) * sz + kk];
              if (f == 0) continue;
              const std::int64_t* src = t + std::size_t(s0 + kk) * m;
              for (int i = 0; i < m; ++i) {
                std::int64_t p;
                ov |= __builtin_mul_overflow(f, src[i], &p);
                ov |= __builtin_add_overflow(tt[std::size_t(j) * m + i], p,
                                             &tt[std::size_t(j) * m + i]);
              }
            }
          std::copy(tt.begin(), tt.end(), t + std::size_t(s0) * m);
          if (ov) {
#pragma omp atomic write
            overflow = true;
          }
        }
      }
      if (overflow) {
        st.status = LllStatus::precision_loss;
        return st;
      }
      // GSC-Update (Jozsa et al., CR-MB-LLL): R <- Q^T R U with U = diag(U_c) and
      // Q = diag(Q_c), Q_c R~_c = R_cc U_c. First every block's columns (R U), then every
      // block's rows (Q_c^T); the second touches rows only, disjoint across blocks.
#pragma omp parallel for num_threads(threads) schedule(static) if (threads > 1)
      for (int c = 0; c < cnt; ++c) {
        const int s0 = starts[c];
        Eigen::Map<const Eigen::Matrix<std::int64_t, Eigen::Dynamic, Eigen::Dynamic>> u(&U[c * bs],
                                                                                        sz, sz);
        const Eigen::MatrixXd cols = R.block(0, s0, s0 + sz, sz) * u.cast<double>();
        R.block(0, s0, s0 + sz, sz) = cols;
      }
#pragma omp parallel for num_threads(threads) schedule(static) if (threads > 1)
      for (int c = 0; c < cnt; ++c) {
        const int s0 = starts[c];
        Eigen::HouseholderQR<Eigen::MatrixXd> qr(R.block(s0, s0, sz, sz));
        const Eigen::MatrixXd rows = qr.householderQ().adjoint() * R.block(s0, s0, sz, m - s0);
        R.block(s0, s0, sz, m - s0) = rows;
        for (int j = 0; j < sz; ++j)
          for (int i = j + 1; i < sz; ++i) R(s0 + i, s0 + j) = 0;
      }
    }
    st.swaps += swaps;
    quiet = swaps == 0 ? quiet + 1 : 0;
  }
}

template LllStats block_lll<float>(int, int, float*, std::int64_t*, double, int, long, int,
                                   const BlockReducer<float>&, const GramFactor<float>&);
template LllStats block_lll<double>(int, int, double*, std::int64_t*, double, int, long, int,
                                    const BlockReducer<double>&, const GramFactor<double>&);

}  // namespace detail

// ---------------------------------------------------------------------------------------------

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

// A float32 reduction that met a vanishing Gram-Schmidt norm (|r_jj| <= 16 eps_f32 ||b_j||,
// singular_fraction) calls the basis singular. The input tells whether it is, through a
// column-pivoted QR in float64: when its smallest pivot is at most 1e-6 of the largest (about
// float32 resolution) it stays singular; otherwise float32 lost a part the lattice has
// (precision_loss: the caller hears "try float64" instead of "dependent vectors", e.g. for
// inputs whose last column is the sum of the others plus 1e-3 noise). Where the input was not
// kept (CUDA all-swap without T) the basis as it is now stands in for it (unimodular steps keep
// the rank, but float32 rounding may already have erased the small independent part).
template <class T>
LllStatus classify_float32_singular(int n, int m, const T* b) {
  Eigen::MatrixXd a(n, m);
  for (int j = 0; j < m; ++j)
    for (int i = 0; i < n; ++i) a(i, j) = double(b[std::size_t(j) * n + i]);
  if (!a.allFinite()) return LllStatus::precision_loss;  // the input was finite
  const Eigen::ColPivHouseholderQR<Eigen::MatrixXd> qr(a);
  const double rmax = std::abs(qr.matrixQR()(0, 0));
  const double rmin = std::abs(qr.matrixQR()(m - 1, m - 1));
  return rmin > 1e-6 * rmax ? LllStatus::precision_loss : LllStatus::singular;
}

// The LLL conditions of a rebuilt float32 basis, with the float32 tolerances of docs/lll.md
// (|mu| <= 0.51, Lovasz with delta - 1e-3), from a float64 Householder QR: the bases checked
// here are reduced or nearly, so well-conditioned, and check_lll's long-double Gram-Schmidt cost
// ~10x more (it dominated the float32 epilogues, which rebuild most bases: float32 updates leave
// B' 1e-6..1e-5 away from B T).
LllStatus recheck_float32(int n, int m, const float* b, double delta) {
  Eigen::MatrixXd a(n, m);
  for (int j = 0; j < m; ++j)
    for (int i = 0; i < n; ++i) a(i, j) = double(b[std::size_t(j) * n + i]);
  const Eigen::HouseholderQR<Eigen::MatrixXd> qr(a);
  const Eigen::MatrixXd& r = qr.matrixQR();
  const double dcheck = delta - 1e-3;
  for (int k = 0; k < m; ++k) {
    if (!(std::abs(r(k, k)) > 0) || !std::isfinite(r(k, k))) return LllStatus::precision_loss;
    for (int j = 0; j < k; ++j)
      if (!(std::abs(r(j, k) / r(j, j)) <= 0.51)) return LllStatus::precision_loss;
    if (k > 0 && !(r(k - 1, k) * r(k - 1, k) + r(k, k) * r(k, k) >=
                   dcheck * r(k - 1, k - 1) * r(k - 1, k - 1)))
      return LllStatus::precision_loss;
  }
  return LllStatus::reduced;
}

// B T in float64 (n x m, column-major) for an input basis in float32 or float64, summed over k in
// order, zero entries of T skipped: the rebuilt basis of the float32 paths.
template <class In>
std::vector<double> times_transform(int n, int m, const In* b_in, const std::int64_t* t) {
  std::vector<double> bt(std::size_t(n) * m, 0.0);
  for (int j = 0; j < m; ++j) {
    double* col = &bt[std::size_t(j) * n];
    for (int k = 0; k < m; ++k) {
      const double f = double(t[std::size_t(j) * m + k]);
      if (f == 0) continue;
      const In* src = b_in + std::size_t(k) * n;
      for (int i = 0; i < n; ++i) col[i] += f * double(src[i]);
    }
  }
  return bt;
}

// A rebuilt basis (B T, on the input lattice) that fails the LLL conditions: its T came from the
// drifted float32 basis. It is reduced further in float64 by the reference (T2 tracked), T
// becomes T T2 and B' the rounded result; the status is that result's re-check, precision_loss
// where the reference fails or T T2 leaves int64. bt: B T in float64 (overwritten). Rare (seen on
// Gaussian 64x64 bases with condition number ~3e5: |T| ~ 1e4, |mu| 0.52 after the rebuild).
LllStatus polish_in_float64(int n, int m, std::vector<double>& bt, std::int64_t* t, float* b,
                            double delta) {
  std::vector<double> t2(std::size_t(m) * m);
  if (detail::se_lll_double(n, m, bt.data(), t2.data(), delta).status != LllStatus::reduced)
    return LllStatus::precision_loss;
  std::vector<std::int64_t> tt(std::size_t(m) * m);
  for (int j = 0; j < m; ++j) {
    for (int i = 0; i < m; ++i) {
      long double v = 0;  // (T T2)(i, j), exact while it fits 64 bits
      for (int k = 0; k < m; ++k)
        v += (long double)t[std::size_t(k) * m + i] * (long double)t2[std::size_t(j) * m + k];
      if (!(std::abs(v) < 9.2e18L)) return LllStatus::precision_loss;
      tt[std::size_t(j) * m + i] = std::int64_t(v);
    }
  }
  std::copy(tt.begin(), tt.end(), t);
  for (std::size_t i = 0; i < bt.size(); ++i) b[i] = float(bt[i]);
  return recheck_float32(n, m, b, delta);
}

// float32 reductions with T tracked: B' is rebuilt as B T in float64 from the input and
// rounded once. The float32 reducers update B in float32, and where the multipliers grow
// large (|T| ~ 1e5 on ill-conditioned inputs) the accumulated rounding can leave B' percents
// away from B T, i.e. not a basis of the input lattice (e.g. a 16x16 basis of condition number
// 2.3e6: max |B T - B'| = 0.03 with |B'| ~ 1.3, volume off by 0.5-0.9 %). When the two differ
// by more than float32 rounding, the rebuilt basis replaces
// B' and must pass the LLL conditions again (float32 tolerances, docs/lll.md); where it does not,
// polish_in_float64 reduces it further. t may be updated (T T2).
// The repair itself, given bt = B T in float64 (overwritten by a polish): B' is kept where it
// equals bt to 1e-6 of max |bt|, else replaced by bt rounded once and re-checked.
LllStatus repair_from_product(int n, int m, std::vector<double>& bt, std::int64_t* t, float* b,
                              double delta) {
  double diff = 0, scale = 0;
  for (std::size_t i = 0; i < bt.size(); ++i) {
    diff = std::max(diff, std::abs(bt[i] - double(b[i])));
    scale = std::max(scale, std::abs(bt[i]));
  }
  if (diff <= 1e-6 * scale) return LllStatus::reduced;
  for (std::size_t i = 0; i < bt.size(); ++i) b[i] = float(bt[i]);
  if (recheck_float32(n, m, b, delta) == LllStatus::reduced) return LllStatus::reduced;
  return polish_in_float64(n, m, bt, t, b, delta);
}

LllStatus rebuild_from_transform(int n, int m, const double* b_in, std::int64_t* t, float* b,
                                 double delta) {
  std::vector<double> bt = times_transform(n, m, b_in, t);
  return repair_from_product(n, m, bt, t, b, delta);
}

#if MIMORX_HAS_CUDA
// The host's part of the check of a rebuilt float32 basis hb (from its input hin and T ht): the
// LLL conditions with the float32 tolerances, else a float64 polish of B T (hb and ht updated).
LllStatus recheck_rebuilt_host(int n, int m, const float* hin, std::int64_t* ht, float* hb,
                               double delta) {
  if (recheck_float32(n, m, hb, delta) == LllStatus::reduced) return LllStatus::reduced;
  std::vector<double> bt = times_transform(n, m, hin, ht);
  return polish_in_float64(n, m, bt, ht, hb, delta);
}

// The GPU-resident block method's host step for a basis the device rebuilt as B T (b_dev, t_dev;
// the float32 input in_dev): B' is checked again on the host and, where it fails, polished in
// float64 and written back with its new T. Rare: only bases that drifted.
LllStatus recheck_rebuilt_device(int n, int m, const float* in_dev, std::int64_t* t_dev,
                                 float* b_dev, double delta, const Stream& stream) {
  const std::size_t nm = std::size_t(n) * m, mm = std::size_t(m) * m;
  std::vector<float> hb(nm), hin(nm);
  std::vector<std::int64_t> ht(mm);
  mimorx::detail::copy_bytes(hb.data(), Memory::host, b_dev, Memory::device, nm * sizeof(float),
                             stream.handle());
  stream.synchronize();
  if (recheck_float32(n, m, hb.data(), delta) == LllStatus::reduced) return LllStatus::reduced;
  mimorx::detail::copy_bytes(hin.data(), Memory::host, in_dev, Memory::device, nm * sizeof(float),
                             stream.handle());
  mimorx::detail::copy_bytes(ht.data(), Memory::host, t_dev, Memory::device,
                             mm * sizeof(std::int64_t), stream.handle());
  stream.synchronize();
  const LllStatus status = recheck_rebuilt_host(n, m, hin.data(), ht.data(), hb.data(), delta);
  mimorx::detail::copy_bytes(b_dev, Memory::device, hb.data(), Memory::host, nm * sizeof(float),
                             stream.handle());
  mimorx::detail::copy_bytes(t_dev, Memory::device, ht.data(), Memory::host,
                             mm * sizeof(std::int64_t), stream.handle());
  stream.synchronize();
  return status;
}

// classify_float32_singular on a basis in device memory.
LllStatus classify_float32_singular_device(int n, int m, const float* b_dev, const Stream& stream) {
  std::vector<float> h(std::size_t(n) * m);
  mimorx::detail::copy_bytes(h.data(), Memory::host, b_dev, Memory::device,
                             h.size() * sizeof(float), stream.handle());
  stream.synchronize();
  return classify_float32_singular(n, m, h.data());
}
#endif

// float32 without T: B' must still be a basis of the input's lattice, and the drift that the T
// path repairs (above) can move it off. Here T is not known, so it is solved for: T = B^-1 B' in
// float64 (LU; QR for n > m), rounded to T_r. T_r is unimodular when |det(B T_r)| / |det B|, an
// integer, is 1 (log volumes in float64, accepted within 0.1 of 0; the next integers are log 2
// away). Then B T_r is a basis of the lattice and the T path's repair applies: B' stays where it
// equals B T_r to 1e-6, else B T_r replaces it, re-checked (and polished in float64 where
// needed). Where T_r is not unimodular the float32 result is dropped and the input reduced again
// by the float64 reference. Cost: two float64 factorisations, a solve and a product,
// O(n m^2 + m^3) (docs/lll.md, "The float32 lattice check").
LllStatus rebuild_without_transform(int n, int m, const double* b_in, float* b, double delta) {
  using Eigen::MatrixXd;
  const Eigen::Map<const MatrixXd> B(b_in, n, m);
  MatrixXd bp(n, m);
  for (int j = 0; j < m; ++j)
    for (int i = 0; i < n; ++i) bp(i, j) = double(b[std::size_t(j) * n + i]);
  auto log_volume = [m](const MatrixXd& f) {  // from the diagonal of an LU or QR factor
    double s = 0;
    for (int i = 0; i < m; ++i) s += std::log(std::abs(f(i, i)));
    return s;
  };
  MatrixXd ts, tr, btr;
  double log_vol_in = 0;
  if (n == m) {
    const Eigen::PartialPivLU<MatrixXd> lu(B);
    ts = lu.solve(bp);
    log_vol_in = log_volume(lu.matrixLU());
  } else {
    const Eigen::HouseholderQR<MatrixXd> qr(B);
    ts = qr.solve(bp);
    log_vol_in = log_volume(qr.matrixQR());
  }
  bool ok = ts.allFinite() && ts.cwiseAbs().maxCoeff() < 9.0e15;
  if (ok) {
    tr = ts.array().round().matrix();
    btr.noalias() = B * tr;
    const double log_vol_out = n == m ? log_volume(Eigen::PartialPivLU<MatrixXd>(btr).matrixLU())
                                      : log_volume(Eigen::HouseholderQR<MatrixXd>(btr).matrixQR());
    ok = std::abs(log_vol_out - log_vol_in) < 0.1;
  }
  if (!ok) {
    std::vector<double> bd(b_in, b_in + std::size_t(n) * m);
    if (detail::se_lll_double(n, m, bd.data(), nullptr, delta).status != LllStatus::reduced)
      return LllStatus::precision_loss;
    for (std::size_t i = 0; i < bd.size(); ++i) b[i] = float(bd[i]);
    return recheck_float32(n, m, b, delta);
  }
  std::vector<double> bt(btr.data(), btr.data() + std::size_t(n) * m);
  std::vector<std::int64_t> t(std::size_t(m) * m);
  for (std::size_t i = 0; i < t.size(); ++i) t[i] = std::int64_t(tr.data()[i]);
  return repair_from_product(n, m, bt, t.data(), b, delta);
}

// The CPU paths' float32 epilogue: a reduced basis is checked against the input lattice (from B T
// with T, by solving for T without) and rebuilt where it drifted, a singular one is judged on the
// input (b_in: the float32 input, as doubles). check: LllConfig::lattice_check.
LllStatus finish_float32(int n, int m, const double* b_in, std::int64_t* t, float* b, double delta,
                         LllStatus status, bool check) {
  if (check && status == LllStatus::reduced)
    return t ? rebuild_from_transform(n, m, b_in, t, b, delta)
             : rebuild_without_transform(n, m, b_in, b, delta);
  if (status == LllStatus::singular) return classify_float32_singular(n, m, b_in);
  return status;
}

#if MIMORX_HAS_CUDA
// The same for the GPU-resident block method (one large basis; in, b and t on the device): B T
// compared with B' on the device, and rebuilt there where it drifted; only then is B' copied
// to the host and checked again. A "singular" basis is judged on its input.
LllStatus finish_float32_device(int n, int m, const float* in, std::int64_t* t, float* b,
                                double delta, LllStatus status, bool check, Buffer<double>& scratch,
                                const Stream& stream, int device, const LllOptions& options) {
  if (status == LllStatus::singular) return classify_float32_singular_device(n, m, in, stream);
  if (!t || status != LllStatus::reduced || !check ||
      !detail::rebuild_if_drifted_cuda(in, b, t, n, m, scratch, stream.handle(), device, options))
    return status;
  return recheck_rebuilt_device(n, m, in, t, b, delta, stream);
}
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
            st[k] = finish_float32(n, m, b_in.data(), tk, bk, cfg_.delta, st[k], check);
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
          st[k] = finish_float32(n, m, b_in.data(), tk, bk, cfg_.delta, st[k], check);
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
            hs[k0 + idx[c]] = std::int32_t(recheck_rebuilt_host(
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
            st[singular[c0 + c]] = classify_float32_singular(n, m, packed.data() + c * nm);
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
                st[k] =
                    finish_float32_device(n, m, dws.b_in.data(), tk, basis.matrix(k), cfg_.delta,
                                          st[k], check, dws.drift, gr.stream, dev, opt_);
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
            st[k] = finish_float32(n, m, b_in.data(), ht.empty() ? nullptr : ht.data(), hb.data(),
                                   cfg_.delta, st[k], check);
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

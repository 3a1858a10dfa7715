#include <cmath>
#include <string>
#include <vector>

#include "linalg/qr_fixed.hpp"
#include "linalg/qr_internal.hpp"
#include "mimorx/config.hpp"
#include "mimorx/core/error.hpp"
#include "mimorx/linalg/qr.hpp"

namespace mimorx::linalg {

namespace {
std::string model_name(QrModel m) {
  return m == QrModel::complex ? "complex" : m == QrModel::rvd ? "rvd" : "mrvd";
}

// The fixed-size specialisation (the code the GPU kernel runs for these shapes).
template <class T, int NR, int NT, int PATH>
void run_cpu_fixed(const detail::QrArgs& a) {
  constexpr int M = detail::fixed_rows<T, NR>, N = detail::fixed_rows<T, NT>;
#pragma omp parallel for schedule(static)
  for (std::int64_t c = 0; c < a.channels; ++c) {
    const cf32* h = a.h + c * a.h_stride;
    detail::QrFixed<T, M, N> s;
    detail::qr_fixed_problem<T, NR, NT, PATH>(
        a, c, [h](int i) { return h[i]; }, s);
    detail::qr_fixed_store(a, c, s);
    if (a.z) detail::qr_fixed_qhy<T, NR>(a, c, s);
    if (a.status) a.status[c] = s.status;
  }
}

template <class T>
void run_cpu(const detail::QrArgs& a) {
  const int m = a.m, n = a.n;
  // The GPU's lane count fixes the order of every sum, so CPU and GPU agree bit for bit.
  const SerialRows rows{detail::qr_group_size(m)};
#pragma omp parallel
  {
    std::vector<T> wa(std::size_t(m) * n), wr(std::size_t(n) * n);
    std::vector<int> wp(n);
    std::vector<float> wn(n);
#pragma omp for schedule(static)
    for (std::int64_t c = 0; c < a.channels; ++c) {
      detail::qr_problem<T>(rows, a, c, wa.data(), wr.data(), wp.data(), wn.data(), 1);
    }
  }
}
}  // namespace

QrPlan::QrPlan(const QrConfig& config, Backend backend) : cfg_(config), backend_(backend) {
  require(cfg_.nt >= 1 && cfg_.nt <= 64, "nt",
          std::to_string(cfg_.nt) + " transmit streams; allowed 1..64");
  require(cfg_.nr >= 1 && cfg_.nr <= 64, "nr",
          std::to_string(cfg_.nr) + " receive antennas; allowed 1..64");
  require(cfg_.nr >= cfg_.nt, "nr",
          "QR needs nr >= nt (H is nr x nt with nr rows); got nr=" + std::to_string(cfg_.nr) +
              ", nt=" + std::to_string(cfg_.nt));
  require(
      cfg_.model == QrModel::complex || cfg_.model == QrModel::rvd || cfg_.model == QrModel::mrvd,
      "model", std::to_string(int(cfg_.model)) + "; allowed complex, rvd, mrvd");
  const int n = cols();
  require(cfg_.rotation >= 0 && cfg_.rotation < n, "rotation",
          std::to_string(cfg_.rotation) + "; allowed 0.." + std::to_string(n - 1) +
              " (columns of the " + model_name(cfg_.model) + " model matrix)");
#if !MIMORX_HAS_CUDA
  if (backend_.is_cuda()) throw Unsupported("QrPlan: this build has no CUDA backend");
#endif
}

QrPlan::QrPlan(QrPlan&&) noexcept = default;
QrPlan& QrPlan::operator=(QrPlan&&) noexcept = default;
QrPlan::~QrPlan() = default;

// Every check tests its condition first and builds its message only when it fails: run() of a
// small batch takes a few microseconds, and the caller's timing includes this host work.
void QrPlan::check(const QrInput& in, const QrOutput& out) const {
  const Memory mem = memory_of(backend_);
  const int m = rows(), n = cols();
  const std::int64_t C = in.h.batch;
  if (!(in.h.rows == cfg_.nr && in.h.cols == cfg_.nt))
    require(false, "h",
            "matrices are " + std::to_string(in.h.rows) + "x" + std::to_string(in.h.cols) +
                ", expected nr x nt = " + std::to_string(cfg_.nr) + "x" + std::to_string(cfg_.nt));
  if (!(C >= 0 && in.h.batch_stride >= std::int64_t(cfg_.nr) * cfg_.nt))
    require(false, "h",
            "batch stride " + std::to_string(in.h.batch_stride) + " is smaller than one matrix");
  if (in.h.where != mem) require_memory(in.h.where, mem, "h");
  if (!(in.h.data != nullptr || C == 0)) require(false, "h", "has no data");
  const bool cplx = cfg_.model == QrModel::complex;
  if (cfg_.want_q) {
    if (cplx) {
      if (!(out.q.batch == C && out.q.rows == m && out.q.cols == n))
        require_shape(out.q, C, m, n, "q");
      if (out.q.where != mem) require_memory(out.q.where, mem, "q");
    } else {
      if (!(out.q_real.batch == C && out.q_real.rows == m && out.q_real.cols == n))
        require_shape(out.q_real, C, m, n, "q_real");
      if (out.q_real.where != mem) require_memory(out.q_real.where, mem, "q_real");
    }
  }
  if (cplx) {
    if (!(out.r.batch == C && out.r.rows == n && out.r.cols == n))
      require_shape(out.r, C, n, n, "r");
    if (out.r.where != mem) require_memory(out.r.where, mem, "r");
  } else {
    if (!(out.r_real.batch == C && out.r_real.rows == n && out.r_real.cols == n))
      require_shape(out.r_real, C, n, n, "r_real");
    if (out.r_real.where != mem) require_memory(out.r_real.where, mem, "r_real");
  }
  if (cfg_.want_qhy) {
    if (!(in.vectors_per_channel >= 1))
      require(false, "vectors_per_channel",
              std::to_string(in.vectors_per_channel) + "; must be >= 1");
    const std::int64_t V = C * in.vectors_per_channel;
    if (!(in.y.batch == V && in.y.rows == cfg_.nr && in.y.cols == 1))
      require_shape(in.y, V, cfg_.nr, 1, "y");
    if (in.y.where != mem) require_memory(in.y.where, mem, "y");
    if (cplx) {
      if (!(out.z.batch == V && out.z.rows == n && out.z.cols == 1))
        require_shape(out.z, V, n, 1, "z");
      if (out.z.where != mem) require_memory(out.z.where, mem, "z");
    } else {
      if (!(out.z_real.batch == V && out.z_real.rows == n && out.z_real.cols == 1))
        require_shape(out.z_real, V, n, 1, "z_real");
      if (out.z_real.where != mem) require_memory(out.z_real.where, mem, "z_real");
    }
  }
  if (out.perm.size != 0) {
    if (out.perm.size != C * n) require_size(out.perm, C * n, "perm");
    if (out.perm.where != mem) require_memory(out.perm.where, mem, "perm");
  }
  if (out.status.size != 0) {
    if (out.status.size != C) require_size(out.status, C, "status");
    if (out.status.where != mem) require_memory(out.status.where, mem, "status");
  }
  if (in.order.size != 0) {
    if (cfg_.sorted)
      require(false, "order",
              "an explicit column order cannot be combined with sorted (SQRD chooses the order)");
    if (!(in.order.size == n || in.order.size == C * n))
      require(false, "order",
              "has " + std::to_string(in.order.size) + " entries; give n=" + std::to_string(n) +
                  " (one order for all channels) or C*n=" + std::to_string(C * n));
    if (in.order.where != mem) require_memory(in.order.where, mem, "order");
    if (in.order.where == Memory::host) {
      for (std::int64_t s = 0; s < in.order.size; s += n) {
        std::vector<char> seen(n, 0);
        for (int j = 0; j < n; ++j) {
          const int v = in.order[s + j];
          if (!(v >= 0 && v < n && !seen[v]))
            require(false, "order",
                    "entry " + std::to_string(s + j) + " = " + std::to_string(v) +
                        " makes it no permutation of 0.." + std::to_string(n - 1));
          seen[v] = 1;
        }
      }
    }
  }
}

void QrPlan::run(const QrInput& in, const QrOutput& out, const Stream& stream) {
  check(in, out);
  const std::int64_t C = in.h.batch;
  if (C == 0) return;
  const bool cplx = cfg_.model == QrModel::complex;
  detail::QrArgs a;
  a.nr = cfg_.nr;
  a.nt = cfg_.nt;
  a.m = rows();
  a.n = cols();
  a.model = cfg_.model;
  a.sorted = cfg_.sorted;
  a.rotation = cfg_.rotation;
  a.channels = C;
  a.h = in.h.data;
  a.h_stride = in.h.batch_stride;
  if (cfg_.want_qhy) {
    a.y = in.y.data;
    a.y_stride = in.y.batch_stride;
    a.vpc = in.vectors_per_channel;
    a.z = cplx ? static_cast<void*>(out.z.data) : static_cast<void*>(out.z_real.data);
    a.z_stride = cplx ? out.z.batch_stride : out.z_real.batch_stride;
  }
  if (in.order.size != 0) {
    a.order = in.order.data;
    a.order_per_channel = in.order.size != a.n;
  }
  if (cfg_.want_q) {
    a.q = cplx ? static_cast<void*>(out.q.data) : static_cast<void*>(out.q_real.data);
    a.q_stride = cplx ? out.q.batch_stride : out.q_real.batch_stride;
  }
  a.r = cplx ? static_cast<void*>(out.r.data) : static_cast<void*>(out.r_real.data);
  a.r_stride = cplx ? out.r.batch_stride : out.r_real.batch_stride;
  a.perm = out.perm.size ? out.perm.data : nullptr;
  const bool own_status = out.status.size == 0;
  if (own_status) {
    if (status_scratch_.size() < std::size_t(C)) status_scratch_ = Buffer<int>::on(backend_, C);
    a.status = status_scratch_.data();
  } else {
    a.status = out.status.data;
  }

  if (backend_.is_cpu()) {
    const bool fixed = detail::qr_fixed_dispatch(
        a, [&]<class T, int NR, int NT, int PATH>() { run_cpu_fixed<T, NR, NT, PATH>(a); });
    if (!fixed && cplx) run_cpu<cf32>(a);
    if (!fixed && !cplx) run_cpu<float>(a);
  } else {
#if MIMORX_HAS_CUDA
    detail::qr_run_cuda(a, backend_.device(), stream.handle());
#else
    throw Unsupported("QrPlan: this build has no CUDA backend");
#endif
  }
  if (!own_status) return;

  // No status view: report the first bad channel (synchronises on the GPU).
  std::vector<int> st(static_cast<std::size_t>(C));
  if (backend_.is_cuda()) {
    status_scratch_.copy_to_host(st.data(), std::size_t(C), stream);
    stream.synchronize();
  } else {
    for (std::int64_t c = 0; c < C; ++c) st[c] = status_scratch_[c];
  }
  for (std::int64_t c = 0; c < C; ++c) {
    if (st[c] == qr_bad_order) {
      throw InvalidArgument("order: the column order of channel " + std::to_string(c) +
                            " is no permutation of 0.." + std::to_string(cols() - 1));
    }
    if (st[c] == qr_non_finite) {
      throw InvalidArgument("h: channel " + std::to_string(c) +
                            " (or one of its received vectors) contains NaN or Inf; every value "
                            "must be finite");
    }
    if (st[c] == qr_rank_deficient) {
      throw NumericalError("h: channel " + std::to_string(c) +
                           " is rank deficient (a column lies within float precision of the "
                           "span of the others); pass a status view to get per-channel flags "
                           "instead of this exception");
    }
  }
}

void to_real_model(QrModel model, ConstMatrixBatch<cf32> h, MatrixBatch<float> out) {
  require(model != QrModel::complex, "model", "to_real_model needs rvd or mrvd");
  require_memory(h.where, Memory::host, "h");
  require_memory(out.where, Memory::host, "out");
  require_shape(out, h.batch, 2 * h.rows, 2 * h.cols, "out");
  for (std::int64_t b = 0; b < h.batch; ++b)
    for (int c = 0; c < 2 * h.cols; ++c)
      for (int i = 0; i < 2 * h.rows; ++i)
        out(b, i, c) = real_model_entry(model, h.matrix(b), h.rows, h.cols, i, c);
}

void to_real_model_y(QrModel model, ConstMatrixBatch<cf32> y, MatrixBatch<float> out) {
  require(model != QrModel::complex, "model", "to_real_model_y needs rvd or mrvd");
  require_memory(y.where, Memory::host, "y");
  require_memory(out.where, Memory::host, "out");
  require(y.cols == 1, "y", "must be a batch of vectors (cols = 1)");
  require_shape(out, y.batch, 2 * y.rows, 1, "out");
  for (std::int64_t b = 0; b < y.batch; ++b)
    for (int i = 0; i < 2 * y.rows; ++i) out(b, i, 0) = real_model_y(model, y.matrix(b), y.rows, i);
}

}  // namespace mimorx::linalg

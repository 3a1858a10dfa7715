#include <Eigen/Dense>
#include <cmath>
#include <string>

#include "channel/channel_cuda.hpp"
#include "channel/fading_math.hpp"
#include "mimorx/channel/awgn.hpp"
#include "mimorx/channel/fading.hpp"
#include "mimorx/config.hpp"
#include "mimorx/core/error.hpp"

namespace mimorx::channel {

namespace {
void require_cuda_build() {
#if !MIMORX_HAS_CUDA
  throw Unsupported("backend: this build of mimorx has no CUDA backend");
#endif
}

// Symmetric square root V diag(sqrt(max(lambda, 0))) V^T in double, rounded to float.
std::vector<float> sqrt_correlation(int n, double rho) {
  if (rho == 0.0) return {};
  const std::vector<double> r = exponential_correlation(n, rho);
  const Eigen::Map<const Eigen::MatrixXd> rm(r.data(), n, n);
  Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> es(rm);
  const Eigen::VectorXd s = es.eigenvalues().cwiseMax(0.0).cwiseSqrt();
  const Eigen::MatrixXd root = es.eigenvectors() * s.asDiagonal() * es.eigenvectors().transpose();
  std::vector<float> out(std::size_t(n) * n);
  for (int j = 0; j < n; ++j) {
    for (int i = 0; i < n; ++i) out[std::size_t(j) * n + i] = float(root(i, j));
  }
  return out;
}

void require_noise(View<const float> n0, std::int64_t count, const Backend& backend,
                   const char* what) {
  require_memory(n0.where, memory_of(backend), "noise_var");
  require(n0.size == 1 || n0.size == count, "noise_var",
          "has " + std::to_string(n0.size) + " values; give 1 or one per " + what + " (" +
              std::to_string(count) + ")");
  if (n0.where != Memory::host) return;
  for (std::int64_t i = 0; i < n0.size; ++i) {
    if (!(std::isfinite(n0[i]) && n0[i] >= 0.f)) {  // message built only on failure
      throw InvalidArgument("noise_var: value " + std::to_string(n0[i]) + " at index " +
                            std::to_string(i) + "; the noise variance must be finite and >= 0");
    }
  }
}
}  // namespace

std::vector<double> exponential_correlation(int n, double rho) {
  std::vector<double> r(std::size_t(n) * n);
  for (int j = 0; j < n; ++j) {
    for (int i = 0; i < n; ++i) r[std::size_t(j) * n + i] = std::pow(rho, std::abs(i - j));
  }
  return r;
}

FadingPlan::FadingPlan(const FadingConfig& config, Backend backend)
    : config_(config), backend_(backend) {
  require(config.nr >= 1 && config.nr <= 64, "nr",
          std::to_string(config.nr) + " receive antennas; allowed 1..64");
  require(config.nt >= 1 && config.nt <= 64, "nt",
          std::to_string(config.nt) + " transmit antennas; allowed 1..64");
  require(std::isfinite(config.rho_tx) && config.rho_tx >= 0.0 && config.rho_tx < 1.0, "rho_tx",
          std::to_string(config.rho_tx) + "; the correlation coefficient must be in [0, 1)");
  require(std::isfinite(config.rho_rx) && config.rho_rx >= 0.0 && config.rho_rx < 1.0, "rho_rx",
          std::to_string(config.rho_rx) + "; the correlation coefficient must be in [0, 1)");
  if (backend.is_cuda()) require_cuda_build();
  sqrt_rx_host_ = sqrt_correlation(config.nr, config.rho_rx);
  sqrt_tx_host_ = sqrt_correlation(config.nt, config.rho_tx);
  if (backend.is_cuda()) {
    if (!sqrt_rx_host_.empty()) {
      sqrt_rx_dev_ = Buffer<float>::device(sqrt_rx_host_.size(), backend.device());
      sqrt_rx_dev_.copy_from_host(sqrt_rx_host_.data(), sqrt_rx_host_.size());
    }
    if (!sqrt_tx_host_.empty()) {
      sqrt_tx_dev_ = Buffer<float>::device(sqrt_tx_host_.size(), backend.device());
      sqrt_tx_dev_.copy_from_host(sqrt_tx_host_.data(), sqrt_tx_host_.size());
    }
  }
}

void FadingPlan::generate(std::uint64_t seed, std::int64_t first_channel, MatrixBatch<cf32> h,
                          const Stream& stream) {
  const int nr = config_.nr, nt = config_.nt;
  require_memory(h.where, memory_of(backend_), "h");
  require(h.rows == nr && h.cols == nt, "h",
          "matrices are " + std::to_string(h.rows) + "x" + std::to_string(h.cols) +
              ", expected nr x nt = " + std::to_string(nr) + "x" + std::to_string(nt));
  require(h.batch_stride >= std::int64_t(nr) * nt, "h", "batch stride smaller than one matrix");
  require(first_channel >= 0, "first_channel", std::to_string(first_channel) + "; must be >= 0");
  const std::int64_t count = h.batch, per = std::int64_t(nr) * nt;
  const bool correlated = !sqrt_rx_host_.empty() || !sqrt_tx_host_.empty();
  if (correlated && work_.size() < std::size_t(count * per)) {
    work_ = Buffer<cf32>::on(backend_, std::size_t(count * per));
  }
  if (backend_.is_cuda()) {
#if MIMORX_HAS_CUDA
    if (!correlated) {
      detail::fading_g_cuda(seed, first_channel, count, nr, nt, h.data, h.batch_stride,
                            backend_.device(), stream.handle());
      return;
    }
    detail::fading_g_cuda(seed, first_channel, count, nr, nt, work_.data(), per, backend_.device(),
                          stream.handle());
    detail::kron_cuda(work_.data(), sqrt_rx_host_.empty() ? nullptr : sqrt_rx_dev_.data(),
                      sqrt_tx_host_.empty() ? nullptr : sqrt_tx_dev_.data(), count, nr, nt, h.data,
                      h.batch_stride, backend_.device(), stream.handle());
#endif
    return;
  }
  (void)stream;
  cf32* g = correlated ? work_.data() : nullptr;
#pragma omp parallel for schedule(static) if (count * per > 4096)
  for (std::int64_t c = 0; c < count; ++c) {
    cf32* dst = correlated ? g + c * per : h.matrix(c);
    for (int j = 0; j < nt; ++j) {
      for (int i = 0; i < nr; ++i)
        dst[j * nr + i] = fading_entry(seed, first_channel + c, nr, nt, i, j);
    }
    if (!correlated) continue;
    const float* a = sqrt_rx_host_.empty() ? nullptr : sqrt_rx_host_.data();
    const float* b = sqrt_tx_host_.empty() ? nullptr : sqrt_tx_host_.data();
    for (int j = 0; j < nt; ++j) {
      for (int i = 0; i < nr; ++i) h(c, i, j) = detail::kron_entry(dst, a, b, nr, nt, i, j);
    }
  }
}

void apply_channel(const Backend& backend, ConstMatrixBatch<cf32> h, ConstMatrixBatch<cf32> x,
                   int vectors_per_channel, View<const float> noise_var, std::uint64_t seed,
                   std::int64_t first_vector, MatrixBatch<cf32> y, const Stream& stream) {
  const Memory mem = memory_of(backend);
  require_memory(h.where, mem, "h");
  require_memory(x.where, mem, "x");
  require_memory(y.where, mem, "y");
  const int nr = h.rows, nt = h.cols;
  require(vectors_per_channel >= 1, "vectors_per_channel",
          std::to_string(vectors_per_channel) + "; must be >= 1");
  require(nr >= 1 && nt >= 1, "h", "matrices must have at least one row and one column");
  require(x.rows == nt && x.cols == 1, "x",
          "vectors are " + std::to_string(x.rows) + "x" + std::to_string(x.cols) +
              ", expected nt x 1 = " + std::to_string(nt) + "x1");
  require(y.rows == nr && y.cols == 1, "y",
          "vectors are " + std::to_string(y.rows) + "x" + std::to_string(y.cols) +
              ", expected nr x 1 = " + std::to_string(nr) + "x1");
  require(x.batch == h.batch * vectors_per_channel && y.batch == x.batch, "x",
          std::to_string(x.batch) + " vectors (y: " + std::to_string(y.batch) + ") for " +
              std::to_string(h.batch) + " channels x " + std::to_string(vectors_per_channel) +
              " vectors per channel; the counts must match");
  require(first_vector >= 0, "first_vector", std::to_string(first_vector) + "; must be >= 0");
  require_noise(noise_var, x.batch, backend, "vector");
  if (backend.is_cuda()) {
    require_cuda_build();
#if MIMORX_HAS_CUDA
    detail::apply_channel_cuda(h.data, h.batch_stride, x.data, x.batch_stride, y.data,
                               y.batch_stride, x.batch, vectors_per_channel, nr, nt, noise_var.data,
                               noise_var.size, seed, first_vector, backend.device(),
                               stream.handle());
#endif
    return;
  }
  (void)stream;
  const std::int64_t vectors = x.batch;
#pragma omp parallel for schedule(static) if (vectors * nr > 4096)
  for (std::int64_t v = 0; v < vectors; ++v) {
    const float n0 = noise_var[noise_var.size == 1 ? 0 : v];
    for (int i = 0; i < nr; ++i) {
      y(v, i, 0) = received_entry(h.matrix(v / vectors_per_channel), x.matrix(v), nr, nt, i,
                                  noise_sample(seed, first_vector + v, nr, i, n0));
    }
  }
}

void add_awgn(const Backend& backend, View<const cf32> x, View<const float> noise_var,
              std::uint64_t seed, std::int64_t first, View<cf32> y, const Stream& stream) {
  const Memory mem = memory_of(backend);
  require_memory(x.where, mem, "x");
  require_memory(y.where, mem, "y");
  require_size(y, x.size, "y");
  require(first >= 0, "first", std::to_string(first) + "; must be >= 0");
  require_noise(noise_var, x.size, backend, "symbol");
  if (backend.is_cuda()) {
    require_cuda_build();
#if MIMORX_HAS_CUDA
    detail::add_awgn_cuda(x.data, y.data, x.size, noise_var.data, noise_var.size, seed, first,
                          backend.device(), stream.handle());
#endif
    return;
  }
  (void)stream;
  const std::int64_t n = x.size;
#pragma omp parallel for schedule(static) if (n > 65536)
  for (std::int64_t s = 0; s < n; ++s) {
    y[s] = rounding::cadd(
        x[s], noise_sample(seed, first + s, 1, 0, noise_var[noise_var.size == 1 ? 0 : s]));
  }
}

}  // namespace mimorx::channel

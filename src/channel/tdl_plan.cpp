// TdlChannel: the plan (profile, R^{1/2}, subcarrier phase table) and its CPU backend.
#include <Eigen/Dense>
#include <cmath>
#include <string>

#include "channel/tdl_math.hpp"
#include "mimorx/channel/tdl.hpp"
#include "mimorx/config.hpp"
#include "mimorx/core/error.hpp"

namespace mimorx::channel {
namespace {

// Symmetric square root V diag(sqrt(max(lambda, 0))) V^T in double, rounded to float.
std::vector<float> symmetric_sqrt(const std::vector<double>& r, int p) {
  const Eigen::Map<const Eigen::MatrixXd> rm(r.data(), p, p);
  Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> es(rm);
  const Eigen::VectorXd s = es.eigenvalues().cwiseMax(0.0).cwiseSqrt();
  const Eigen::MatrixXd root = es.eigenvectors() * s.asDiagonal() * es.eigenvectors().transpose();
  std::vector<float> out(std::size_t(p) * p);
  for (int j = 0; j < p; ++j) {
    for (int i = 0; i < p; ++i) out[std::size_t(j) * p + i] = float(root(i, j));
  }
  return out;
}

template <class T>
void upload(const std::vector<T>& host, Buffer<T>& dev, const Backend& backend) {
  dev = Buffer<T>::on(backend, host.size());
  dev.copy_from_host(host.data(), host.size());
}
}  // namespace

TdlChannel::TdlChannel(const TdlConfig& config, Backend backend)
    : config_(config), backend_(backend) {
  validate(config);
  if (backend.is_cuda() && !MIMORX_HAS_CUDA) {
    throw Unsupported("backend: this build of mimorx has no CUDA backend");
  }
  taps_ = tdl_profile(config.model, config.delay_spread_ns);
  const int t = int(taps_.size());
  for (const TdlTap& tap : taps_) {
    amp_host_.push_back(float(std::sqrt(tap.power)));
    los_host_.push_back(tap.los ? 1 : 0);
  }
  if (config.correlation != TdlCorrelation::low) {
    sqrt_r_host_ = symmetric_sqrt(tdl_spatial_correlation(config), config.n_rx * config.n_tx);
  }
  // exp(-j 2 pi k df tau_n): k df tau_n in turns, reduced exactly, then detail::sincos_turns.
  ramp_host_.resize(std::size_t(config.n_subcarriers) * t);
  for (int n = 0; n < t; ++n) {
    const double turns_per_k = config.subcarrier_spacing_khz * 1e3 * taps_[n].delay_ns * 1e-9;
    for (int k = 0; k < config.n_subcarriers; ++k) {
      float s, c;
      detail::sincos_turns(detail::frac_turns(double(k) * turns_per_k), &s, &c);
      ramp_host_[std::size_t(k) * t + n] = cf32{c, -s};
    }
  }
  if (backend.is_cuda()) {
    upload(amp_host_, amp_dev_, backend);
    upload(los_host_, los_dev_, backend);
    upload(ramp_host_, ramp_dev_, backend);
    if (!sqrt_r_host_.empty()) upload(sqrt_r_host_, sqrt_r_dev_, backend);
  }
}

void TdlChannel::generate(std::uint64_t seed, const TdlSlots& slots, MatrixBatch<cf32> h,
                          [[maybe_unused]] const Stream& stream) {
  const TdlConfig& c = config_;
  const int p = c.n_rx * c.n_tx, taps = int(taps_.size());
  require_memory(h.where, memory_of(backend_), "h");
  require(h.rows == c.n_rx && h.cols == c.n_tx, "h",
          "matrices are " + std::to_string(h.rows) + "x" + std::to_string(h.cols) +
              ", expected n_rx x n_tx = " + std::to_string(c.n_rx) + "x" + std::to_string(c.n_tx));
  require(h.batch_stride >= p, "h", "batch stride smaller than one matrix");
  require(h.batch >= 0 && h.batch % matrices_per_slot() == 0, "h",
          std::to_string(h.batch) + " matrices; must be a multiple of symbols_per_slot * " +
              "n_subcarriers = " + std::to_string(matrices_per_slot()));
  require(slots.first_realisation >= 0, "first_realisation",
          std::to_string(slots.first_realisation) + "; must be >= 0");
  require(slots.first_slot >= 0, "first_slot", std::to_string(slots.first_slot) + "; must be >= 0");
  require(slots.slots_per_realisation >= 1, "slots_per_realisation",
          std::to_string(slots.slots_per_realisation) + "; must be >= 1");
  const std::int64_t count = h.batch / matrices_per_slot();
  if (count == 0) return;
  const std::int64_t blocks = count * c.symbols_per_slot;  // (slot, symbol) pairs
  const std::size_t work = std::size_t(blocks) * taps * p;
  if (w_.size() < work) {
    w_ = Buffer<cf32>::on(backend_, work);
    a_ = Buffer<cf32>::on(backend_, work);
  }
  const bool cuda = backend_.is_cuda();
  detail::TdlArgs args;
  args.taps = taps;
  args.n_rx = c.n_rx;
  args.n_tx = c.n_tx;
  args.n_sc = c.n_subcarriers;
  args.symbols = c.symbols_per_slot;
  args.mu = c.subcarrier_spacing_khz == 15 ? 0 : 1;
  args.fd_tc = c.max_doppler_hz * detail::kTdlTcSeconds;
  args.first_realisation = slots.first_realisation;
  args.first_slot = slots.first_slot;
  args.slots_per_realisation = slots.slots_per_realisation;
  args.sqrt_r = sqrt_r_host_.empty() ? nullptr : (cuda ? sqrt_r_dev_.data() : sqrt_r_host_.data());
  args.amp = cuda ? amp_dev_.data() : amp_host_.data();
  args.los = cuda ? los_dev_.data() : los_host_.data();
  args.ramp = cuda ? ramp_dev_.data() : ramp_host_.data();
  if (cuda) {
#if MIMORX_HAS_CUDA
    detail::tdl_cuda(args, seed, count, w_.data(), a_.data(), h.data, h.batch_stride,
                     backend_.device(), stream.handle());
#endif
    return;
  }
  cf32* w = w_.data();
  cf32* at = a_.data();
  const std::int64_t items = blocks * taps * p;
  const int symbols = c.symbols_per_slot, n_sc = c.n_subcarriers;
#pragma omp parallel for schedule(static)
  for (std::int64_t x = 0; x < items; ++x) {
    const int e = int(x % p), n = int((x / p) % taps);
    const std::int64_t bl = x / (std::int64_t(p) * taps);
    w[x] = detail::tdl_w_entry(args, seed, bl / symbols, int(bl % symbols), n, e);
  }
#pragma omp parallel for schedule(static)
  for (std::int64_t x = 0; x < items; ++x) {
    const int e = int(x % p), n = int((x / p) % taps);
    at[x] = detail::tdl_a_entry(args, w + (x - e), n, e);
  }
#pragma omp parallel for schedule(static)
  for (std::int64_t x = 0; x < blocks * n_sc; ++x) {
    const std::int64_t bl = x / n_sc;
    const int k = int(x % n_sc);
    cf32* dst = h.matrix(x);
    const cf32* a_bl = at + bl * taps * p;
    for (int e = 0; e < p; ++e) dst[e] = detail::tdl_h_entry(args, a_bl, k, e);
  }
}

}  // namespace mimorx::channel

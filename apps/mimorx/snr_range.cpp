#include "snr_range.hpp"

#include <fmt/format.h>

#include <Eigen/Dense>
#include <cmath>
#include <vector>

#include "mimorx/channel/fading.hpp"
#include "mimorx/core/backend.hpp"

namespace mimorx::cli {

double awgn_capacity_snr_db(double info_bits_per_symbol) {
  return 10.0 * std::log10(std::exp2(info_bits_per_symbol) - 1.0);
}

double mimo_capacity_snr_db(int nt, int nr, double info_bits_per_vector,
                            const sim::ChannelModel& channel) {
  constexpr int kChannels = 400;
  channel::FadingPlan fading({nr, nt, channel.corr_tx, channel.corr_rx}, Backend::cpu());
  std::vector<cf32> h(std::size_t(kChannels) * nr * nt);
  fading.generate(12345, 0, MatrixBatch<cf32>(h.data(), kChannels, nr, nt, Memory::host));
  // The eigenvalues of H H^H per channel; the capacity at any SNR follows from them.
  std::vector<Eigen::VectorXd> eig;
  for (int c = 0; c < kChannels; ++c) {
    Eigen::MatrixXcd m(nr, nt);
    for (int j = 0; j < nt; ++j) {
      for (int i = 0; i < nr; ++i) {
        const cf32 v = h[std::size_t(c) * nr * nt + std::size_t(j) * nr + i];
        m(i, j) = {v.re, v.im};
      }
    }
    eig.push_back(Eigen::SelfAdjointEigenSolver<Eigen::MatrixXcd>(m * m.adjoint()).eigenvalues());
  }
  const auto capacity = [&](double snr_db) {
    const double snr = std::pow(10.0, snr_db / 10.0);
    double sum = 0;
    for (const auto& e : eig) {
      for (int k = 0; k < e.size(); ++k) sum += std::log2(1.0 + snr * std::max(e[k], 0.0));
    }
    return sum / kChannels;
  };
  double lo = -30, hi = 80;
  for (int i = 0; i < 60; ++i) {
    const double mid = 0.5 * (lo + hi);
    (capacity(mid) < info_bits_per_vector ? lo : hi) = mid;
  }
  return hi;
}

std::string sweep_from_threshold(double threshold_db, double step, double span) {
  const double start = std::floor(threshold_db / step) * step;
  return fmt::format("{:g}:{:g}:{:g}", start, step, start + span);
}

}  // namespace mimorx::cli

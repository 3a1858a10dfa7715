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

Receiver receiver_of(const std::string& detector) {
  if (detector == "zf") return Receiver::zf;
  if (detector == "mmse" || detector.rfind("lr-", 0) == 0) return Receiver::mmse;
  return Receiver::optimal;
}

double mimo_capacity_snr_db(int nt, int nr, double info_bits_per_vector,
                            const sim::ChannelModel& channel, Receiver receiver) {
  constexpr int kChannels = 400;
  channel::FadingPlan fading({nr, nt, channel.corr_tx, channel.corr_rx}, Backend::cpu());
  std::vector<cf32> h(std::size_t(kChannels) * nr * nt);
  fading.generate(12345, 0, MatrixBatch<cf32>(h.data(), kChannels, nr, nt, Memory::host));
  if (receiver == Receiver::zf && nr < nt) receiver = Receiver::mmse;  // ZF needs nr >= nt
  // Per channel, from the eigendecomposition H^H H = V diag(lambda) V^H: the capacity is
  // sum_i log2(1 + lambda_i / N0); the filters' [(H^H H + N0 I)^-1]_kk (MMSE, N0 = 0 for ZF) is
  // sum_i |V_ki|^2 / (lambda_i + N0), and SINR_k = 1 / (N0 [.]_kk) - 1 (MMSE) or
  // 1 / (N0 [.]_kk) (ZF).
  std::vector<Eigen::VectorXd> lambda;
  std::vector<Eigen::MatrixXd> weight;  // |V_ki|^2
  for (int c = 0; c < kChannels; ++c) {
    Eigen::MatrixXcd m(nr, nt);
    for (int j = 0; j < nt; ++j) {
      for (int i = 0; i < nr; ++i) {
        const cf32 v = h[std::size_t(c) * nr * nt + std::size_t(j) * nr + i];
        m(i, j) = {v.re, v.im};
      }
    }
    const Eigen::SelfAdjointEigenSolver<Eigen::MatrixXcd> es(m.adjoint() * m);
    lambda.push_back(es.eigenvalues().cwiseMax(0.0));
    weight.push_back(es.eigenvectors().cwiseAbs2());
  }
  const auto rate = [&](double snr_db) {
    const double n0 = std::pow(10.0, -snr_db / 10.0);
    double sum = 0;
    for (int c = 0; c < kChannels; ++c) {
      if (receiver == Receiver::optimal) {
        for (int i = 0; i < nt; ++i) sum += std::log2(1.0 + lambda[c][i] / n0);
        continue;
      }
      const double shift = receiver == Receiver::mmse ? n0 : 0.0;
      for (int k = 0; k < nt; ++k) {
        double d = 0;
        for (int i = 0; i < nt; ++i) d += weight[c](k, i) / (lambda[c][i] + shift);
        const double sinr = 1.0 / (n0 * d) - (receiver == Receiver::mmse ? 1.0 : 0.0);
        if (std::isfinite(sinr)) sum += std::log2(1.0 + std::max(sinr, 0.0));
      }
    }
    return sum / kChannels;
  };
  double lo = -30, hi = 80;
  for (int i = 0; i < 40; ++i) {
    const double mid = 0.5 * (lo + hi);
    (rate(mid) < info_bits_per_vector ? lo : hi) = mid;
  }
  return hi;
}

std::string sweep_from_thresholds(double lowest_db, double highest_db, double step, double span,
                                  double beyond) {
  const double start = std::floor(lowest_db / step) * step;
  const double stop = std::max(start + span, std::ceil((highest_db + beyond) / step) * step);
  return fmt::format("{:g}:{:g}:{:g}", start, step, stop);
}

}  // namespace mimorx::cli

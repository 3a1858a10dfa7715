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
  // Per channel: the eigenvalues of H^H H (optimal) or H^H H itself (linear filters).
  std::vector<Eigen::MatrixXcd> gram;
  std::vector<Eigen::VectorXd> eig;
  for (int c = 0; c < kChannels; ++c) {
    Eigen::MatrixXcd m(nr, nt);
    for (int j = 0; j < nt; ++j) {
      for (int i = 0; i < nr; ++i) {
        const cf32 v = h[std::size_t(c) * nr * nt + std::size_t(j) * nr + i];
        m(i, j) = {v.re, v.im};
      }
    }
    gram.push_back(m.adjoint() * m);
    eig.push_back(Eigen::SelfAdjointEigenSolver<Eigen::MatrixXcd>(gram.back()).eigenvalues());
  }
  const Eigen::MatrixXcd eye = Eigen::MatrixXcd::Identity(nt, nt);
  const auto rate = [&](double snr_db) {
    const double n0 = std::pow(10.0, -snr_db / 10.0);
    double sum = 0;
    for (int c = 0; c < kChannels; ++c) {
      if (receiver == Receiver::optimal) {
        for (int k = 0; k < nt; ++k) sum += std::log2(1.0 + std::max(eig[c][k], 0.0) / n0);
        continue;
      }
      // MMSE: SINR_k = 1 / (N0 [(H^H H + N0 I)^-1]_kk) - 1; ZF: 1 / (N0 [(H^H H)^-1]_kk).
      const Eigen::MatrixXcd w = receiver == Receiver::mmse
                                     ? Eigen::MatrixXcd(gram[c] + n0 * eye).inverse()
                                     : Eigen::MatrixXcd(gram[c]).inverse();
      for (int k = 0; k < nt; ++k) {
        const double d = std::max(w(k, k).real(), 1e-300);
        const double sinr = receiver == Receiver::mmse ? 1.0 / (n0 * d) - 1.0 : 1.0 / (n0 * d);
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

#pragma once
// Received NR grids for channel-estimation tests: y[k, l] = H[k, l] x[k, l] + n with x the
// DM-RS values of every port at its REs, random QPSK data at the data REs, zero elsewhere.
#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <random>
#include <vector>

#include "mimorx/channel/tdl.hpp"
#include "mimorx/core/complex.hpp"
#include "mimorx/nr/slot.hpp"

namespace mimorx::test {

inline constexpr int kSlotSymbols = 14;

// H for `slots` slots in the TDL layout (matrix (b * 14 + l) * n_sc + k, n_rx x layers).
using Grid = std::vector<cf32>;

// Frequency-flat, time-constant: one random CN(0, 1) matrix per slot.
inline Grid flat_channel(const nr::SlotPlan& plan, int n_rx, std::int64_t slots,
                         std::mt19937_64& g) {
  const int v = plan.config().layers, n_sc = plan.n_subcarriers();
  std::normal_distribution<float> nd(0.f, std::sqrt(0.5f));
  Grid h(std::size_t(slots * kSlotSymbols * n_sc * n_rx * v));
  for (std::int64_t b = 0; b < slots; ++b) {
    std::vector<cf32> m(std::size_t(n_rx * v));
    for (cf32& x : m) x = {nd(g), nd(g)};
    for (std::int64_t j = 0; j < std::int64_t(kSlotSymbols) * n_sc; ++j) {
      for (int e = 0; e < n_rx * v; ++e) {
        h[std::size_t((b * kSlotSymbols * n_sc + j) * n_rx * v + e)] = m[std::size_t(e)];
      }
    }
  }
  return h;
}

// A TDL channel (cfg's n_rx, n_tx = layers, n_subcarriers, scs set from the plan), slots of
// independent realisations. TDL correlation exists for 1, 2, 4 and 8 antennas: 3 layers take the
// first 3 columns of a 4-antenna channel.
inline Grid tdl_channel(const nr::SlotPlan& plan, channel::TdlConfig cfg, std::uint64_t seed,
                        std::int64_t slots) {
  const int v = plan.config().layers;
  cfg.n_tx = v == 3 ? 4 : v;
  cfg.n_subcarriers = plan.n_subcarriers();
  cfg.subcarrier_spacing_khz = plan.subcarrier_spacing_khz();
  cfg.symbols_per_slot = kSlotSymbols;
  channel::TdlChannel ch(cfg, Backend::cpu());
  const std::int64_t mats = slots * ch.matrices_per_slot();
  Grid full(std::size_t(mats * cfg.n_rx * cfg.n_tx));
  ch.generate(seed, {0, 0, 1},
              MatrixBatch<cf32>(full.data(), mats, cfg.n_rx, cfg.n_tx, Memory::host));
  if (cfg.n_tx == v) return full;
  Grid h(std::size_t(mats * cfg.n_rx * v));
  for (std::int64_t i = 0; i < mats; ++i) {
    std::copy_n(full.begin() + i * cfg.n_rx * cfg.n_tx, cfg.n_rx * v, h.begin() + i * cfg.n_rx * v);
  }
  return h;
}

// y = H x + n, element ((b * 14 + l) * n_sc + k) * n_rx + r; n ~ CN(0, n0) (none for n0 = 0).
inline Grid receive(const nr::SlotPlan& plan, int n_rx, std::int64_t slots, const Grid& h, float n0,
                    std::mt19937_64& g) {
  const int v = plan.config().layers, n_sc = plan.n_subcarriers();
  const std::int64_t res = std::int64_t(kSlotSymbols) * n_sc;
  std::vector<cf32> x(std::size_t(res * v), cf32{0.f, 0.f});
  for (int p = 0; p < v; ++p) {
    for (const nr::DmrsRe& re : plan.dmrs_res(p)) {
      x[std::size_t((std::int64_t(re.l) * n_sc + re.k) * v + p)] = re.value;
    }
  }
  std::normal_distribution<float> nd(0.f, std::sqrt(0.5f * n0));
  std::bernoulli_distribution coin(0.5);
  constexpr float kQpsk = 0.70710678f;
  Grid y(std::size_t(slots * res * n_rx));
  for (std::int64_t b = 0; b < slots; ++b) {
    for (const nr::Re& re : plan.data_res()) {
      for (int j = 0; j < v; ++j) {
        x[std::size_t((std::int64_t(re.l) * n_sc + re.k) * v + j)] = {coin(g) ? kQpsk : -kQpsk,
                                                                      coin(g) ? kQpsk : -kQpsk};
      }
    }
    for (std::int64_t m = 0; m < res; ++m) {
      const cf32* hm = &h[std::size_t((b * res + m) * n_rx * v)];
      for (int r = 0; r < n_rx; ++r) {
        std::complex<double> acc = 0.0;
        for (int j = 0; j < v; ++j) {
          const cf32 a = hm[j * n_rx + r], s = x[std::size_t(m * v + j)];
          acc += std::complex<double>(a.re, a.im) * std::complex<double>(s.re, s.im);
        }
        if (n0 > 0.f) acc += std::complex<double>(nd(g), nd(g));
        y[std::size_t((b * res + m) * n_rx + r)] = {float(acc.real()), float(acc.imag())};
      }
    }
  }
  return y;
}

}  // namespace mimorx::test

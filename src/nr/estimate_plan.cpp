// ChannelEstimator: validation, the tables (pilots, frequency and time interpolation weights,
// noise residuals) and the CPU backend.
#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <complex>
#include <numbers>
#include <string>

#include "mimorx/config.hpp"
#include "mimorx/core/error.hpp"
#include "mimorx/nr/estimate.hpp"
#include "nr/estimate_math.hpp"
#if MIMORX_HAS_CUDA
#include "nr/estimate_cuda.hpp"
#endif

namespace mimorx::nr {
namespace {

using cd = std::complex<double>;
using detail::CdmCorrection;
using detail::EstimateArgs;
using detail::kSlotSymbols;
using detail::PilotRe;
using detail::Residual;

// Geometry of one pilot estimate: its subcarriers (1 or 2) and noise variance over N0.
struct PilotGeometry {
  int k[2] = {0, -1};
  int count = 1;
  double noise = 1.0;  // |c0|^2 + |c1|^2 (of DM-RS symbol 0; equal in every symbol)
  double position() const { return count == 1 ? k[0] : 0.5 * (k[0] + k[1]); }
};

// E[H(k + dk) H*(k)] for the design profile: sum_n P_n exp(-j 2 pi dk df tau_n), or
// 1 / (1 + j 2 pi dk df tau) for the exponential profile of rms delay spread tau; tabulated for
// the subcarrier offsets of the grid, |dk| < n_sc.
class FreqCorrelation {
 public:
  FreqCorrelation(const EstimatorConfig& c, double scs_hz, int n_sc)
      : n_sc_(n_sc), table_(std::size_t(2 * n_sc + 1)) {
    double total = 0.0;
    for (double p : c.pdp_power) total += p;
    for (int dk = -n_sc; dk <= n_sc; ++dk) {
      const double w = 2.0 * std::numbers::pi * dk * scs_hz;
      cd acc = 0.0;
      if (c.pdp_delay_ns.empty()) {
        acc = 1.0 / cd(1.0, w * c.delay_spread_ns * 1e-9);
      } else {
        for (std::size_t n = 0; n < c.pdp_power.size(); ++n) {
          acc += c.pdp_power[n] / total * std::polar(1.0, -w * c.pdp_delay_ns[n] * 1e-9);
        }
      }
      table_[std::size_t(dk + n_sc)] = acc;
    }
  }
  cd operator()(int dk) const { return table_[std::size_t(dk + n_sc_)]; }

 private:
  int n_sc_;
  std::vector<cd> table_;
};

// E[a b*] for pilot/subcarrier sets: the mean of r(k_a - k_b) over their REs.
cd cross(const FreqCorrelation& r, const int* ka, int na, const int* kb, int nb) {
  cd acc = 0.0;
  for (int i = 0; i < na; ++i) {
    for (int j = 0; j < nb; ++j) acc += r(ka[i] - kb[j]);
  }
  return acc / double(na * nb);
}

template <class T>
void upload(const std::vector<T>& host, Buffer<T>& dev, const Backend& backend) {
  dev = Buffer<T>::on(backend, host.size());
  dev.copy_from_host(host.data(), host.size());
}

bool finite_in(double v, double lo, double hi) { return std::isfinite(v) && v >= lo && v <= hi; }

}  // namespace

void validate(const EstimatorConfig& c) {
  require(c.freq == FreqInterpolation::linear || c.freq == FreqInterpolation::lmmse, "freq",
          "must be linear or lmmse");
  require(c.pdp_delay_ns.size() == c.pdp_power.size(), "pdp_power",
          std::to_string(c.pdp_power.size()) + " powers for " +
              std::to_string(c.pdp_delay_ns.size()) + " delays; give one power per delay");
  double total = 0.0;
  for (std::size_t n = 0; n < c.pdp_power.size(); ++n) {
    require(finite_in(c.pdp_delay_ns[n], 0.0, 1e5), "pdp_delay_ns",
            std::to_string(c.pdp_delay_ns[n]) + "; delays must be in [0, 100000] ns");
    require(finite_in(c.pdp_power[n], 0.0, 1.0), "pdp_power",
            std::to_string(c.pdp_power[n]) + "; powers must be in [0, 1]");
    total += c.pdp_power[n];
  }
  require(c.pdp_power.empty() || std::abs(total - 1.0) <= 1e-3, "pdp_power",
          "sums to " + std::to_string(total) + "; the powers must sum to 1");
  require(finite_in(c.delay_spread_ns, 0.0, 1e5) && c.delay_spread_ns > 0.0, "delay_spread_ns",
          std::to_string(c.delay_spread_ns) + "; allowed (0, 100000]");
  require(finite_in(c.lmmse_snr_db, -30.0, 100.0), "lmmse_snr_db",
          std::to_string(c.lmmse_snr_db) + "; allowed [-30, 100]");
  require(c.lmmse_window >= 2 && c.lmmse_window <= 64, "lmmse_window",
          std::to_string(c.lmmse_window) + "; allowed 2..64");
}

struct ChannelEstimator::Impl {
  EstimatorConfig config;
  Backend backend = Backend::cpu();
  int n_sc = 0, n_rx = 0, layers = 0, dmrs_symbols = 0, slot_pilots = 0, taps = 0;
  std::vector<int> port_pilots;
  std::vector<bool> port_despread;
  double inv_noise_count = 0.0;
  int noise_rows = 0;

  std::vector<PilotRe> pilots;
  std::vector<CdmCorrection> corrections;
  std::vector<int> port_offset, start, time_a, time_b, residual_offset, dmrs_l, empty_k;
  std::vector<cf32> weight;
  std::vector<float> time_wa, time_wb;
  std::vector<Residual> residuals;
  std::vector<cf32> residual_weight;

  Buffer<PilotRe> pilots_dev;
  Buffer<CdmCorrection> corrections_dev;
  Buffer<int> port_offset_dev, start_dev, time_a_dev, time_b_dev, residual_offset_dev, dmrs_l_dev,
      empty_k_dev;
  Buffer<cf32> weight_dev;
  Buffer<float> time_wa_dev, time_wb_dev;
  Buffer<Residual> residuals_dev;
  Buffer<cf32> residual_weight_dev;

  // Workspace: pilot estimates (as measured, corrected), frequency estimates, noise partials.
  mutable Buffer<cf32> g, c, f;
  mutable Buffer<double> partial;

  EstimateArgs args(bool device) const {
    EstimateArgs a;
    a.n_sc = n_sc;
    a.n_rx = n_rx;
    a.layers = layers;
    a.dmrs_symbols = dmrs_symbols;
    a.slot_pilots = slot_pilots;
    a.taps = taps;
    a.inv_noise_count = inv_noise_count;
    a.noise_rows = noise_rows;
    a.empty_count = int(empty_k.size());
    a.dmrs_l = device ? dmrs_l_dev.data() : dmrs_l.data();
    a.empty_k = device ? empty_k_dev.data() : empty_k.data();
    a.pilots = device ? pilots_dev.data() : pilots.data();
    a.port_offset = device ? port_offset_dev.data() : port_offset.data();
    a.corrections = device ? corrections_dev.data() : corrections.data();
    a.start = device ? start_dev.data() : start.data();
    a.weight = device ? weight_dev.data() : weight.data();
    a.time_a = device ? time_a_dev.data() : time_a.data();
    a.time_b = device ? time_b_dev.data() : time_b.data();
    a.time_wa = device ? time_wa_dev.data() : time_wa.data();
    a.time_wb = device ? time_wb_dev.data() : time_wb.data();
    a.residuals = device ? residuals_dev.data() : residuals.data();
    a.residual_offset = device ? residual_offset_dev.data() : residual_offset.data();
    a.residual_weight = device ? residual_weight_dev.data() : residual_weight.data();
    return a;
  }

  void build_pilots(const SlotPlan& plan, std::vector<std::vector<PilotGeometry>>& geometry);
  void build_corrections(const SlotPlan& plan,
                         const std::vector<std::vector<PilotGeometry>>& geometry);
  void build_linear(const std::vector<std::vector<PilotGeometry>>& geometry);
  void build_lmmse(const SlotPlan& plan, const std::vector<std::vector<PilotGeometry>>& geometry);
  void build_time(const SlotPlan& plan);
  void build_residuals(const SlotPlan& plan,
                       const std::vector<std::vector<PilotGeometry>>& geometry);
  void build_noise(const SlotPlan& plan, const std::vector<std::vector<PilotGeometry>>& geometry);
};

// LS pilots. A port that shares its CDM group with another scheduled port is despread over
// each OCC pair (k' = 0, 1): g = (y0 conj(a0) / |a0|^2 + y1 conj(a1) / |a1|^2) / 2, which
// cancels the other port when the channel is the same on both REs; a port alone in its group
// gets one estimate per RE, y conj(a) / |a|^2.
void ChannelEstimator::Impl::build_pilots(const SlotPlan& plan,
                                          std::vector<std::vector<PilotGeometry>>& geometry) {
  const std::vector<int>& symbols = plan.dmrs_symbols();
  std::vector<std::vector<PilotRe>> per_port(static_cast<std::size_t>(layers));
  geometry.assign(std::size_t(layers), {});
  int offset = 0;
  for (int p = 0; p < layers; ++p) {
    int sharing = 0;
    for (int q = 0; q < layers; ++q) sharing += plan.cdm_group(q) == plan.cdm_group(p) ? 1 : 0;
    const bool pair = sharing > 1;
    port_despread.push_back(pair);
    const std::vector<DmrsRe>& res = plan.dmrs_res(p);
    const int per_symbol = int(res.size() / symbols.size());
    const int m = pair ? 2 : 1;
    port_offset.push_back(offset);
    port_pilots.push_back(per_symbol / m);
    offset += per_symbol / m;
    for (std::size_t d = 0; d < symbols.size(); ++d) {
      for (int j = 0; j < per_symbol; j += m) {
        PilotRe pr;
        PilotGeometry geo;
        geo.count = m;
        geo.noise = 0.0;
        for (int u = 0; u < m; ++u) {
          const DmrsRe& re = res[d * std::size_t(per_symbol) + std::size_t(j + u)];
          const cd a(re.value.re, re.value.im);
          const cd c = std::conj(a) / (std::norm(a) * m);
          const cf32 cf{float(c.real()), float(c.imag())};
          (u == 0 ? pr.k0 : pr.k1) = re.k;
          (u == 0 ? pr.c0 : pr.c1) = cf;
          pr.l = re.l;
          geo.k[u] = re.k;
          geo.noise += double(cf.re) * cf.re + double(cf.im) * cf.im;
        }
        per_port[std::size_t(p)].push_back(pr);
        if (d == 0) geometry[std::size_t(p)].push_back(geo);
      }
    }
  }
  slot_pilots = offset;
  pilots.resize(std::size_t(dmrs_symbols) * slot_pilots);
  for (int p = 0; p < layers; ++p) {
    const int n = port_pilots[std::size_t(p)];
    for (int d = 0; d < dmrs_symbols; ++d) {
      for (int i = 0; i < n; ++i) {
        pilots[std::size_t(d) * slot_pilots + port_offset[std::size_t(p)] + i] =
            per_port[std::size_t(p)][std::size_t(d) * n + i];
      }
    }
  }
}

// Port p despread over the pair (k0, k1) with port q of its CDM group picks up
// (H_q(k0) - H_q(k1)) / 2 (the OCC ratios w_q / w_p are (+1, -1) for either order), about
// -(k1 - k0) / 2 H_q'. Adding (k1 - k0) / 2 times q's slope between its pilots i - 1 and i + 1
// (one-sided at the band edges) leaves a third-order error. Ports alone: no terms.
void ChannelEstimator::Impl::build_corrections(
    const SlotPlan& plan, const std::vector<std::vector<PilotGeometry>>& geometry) {
  corrections.assign(std::size_t(slot_pilots), CdmCorrection{});
  for (int p = 0; p < layers; ++p) {
    const int off = port_offset[std::size_t(p)];
    for (int i = 0; i < port_pilots[std::size_t(p)]; ++i) {
      corrections[std::size_t(off + i)] = {off + i, off + i, 0.f, 0.f};
    }
    if (!port_despread[std::size_t(p)] || !config.cdm_leakage_correction) continue;
    int q = -1;
    for (int o = 0; o < layers; ++o) {
      if (o != p && plan.cdm_group(o) == plan.cdm_group(p)) q = o;
    }
    const std::vector<PilotGeometry>& geo = geometry[std::size_t(p)];
    const int n = int(geo.size()), off_q = port_offset[std::size_t(q)];
    for (int i = 0; i < n; ++i) {
      const int lo = std::max(i - 1, 0), hi = std::min(i + 1, n - 1);
      const double span = geo[std::size_t(hi)].position() - geo[std::size_t(lo)].position();
      const double c = (geo[std::size_t(i)].k[1] - geo[std::size_t(i)].k[0]) / (2.0 * span);
      corrections[std::size_t(off + i)] = {off_q + hi, off_q + lo, float(c), float(-c)};
    }
  }
}

// Linear in k between the two pilots around k (positions: the RE, or the mid-point of an OCC
// pair); outside the first and last pilot the nearest pilot's value is held.
void ChannelEstimator::Impl::build_linear(const std::vector<std::vector<PilotGeometry>>& geometry) {
  taps = 2;
  start.assign(std::size_t(layers) * n_sc, 0);
  weight.assign(std::size_t(layers) * n_sc * 2, cf32{0.f, 0.f});
  for (int p = 0; p < layers; ++p) {
    const std::vector<PilotGeometry>& geo = geometry[std::size_t(p)];
    const int n = int(geo.size());
    int i = 0;  // the last pilot at or below k, kept <= n - 2
    for (int k = 0; k < n_sc; ++k) {
      while (i + 2 < n && geo[std::size_t(i + 1)].position() <= k) ++i;
      const double x0 = geo[std::size_t(i)].position(), x1 = geo[std::size_t(i + 1)].position();
      const double t = std::clamp((k - x0) / (x1 - x0), 0.0, 1.0);
      const std::size_t pk = std::size_t(p) * n_sc + k;
      start[pk] = i;
      weight[pk * 2] = cf32{float(1.0 - t), 0.f};
      weight[pk * 2 + 1] = cf32{float(t), 0.f};
    }
  }
}

// LMMSE: for subcarrier k, the window of T pilots around it (T/2 below k where the edges allow)
// and w_k = R_hp (R_pp + N0 diag(noise_i))^-1, R from the design profile's frequency
// correlation, N0 = 10^(-lmmse_snr_db / 10).
void ChannelEstimator::Impl::build_lmmse(const SlotPlan& plan,
                                         const std::vector<std::vector<PilotGeometry>>& geometry) {
  const FreqCorrelation r(config, plan.subcarrier_spacing_khz() * 1e3, n_sc);
  const double n0 = std::pow(10.0, -config.lmmse_snr_db / 10.0);
  int max_n = 0;
  for (const auto& geo : geometry) max_n = std::max(max_n, int(geo.size()));
  taps = std::min(config.lmmse_window, max_n);
  start.assign(std::size_t(layers) * n_sc, 0);
  weight.assign(std::size_t(layers) * n_sc * taps, cf32{0.f, 0.f});
  for (int p = 0; p < layers; ++p) {
    const std::vector<PilotGeometry>& geo = geometry[std::size_t(p)];
    const int n = int(geo.size()), t_p = std::min(taps, n);
    std::vector<Eigen::LDLT<Eigen::MatrixXcd>> solvers(std::size_t(n - t_p + 1));
    std::vector<bool> done(solvers.size(), false);
    int above = 0;  // first pilot at or above k
    for (int k = 0; k < n_sc; ++k) {
      while (above < n && geo[std::size_t(above)].position() < k) ++above;
      const int s = std::clamp(above - t_p / 2, 0, n - t_p);
      if (!done[std::size_t(s)]) {
        Eigen::MatrixXcd a(t_p, t_p);
        for (int i = 0; i < t_p; ++i) {
          const PilotGeometry& gi = geo[std::size_t(s + i)];
          for (int j = 0; j < t_p; ++j) {
            const PilotGeometry& gj = geo[std::size_t(s + j)];
            a(i, j) = cross(r, gi.k, gi.count, gj.k, gj.count);
          }
          a(i, i) += n0 * gi.noise;
        }
        solvers[std::size_t(s)].compute(a);
        done[std::size_t(s)] = true;
      }
      // w A = R_hp with A Hermitian: A w^H = R_hp^H.
      Eigen::VectorXcd rhp_h(t_p);
      for (int i = 0; i < t_p; ++i) {
        const PilotGeometry& gi = geo[std::size_t(s + i)];
        rhp_h(i) = std::conj(cross(r, &k, 1, gi.k, gi.count));
      }
      const Eigen::VectorXcd wh = solvers[std::size_t(s)].solve(rhp_h);
      const std::size_t pk = std::size_t(p) * n_sc + k;
      start[pk] = s;
      for (int i = 0; i < t_p; ++i) {
        const cd w = std::conj(wh(i));
        weight[pk * taps + i] = cf32{float(w.real()), float(w.imag())};
      }
    }
  }
}

// Symbol l between DM-RS symbols l_a < l < l_b: linear in l; before the first and after the
// last DM-RS symbol: that symbol's estimate.
void ChannelEstimator::Impl::build_time(const SlotPlan& plan) {
  const std::vector<int>& ls = plan.dmrs_symbols();
  for (int l = 0; l < kSlotSymbols; ++l) {
    int a = 0, b = 0;
    double wb = 0.0;
    if (l >= ls.back()) {
      a = b = dmrs_symbols - 1;
    } else if (l > ls.front()) {
      while (ls[std::size_t(a + 1)] <= l) ++a;
      b = a + 1;
      wb = double(l - ls[std::size_t(a)]) / double(ls[std::size_t(b)] - ls[std::size_t(a)]);
    }
    time_a.push_back(a);
    time_b.push_back(b);
    time_wa.push_back(float(1.0 - wb));
    time_wb.push_back(float(wb));
  }
}

// Noise residuals: every pilot i against its prediction from the other pilots o of its window
// (T = min(lmmse_window, pilots) pilots around i): e = g_i - sum_o w_o g_o, w the minimiser of
// the design's E|e|^2 (profile and SNR of the config, whichever interpolator is chosen) under
// sum_o w_o = 1, so that e has no channel part on a flat channel (ordinary kriging). Distinct
// pilots have independent noise: E|e|^2 = N0 (v_i + sum_o |w_o|^2 v_o) + the channel's
// prediction error (v: the pilots' noise variances over N0), and scale = 1 / (v_i + sum_o
// |w_o|^2 v_o) makes each term an estimate of N0 biased upwards by the prediction error only.
void ChannelEstimator::Impl::build_residuals(
    const SlotPlan& plan, const std::vector<std::vector<PilotGeometry>>& geometry) {
  const FreqCorrelation corr(config, plan.subcarrier_spacing_khz() * 1e3, n_sc);
  const double n0 = std::pow(10.0, -config.lmmse_snr_db / 10.0);
  std::int64_t count = 0;
  residual_offset.push_back(0);
  for (int p = 0; p < layers; ++p) {
    const std::vector<PilotGeometry>& geo = geometry[std::size_t(p)];
    const int n = int(geo.size()), t_p = std::min(config.lmmse_window, n);
    for (int i = 0; i < n; ++i) {
      const int s0 = std::clamp(i - t_p / 2, 0, n - t_p);
      std::vector<int> others;
      for (int o = s0; o < s0 + t_p; ++o) {
        if (o != i) others.push_back(o);
      }
      const int m = int(others.size());
      // Bordered system of the constraint sum_o w_o = 1: [A 1; 1^T 0] [w^H; mu] = [R_io^H; 1].
      Eigen::MatrixXcd a = Eigen::MatrixXcd::Zero(m + 1, m + 1);
      Eigen::VectorXcd rhs(m + 1);
      const PilotGeometry& gi = geo[std::size_t(i)];
      for (int u = 0; u < m; ++u) {
        const PilotGeometry& gu = geo[std::size_t(others[std::size_t(u)])];
        for (int v = 0; v < m; ++v) {
          const PilotGeometry& gv = geo[std::size_t(others[std::size_t(v)])];
          a(u, v) = cross(corr, gu.k, gu.count, gv.k, gv.count);
        }
        a(u, u) += n0 * gu.noise;
        a(u, m) = a(m, u) = 1.0;
        rhs(u) = std::conj(cross(corr, gi.k, gi.count, gu.k, gu.count));
      }
      rhs(m) = 1.0;
      const Eigen::VectorXcd wh = a.partialPivLu().solve(rhs);
      Residual res;
      res.start = s0;
      res.taps = t_p;
      res.weight = int(residual_weight.size());
      double var = 0.0;
      for (int o = s0, u = 0; o < s0 + t_p; ++o) {
        cf32 w{1.f, 0.f};
        if (o != i) {
          const cd wo = -std::conj(wh(u++));
          w = cf32{float(wo.real()), float(wo.imag())};
        }
        residual_weight.push_back(w);
        var += (double(w.re) * w.re + double(w.im) * w.im) * geo[std::size_t(o)].noise;
      }
      res.scale = 1.0 / var;
      residuals.push_back(res);
    }
    residual_offset.push_back(int(residuals.size()));
    count += n;
  }
  inv_noise_count = 1.0 / (double(count) * dmrs_symbols * n_rx);
}

// Empty DM-RS REs: the REs of CDM groups without data that no scheduled port uses. Where there
// are none (or the config says so), the residuals.
void ChannelEstimator::Impl::build_noise(const SlotPlan& plan,
                                         const std::vector<std::vector<PilotGeometry>>& geometry) {
  const SlotConfig& c = plan.config();
  if (config.noise_from_empty_res) {
    for (int group = 0; group < c.cdm_groups_without_data; ++group) {
      bool used = false;
      for (int p = 0; p < layers; ++p) used = used || plan.cdm_group(p) == group;
      for (int k = 0; !used && k < n_sc; ++k) {
        if (in_cdm_group(c.dmrs_type, group, k)) empty_k.push_back(k);
      }
    }
    std::sort(empty_k.begin(), empty_k.end());
  }
  dmrs_l = plan.dmrs_symbols();
  residual_offset.assign(std::size_t(layers) + 1, 0);
  if (!empty_k.empty()) {
    noise_rows = 1;
    inv_noise_count = 1.0 / (double(empty_k.size()) * dmrs_symbols * n_rx);
    return;
  }
  residual_offset.clear();
  noise_rows = layers;
  build_residuals(plan, geometry);
}

ChannelEstimator::ChannelEstimator(const SlotPlan& plan, int n_rx, const EstimatorConfig& config,
                                   Backend backend)
    : impl_(std::make_unique<Impl>()) {
  validate(config);
  require(n_rx >= 1 && n_rx <= 64, "n_rx", std::to_string(n_rx) + "; allowed 1..64");
  if (backend.is_cuda() && !MIMORX_HAS_CUDA) {
    throw Unsupported("backend: this build of mimorx has no CUDA backend");
  }
  Impl& m = *impl_;
  m.config = config;
  m.backend = backend;
  m.n_sc = plan.n_subcarriers();
  m.n_rx = n_rx;
  m.layers = plan.config().layers;
  m.dmrs_symbols = int(plan.dmrs_symbols().size());
  std::vector<std::vector<PilotGeometry>> geometry;
  m.build_pilots(plan, geometry);
  m.build_corrections(plan, geometry);
  if (config.freq == FreqInterpolation::linear) {
    m.build_linear(geometry);
  } else {
    m.build_lmmse(plan, geometry);
  }
  m.build_time(plan);
  m.build_noise(plan, geometry);
  if (backend.is_cuda()) {
    upload(m.pilots, m.pilots_dev, backend);
    upload(m.corrections, m.corrections_dev, backend);
    upload(m.port_offset, m.port_offset_dev, backend);
    upload(m.start, m.start_dev, backend);
    upload(m.weight, m.weight_dev, backend);
    upload(m.time_a, m.time_a_dev, backend);
    upload(m.time_b, m.time_b_dev, backend);
    upload(m.time_wa, m.time_wa_dev, backend);
    upload(m.time_wb, m.time_wb_dev, backend);
    upload(m.residual_offset, m.residual_offset_dev, backend);
    upload(m.dmrs_l, m.dmrs_l_dev, backend);
    if (!m.empty_k.empty()) upload(m.empty_k, m.empty_k_dev, backend);
    if (!m.residuals.empty()) upload(m.residuals, m.residuals_dev, backend);
    if (!m.residual_weight.empty()) upload(m.residual_weight, m.residual_weight_dev, backend);
  }
}

ChannelEstimator::ChannelEstimator(ChannelEstimator&&) noexcept = default;
ChannelEstimator& ChannelEstimator::operator=(ChannelEstimator&&) noexcept = default;
ChannelEstimator::~ChannelEstimator() = default;

const EstimatorConfig& ChannelEstimator::config() const { return impl_->config; }
int ChannelEstimator::n_rx() const { return impl_->n_rx; }
int ChannelEstimator::layers() const { return impl_->layers; }
int ChannelEstimator::n_subcarriers() const { return impl_->n_sc; }
int ChannelEstimator::taps() const { return impl_->taps; }
bool ChannelEstimator::uses_empty_res() const { return !impl_->empty_k.empty(); }
int ChannelEstimator::pilots(int port) const {
  require(port >= 0 && port < impl_->layers, "port",
          std::to_string(port) + "; allowed 0.." + std::to_string(impl_->layers - 1));
  return impl_->port_pilots[std::size_t(port)];
}
bool ChannelEstimator::despread(int port) const {
  require(port >= 0 && port < impl_->layers, "port",
          std::to_string(port) + "; allowed 0.." + std::to_string(impl_->layers - 1));
  return impl_->port_despread[std::size_t(port)];
}

void ChannelEstimator::estimate(View<const cf32> y, std::int64_t slots, MatrixBatch<cf32> h,
                                View<float> noise_var,
                                [[maybe_unused]] const Stream& stream) const {
  const Impl& m = *impl_;
  require(slots >= 0, "slots", std::to_string(slots) + "; must be >= 0");
  const std::int64_t grid = std::int64_t(kSlotSymbols) * m.n_sc;
  const Memory where = memory_of(m.backend);
  require_memory(y.where, where, "y");
  require_memory(h.where, where, "h");
  require_memory(noise_var.where, where, "noise_var");
  require_size(y, slots * grid * m.n_rx, "y");
  require_shape(h, slots * grid, m.n_rx, m.layers, "h");
  require(h.batch_stride >= std::int64_t(m.n_rx) * m.layers, "h",
          "batch stride " + std::to_string(h.batch_stride) + " is smaller than one matrix");
  require_size(noise_var, slots, "noise_var");
  if (slots == 0) return;
  require(y.data && h.data && noise_var.data, "y", "a null pointer with a non-empty size");

  const std::int64_t d = m.dmrs_symbols, per = std::int64_t(m.layers) * m.n_rx;
  const std::size_t g_size = std::size_t(slots * d * m.slot_pilots * m.n_rx);
  const std::size_t f_size = std::size_t(slots * d * m.n_sc * per);
  const std::size_t p_size = std::size_t(slots * d * m.noise_rows * m.n_rx);
  if (m.g.size() < g_size) m.g = Buffer<cf32>::on(m.backend, g_size);
  if (m.c.size() < g_size) m.c = Buffer<cf32>::on(m.backend, g_size);
  if (m.f.size() < f_size) m.f = Buffer<cf32>::on(m.backend, f_size);
  if (m.partial.size() < p_size) m.partial = Buffer<double>::on(m.backend, p_size);

  if (m.backend.is_cuda()) {
#if MIMORX_HAS_CUDA
    detail::estimate_cuda(m.args(true), y.data, slots, m.g.data(), m.c.data(), m.f.data(),
                          m.partial.data(), h.data, h.batch_stride, noise_var.data,
                          m.backend.device(), stream.handle());
#endif
    return;
  }

  // The CPU reference: the stages of estimate_math.hpp over the same elements as the kernels.
  const EstimateArgs a = m.args(false);
  cf32* g = m.g.data();
  cf32* c = m.c.data();
  cf32* f = m.f.data();
  double* partial = m.partial.data();
  const std::int64_t per_slot = d * m.slot_pilots, g_slot = per_slot * m.n_rx;
  const std::int64_t f_slot = d * m.n_sc * per;
  const std::int64_t g_items = slots * g_slot;
#pragma omp parallel for schedule(static)
  for (std::int64_t x = 0; x < g_items; ++x) {
    const std::int64_t bq = x / m.n_rx;
    g[x] = detail::ls_entry(a, y.data + (bq / per_slot) * grid * m.n_rx, int(bq % per_slot),
                            int(x % m.n_rx));
  }
#pragma omp parallel for schedule(static)
  for (std::int64_t x = 0; x < g_items; ++x) {
    const std::int64_t bq = x / m.n_rx;
    c[x] = detail::cdm_entry(a, g + (bq / per_slot) * g_slot, int(bq % per_slot), int(x % m.n_rx));
  }
  const std::int64_t f_items = slots * f_slot;
#pragma omp parallel for schedule(static)
  for (std::int64_t x = 0; x < f_items; ++x) {
    const int e = int(x % per);
    const std::int64_t bdk = x / per, bd = bdk / m.n_sc;
    f[x] = detail::freq_entry(a, c + (bd / d) * g_slot, int(bd % d), int(bdk % m.n_sc), e / m.n_rx,
                              e % m.n_rx);
  }
  const std::int64_t h_items = slots * grid * per;
#pragma omp parallel for schedule(static)
  for (std::int64_t x = 0; x < h_items; ++x) {
    const int e = int(x % per);
    const std::int64_t mat = x / per, bl = mat / m.n_sc;
    h.matrix(mat)[e] = detail::time_entry(a, f + (bl / kSlotSymbols) * f_slot,
                                          int(bl % kSlotSymbols), int(mat % m.n_sc), e);
  }
  const std::int64_t p_items = slots * d * m.noise_rows * m.n_rx;
#pragma omp parallel for schedule(static)
  for (std::int64_t x = 0; x < p_items; ++x) {
    const std::int64_t bdu = x / m.n_rx, bd = bdu / m.noise_rows, b = bd / d;
    partial[x] = detail::noise_partial(a, y.data + b * grid * m.n_rx, g + b * g_slot, int(bd % d),
                                       int(bdu % m.noise_rows), int(x % m.n_rx));
  }
  for (std::int64_t b = 0; b < slots; ++b) {
    noise_var[b] = detail::noise_total(a, partial + b * d * m.noise_rows * m.n_rx);
  }
}

}  // namespace mimorx::nr

#pragma once
// Per-element arithmetic of the channel estimator (mimorx/nr/estimate.hpp), shared by the CPU
// reference and the CUDA kernels: correctly rounded operations only (core/rounding.hpp; no
// contraction), every sum in one fixed order, hence the same bits on both.
//
// Five stages per slot b, each a pure function of earlier stages' outputs and the plan's
// tables (built once in estimate_plan.cpp):
//   ls:    g[b][q][r]       = c0_q y[b, l_q, k0_q, r] + c1_q y[b, l_q, k1_q, r]   (pilot q)
//   cdm:   c[b][q][r]       = g[b][q][r] + ca_q g[b][ja_q][r] + cb_q g[b][jb_q][r]  (leakage)
//   freq:  f[b][d][k][e]    = sum_t W[p][k][t] c[b][d Qs + off_p + s[p][k] + t][r], e = p n_rx + r
//   time:  h[b, l, k](r, p) = wa_l f[b][da_l][k][e] + wb_l f[b][db_l][k][e]
//   noise: part[b][d][u][r] = sum_j |y[b, l_d, e_j, r]|^2 over the empty DM-RS REs e_j (u = 0),
//                             or sum_j scale_j |sum_t u_jt g[b][d Qs + off_u + s_j + t][r]|^2 over
//                             the residuals j of port u (double); N0[b] = (sum over (d, u, r) in
//                             order) / count.
#include <cstdint>

#include "mimorx/core/complex.hpp"
#include "mimorx/core/hd.hpp"
#include "mimorx/core/rng.hpp"
#include "mimorx/core/rounding.hpp"

namespace mimorx::nr::detail {

inline constexpr int kSlotSymbols = 14;

// One pilot estimate: one RE (k1 < 0) or an OCC pair, with the despreading coefficients
// c = conj(a) / (|a|^2 m), m = REs in the pilot.
struct PilotRe {
  int l = 0;
  int k0 = 0, k1 = -1;
  cf32 c0, c1;
};

// One noise residual of a port: e = sum_t u_t g[start + t] (indices in the port's pilot list
// of one DM-RS symbol, u = residual_weight[weight + t]), scaled by 1 / (its noise variance / N0).
struct Residual {
  int start = 0, taps = 0, weight = 0;
  double scale = 0.0;
};

// Removal of the other port's leakage from a despread pilot (zero coefficients elsewhere):
// pilot i of a port in DM-RS symbol d plus ca g[ja] + cb g[jb], indices within the symbol.
struct CdmCorrection {
  int ja = 0, jb = 0;
  float ca = 0.f, cb = 0.f;
};

struct EstimateArgs {
  int n_sc = 0, n_rx = 0, layers = 0;
  int dmrs_symbols = 0;                        // D
  int slot_pilots = 0;                         // Qs: pilots of all ports in one DM-RS symbol
  int taps = 0;                                // T
  const PilotRe* pilots = nullptr;             // D * Qs, order (d, p, i)
  const CdmCorrection* corrections = nullptr;  // Qs, by pilot within a DM-RS symbol
  const int* port_offset = nullptr;       // layers: first pilot of port p within a DM-RS symbol
  const int* start = nullptr;             // layers * n_sc: first pilot of the window of (p, k)
  const cf32* weight = nullptr;           // layers * n_sc * T
  const int* time_a = nullptr;            // 14: DM-RS symbol index da_l
  const int* time_b = nullptr;            // 14: db_l
  const float* time_wa = nullptr;         // 14
  const float* time_wb = nullptr;         // 14
  const Residual* residuals = nullptr;    // every port's residuals, port p at residual_offset[p]
  const cf32* residual_weight = nullptr;  // the residuals' u
  const int* residual_offset = nullptr;   // layers + 1
  const int* dmrs_l = nullptr;            // D: the DM-RS symbols l
  const int* empty_k = nullptr;           // empty_count: subcarriers of the empty DM-RS REs
  int empty_count = 0;                    // > 0: N0 from the empty REs, else from residuals
  int noise_rows = 0;                     // 1 (empty REs) or layers (residuals)
  double inv_noise_count = 0.0;           // 1 / (terms summed per slot)
};

// Stage ls: pilot q of one slot's grid `y` (element (l n_sc + k) n_rx + r), antenna r.
MIMORX_HD cf32 ls_entry(const EstimateArgs& a, const cf32* y, int q, int r) {
  const PilotRe& p = a.pilots[q];
  const std::int64_t row = std::int64_t(p.l) * a.n_sc;
  cf32 v = rounding::cmul(p.c0, y[(row + p.k0) * a.n_rx + r]);
  if (p.k1 >= 0) v = rounding::cadd(v, rounding::cmul(p.c1, y[(row + p.k1) * a.n_rx + r]));
  return v;
}

// Stage cdm: pilot q (of D Qs), antenna r of one slot's pilot estimates `g`.
MIMORX_HD cf32 cdm_entry(const EstimateArgs& a, const cf32* g, int q, int r) {
  const CdmCorrection& c = a.corrections[q % a.slot_pilots];
  const std::int64_t base = std::int64_t(q / a.slot_pilots) * a.slot_pilots;
  const cf32 v = rounding::cadd(g[std::int64_t(q) * a.n_rx + r],
                                rounding::cscale(g[(base + c.ja) * a.n_rx + r], c.ca));
  return rounding::cadd(v, rounding::cscale(g[(base + c.jb) * a.n_rx + r], c.cb));
}

// Stage freq: DM-RS symbol d, subcarrier k, port p, antenna r from one slot's corrected pilot
// estimates `g` (element q n_rx + r).
MIMORX_HD cf32 freq_entry(const EstimateArgs& a, const cf32* g, int d, int k, int p, int r) {
  const std::int64_t pk = std::int64_t(p) * a.n_sc + k;
  const std::int64_t base = std::int64_t(d) * a.slot_pilots + a.port_offset[p] + a.start[pk];
  const cf32* w = a.weight + pk * a.taps;
  cf32 acc{0.f, 0.f};
  for (int t = 0; t < a.taps; ++t)
    acc = rounding::cadd(acc, rounding::cmul(w[t], g[(base + t) * a.n_rx + r]));
  return acc;
}

// Stage time: symbol l, entry e of the n_rx x layers matrix at subcarrier k, from one slot's
// frequency estimates `f` (element ((d n_sc + k) layers n_rx + e).
MIMORX_HD cf32 time_entry(const EstimateArgs& a, const cf32* f, int l, int k, int e) {
  const std::int64_t per = std::int64_t(a.layers) * a.n_rx;
  const cf32 fa = f[(std::int64_t(a.time_a[l]) * a.n_sc + k) * per + e];
  const cf32 fb = f[(std::int64_t(a.time_b[l]) * a.n_sc + k) * per + e];
  return rounding::cadd(rounding::cscale(fa, a.time_wa[l]), rounding::cscale(fb, a.time_wb[l]));
}

// Stage noise, part 1, row u (0 .. noise_rows - 1), antenna r, DM-RS symbol d of one slot
// (grid y, pilot estimates g). Empty REs: sum |y|^2 over the empty REs of the symbol (u = 0).
// Residuals: the scaled squared residuals of port u.
MIMORX_HD double noise_partial(const EstimateArgs& a, const cf32* y, const cf32* g, int d, int u,
                               int r) {
  using rounding::dadd;
  using rounding::dmul;
  double acc = 0.0;
  if (a.empty_count > 0) {
    const std::int64_t row = std::int64_t(a.dmrs_l[d]) * a.n_sc;
    for (int j = 0; j < a.empty_count; ++j) {
      const cf32 v = y[(row + a.empty_k[j]) * a.n_rx + r];
      acc = dadd(acc, dadd(dmul(double(v.re), double(v.re)), dmul(double(v.im), double(v.im))));
    }
    return acc;
  }
  const std::int64_t base = std::int64_t(d) * a.slot_pilots + a.port_offset[u];
  for (int j = a.residual_offset[u]; j < a.residual_offset[u + 1]; ++j) {
    const Residual& s = a.residuals[j];
    cf32 e{0.f, 0.f};
    for (int t = 0; t < s.taps; ++t) {
      e = rounding::cadd(
          e, rounding::cmul(a.residual_weight[s.weight + t], g[(base + s.start + t) * a.n_rx + r]));
    }
    const double e2 = dadd(dmul(double(e.re), double(e.re)), dmul(double(e.im), double(e.im)));
    acc = dadd(acc, dmul(s.scale, e2));
  }
  return acc;
}

// Stage noise, part 2: N0 of one slot from its D * noise_rows * n_rx partial sums, in order.
MIMORX_HD float noise_total(const EstimateArgs& a, const double* partial) {
  const int n = a.dmrs_symbols * a.noise_rows * a.n_rx;
  double acc = 0.0;
  for (int i = 0; i < n; ++i) acc = rounding::dadd(acc, partial[i]);
  return float(rounding::dmul(acc, a.inv_noise_count));
}

}  // namespace mimorx::nr::detail

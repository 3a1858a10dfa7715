#pragma once
// Per-element arithmetic of the TDL channel (mimorx/channel/tdl.hpp), shared by the CPU
// reference and the CUDA kernels: the same source, correctly rounded operations only (no
// contraction, no libm), hence bit-identical H on both backends.
//
// Fading process of tap n, antenna pair e (e = j * n_rx + i) of realisation c, unit power:
//   Rayleigh rows: w(t) = sqrt(2/M) sum_{m<M} exp(j 2 pi psi_m) cos(2 pi (fD cos(alpha_m) t +
//                  phi_m)), alpha_m = 2 pi (m + theta) / (4M), M = 16 (Zheng & Xiao, IEEE
//                  Commun. Lett. 2002: stratified random Doppler angles, random phases).
//                  theta, psi_m, phi_m ~ U(0, 1), independent. Averaging over them,
//                  E[w(t) w*(t + tau)] = (2/pi) int_0^{pi/2} cos(2 pi fD tau cos a) da
//                  = J0(2 pi fD tau) exactly for every M, and E[w(t) w(t + tau)] = 0.
//   LOS rows:      w(t) = exp(j 2 pi (0.7 fD t + phi_0)) (TR 38.901 §7.7.2: the LOS peak of the
//                  Doppler spectrum at fS = 0.7 fD), phi_0 ~ U(0, 1).
// Counters: Philox4x32-10 (core/rng.hpp), key = seed, stream kTdlStream, blocks
// base = ((c * kTdlMaxTaps + n) * kTdlMaxPairs + e) * kTdlBlocksPerProcess: block base words
// 0, 1 = theta, phi_0; block base + 1 + q words (0, 1), (2, 3) = (psi, phi) of sinusoids 2q and
// 2q + 1. Each word maps to (0, 1) by rng::to_uniform.
//
// Phases are kept in turns. f t is formed in double from the integer time in units of
// Tc = 1 / (480 kHz * 4096) (TS 38.211 §4.1), reduced modulo 1 exactly (x - trunc(x) is exact
// in double), rounded to float and turned into sin/cos by rng::detail::sincos_turns (an exact
// octant split and the series of the Box-Muller transform): the same bits on both backends.
#include <cstdint>

#include "mimorx/channel/samples.hpp"
#include "mimorx/core/complex.hpp"
#include "mimorx/core/hd.hpp"
#include "mimorx/core/rng.hpp"
#include "mimorx/core/rounding.hpp"

namespace mimorx::channel::detail {

inline constexpr std::uint64_t kTdlStream = 0x4348'0003ULL;  // "CH" 3
inline constexpr int kTdlSinusoids = 16;
inline constexpr int kTdlMaxTaps = 32;
inline constexpr int kTdlMaxPairs = 64;
inline constexpr int kTdlBlocksPerProcess = 1 + kTdlSinusoids / 2;
inline constexpr double kTdlTcSeconds = 1.0 / (480000.0 * 4096.0);
inline constexpr float kTdlLosDopplerRatio = 0.7f;

// Time of symbol l of slot s in Tc: the centre of the useful part, after the normal cyclic
// prefix (144 * 64 * 2^-mu Tc, plus 16 * 64 Tc for the first symbol of every 0.5 ms).
MIMORX_HD std::int64_t tdl_symbol_tc(int mu, std::int64_t slot, int l) {
  const std::int64_t nu = 131072 >> mu, ncp = 9216 >> mu, ext = 1024;
  const int half = 7 << mu;  // symbols per 0.5 ms
  std::int64_t t = slot * (1966080 >> mu);
  for (int k = 0; k < l; ++k) t += nu + ncp + (k % half == 0 ? ext : 0);
  return t + ncp + (l % half == 0 ? ext : 0) + nu / 2;
}

// sin and cos of 2 pi u, u in [0, 1] (the angle arithmetic of the Box-Muller transform).
using rng::detail::sincos_turns;

// x - trunc(x) for x >= 0, rounded to float (1.0f after rounding wraps to 0).
MIMORX_HD float frac_turns(double x) {
  const double r = rounding::dadd(x, -double(std::int64_t(x)));
  const float u = float(r);
  return u >= 1.f ? 0.f : u;
}

// The fading process w(t) of one (realisation, tap, pair); fd_tc = fD * Tc, t_tc >= 0.
MIMORX_HD cf32 tdl_process(std::uint64_t seed, std::int64_t c, int tap, int pair, bool los,
                           double fd_tc, std::int64_t t_tc) {
  using rounding::dadd;
  using rounding::dmul;
  const std::uint64_t base =
      ((std::uint64_t(c) * kTdlMaxTaps + std::uint64_t(tap)) * kTdlMaxPairs + std::uint64_t(pair)) *
      kTdlBlocksPerProcess;
  const double t = double(t_tc);
  const rng::U32x4 head = rng::philox_block(seed, kTdlStream, base);
  float s, co;
  if (los) {
    const double x =
        dadd(dmul(dmul(fd_tc, double(kTdlLosDopplerRatio)), t), double(rng::to_uniform(head.v[1])));
    sincos_turns(frac_turns(x), &s, &co);
    return {co, s};
  }
  const float theta = rng::to_uniform(head.v[0]);
  cf32 acc{0.f, 0.f};
  for (int q = 0; q < kTdlSinusoids / 2; ++q) {
    const rng::U32x4 blk = rng::philox_block(seed, kTdlStream, base + 1 + std::uint64_t(q));
    for (int h = 0; h < 2; ++h) {
      const int m = 2 * q + h;
      const float psi = rng::to_uniform(blk.v[2 * h]);
      const float phi = rng::to_uniform(blk.v[2 * h + 1]);
      float sa, ca;  // alpha_m in turns: (m + theta) / (4M), in [0, 1/4]
      sincos_turns(rounding::fmul(rounding::fadd(float(m), theta), 1.f / float(4 * kTdlSinusoids)),
                   &sa, &ca);
      const double x = dadd(dmul(dmul(fd_tc, double(ca)), t), double(phi));
      sincos_turns(frac_turns(x), &s, &co);
      float sp, cp;
      sincos_turns(psi, &sp, &cp);
      acc = rounding::cadd(acc, rounding::cscale(cf32{cp, sp}, co));
    }
  }
  constexpr float kScale = 0.353553390593273762f;  // sqrt(2 / M), M = 16
  return rounding::cscale(acc, kScale);
}

// What the kernels need (pointers in the memory of the backend that runs them).
struct TdlArgs {
  int taps = 0, n_rx = 1, n_tx = 1, n_sc = 1, symbols = 14, mu = 1;
  double fd_tc = 0.0;  // fD * Tc
  std::int64_t first_realisation = 0, first_slot = 0, slots_per_realisation = 1;
  const float* sqrt_r = nullptr;      // R^{1/2}, P x P column-major (P = n_rx n_tx); null: I
  const float* amp = nullptr;         // sqrt(P_n) per tap
  const std::uint8_t* los = nullptr;  // 1 for a LOS row
  const cf32* ramp = nullptr;         // [k * taps + n] = exp(-j 2 pi k df tau_n)
};

// Work item (b, l, n, e) of the uncorrelated processes, b = slot of the call.
MIMORX_HD cf32 tdl_w_entry(const TdlArgs& a, std::uint64_t seed, std::int64_t b, int l, int n,
                           int e) {
  const std::int64_t c = a.first_realisation + b / a.slots_per_realisation;
  const std::int64_t slot = a.first_slot + b % a.slots_per_realisation;
  return tdl_process(seed, c, n, e, a.los[n] != 0, a.fd_tc, tdl_symbol_tc(a.mu, slot, l));
}

// Correlated, scaled tap coefficient: sqrt(P_n) (R^{1/2} w_n)(e); w points at the P entries of
// this tap, summed in f order.
MIMORX_HD cf32 tdl_a_entry(const TdlArgs& a, const cf32* w, int n, int e) {
  const int p = a.n_rx * a.n_tx;
  cf32 acc = w[e];
  if (a.sqrt_r) {
    acc = {0.f, 0.f};
    for (int f = 0; f < p; ++f) {
      const float r = a.sqrt_r[f * p + e];
      acc = rounding::cadd(acc, rounding::cscale(w[f], r));
    }
  }
  return rounding::cscale(acc, a.amp[n]);
}

// H[k](e) = sum_n A_n(e) ramp[k, n], in n order; at points at the taps x P block of one symbol.
MIMORX_HD cf32 tdl_h_entry(const TdlArgs& a, const cf32* at, int k, int e) {
  const int p = a.n_rx * a.n_tx;
  cf32 acc{0.f, 0.f};
  for (int n = 0; n < a.taps; ++n)
    acc = rounding::cadd(acc, rounding::cmul(at[n * p + e], a.ramp[k * a.taps + n]));
  return acc;
}

void tdl_cuda(const TdlArgs& a, std::uint64_t seed, std::int64_t slots, cf32* w, cf32* at, cf32* h,
              std::int64_t h_stride, int device, void* stream);

}  // namespace mimorx::channel::detail

#pragma once
// Per-symbol demapping arithmetic shared by CPU references and CUDA kernels (MIMORX_HD).
//
// Square QAM is the product of two PAM axes (modulation.hpp): the real part carries the axis
// bits c0 c1 ... = b0 b2 b4 ..., the imaginary part b1 b3 b5 .... Because
// |y - x|^2 = (y.re - x.re)^2 + (y.im - x.im)^2, the minimum over the M points with b_k fixed
// splits into a minimum over the L = sqrt(M) levels of the axis carrying b_k (the other axis'
// minimum is common to both hypotheses and cancels in the max-log difference). So each LLR
// costs O(L), not O(M), and hard decisions are two independent slicers.
// BPSK (b0 -> (1-2b0)(1+j)/sqrt(2)) is not separable and is handled on the diagonal.
//
// Level index: 0..L-1 in ascending amplitude; level l has amplitude (2l-(L-1)) * qam_scale(m).
#include <cstdint>

#include "mimorx/core/complex.hpp"
#include "mimorx/core/hd.hpp"
#include "mimorx/core/rounding.hpp"
#include "mimorx/modem/modulation.hpp"

namespace mimorx {

// Scaled amplitude of PAM level `level` (QAM only). The product is rounded on its own on the
// device too: nvcc would fuse it with a caller's subtraction (v - amplitude) into one FMA,
// rounded once against the host's twice, and move a hard decision within an ulp of a boundary
// (seen: 64-QAM, v = -0.925820172, GPU level 0, CPU level 1, ModemGpu bit-exactness test).
MIMORX_HD float pam_level_amplitude(Modulation m, int level) {
  return rounding::fmul(float(2 * level - (axis_levels(m) - 1)), qam_scale(m));
}

// The k = m/2 axis bits c0 c1 ... (c0 first) of PAM level `level`, inverting
// pam_amplitude() of modulation.hpp: with r_1 = |a|, c0 = (a < 0), and for j >= 1
// c_j = (r_j > 2^(k-j)), r_(j+1) = |2^(k-j) - r_j| (38.211 Table 5.1.x recursion read backwards).
MIMORX_HD void pam_level_bits(Modulation m, int level, std::uint8_t* axis_bits_out) {
  const int k = axis_bits(m) < 4 ? axis_bits(m) : 4;  // <= 4 (256-QAM); bound for the compiler
  const int a = 2 * level - (axis_levels(m) - 1);
  axis_bits_out[0] = a < 0 ? 1 : 0;
  int r = a < 0 ? -a : a;
  for (int j = 1; j < k; ++j) {
    const int half = 1 << (k - j);
    axis_bits_out[j] = r > half ? 1 : 0;
    r = r > half ? r - half : half - r;
  }
}

// Nearest PAM level to the scaled real value v, clipped to [0, L-1]. Decision boundaries are
// the even integers of the unscaled axis, so level = floor((v/s + L) / 2).
MIMORX_HD int slice_pam(Modulation m, float v) {
  const int levels = axis_levels(m);
  const float t = (v / qam_scale(m) + float(levels)) * 0.5f;
  // Compare in float before converting so huge or infinite v cannot overflow the int.
  if (!(t >= 0.f)) return 0;                                 // also catches NaN
  int level = t >= float(levels - 1) ? levels - 1 : int(t);  // truncation == floor here
  // The rounding of t can put a v within an ulp of a boundary on the other side of it than
  // the distances |v - a_l| that the max-log demapper compares. Settle such cases with the
  // same distances (rounded subtraction is monotone, so this is exact), so hard decisions and
  // LLR signs never disagree. Only a strictly nearer neighbour moves the decision: exact ties
  // (LLR 0) and huge |v|, where both distances round to the same value, keep the level.
  const auto dist = [&](int l) {
    const float e = v - pam_level_amplitude(m, l);
    return e < 0.f ? -e : e;
  };
  const float d = dist(level);
  if (level > 0 && dist(level - 1) < d) return level - 1;
  if (level + 1 < levels && dist(level + 1) < d) return level + 1;
  return level;
}

// Interleaves the real-axis bits (c0.. -> b0 b2 ...) and imaginary-axis bits (-> b1 b3 ...).
MIMORX_HD void symbol_bits_from_levels(Modulation m, int level_re, int level_im,
                                       std::uint8_t* bits) {
  const int k = axis_bits(m) < 4 ? axis_bits(m) : 4;
  std::uint8_t re[4] = {}, im[4] = {};  // k <= 4 (256-QAM)
  pam_level_bits(m, level_re, re);
  pam_level_bits(m, level_im, im);
  for (int j = 0; j < k; ++j) {
    bits[2 * j] = re[j];
    bits[2 * j + 1] = im[j];
  }
}

// Constellation point nearest to y (ties broken towards the lower level / bit 0 for BPSK).
MIMORX_HD cf32 nearest_point(Modulation m, cf32 y) {
  if (m == Modulation::bpsk) {
    const float a = (y.re + y.im >= 0.f ? 1.f : -1.f) * qam_scale(m);
    return {a, a};
  }
  return {pam_level_amplitude(m, slice_pam(m, y.re)), pam_level_amplitude(m, slice_pam(m, y.im))};
}

// Bits of the constellation point nearest to y.
MIMORX_HD void hard_bits(Modulation m, cf32 y, std::uint8_t* bits) {
  if (m == Modulation::bpsk) {
    bits[0] = y.re + y.im >= 0.f ? 0 : 1;
    return;
  }
  symbol_bits_from_levels(m, slice_pam(m, y.re), slice_pam(m, y.im), bits);
}

// Max-log LLRs of the k axis bits of one PAM axis observed as v: out[j*stride] for c_j.
// One pass over the L levels, keeping the two minima of (v - a_l)^2 per bit.
MIMORX_HD void maxlog_axis_llrs(Modulation m, float v, float inv_noise_var, float* out,
                                int stride) {
  const int k = axis_bits(m) < 4 ? axis_bits(m) : 4;  // <= 4 (256-QAM); bound for the compiler
  const int levels = axis_levels(m);
  constexpr float kBig = 3.0e38f;
  float d0[4] = {kBig, kBig, kBig, kBig};
  float d1[4] = {kBig, kBig, kBig, kBig};
  for (int l = 0; l < levels; ++l) {
    const float e = v - pam_level_amplitude(m, l);
    const float d = e * e;
    std::uint8_t c[4] = {};
    pam_level_bits(m, l, c);
    for (int j = 0; j < k; ++j) {
      if (c[j]) {
        d1[j] = d < d1[j] ? d : d1[j];
      } else {
        d0[j] = d < d0[j] ? d : d0[j];
      }
    }
  }
  for (int j = 0; j < k; ++j) out[j * stride] = (d1[j] - d0[j]) * inv_noise_var;
}

// Max-log LLRs of the m bits of one symbol observed as y = x + n, n ~ CN(0, noise_var):
// llr[k] = (min_{x: b_k=1} |y-x|^2 - min_{x: b_k=0} |y-x|^2) / noise_var (positive = bit 0).
MIMORX_HD void maxlog_llrs(Modulation m, cf32 y, float noise_var, float* llr) {
  const float inv = 1.f / noise_var;
  if (m == Modulation::bpsk) {
    // |y + p|^2 - |y - p|^2 = 4 Re(y conj p), p = s(1+j).
    llr[0] = 4.f * qam_scale(m) * (y.re + y.im) * inv;
    return;
  }
  maxlog_axis_llrs(m, y.re, inv, llr, 2);
  maxlog_axis_llrs(m, y.im, inv, llr + 1, 2);
}

}  // namespace mimorx

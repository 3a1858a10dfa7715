#pragma once
// Arithmetic shared by the CPU and CUDA LLL reductions, so that both round, test and rotate
// in the same way.
#include <cmath>

#include "mimorx/core/hd.hpp"
#include "mimorx/core/rounding.hpp"

namespace mimorx::lattice::detail {

#if !defined(__CUDA_ARCH__)
using std::floor;
using std::sqrt;
#endif

// Nearest integer, ties upwards: floor(x + 1/2). Ties cannot loop: mu = 1/2 becomes -1/2, which
// rounds to 0 on the next visit.
template <class F>
MIMORX_HD F round_nearest(F x) {
  return floor(x + F(0.5));
}

// The Lovasz condition for the pair (k-1, k) from the R factor (Eq. (2) of Jozsa et al.):
// swap when delta r_{k-1,k-1}^2 > r_{k-1,k}^2 + r_{k,k}^2.
template <class F>
MIMORX_HD bool lovasz_violated(F delta, F r_prev_diag, F r_off, F r_diag) {
  return delta * r_prev_diag * r_prev_diag > r_off * r_off + r_diag * r_diag;
}

// A size-reduction multiplier above this magnitude means the rounding used an imprecise mu
// (half the mantissa gone): the Gram-Schmidt data are recomputed from B before going on
// (Schnorr-Euchner's remedy).
template <class F>
MIMORX_HD F big_quotient() {
  return sizeof(F) == 4 ? F(4096) : F(67108864);  // 2^12 for float32, 2^26 for float64
}

// CR-AS-LLL (CPU and CUDA) runs a full size reduction every this many swap phases; the phases
// reduce their tested pairs themselves in between (on Gaussian 64x64 bases every phase takes
// ~2.8x and every 8 ~1.2x the time of every 32; never is within a few % of 32, docs/lll.md).
constexpr int kFullReductionEvery = 32;

// A Gram-Schmidt norm r_jj at or below this fraction of ||b_j|| is treated as zero (the vectors
// are dependent to working precision): 16 unit roundoffs.
template <class F>
MIMORX_HD F singular_fraction() {
  return sizeof(F) == 4 ? F(16 * 5.96e-8) : F(16 * 1.11e-16);
}

// The presort key of a basis vector (LllConfig::presort): its squared length in float64, each
// operation rounded once (no fused multiply-add), so that the CPU and the GPU order a basis the
// same way. The squares are summed in chunks of 32 consecutive entries (each in order), and the
// chunks' sums in order: for up to 32 entries the plain sum in order; on the GPU a warp's lane
// sums one chunk, so a column's chain of additions is ~32 + n / 32 long instead of n (the key
// kernel is bound by that chain). NaN maps to +inf, so the
// order "key, then input position" is total and the ranks always form a permutation.
constexpr int kPresortChunk = 32;
template <class F>
MIMORX_HD double presort_key(const F* col, int n) {
  double s = 0;
  for (int i0 = 0; i0 < n; i0 += kPresortChunk) {
    double c = 0;
    const int end = i0 + kPresortChunk < n ? i0 + kPresortChunk : n;
    for (int i = i0; i < end; ++i) {
      const double x = double(col[i]);
      c = rounding::dadd(c, rounding::dmul(x, x));
    }
    s = rounding::dadd(s, c);
  }
  return s == s ? s : HUGE_VAL;
}

// Whether the vector with key a at input position ia goes before the one with key b at ib.
MIMORX_HD bool presort_before(double a, int ia, double b, int ib) {
  return a < b || (a == b && ia < ib);
}

// Givens rotation that zeros y in (x, y): (c, s) with c x + s y = r, -s x + c y = 0.
template <class F>
MIMORX_HD void givens(F x, F y, F* c, F* s) {
  const F r = sqrt(x * x + y * y);
  *c = x / r;
  *s = y / r;
}

}  // namespace mimorx::lattice::detail

#pragma once
// Algorithm 1 for the shapes whose QR fits in registers (nt = 2 or 4, nt <= nr <= 8): one
// thread decomposes one (channel, pass) with linalg's fixed-size MGS (linalg/qr_fixed.hpp) and
// writes the E problem (layout in nway_math.hpp) of every vector of that channel.
//
// Pass n rotates the complex columns by n, i.e. the MRVD real columns by 2n; the MRVD model of
// an unsorted QR is computed as the complex nr x nt QR written in its real form (as linalg's
// kFixedViaComplex path does), which is the MRVD QR in exact arithmetic and costs a quarter of
// the real 2nr x 2nt one. Two consequences the search kernel relies on (nway_fast_math.hpp, run by
// nway_fast_cuda.cu): the diagonal 2x2 blocks of R are exactly [r, +0; +0, r] and the off-diagonal
// blocks have the complex structure [a, -b; b, a]. The CPU reference and the CUDA kernel both run
// this code, so they produce bit-identical E.
#include <cstdint>

#include "detect/nway_math.hpp"
#include "linalg/qr_fixed.hpp"

namespace mimorx::detect::nway {

// Largest nr of this path: the complex nr x nt problem (at most 8 x 4: 32 + 10 complex values)
// stays in registers.
inline constexpr int kFixedMaxNr = 8;

// Shapes that take this path (the others use the shared-memory MGS of nway_qr_kernel.cuh).
MIMORX_HD constexpr bool fixed_qr_shape(int nt, int nr) {
  return (nt == 2 || nt == 4) && nr >= nt && nr <= kFixedMaxNr;
}

// One pass's complex QR: a = Q (column p = q_p), r[j][i] = R(i, j), perm = the rotated order.
template <int NR, int NT>
using PassQr = linalg::detail::QrFixed<cf32, NR, NT>;

// QR of pass n of one channel whose H (column-major nr x nt) is read through hget(index):
// linalg's fixed-size modified Gram-Schmidt (the complex model's arithmetic) on the columns
// (p + n) mod nt. A channel with a non-finite entry gets status qr_non_finite and zero factors.
template <int NR, int NT, class HGet>
MIMORX_HD void fixed_pass_qr(HGet hget, int n, PassQr<NR, NT>& s) {
  namespace ld = linalg::detail;
  MIMORX_UNROLL
  for (int p = 0; p < NT; ++p) s.perm[p] = p + n < NT ? p + n : p + n - NT;
  if (!ld::fixed_load<cf32, NR, NT>(linalg::QrModel::complex, hget, s)) {
    MIMORX_UNROLL
    for (int j = 0; j < NT; ++j) {
      MIMORX_UNROLL
      for (int i = 0; i < NR; ++i) s.a[j][i] = linalg::hd::zero<cf32>();
      MIMORX_UNROLL
      for (int i = 0; i <= j; ++i) s.r[j][i] = linalg::hd::zero<cf32>();
    }
    s.status = linalg::qr_non_finite;
    return;
  }
  s.status = ld::fixed_mgs(s, false, linalg::kQrRankTolerance);
}

// E of one vector y (NR complex samples) from the pass's QR: R' = scale R in MRVD real form
// (complex R(i, j) -> rows 2i, 2i+1, columns 2j, 2j+1: [Re, -Im; Im, Re]; the negation is 0 - x
// so that the entry beside each diagonal entry is exactly +0), packed; Q^T y = the complex
// Q^H y in the MRVD order (Re z_0, Im z_0, Re z_1, ...); and 1 / (2 R'_ll). A channel the QR
// could not use (status non-finite) gives 0.
template <int NR, int NT>
MIMORX_HD void fixed_pass_store(const PassQr<NR, NT>& s, const cf32* y, float scale, float* e) {
  const Layout lay(NT);
  MIMORX_UNROLL
  for (int j = 0; j < NT; ++j) {
    MIMORX_UNROLL
    for (int i = 0; i <= j; ++i) {
      const cf32 r = s.r[j][i];
      store_r(lay, scale, 2 * i, 2 * j, r.re, e);
      store_r(lay, scale, 2 * i, 2 * j + 1, rounding::fsub(0.f, r.im), e);
      if (i < j) store_r(lay, scale, 2 * i + 1, 2 * j, r.im, e);
      store_r(lay, scale, 2 * i + 1, 2 * j + 1, r.re, e);
    }
  }
  const bool ok = s.status != linalg::qr_non_finite;
  constexpr int G = linalg::detail::qr_group_size(NR);
  MIMORX_UNROLL
  for (int p = 0; p < NT; ++p) {
    cf32 z = linalg::hd::zero<cf32>();
    if (ok) {
      z = linalg::detail::fixed_rowsum<NR, G, cf32>(
          [&](int t) { return linalg::hd::mulc(s.a[p][t], y[t]); });
    }
    e[lay.yhat(2 * p)] = z.re;
    e[lay.yhat(2 * p + 1)] = z.im;
  }
}

// Calls f.template operator()<NR, NT>() for a fixed shape; false for the others.
template <int NT, int NR = NT, class F>
bool fixed_qr_dispatch_nt(int nr, F& f) {
  if (nr == NR) {
    f.template operator()<NR, NT>();
    return true;
  }
  if constexpr (NR < kFixedMaxNr) {
    return fixed_qr_dispatch_nt<NT, NR + 1>(nr, f);
  } else {
    return false;
  }
}
template <class F>
bool fixed_qr_dispatch(int nt, int nr, F&& f) {
  if (!fixed_qr_shape(nt, nr)) return false;
  return nt == 2 ? fixed_qr_dispatch_nt<2>(nr, f) : fixed_qr_dispatch_nt<4>(nr, f);
}

}  // namespace mimorx::detect::nway

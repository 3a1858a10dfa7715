#pragma once
// Algorithm 1 for the shapes whose QR fits in registers (nt = 2 or 4, nt <= nr <= 4): one
// thread decomposes one (channel, pass) with linalg's fixed-size MGS (linalg/qr_fixed.hpp) and
// writes the E problem (layout in nway_math.hpp) of every vector of that channel.
//
// Pass n rotates the complex columns by n, i.e. the MRVD real columns by 2n; the MRVD model of
// an unsorted QR with an even rotation is computed as the complex nr x nt QR written in its
// real form (kFixedViaComplex), which is the MRVD QR in exact arithmetic and costs a quarter of
// the real 2nr x 2nt one. Two consequences the search kernel relies on (nway_fast_math.hpp, run by
// nway_fast_cuda.cu): the diagonal 2x2 blocks of R are exactly [r, +0; +0, r] and the off-diagonal
// blocks have the complex structure [a, -b; b, a]. The CPU reference and the CUDA kernel both run
// this code, so they produce bit-identical E.
#include <cstdint>

#include "detect/nway_math.hpp"
#include "linalg/qr_fixed.hpp"

namespace mimorx::detect::nway {

// Shapes that take this path (the others use the shared-memory MGS of nway_qr_kernel.cuh).
MIMORX_HD constexpr bool fixed_qr_shape(int nt, int nr) {
  return (nt == 2 || nt == 4) && linalg::detail::qr_fixed_shape(nr, nt);
}

template <int NR, int NT>
using PassQr = linalg::detail::QrFixed<float, 2 * NR, 2 * NT>;

// QR of pass n of one channel whose H (column-major nr x nt) is read through hget(index).
template <int NR, int NT, class HGet>
MIMORX_HD void fixed_pass_qr(HGet hget, int n, PassQr<NR, NT>& s) {
  linalg::detail::QrArgs a;
  a.nr = NR;
  a.nt = NT;
  a.m = 2 * NR;
  a.n = 2 * NT;
  a.model = linalg::QrModel::mrvd;
  a.sorted = false;
  a.rotation = 2 * n;
  linalg::detail::qr_fixed_problem<float, NR, NT, linalg::detail::kFixedViaComplex>(a, 0, hget, s);
}

// E of one vector y (NR complex samples) from the pass's QR: R' = scale R (packed), Q^T y, and
// 1 / (2 R'_ll). Q^T y is the complex Q^H y (the complex QR's arithmetic) in the MRVD order
// (Re z_0, Im z_0, Re z_1, ...); a channel the QR could not use (status non-finite) gives 0.
template <int NR, int NT>
MIMORX_HD void fixed_pass_store(const PassQr<NR, NT>& s, const cf32* y, float scale, float* e) {
  constexpr int D = 2 * NT;
  const Layout lay(NT);
  MIMORX_UNROLL
  for (int c = 0; c < D; ++c) {
    MIMORX_UNROLL
    for (int l = 0; l <= c; ++l) store_r(lay, scale, l, c, s.r[c][l], e);
  }
  const bool ok = s.status != linalg::qr_non_finite && s.status != linalg::qr_bad_order;
  constexpr int G = linalg::detail::qr_group_size(NR);
  MIMORX_UNROLL
  for (int p = 0; p < NT; ++p) {
    cf32 z = linalg::hd::zero<cf32>();
    if (ok) {
      z = linalg::detail::fixed_rowsum<NR, G, cf32>([&](int t) {
        return linalg::hd::mulc(cf32(s.a[2 * p][2 * t], s.a[2 * p][2 * t + 1]), y[t]);
      });
    }
    e[lay.yhat(2 * p)] = z.re;
    e[lay.yhat(2 * p + 1)] = z.im;
  }
}

// Calls f.template operator()<NR, NT>() for a fixed shape; false for the others.
template <class F>
bool fixed_qr_dispatch(int nt, int nr, F&& f) {
  if (!fixed_qr_shape(nt, nr)) return false;
  if (nt == 2) {
    switch (nr) {
      case 2:
        f.template operator()<2, 2>();
        return true;
      case 3:
        f.template operator()<3, 2>();
        return true;
      case 4:
        f.template operator()<4, 2>();
        return true;
    }
  } else if (nr == 4) {
    f.template operator()<4, 4>();
    return true;
  }
  return false;
}

}  // namespace mimorx::detect::nway

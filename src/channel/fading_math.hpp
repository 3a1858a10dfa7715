#pragma once
// Kronecker correlation of one entry, shared by the CPU reference and the CUDA kernel: the same
// summation order and no contraction (core/rounding.hpp), hence bit-identical results.
#include "mimorx/channel/samples.hpp"

namespace mimorx::channel::detail {

// H(i, j) = sum_l (sum_k A(i, k) G(k, l)) B(l, j) with A = R_rx^{1/2} (nr x nr) and
// B = R_tx^{1/2} (nt x nt), column-major; a null A or B stands for the identity.
MIMORX_HD cf32 kron_entry(const cf32* g, const float* a, const float* b, int nr, int nt, int i,
                          int j) {
  auto row_a = [&](int l) -> cf32 {
    if (!a) return g[l * nr + i];
    cf32 t{0.f, 0.f};
    for (int k = 0; k < nr; ++k) {
      const float aik = a[k * nr + i];
      const cf32 gkl = g[l * nr + k];
      t = rounding::cadd(t, rounding::cscale(gkl, aik));
    }
    return t;
  };
  if (!b) return row_a(j);
  cf32 acc{0.f, 0.f};
  for (int l = 0; l < nt; ++l) {
    const cf32 t = row_a(l);
    const float blj = b[j * nt + l];
    acc = rounding::cadd(acc, rounding::cscale(t, blj));
  }
  return acc;
}

}  // namespace mimorx::channel::detail

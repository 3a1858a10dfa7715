#pragma once
// Arithmetic of the trellis detector shared by the CPU reference (trellis_plan.cpp) and the
// CUDA kernel (trellis_cuda.cu). Every rounding is explicit (core/rounding.hpp's ffma / fmul /
// fadd: __f*_rn on the device, plain operations without contraction on the host), and both
// backends run these functions in the same order, so their candidate lists are bit-identical.
//
// Model: the complex QR gives R (nt x nt, column-major, real diagonal) and y^ = Q^H y. R is
// scaled by the QAM scale (R' = scale R) so that symbols are integer amplitudes: vertex v of a
// stage is the point with real level v % L and imaginary level v / L (L = sqrt(Q) levels per
// axis, level i <-> amplitude 2i - (L-1)). A path is a 64-bit word with the vertex of row j in
// bits 8j..8j+7 (Q <= 256) and its distance.
#include <cstdint>

#include "detect/nway_math.hpp"
#include "mimorx/core/complex.hpp"
#include "mimorx/core/hd.hpp"
#include "mimorx/core/rounding.hpp"

namespace mimorx::detect::trellis {

using Path = std::uint64_t;

MIMORX_HD constexpr int vertex_of(Path p, int row) { return int((p >> (8 * row)) & 0xffu); }
MIMORX_HD constexpr Path with_vertex(Path p, int row, int v) {
  return p | (Path(unsigned(v)) << (8 * row));
}
// Integer amplitudes (exact floats) of vertex v.
template <int L>
MIMORX_HD float amp_re(int v) {
  return float(2 * (v & (L - 1)) - (L - 1));
}
template <int L>
MIMORX_HD float amp_im(int v) {
  return float(2 * (v / L) - (L - 1));
}

// One scaled R entry: R'(i, j) = scale * R(i, j).
MIMORX_HD cf32 scaled(cf32 r, float scale) {
  return {rounding::fmul(r.re, scale), rounding::fmul(r.im, scale)};
}
// 1 / (2 R'_ii) for the slicer (0 for a zero column: every point of that row then has the
// same weight and the slicer returns a fixed level).
MIMORX_HD float inv_half(float d) { return d > 0.f ? rounding::fdiv(0.5f, d) : 0.f; }

// One interference term removed: u - R'(row, j) x_j for the point x_j with amplitudes (a, b),
// r = R'(row, j).
MIMORX_HD cf32 sub_term(cf32 u, cf32 r, float a, float b) {
  return {rounding::ffma(-r.re, a, rounding::ffma(r.im, b, u.re)),
          rounding::ffma(-r.re, b, rounding::ffma(-r.im, a, u.im))};
}

// y^_row - delta for a path that has decided rows > row (eq. 11/12): the interference of the
// decided symbols removed from the observation of row `row`, one sub_term per decided row from
// the last row upwards. Rows are decided in that same order (last row first), so a caller may
// as well carry the partial sums and apply each row's term when the row is decided (the CUDA
// kernel for nt <= 4): the same operations in the same order, hence the same value.
// rs: R' column-major NT x NT (element (i, j) at rs[j * NT + i]).
template <int NT, int L>
MIMORX_HD cf32 residual(const cf32* rs, cf32 y_row, int row, Path p) {
  cf32 u = y_row;
  MIMORX_UNROLL
  for (int j = NT - 1; j > 0; --j) {
    if (j > row) {
      const int v = vertex_of(p, j);
      u = sub_term(u, rs[j * NT + row], amp_re<L>(v), amp_im<L>(v));
    }
  }
  return u;
}

// Edge weight |u - R'_ii x|^2 (eq. 13) for the point with amplitudes (a, b).
MIMORX_HD float edge_weight(cf32 u, float d, float a, float b) {
  const float er = rounding::ffma(-d, a, u.re);
  const float ei = rounding::ffma(-d, b, u.im);
  return rounding::ffma(er, er, rounding::fmul(ei, ei));
}

// Edge reduction (Algorithm 2) for vertex (a, b) of row `row`: the best of the Q incoming
// paths, get(k, &dist_k, &u_k) giving path k's distance and residual at this row. Ties go to
// the smallest k (strict <, k ascending: the order both backends use). U: the GPU's unroll
// factor of the loop over k (Q - 1 = fully unrolled); the operations do not depend on it.
template <int Q, int U = (Q <= 16 ? Q - 1 : 8), class Get>
MIMORX_HD float reduce_vertex(Get get, float d, float a, float b, int* arg) {
  float dk;
  cf32 uk;
  get(0, &dk, &uk);
  float best = rounding::fadd(dk, edge_weight(uk, d, a, b));
  int bk = 0;
#if defined(__CUDA_ARCH__)
  // Fully unrolled up to 16-QAM by default (the index k becomes an immediate, no loop counter).
#pragma unroll(U)
#endif
  for (int k = 1; k < Q; ++k) {
    get(k, &dk, &uk);
    const float t = rounding::fadd(dk, edge_weight(uk, d, a, b));
    const bool better = t < best;
    best = better ? t : best;
    bk = better ? k : bk;
  }
  *arg = bk;
  return best;
}

// Path extension (Algorithm 1) of a path that has decided rows >= first + 1, from row `first`
// down to row 0: at each row the best outgoing edge by slicing. u_first is the path's residual
// at row `first` (shared with the reduction into that row). yh: y^ (NT), inv_top: the slicer's
// scale per row, nway::slice_scale(1 / (2 R'_ii), L), computed once per vector (it holds a
// division that would otherwise be repeated at every step). With `bits` non-null, the bits of
// every vertex appended are or-ed into *bits (as path_bits() places them), so that a caller
// that carries the bits of the path so far need not recompute them from the vertices.
template <int NT, int L, class Word = std::uint64_t>
MIMORX_HD void extend(const cf32* rs, const cf32* yh, const float* inv_top, int first, cf32 u_first,
                      float* dist, Path* p, Word* bits = nullptr) {
  constexpr int KA = nway::log2_pow2(L), m = 2 * KA;
  MIMORX_UNROLL
  for (int r = NT - 2; r >= 0; --r) {
    if (r <= first) {
      const cf32 u = r == first ? u_first : residual<NT, L>(rs, yh[r], r, *p);
      int lr, li;
      const float a = nway::slice_amplitude_scaled(u.re, inv_top[r], L, &lr);
      const float b = nway::slice_amplitude_scaled(u.im, inv_top[r], L, &li);
      *dist = rounding::fadd(*dist, edge_weight(u, rs[r * NT + r].re, a, b));
      *p = with_vertex(*p, r, li * L + lr);
      if (bits) *bits |= Word(nway::symbol_bits_fast<KA>(lr, li)) << (r * m);
    }
  }
}

// Symbol bits (bit k = b_k of TS 38.211) of vertex v, and its constellation index.
template <int L>
MIMORX_HD unsigned vertex_bits(int v) {
  constexpr int KA = nway::log2_pow2(L);
  return nway::symbol_bits_fast<KA>(v & (L - 1), v / L);
}
template <int L>
MIMORX_HD unsigned vertex_symbol(int v) {
  constexpr int KA = nway::log2_pow2(L);
  return nway::symbol_index_of_bits(2 * KA, vertex_bits<L>(v));
}
// Bits of a full path: bit t * m + k = b_k of stream t.
template <int NT, int L, class Word = std::uint64_t>
MIMORX_HD Word path_bits(Path p) {
  constexpr int m = 2 * nway::log2_pow2(L);
  Word w = 0;
  MIMORX_UNROLL
  for (int t = 0; t < NT; ++t) w |= Word(vertex_bits<L>(vertex_of(p, t))) << (t * m);
  return w;
}

}  // namespace mimorx::detect::trellis

#pragma once
// The register-resident form of Algorithms 2 and 3 for E from nway_qr_fixed.hpp (nt = 2 or 4,
// up to 64-QAM): each thread runs C candidates of one pass with that pass's E in registers and
// keeps their (distance, bit word); the threads of one vector then agree on the best candidate
// and take, per bit, the minimum over the candidates whose bit differs from the best one (the
// counter-hypothesis). Max-log needs min over bit = 0 and min over bit = 1; one of the two is
// the global minimum (the best candidate's own value), so only the other is searched for: one
// predicated min per (candidate, bit) instead of a select and two mins, and half the values to
// merge across threads. Every distance is computed with the same operations, in the same order,
// as nway_math.hpp's search_path (the CPU reference) and minima are exact, so the LLRs are
// bit-identical to the reference's. The best candidate is the least nway::candidate_key (the
// CPU reference's choice); a bit with no counter-hypothesis in the list takes the best
// candidate's flip metric (nway::complete_minima).
//
// Two facts of E from the fixed QR shorten the search (see nway_qr_fixed.hpp): R'(2p, 2p+1) is
// exactly +0, so search_path's last update of the real level's z adds a zero product and is
// skipped (the result can differ only in the sign of a zero z, which neither the slice nor the
// squared error sees), and then the real and imaginary levels of a symbol depend only on the
// symbols above it and are sliced side by side.
//
// Bits are handled as Gray codes of the levels: TS 38.211's PAM axis bits c_0..c_(k-1) of level
// i are the complement of the bit-reversed binary-reflected Gray code of i (checked at compile
// time below), so a candidate's bit word is its packed level word w xor (w >> 1) (within each
// axis field) up to a constant complement, which cancels in the xor with the best word.
#include <cstdint>

#include "detect/nway_math.hpp"

namespace mimorx::detect::nway {

constexpr unsigned gray_bit_reversed_complement(int k, int i) {
  const unsigned g = unsigned(i) ^ (unsigned(i) >> 1);
  unsigned r = 0;
  for (int q = 0; q < k; ++q) r |= ((g >> q) & 1u) << (k - 1 - q);
  return ~r & ((1u << k) - 1);
}
constexpr bool gray_matches_38211(int k) {
  for (int i = 0; i < (1 << k); ++i)
    if (level_axis_bits(k, i) != gray_bit_reversed_complement(k, i)) return false;
  return true;
}
static_assert(gray_matches_38211(1) && gray_matches_38211(2) && gray_matches_38211(3) &&
                  gray_matches_38211(4),
              "the PAM axis bits are not the Gray code the fast search assumes");

template <int NT, int L>
struct FastShape {
  static constexpr int D = 2 * NT, M = L * L, KA = log2_pow2(L), MB = 2 * KA, NB = NT * MB;
  static constexpr int RC = Layout(NT).rcount, ES = Layout(NT).es;
  static_assert(NB <= 31, "bit words must fit in 31 bits (rotation shifts by up to NB - 1)");
  // Every axis field's top bit: (w >> 1) must not carry the next field's low bit into it.
  static constexpr unsigned field_tops() {
    unsigned t = 0;
    for (int f = 0; f < D; ++f) t |= 1u << (KA * f + KA - 1);
    return t;
  }
  static constexpr unsigned kMask = (1u << NB) - 1;
  static constexpr unsigned kGrayMask = ~field_tops() & kMask;
  // Position in the (unrotated) Gray word of LLR index j = t * MB + b (b_b of stream t): the
  // real axis carries b_0, b_2, .. (c_0, c_1, ..), the imaginary axis b_1, b_3, ..; c_jj sits at
  // Gray bit KA - 1 - jj of its axis field 2t + (b & 1).
  static constexpr int position(int j) {
    const int t = j / MB, b = j % MB, s = b & 1, jj = b >> 1;
    return KA * (2 * t + s) + (KA - 1 - jj);
  }
};

// Candidate k of a pass (E in registers): its distance and packed level word (KA bits per real
// level l at bit KA * l).
template <int NT, int L>
MIMORX_HD unsigned fast_path(const float (&e)[FastShape<NT, L>::ES], int k, float* dist_out) {
  using S = FastShape<NT, L>;
  constexpr int D = S::D, KA = S::KA, RC = S::RC;
  auto R = [&](int l, int c) { return e[packed_row<D>(l) + (c - l)]; };
  float a[D];
  a[D - 1] = float(2 * (k >> KA) - (L - 1));
  a[D - 2] = float(2 * (k & (L - 1)) - (L - 1));
  float err = ffma(-R(D - 1, D - 1), a[D - 1], e[RC + D - 1]);
  float dist = fmul(err, err);
  err = ffma(-R(D - 2, D - 2), a[D - 2], e[RC + D - 2]);
  dist = ffma(err, err, dist);
  unsigned w = unsigned(k) << (KA * (D - 2));
  MIMORX_UNROLL
  for (int p = NT - 2; p >= 0; --p) {
    const int lr = 2 * p, li = 2 * p + 1;
    float zr = e[RC + lr], zi = e[RC + li];
    MIMORX_UNROLL
    for (int c = D - 1; c > li; --c) {
      zr = ffma(-R(lr, c), a[c], zr);
      zi = ffma(-R(li, c), a[c], zi);
    }
    int vr = 0, vi = 0;
    a[li] = slice_amplitude_scaled(zi, slice_scale(e[RC + D + li], L), L, &vi);
    a[lr] = slice_amplitude_scaled(zr, slice_scale(e[RC + D + lr], L), L, &vr);
    const float ei = ffma(-R(li, li), a[li], zi);
    const float er = ffma(-R(lr, lr), a[lr], zr);
    dist = ffma(ei, ei, dist);
    dist = ffma(er, er, dist);
    w |= (unsigned(vr) | (unsigned(vi) << KA)) << (KA * lr);
  }
  *dist_out = dist;
  return w;
}

// Gray word of a level word, rotated from the pass's column order to stream order (stream
// t = (p + n) mod nt of rotated symbol p).
template <int NT, int L>
MIMORX_HD unsigned fast_stream_word(unsigned w, int n) {
  using S = FastShape<NT, L>;
  const unsigned g = w ^ ((w >> 1) & S::kGrayMask);
  const int s = n * S::MB;
  return s == 0 ? g : (((g << s) | (g >> (S::NB - s))) & S::kMask);
}

}  // namespace mimorx::detect::nway

#pragma once
// Per-bit arithmetic of the LDPC encoder, shared by the CPU reference and the CUDA kernel.
// Bits are bytes holding 0/1; row r of block row i checks column j*Z + (r + P(i,j)) mod Z.
#include <cstdint>

#include "mimorx/core/hd.hpp"

namespace mimorx::ldpc::detail {

// XOR of the bits that block-row edges [begin, end) place on row r, over the edges whose
// column is below col_limit and differs from skip_col.
MIMORX_HD int row_parity(const std::uint8_t* cw, const int* edge_col, const int* edge_shift,
                         int begin, int end, int col_limit, int skip_col, int r, int z) {
  int v = 0;
  for (int e = begin; e < end; ++e) {
    const int c = edge_col[e];
    if (c >= col_limit || c == skip_col) continue;
    int idx = r + edge_shift[e];
    if (idx >= z) idx -= z;
    v ^= cw[c * z + idx];
  }
  return v & 1;
}

// The position a row-r parity value lands on in a column entered with shift s.
MIMORX_HD int landing(int r, int s, int z) {
  const int idx = r + s;
  return idx >= z ? idx - z : idx;
}

}  // namespace mimorx::ldpc::detail

// ---- Bit-packed form used by the CUDA kernel (32 lifted rows per operation). ----
// Column j is stored as `w` 32-bit words, bit b of word i = position 32 i + b (LSB first), with
// positions Z .. 32 w - 1 holding a wrap-around copy (position p holds bit p mod Z), so that
// the 32 positions q .. q + 31 for any q < Z are one funnel shift of two adjacent words.
// w = (Z - 1) / 32 + 2.
namespace mimorx::ldpc::detail {

MIMORX_HD int packed_words(int z) { return (z - 1) / 32 + 2; }

MIMORX_HD std::uint32_t extract32(const std::uint32_t* col, int q) {
  const std::uint32_t lo = col[q >> 5], hi = col[(q >> 5) + 1];
  const int sh = q & 31;
#if defined(__CUDA_ARCH__)
  return __funnelshift_r(lo, hi, sh);
#else
  return sh == 0 ? lo : (lo >> sh) | (hi << (32 - sh));
#endif
}

MIMORX_HD void or_word(std::uint32_t* w, std::uint32_t m) {
#if defined(__CUDA_ARCH__)
  atomicOr(w, m);
#else
  *w |= m;
#endif
}

// Rows 32 g .. 32 g + 31 that exist (< Z).
MIMORX_HD std::uint32_t group_mask(int g, int z) {
  const int left = z - 32 * g;
  return left >= 32 ? 0xFFFFFFFFu : ((1u << left) - 1u);
}

// Parity of rows 32 g .. 32 g + 31 of one block row over edges [begin, end) (column < col_limit,
// != skip_col); bit b = row 32 g + b.
MIMORX_HD std::uint32_t group_parity(const std::uint32_t* words, int w, const int* edge_col,
                                     const int* edge_shift, int begin, int end, int col_limit,
                                     int skip_col, int g, int z) {
  std::uint32_t v = 0;
  for (int e = begin; e < end; ++e) {
    const int c = edge_col[e];
    if (c >= col_limit || c == skip_col) continue;
    int q = 32 * g + edge_shift[e];
    if (q >= z) q -= z;
    v ^= extract32(words + c * w, q);
  }
  return v;
}

// Row values v (bit b = row 32 g + b) land on positions (row + s) mod Z of a zeroed column.
MIMORX_HD void store_group(std::uint32_t* col, std::uint32_t v, int g, int s, int z) {
  v &= group_mask(g, z);
  if (s == 0) {
    col[g] = v;
    return;
  }
  while (v) {
#if defined(__CUDA_ARCH__)
    const int b = __ffs(v) - 1;
#else
    const int b = __builtin_ctz(v);
#endif
    v &= v - 1;
    int p = 32 * g + b + s;
    if (p >= z) p -= z;
    or_word(col + (p >> 5), 1u << (p & 31));
  }
}

// Wrap-around copy, item t in [0, 32 w - Z): position Z + t gets bit (Z + t) mod Z.
MIMORX_HD void wrap_fill(std::uint32_t* col, int t, int z) {
  const int p = z + t, src = p % z;
  if ((col[src >> 5] >> (src & 31)) & 1u) or_word(col + (p >> 5), 1u << (p & 31));
}

MIMORX_HD std::uint8_t packed_bit(const std::uint32_t* col, int r) {
  return std::uint8_t((col[r >> 5] >> (r & 31)) & 1u);
}

// p / Z for p < 2^32 / Z without a division: magic = floor(2^32 / Z) + 1; the error term
// p (magic - 2^32/Z) / 2^32 < p / 2^32 < 1/Z keeps the floor exact (n <= 26112, Z <= 384).
inline std::uint32_t div_magic(int z) { return std::uint32_t((std::uint64_t(1) << 32) / z + 1); }
MIMORX_HD int div_by_z(int p, std::uint32_t magic) {
#if defined(__CUDA_ARCH__)
  return int(__umulhi(std::uint32_t(p), magic));
#else
  return int((std::uint64_t(std::uint32_t(p)) * magic) >> 32);
#endif
}

// Encoder parameters for the packed form (what the kernel receives by value).
struct PackedArgs {
  int z, kb, rows, cols, edges;
  int p0_col, p0_shift;
  int core_row[3], core_col[3], core_shift[3];
  std::uint32_t magic;
};

}  // namespace mimorx::ldpc::detail

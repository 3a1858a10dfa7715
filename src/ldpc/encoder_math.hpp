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

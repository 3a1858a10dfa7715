#pragma once
// Host emulation of the CUDA kernel's bit-packed encoder: the same phases, in the same order,
// with the same shared functions (encoder_math.hpp); each phase's thread loop becomes a plain
// loop and each barrier a sequence point. Tests compare it with the byte-wise CPU encoder, so
// the kernel's algorithm is checked where no GPU exists.
#include <cstdint>
#include <vector>

#include "ldpc/encoder_math.hpp"
#include "mimorx/ldpc/encoder.hpp"

namespace mimorx::ldpc::detail {

inline PackedArgs packed_args(const EncoderPlan::Tables& t) {
  PackedArgs a{};
  a.z = t.z;
  a.kb = t.kb;
  a.rows = t.rows;
  a.cols = t.cols;
  a.edges = int(t.edge_col.size());
  a.p0_col = t.p0_col;
  a.p0_shift = t.p0_shift;
  for (int s = 0; s < 3; ++s) {
    a.core_row[s] = t.core_row[s];
    a.core_col[s] = t.core_col[s];
    a.core_shift[s] = t.core_shift[s];
  }
  a.magic = div_magic(t.z);
  return a;
}

inline void encode_packed_host(const EncoderPlan::Tables& t, const std::uint8_t* in,
                               std::uint8_t* out) {
  const PackedArgs a = packed_args(t);
  const int z = a.z, w = packed_words(z), groups = (z + 31) / 32, wc = 32 * w - z;
  const int* ec = t.edge_col.data();
  const int* es = t.edge_shift.data();
  const int* rs = t.row_start.data();
  std::vector<std::uint32_t> words(std::size_t(a.cols) * w, 0);
  for (int j = 0; j < a.kb; ++j) {
    for (int g = 0; g < groups; ++g) {
      std::uint32_t m = 0;
      for (int lane = 0; lane < 32; ++lane) {
        const int r = 32 * g + lane;
        if (r < z && (in[j * z + r] & 1)) m |= 1u << lane;
      }
      words[j * w + g] = m;
    }
  }
  for (int j = 0; j < a.kb; ++j) {
    for (int x = 0; x < wc; ++x) wrap_fill(words.data() + j * w, x, z);
  }
  for (int g = 0; g < groups; ++g) {
    std::uint32_t v = 0;
    for (int i = 0; i < 4; ++i)
      v ^= group_parity(words.data(), w, ec, es, rs[i], rs[i + 1], a.kb, -1, g, z);
    store_group(words.data() + a.p0_col * w, v, g, a.p0_shift, z);
  }
  for (int x = 0; x < wc; ++x) wrap_fill(words.data() + a.p0_col * w, x, z);
  for (int s = 0; s < 3; ++s) {
    const int i = a.core_row[s], c = a.core_col[s];
    for (int g = 0; g < groups; ++g) {
      const std::uint32_t v =
          group_parity(words.data(), w, ec, es, rs[i], rs[i + 1], a.cols, c, g, z);
      store_group(words.data() + c * w, v, g, a.core_shift[s], z);
    }
    for (int x = 0; x < wc; ++x) wrap_fill(words.data() + c * w, x, z);
  }
  for (int item = 0; item < (a.rows - 4) * groups; ++item) {
    const int i = 4 + item / groups, g = item % groups, c = a.kb + i;
    const std::uint32_t v =
        group_parity(words.data(), w, ec, es, rs[i], rs[i + 1], a.cols, c, g, z);
    store_group(words.data() + c * w, v, g, t.target_shift[i - 4], z);
  }
  const int n = a.cols * z;
  for (int ch = 0; ch < n / 4; ++ch) {
    int p = 4 * ch, col = div_by_z(p, a.magic), r = p - col * z;
    for (int b = 0; b < 4; ++b) {
      out[p + b] = packed_bit(words.data() + col * w, r);
      if (++r == z) {
        r = 0;
        ++col;
      }
    }
  }
}

}  // namespace mimorx::ldpc::detail

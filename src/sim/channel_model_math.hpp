#pragma once
// Per-row arithmetic of the simulator's channel model (mimorx/sim/channel_model.hpp), shared by
// the CPU and CUDA paths (same operation order, no contraction: bit-identical results). Kept
// free of the library's container headers so that the CUDA file includes only this.
#include <cstdint>

#include "sim/frames_math.hpp"

namespace mimorx::sim::detail {

// What the per-row arithmetic needs (pointers in the memory of the backend that runs it).
struct ChannelModelArgs {
  std::int64_t vectors_per_channel = 1;
  std::int64_t vectors_per_block = 0;   // coded: received vectors per transport block; 0 uncoded
  std::int64_t channels_per_block = 0;  // ceil(vectors_per_block / vectors_per_channel)
  const float* sqrt_rx = nullptr;       // R_rx^{1/2}, nr x nr column-major; null: identity
  const float* sqrt_tx = nullptr;       // R_tx^{1/2}, nt x nt column-major; null: identity
};

void channel_model_cpu(const ChannelModelArgs& a, std::uint64_t seed, std::int64_t first,
                       std::int64_t count, int nt, int nr, Modulation mod, float n0,
                       const std::uint8_t* bits, cf32* h, cf32* y);
void channel_model_cuda(const ChannelModelArgs& a, std::uint64_t seed, std::int64_t first,
                        std::int64_t count, int nt, int nr, Modulation mod, float n0,
                        const std::uint8_t* bits, cf32* h, cf32* y, void* stream);

// The realisation of H that received vector f uses.
MIMORX_HD std::int64_t channel_of(const ChannelModelArgs& a, std::int64_t f) {
  if (a.vectors_per_block == 0) return f / a.vectors_per_channel;
  const std::int64_t block = f / a.vectors_per_block, v = f % a.vectors_per_block;
  return block * a.channels_per_block + v / a.vectors_per_channel;
}

// Row i of vector f: H(i, 0..nt-1) = (R_rx^{1/2} G R_tx^{1/2})(i, :) with G the i.i.d. draw of
// its realisation, and y_i = noise + sum_j H(i, j) x_j, in make_received_row's order (which it
// equals for the identity correlations and one vector per channel). nt <= 8.
MIMORX_HD void channel_model_row(const ChannelModelArgs& a, std::uint64_t seed, std::int64_t f,
                                 int nt, int nr, Modulation mod, float n0, const std::uint8_t* bits,
                                 int i, cf32* h, cf32* y) {
  const int m = bits_per_symbol(mod);
  const std::int64_t c = channel_of(a, f);
  cf32 row[8];  // (R_rx^{1/2} G)(i, l)
  for (int l = 0; l < nt; ++l) {
    if (!a.sqrt_rx) {
      row[l] = rayleigh_entry(seed, c, nr, nt, i, l);
      continue;
    }
    cf32 t{0.f, 0.f};
    for (int k = 0; k < nr; ++k) {
      const float aik = a.sqrt_rx[k * nr + i];
      const cf32 g = rayleigh_entry(seed, c, nr, nt, k, l);
      t = rounding::cadd(t, rounding::cscale(g, aik));
    }
    row[l] = t;
  }
  cf32 acc = noise_entry(seed, f, nr, i, n0);
  for (int j = 0; j < nt; ++j) {
    cf32 hij = row[j];
    if (a.sqrt_tx) {
      hij = {0.f, 0.f};
      for (int l = 0; l < nt; ++l) {
        const float blj = a.sqrt_tx[j * nt + l];
        hij = rounding::cadd(hij, rounding::cscale(row[l], blj));
      }
    }
    h[j * nr + i] = hij;
    const cf32 p = rounding::cmul(hij, map_symbol(mod, bits + j * m));
    acc = rounding::cadd(acc, p);
  }
  y[i] = acc;
}

}  // namespace mimorx::sim::detail

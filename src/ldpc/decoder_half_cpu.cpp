// The CPU model of the f16x2 CUDA kernel (decoder_half_cuda.cu): the same half-pair row
// updates (decoder_half.hpp) on the same codeword pairs, layer by layer, with the kernel's
// per-codeword early termination. Slow (each half operation is a float operation and a
// rounding), but bit for bit what the kernel computes, so it is the reference its GPU tests
// compare with and the way CI tests the half arithmetic.
#include "ldpc/decoder_half_cpu.hpp"

#include <algorithm>
#include <cstdint>
#include <vector>

#include "ldpc/decoder_half.hpp"

namespace mimorx::ldpc::detail {
namespace {

using hpair::u32;

// Codeword `lane`'s hard decisions (sign bits of its halves) in `mode`, as the kernel writes them.
void write_lane(const DecodeTables& t, OutMode mode, std::int64_t w, const std::vector<u32>& app,
                int lane, std::uint8_t* out) {
  const auto bit = [&](int i) { return (app[i] >> (16 * lane + 15)) & 1u; };
  if (mode == OutMode::info_unpacked) {
    std::uint8_t* o = out + w * t.k;
    for (int i = 0; i < t.k; ++i) o[i] = std::uint8_t(bit(i));
  } else if (mode == OutMode::codeword) {
    std::uint8_t* o = out + w * t.n_used;
    for (int i = 0; i < t.n_used; ++i) o[i] = std::uint8_t(bit(i));
  } else {
    const int bytes = (t.k + 7) / 8;
    std::uint8_t* o = out + w * bytes;
    for (int b = 0; b < bytes; ++b) {
      unsigned v = 0;
      for (int j = 0; j < 8; ++j) {
        const int i = 8 * b + j;
        if (i < t.k && bit(i)) v |= 0x80u >> j;
      }
      o[b] = std::uint8_t(v);
    }
  }
}

// Sign bits of the lanes with an unsatisfied row (bit 15 lane 0, bit 31 lane 1).
u32 unsatisfied(const DecodeTables& t, const std::vector<hpair::HalfEdge>& pe,
                const std::vector<u32>& app) {
  u32 fail = 0;
  for (int l = 0; l < t.rows; ++l) {
    const int e0 = t.row_start[l], deg = t.row_start[l + 1] - e0;
    for (int r = 0; r < t.z && fail != hpair::kSignBits; ++r) {
      fail |= hpair::row_parity(app.data(), pe.data() + e0, deg, r, t.z);
    }
  }
  return fail;
}

}  // namespace

void decode_half_cpu(const DecodeTables& t, const float* llrs, int num, OutMode mode,
                     std::uint8_t* out, int* iterations, std::uint8_t* syndrome_ok) {
  std::vector<hpair::HalfEdge> pe(t.edges.size());
  for (std::size_t i = 0; i < pe.size(); ++i) pe[i] = hpair::half_edge(t.edges[i], t.z);
  const hpair::Scale sc0 = hpair::make_scale(t.alpha, t.beta, t.offset);
  const int pairs = (num + 1) / 2;
#pragma omp parallel
  {
    std::vector<u32> app(t.n_used), msg(t.edges.size() * std::size_t(t.z));
#pragma omp for schedule(dynamic, 1)
    for (int p = 0; p < pairs; ++p) {
      const int cw0 = 2 * p;
      const bool valid[2] = {true, cw0 + 1 < num};
      const float* l0 = llrs + std::int64_t(cw0) * t.n_used;
      const float* l1 = valid[1] ? l0 + t.n_used : nullptr;
      for (int i = 0; i < t.n_used; ++i) {
        app[i] =
            hpair::pack_halves(hpair::clamp_channel(l0[i]), l1 ? hpair::clamp_channel(l1[i]) : 0.f);
      }
      std::fill(msg.begin(), msg.end(), 0u);
      bool done[2] = {false, !valid[1]};
      int iters[2] = {t.max_iters, t.max_iters};
      hpair::Scale sc = sc0;
      for (int it = 1; it <= t.max_iters; ++it) {
        if (!t.alpha_iter.empty()) sc.alpha = hpair::hsplat(t.alpha_iter[it - 1]);
        for (int l = 0; l < t.rows; ++l) {
          const int e0 = t.row_start[l], deg = t.row_start[l + 1] - e0;
          for (int r = 0; r < t.z; ++r) {
            hpair::row_update<false>(app.data(), msg.data() + std::size_t(e0) * t.z + r * deg, 1,
                                     pe.data() + e0, deg, r, t.z, sc);
          }
        }
        if (t.early_termination) {
          const u32 fail = unsatisfied(t, pe, app);
          for (int lane = 0; lane < 2; ++lane) {
            if (done[lane] || (fail >> (16 * lane + 15)) & 1u) continue;
            done[lane] = true;
            iters[lane] = it;
            write_lane(t, mode, cw0 + lane, app, lane, out);
            if (iterations) iterations[cw0 + lane] = it;
            if (syndrome_ok) syndrome_ok[cw0 + lane] = 1;
          }
          if (done[0] && done[1]) break;
        }
      }
      const u32 fail = syndrome_ok ? unsatisfied(t, pe, app) : 0u;
      for (int lane = 0; lane < 2; ++lane) {
        if (done[lane]) continue;
        write_lane(t, mode, cw0 + lane, app, lane, out);
        if (iterations) iterations[cw0 + lane] = iters[lane];
        if (syndrome_ok) syndrome_ok[cw0 + lane] = (fail >> (16 * lane + 15)) & 1u ? 0 : 1;
      }
    }
  }
}

}  // namespace mimorx::ldpc::detail

// The paired row update (decoder_pair.hpp: two codewords in the 16-bit lanes of a word, full
// messages) against the CPU integer reference (layer_row with compressed records), on the CPU:
// row by row on random and saturated states, and over whole decodes. The CUDA kernel calls the
// same functions (DecoderGpu tests in test_decoder.cpp compare the kernel with the CPU decoder).
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

#include "ldpc/decoder_pair.hpp"
#include "ldpc/decoder_quant.hpp"
#include "mimorx/ldpc/base_graph.hpp"
#include "mimorx/ldpc/decoder.hpp"
#include "support/gpu.hpp"
#include "test_decoder_common.hpp"

namespace mimorx::ldpc {
namespace {

using detail::DecEdge;
using detail::IntArith;
using detail::IntRec;
using Word = std::uint16_t;

Word pack(int lo, int hi) { return Word((unsigned(lo) & 0xffu) | ((unsigned(hi) & 0xffu) << 8)); }
int lane(Word w, int i) { return int(std::int8_t(std::uint8_t(w >> (8 * i)))); }

IntArith arith(bool oms, int alpha16, int beta_q) {
  IntArith a;
  a.offset = oms;
  a.alpha16 = alpha16;
  a.beta_q = beta_q;
  return a;
}

// One row of degree 2..19 (every fixed-degree version, the in-place one) on Z = 1, random APP
// (including +-127) and random reference records, whose messages seed the pair's full messages; APP
// and new messages must agree exactly.
TEST(DecoderPair, RowUpdateMatchesReferenceOnRandomStates) {
  const std::uint64_t seed = mimorx::test::fresh_seed();
  std::mt19937_64 gen(seed);
  auto uni = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(gen); };
  int rows = 0;
  for (int trial = 0; trial < 20000; ++trial) {
    const int deg = uni(2, 19);
    const bool oms = uni(0, 1) == 1;
    const IntArith a = arith(oms, uni(1, 16), uni(0, 300));
    const detail::pair::Scale sc(a);
    std::vector<DecEdge> e(deg);
    std::vector<detail::pair::PairEdge> pe(deg);
    for (int j = 0; j < deg; ++j) {
      e[j] = DecEdge{j, 0};
      pe[j] = detail::pair::pair_edge(e[j], 1);
    }
    std::int8_t app[2][19];
    IntRec rec[2];
    std::vector<Word> papp(deg), pmsg(deg);
    for (int c = 0; c < 2; ++c) {
      // Extremes often: saturated APP values and messages at +-31 exercise every clamp.
      for (int j = 0; j < deg; ++j) {
        const int pick = uni(0, 9);
        app[c][j] = std::int8_t(pick == 0 ? 127 : pick == 1 ? -127 : uni(-127, 127));
      }
      const int m1 = uni(0, 31), m2 = uni(m1, 31);
      rec[c] = IntArith::make_rec(m1, m2, uni(0, deg - 1), std::uint32_t(uni(0, 1)),
                                  std::uint32_t(gen()) & ((1u << deg) - 1u));
    }
    for (int j = 0; j < deg; ++j) {
      papp[j] = pack(app[0][j], app[1][j]);
      pmsg[j] = pack(IntArith::message(rec[0], j), IntArith::message(rec[1], j));
    }
    for (int c = 0; c < 2; ++c) detail::layer_row(app[c], e.data(), deg, 0, 1, rec[c], a);
    // Degree 19 has two versions (register arrays, in place); alternate between them.
    if (trial % 2) {
      detail::pair::row_update<true>(papp.data(), pmsg.data(), 1, pe.data(), deg, 0, 1, sc);
    } else {
      detail::pair::row_update<false>(papp.data(), pmsg.data(), 1, pe.data(), deg, 0, 1, sc);
    }
    for (int c = 0; c < 2; ++c) {
      for (int j = 0; j < deg; ++j) {
        ASSERT_EQ(lane(papp[j], c), int(app[c][j]))
            << "seed " << seed << " trial " << trial << " codeword " << c << " edge " << j;
        ASSERT_EQ(lane(pmsg[j], c), IntArith::message(rec[c], j))
            << "seed " << seed << " trial " << trial << " codeword " << c << " edge " << j;
      }
    }
    ++rows;
  }
  EXPECT_EQ(rows, 20000);
}

// Whole decodes: two codewords near the waterfall run through every layer and iteration with
// the pair functions (natural layer order, no early termination) and must end with the CPU
// integer decoder's hard decisions, and its row parities.
TEST(DecoderPair, WholeDecodeMatchesCpuIntegerDecoder) {
  const std::uint64_t seed = mimorx::test::fresh_seed();
  struct C {
    BaseGraph bg;
    int z;
    double snr;
  };
  for (const C c : {C{BaseGraph::bg1, 52, 1.2}, C{BaseGraph::bg2, 26, 1.0}}) {
    for (bool oms : {false, true}) {
      const LiftedGraph g(c.bg, c.z);
      const int num = 2, n = g.n();
      const auto cw = test::random_codewords(c.bg, c.z, num, seed + c.z);
      const auto llr = test::bpsk_llrs(cw, n, n, c.z, test::sigma2_for(c.snr, 0.3), seed);
      DecoderConfig cfg{c.bg, c.z};
      cfg.algo = oms ? DecoderAlgo::oms : DecoderAlgo::nms;
      cfg.quantized = true;
      cfg.early_termination = false;
      cfg.layer_order = LayerOrder::natural;
      DecoderPlan plan(cfg, Backend::cpu());
      std::vector<std::uint8_t> bits(std::size_t(num) * n);
      plan.decode_codeword(test::cview(llr), num, test::hview(bits));

      const float scale = cfg.llr_scale;
      const int limit = (1 << (cfg.llr_bits - 1)) - 1;
      const IntArith a = arith(oms, 12, int(std::lround(0.5 * scale)));
      const detail::pair::Scale sc(a);
      std::vector<detail::pair::PairEdge> edges;
      for (const Edge& ed : g.edges()) {
        edges.push_back(detail::pair::pair_edge(DecEdge{ed.col * c.z, ed.shift}, c.z));
      }
      std::vector<Word> app(n), msg(edges.size() * c.z, 0);
      for (int i = 0; i < n; ++i) {
        app[i] = pack(detail::quantize_llr(llr[i], scale, limit),
                      detail::quantize_llr(llr[std::size_t(n) + i], scale, limit));
      }
      for (int it = 0; it < cfg.max_iters; ++it) {
        for (int l = 0; l < g.base_rows(); ++l) {
          const int e0 = g.row_start()[l], deg = g.row_start()[l + 1] - e0;
          for (int r = 0; r < c.z; ++r) {
            detail::pair::row_update<true>(app.data(), msg.data() + std::size_t(e0) * c.z + r, c.z,
                                           edges.data() + e0, deg, r, c.z, sc);
          }
        }
      }
      int differ = 0, ones = 0;
      for (int w = 0; w < num; ++w) {
        for (int i = 0; i < n; ++i) {
          const int bit = lane(app[i], w) < 0 ? 1 : 0;
          differ += bit != bits[std::size_t(w) * n + i];
          ones += bit;
        }
      }
      EXPECT_EQ(differ, 0) << "BG" << int(c.bg) << " Z=" << c.z << " oms " << oms << " seed "
                           << seed;
      EXPECT_GT(ones, 0);  // random codewords: the comparison is not of all-zero words
    }
  }
}

}  // namespace
}  // namespace mimorx::ldpc

// The batched CPU layered decoders (16 codewords in the int16 or float lanes of a vector,
// src/ldpc/decoder_batch_cpu.cpp) against the one-codeword reference decoders they replace:
// every hard decision, iteration count and syndrome flag equal, integer and float paths, NMS,
// OMS and the alpha ramp, with and without early termination, batches that are full and partial,
// from float and (integer path) pre-quantised LLRs, near the waterfall (words that fail,
// iteration counts that differ).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string>
#include <tuple>
#include <vector>

#include "ldpc/decoder_batch_cpu.hpp"
#include "mimorx/ldpc/decoder.hpp"
#include "support/gpu.hpp"
#include "test_decoder_common.hpp"

namespace mimorx::ldpc {
namespace {

using test::cview;
using test::hview;

struct Out {
  std::vector<std::uint8_t> bits, packed, ok;
  std::vector<int> iters;
  bool operator==(const Out&) const = default;
};

Out decode(const DecoderConfig& cfg, const std::vector<float>& llr, int num, bool batched,
           bool int8_input) {
  detail::set_cpu_batch_enabled(batched);
  DecoderPlan plan(cfg, Backend::cpu());
  Out o;
  o.bits.assign(std::size_t(num) * plan.n(), 0xEE);
  o.packed.assign(std::size_t(num) * plan.packed_bytes(), 0xEE);
  o.ok.assign(num, 0xEE);
  o.iters.assign(num, -1);
  if (int8_input) {
    std::vector<std::int8_t> q(llr.size());
    plan.quantize_llrs(cview(llr),
                       View<std::int8_t>(q.data(), std::int64_t(q.size()), Memory::host));
    plan.decode_codeword(cview(q), num, hview(o.bits), hview(o.iters), hview(o.ok));
    plan.decode_packed(cview(q), num, hview(o.packed));
  } else {
    plan.decode_codeword(cview(llr), num, hview(o.bits), hview(o.iters), hview(o.ok));
    plan.decode_packed(cview(llr), num, hview(o.packed));
  }
  detail::set_cpu_batch_enabled(true);
  return o;
}

TEST(DecoderBatchCpu, SameAsOneCodewordDecoders) {
  const std::uint64_t seed = mimorx::test::fresh_seed();
  // (bg, z, rows, Eb/N0 dB, words): near each code's waterfall; word counts that leave a partial
  // last batch (and one batch that is mostly padding).
  for (const auto& [bg, z, rows, ebn0, num] :
       std::vector<std::tuple<BaseGraph, int, int, double, int>>{
           {BaseGraph::bg1, 80, 6, 3.0, 37},
           {BaseGraph::bg2, 52, 0, 1.0, 21},
           {BaseGraph::bg1, 384, 0, 1.0, 18},
           {BaseGraph::bg2, 7, 0, 1.5, 3},
           {BaseGraph::bg1, 13, 4, 3.0, 33}}) {
    const LiftedGraph g(bg, z);
    const int used_rows = rows ? rows : g.base_rows();
    const int n_used = (g.info_cols() + used_rows) * z;
    const double rate = double(g.info_cols()) / (g.info_cols() + used_rows - 2);
    const auto cw = test::random_codewords(bg, z, num, seed + z);
    const auto llr =
        test::bpsk_llrs(cw, g.n(), n_used, z, test::sigma2_for(ebn0, rate), seed + 7 * z);
    for (int variant = 0; variant < 6; ++variant) {  // 0-2 integer path, 3-5 float path
      for (bool et : {true, false}) {
        DecoderConfig cfg{bg, z};
        cfg.rows = rows;
        cfg.quantized = variant < 3;
        cfg.early_termination = et;
        cfg.algo = variant % 3 == 1 ? DecoderAlgo::oms : DecoderAlgo::nms;
        if (variant % 3 == 2) {
          cfg.alpha = 0.625f;
          cfg.alpha_last = 1.0f;
        }
        const std::string what = "BG" + std::to_string(int(bg)) + " Z=" + std::to_string(z) +
                                 " variant " + std::to_string(variant) + " et " +
                                 std::to_string(et);
        SCOPED_TRACE(what);
        const Out ref = decode(cfg, llr, num, false, false);
        EXPECT_TRUE(decode(cfg, llr, num, true, false) == ref);
        if (cfg.quantized) {
          EXPECT_TRUE(decode(cfg, llr, num, true, true) == ref);
        }
        int failed = 0, iters = 0;
        for (int w = 0; w < num; ++w) {
          failed += ref.ok[w] ? 0 : 1;
          iters += ref.iters[w];
        }
        std::printf("  %s: %d of %d words unsatisfied, %.1f iterations on average\n", what.c_str(),
                    failed, num, double(iters) / num);
      }
    }
  }
}

// A mixed batch: words that stop in iteration 1 (noiseless), later, and never, side by side.
TEST(DecoderBatchCpu, LanesStopIndependently) {
  const std::uint64_t seed = mimorx::test::fresh_seed();
  const BaseGraph bg = BaseGraph::bg2;
  const int z = 24, num = 16;
  const LiftedGraph g(bg, z);
  const int n_used = g.n();
  const auto cw = test::random_codewords(bg, z, num, seed);
  auto llr = test::bpsk_llrs(cw, g.n(), n_used, z, test::sigma2_for(1.0, 0.2), seed + 1);
  const auto clean = test::bpsk_llrs(cw, g.n(), n_used, z, 0.f, seed + 2);
  for (int w = 0; w < num; w += 3)
    std::copy_n(clean.begin() + std::size_t(w) * n_used, n_used,
                llr.begin() + std::size_t(w) * n_used);
  for (bool quantized : {true, false}) {
    DecoderConfig cfg{bg, z};
    cfg.quantized = quantized;
    cfg.max_iters = 20;
    const Out ref = decode(cfg, llr, num, false, false);
    const Out got = decode(cfg, llr, num, true, false);
    EXPECT_EQ(got.iters, ref.iters) << "quantized " << quantized;
    EXPECT_EQ(got.bits, ref.bits) << "quantized " << quantized;
    EXPECT_EQ(got.ok, ref.ok) << "quantized " << quantized;
    int distinct = 0;
    for (int w = 1; w < num; ++w) distinct += ref.iters[w] != ref.iters[0] ? 1 : 0;
    EXPECT_GT(distinct, 0) << "every word stopped at the same iteration: not a mixed batch";
  }
}

}  // namespace
}  // namespace mimorx::ldpc

// Decoding quality over AWGN with BPSK: layered NMS (10 iterations) against flooding BP
// (20 iterations), the quality oracle. Without rate matching: for BG1 K=8448 R=1/3 the E = 3K
// transmitted bits are exactly columns 2..67 of the mother code (the circular buffer read from
// column 2Z with k0 = 0), for BG2 K=3840 R=1/5 the E = 5K bits are columns 2..51; the 2Z
// punctured systematic columns enter the decoder as LLR 0.
//
// The brief asked for layered NMS (10 it) within 0.3 dB of BP (20 it) at FER 1e-2. Measured
// (docs/ldpc_decoder.md): in the natural layer order NMS with alpha 0.75 is ~0.6 dB away; the
// default extension-first order (LayerOrder) brings NMS with a constant alpha to ~0.35-0.4 dB
// (best alpha), NMS with the iteration-dependent alpha 0.5 -> 0.875 (DecoderConfig::alpha_last)
// and layered OMS (beta 0.5) within 0.3 dB. With the default word counts (CI, < 2 min on 2
// cores) the checks are coarse; MIMORX_QUALITY_WORDS=N runs more.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "mimorx/ldpc/decoder.hpp"
#include "support/gpu.hpp"
#include "test_decoder_common.hpp"

namespace mimorx::ldpc {
namespace {

struct FerPoint {
  int words = 0, errors = 0;
  double fer() const { return words ? double(errors) / words : 0; }
};

FerPoint fer(BaseGraph bg, int z, DecoderAlgo algo, int iters, double ebn0, double rate, int words,
             std::uint64_t seed, bool quantized = false,
             LayerOrder order = LayerOrder::extension_first, float alpha = 0.75f,
             float alpha_last = 0.f, DecoderArithmetic arith = DecoderArithmetic::automatic) {
  const LiftedGraph g(bg, z);
  DecoderConfig cfg{bg, z};
  cfg.algo = algo;
  cfg.alpha = alpha;
  cfg.alpha_last = alpha_last;
  cfg.layer_order = order;
  cfg.max_iters = iters;
  cfg.quantized = quantized;
  cfg.arithmetic = arith;
  DecoderPlan plan(cfg, Backend::cpu());
  FerPoint p;
  const int batch = 8;
  for (int w0 = 0; w0 < words; w0 += batch) {
    const auto cw = test::random_codewords(bg, z, batch, seed + w0);
    const auto llr = test::bpsk_llrs(cw, g.n(), g.n(), z, test::sigma2_for(ebn0, rate), seed + w0);
    std::vector<std::uint8_t> info(std::size_t(batch) * g.k());
    plan.decode(test::cview(llr), batch, test::hview(info));
    for (int w = 0; w < batch; ++w) {
      bool bad = false;
      for (int i = 0; i < g.k() && !bad; ++i) {
        bad = info[std::size_t(w) * g.k() + i] != cw[std::size_t(w) * g.n() + i];
      }
      p.errors += bad;
      ++p.words;
    }
  }
  return p;
}

int words_or(int dflt) {
  const char* s = std::getenv("MIMORX_QUALITY_WORDS");
  return s ? std::atoi(s) : dflt;
}

// s_bp: where BP20 has FER ~1e-2 or a little below (measured, docs/ldpc_decoder.md). Checked:
// BP20 there has at most 5 errors in 96 words (P < 0.5% if its FER is 1e-2); layered OMS
// (beta 0.5, 10 iterations, default extension-first layer order) and layered NMS with alpha
// 0.5 -> 0.875 over the 10 iterations at s_bp + 0.3 have at most 3 each (P < 2% if the FER is
// 1e-2); and at s_bp + 0.3 layered NMS (alpha 0.75, 10 iterations) in the default order has at
// most half the frame errors of the natural order plus 2 (measured: about 4x to 10x fewer).
// NMS with a constant alpha is ~0.35-0.5 dB from BP there (printed, not checked).
void compare(BaseGraph bg, int z, double rate, double s_bp, int words) {
  const std::uint64_t seed = mimorx::test::fresh_seed();
  const double s = s_bp + 0.3;
  const FerPoint bp = fer(bg, z, DecoderAlgo::bp, 20, s_bp, rate, words, seed);
  const FerPoint oms = fer(bg, z, DecoderAlgo::oms, 10, s, rate, words, seed + 1000003);
  const FerPoint nms = fer(bg, z, DecoderAlgo::nms, 10, s, rate, words, seed + 2000003);
  const FerPoint nat =
      fer(bg, z, DecoderAlgo::nms, 10, s, rate, words, seed + 2000003, false, LayerOrder::natural);
  const FerPoint ramp = fer(bg, z, DecoderAlgo::nms, 10, s, rate, words, seed + 3000017, false,
                            LayerOrder::extension_first, 0.5f, 0.875f);
  std::printf(
      "[ quality  ] BG%d Z=%d R=%.3f: BP20 @ %.2f dB FER %d/%d; at %.2f dB: OMS10 %d/%d, NMS10 "
      "alpha 0.5->0.875 %d/%d, NMS10 0.75 %d/%d (natural layer order %d/%d)\n",
      int(bg), z, rate, s_bp, bp.errors, bp.words, s, oms.errors, oms.words, ramp.errors,
      ramp.words, nms.errors, nms.words, nat.errors, nat.words);
  EXPECT_LE(bp.errors * 96, 5 * words);
  EXPECT_LE(oms.errors * 96, 3 * words);
  EXPECT_LE(ramp.errors * 96, 3 * words);
  EXPECT_LE(nms.errors, nat.errors / 2 + 2);
}

// The half-precision path (DecoderConfig::arithmetic = half, the CPU model of the f16x2 kernel,
// bit-exact with it) under the same criterion: BP20 at s_bp, half OMS (beta 0.5) and half NMS
// with alpha 0.5 -> 0.875 at s_bp + 0.3 with at most 3 frame errors in 96 words.
void compare_half(BaseGraph bg, int z, double rate, double s_bp, int words) {
  const std::uint64_t seed = mimorx::test::fresh_seed();
  const double s = s_bp + 0.3;
  const FerPoint bp = fer(bg, z, DecoderAlgo::bp, 20, s_bp, rate, words, seed);
  const FerPoint oms = fer(bg, z, DecoderAlgo::oms, 10, s, rate, words, seed + 1000003, false,
                           LayerOrder::extension_first, 0.75f, 0.f, DecoderArithmetic::half);
  const FerPoint ramp = fer(bg, z, DecoderAlgo::nms, 10, s, rate, words, seed + 3000017, false,
                            LayerOrder::extension_first, 0.5f, 0.875f, DecoderArithmetic::half);
  std::printf(
      "[ quality  ] half BG%d Z=%d R=%.3f: BP20 @ %.2f dB FER %d/%d; at %.2f dB: OMS10 %d/%d, "
      "NMS10 alpha 0.5->0.875 %d/%d\n",
      int(bg), z, rate, s_bp, bp.errors, bp.words, s, oms.errors, oms.words, ramp.errors,
      ramp.words);
  EXPECT_LE(bp.errors * 96, 5 * words);
  EXPECT_LE(oms.errors * 96, 3 * words);
  EXPECT_LE(ramp.errors * 96, 3 * words);
}

TEST(DecoderQualitySlow, HalfBg1K8448RateThirdWithinPointThreeDbOfBp) {
  compare_half(BaseGraph::bg1, 384, 1.0 / 3.0, 0.58, words_or(96));
}

TEST(DecoderQualitySlow, HalfBg2K3840RateFifthWithinPointThreeDbOfBp) {
  compare_half(BaseGraph::bg2, 384, 1.0 / 5.0, 0.43, words_or(96));
}

TEST(DecoderQualitySlow, Bg1K8448RateThirdOmsAndNmsRampWithinPointThreeDbOfBp) {
  compare(BaseGraph::bg1, 384, 1.0 / 3.0, 0.58, words_or(96));
}

TEST(DecoderQualitySlow, Bg2K3840RateFifthOmsAndNmsRampWithinPointThreeDbOfBp) {
  compare(BaseGraph::bg2, 384, 1.0 / 5.0, 0.43, words_or(96));
}

}  // namespace
}  // namespace mimorx::ldpc

namespace mimorx::ldpc {
namespace {
// The measurement behind docs/ldpc.md: FER against Eb/N0 for BP20, NMS10 float and NMS10 int8.
// Runs only with MIMORX_QUALITY_SWEEP="bg z rate from to step" (e.g. "1 384 0.3333 0.4 1.0 0.1").
TEST(DecoderQualitySlow, Sweep) {
  const char* spec = std::getenv("MIMORX_QUALITY_SWEEP");
  if (!spec) GTEST_SKIP() << "set MIMORX_QUALITY_SWEEP to run";
  int bg = 1, z = 384;
  double rate = 1.0 / 3, from = 0, to = 1, step = 0.1;
  ASSERT_EQ(std::sscanf(spec, "%d %d %lf %lf %lf %lf", &bg, &z, &rate, &from, &to, &step), 6);
  const int words = words_or(200);
  const std::uint64_t seed = mimorx::test::fresh_seed();
  for (double s = from; s <= to + 1e-9; s += step) {
    const FerPoint bp = fer(BaseGraph(bg), z, DecoderAlgo::bp, 20, s, rate, words, seed);
    const FerPoint nf = fer(BaseGraph(bg), z, DecoderAlgo::nms, 10, s, rate, words, seed);
    const FerPoint ni = fer(BaseGraph(bg), z, DecoderAlgo::nms, 10, s, rate, words, seed, true);
    std::printf("[ sweep    ] BG%d Z=%d Eb/N0 %.2f dB: BP20 %d/%d  NMS10 %d/%d  NMS10-int8 %d/%d\n",
                bg, z, s, bp.errors, bp.words, nf.errors, nf.words, ni.errors, ni.words);
    std::fflush(stdout);
  }
}

// Half against single precision on the same words: NMS10 with alpha 0.5 -> 0.875 and OMS10.
// Runs only with MIMORX_QUALITY_HALF_SWEEP="bg z rate from to step".
TEST(DecoderQualitySlow, HalfSweep) {
  const char* spec = std::getenv("MIMORX_QUALITY_HALF_SWEEP");
  if (!spec) GTEST_SKIP() << "set MIMORX_QUALITY_HALF_SWEEP to run";
  int bg = 1, z = 384;
  double rate = 1.0 / 3, from = 0, to = 1, step = 0.1;
  ASSERT_EQ(std::sscanf(spec, "%d %d %lf %lf %lf %lf", &bg, &z, &rate, &from, &to, &step), 6);
  const int words = words_or(200);
  const std::uint64_t seed = mimorx::test::fresh_seed();
  const auto order = LayerOrder::extension_first;
  for (double s = from; s <= to + 1e-9; s += step) {
    FerPoint p[2][2];
    for (int h = 0; h < 2; ++h) {
      const auto arith = h ? DecoderArithmetic::half : DecoderArithmetic::single;
      p[h][0] = fer(BaseGraph(bg), z, DecoderAlgo::nms, 10, s, rate, words, seed, false, order,
                    0.5f, 0.875f, arith);
      p[h][1] = fer(BaseGraph(bg), z, DecoderAlgo::oms, 10, s, rate, words, seed, false, order,
                    0.75f, 0.f, arith);
    }
    std::printf(
        "[ sweep    ] BG%d Z=%d Eb/N0 %.2f dB: NMS10 ramp single %d/%d half %d/%d  OMS10 single "
        "%d/%d half %d/%d\n",
        bg, z, s, p[0][0].errors, p[0][0].words, p[1][0].errors, p[1][0].words, p[0][1].errors,
        p[0][1].words, p[1][1].errors, p[1][1].words);
    std::fflush(stdout);
  }
}
}  // namespace
}  // namespace mimorx::ldpc

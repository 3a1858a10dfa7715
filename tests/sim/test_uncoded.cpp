// The uncoded link as the foundation issue states it: at 2x2 16-QAM and Es/N0 = 10 dB,
// BER(ML) <= BER(MMSE) <= BER(ZF) with a statistical margin. The three detectors see the same
// bits, channels and noise (common random numbers), so the margin is generous.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "mimorx/core/error.hpp"
#include "mimorx/sim/link.hpp"
#include "support/gpu.hpp"

namespace mimorx::sim {
namespace {

TEST(Uncoded, MlBeatsMmseBeatsZfAt2x2Qam16And10dB) {
  const auto seed = test::fresh_seed();
  UncodedConfig c;
  c.shape = {2, 2, Modulation::qam16};
  c.seed = seed;
  c.frames = 40000;
  double ber[3];
  const char* names[3] = {"ml", "mmse", "zf"};
  for (int i = 0; i < 3; ++i) {
    c.detector = names[i];
    ber[i] = run_uncoded(c, Backend::cpu(), {10.0})[0].ber();
  }
  const double bits = double(c.frames) * 2 * 4;
  const auto sigma = [&](double p) { return std::sqrt(p * (1 - p) / bits); };
  std::printf("2x2 16-QAM, 10 dB: BER ml %.4e mmse %.4e zf %.4e (%g bits)\n", ber[0], ber[1],
              ber[2], bits);
  // Four standard errors of the larger BER (an unpaired bound; the pairing only helps).
  EXPECT_LT(ber[0], ber[1] - 4 * sigma(ber[1]));
  EXPECT_LT(ber[1], ber[2] - 4 * sigma(ber[2]));
  EXPECT_GT(ber[0], 0.0);
}

// psd[:LANES] picks the CUDA kernel; every choice is exact ML, so the link counts the same bit
// errors as the exhaustive ML detector on the same frames (a near-tie flipped by rounding may
// move a few bits).
TEST(Uncoded, PsdLaneChoicesAreMlInTheLink) {
  UncodedConfig c;
  c.shape = {2, 2, Modulation::qam16};
  c.seed = test::fresh_seed();
  c.frames = 20000;
  c.detector = "ml";
  const auto ml = run_uncoded(c, Backend::cpu(), {10.0})[0];
  c.detector = "psd:3";
  try {
    run_uncoded(c, Backend::cpu(), {10.0});
    ADD_FAILURE() << "psd:3 accepted";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("lanes: 3"), std::string::npos) << e.what();
  }
  std::vector<std::pair<std::string, Backend>> runs = {{"psd", Backend::cpu()},
                                                       {"psd:1", Backend::cpu()}};
  if (cuda_available()) {
    for (const char* d : {"psd", "psd:1", "psd:8", "psd:32"})
      runs.emplace_back(d, Backend::cuda(0));
  }
  for (const auto& [d, b] : runs) {
    c.detector = d;
    const auto r = run_uncoded(c, b, {10.0})[0];
    EXPECT_NEAR(double(r.bit_errors), double(ml.bit_errors), 2.0 + 1e-3 * double(ml.bit_errors))
        << d << (b.is_cuda() ? " cuda" : " cpu");
  }
}

TEST(Uncoded, MinBitErrorsCutsAtTheSameVectorForAnyBatch) {
  UncodedConfig c;
  c.shape = {2, 2, Modulation::qam16};
  c.detector = "mmse";
  c.seed = test::fresh_seed();
  c.frames = 100000;
  c.min_bit_errors = 333;
  std::vector<PointResult> runs[2];
  for (int i = 0; i < 2; ++i) {
    c.batch = i == 0 ? 1000 : 4096;
    runs[i] = run_uncoded(c, Backend::cpu(), {5.0, 100.0});
  }
  EXPECT_EQ(runs[0][0].frames, runs[1][0].frames);
  EXPECT_EQ(runs[0][0].bit_errors, runs[1][0].bit_errors);
  EXPECT_EQ(runs[0][0].symbol_errors, runs[1][0].symbol_errors);
  EXPECT_GE(runs[0][0].bit_errors, 333);
  EXPECT_LT(runs[0][0].bit_errors, 333 + 16);  // the cut vector adds at most nt m errors
  EXPECT_EQ(runs[0][1].frames, c.frames);      // 100 dB: no errors, every frame
}

// The GPU path generates, detects and counts on the device; its counts equal the CPU's for a
// detector whose arithmetic is bit-identical on both (nway), for two batch sizes.
TEST(UncodedGpu, CountsEqualTheCpu) {
  MIMORX_REQUIRE_GPU();
  UncodedConfig c;
  c.shape = {4, 4, Modulation::qam16};
  c.detector = "nway:2";
  c.seed = test::fresh_seed();
  c.frames = 50000;
  const auto cpu = run_uncoded(c, Backend::cpu(), {4.0, 12.0});
  for (std::int64_t batch : {0, 999}) {
    c.batch = batch;
    const auto gpu = run_uncoded(c, Backend::cuda(0), {4.0, 12.0});
    for (std::size_t p = 0; p < 2; ++p) {
      EXPECT_EQ(cpu[p].bit_errors, gpu[p].bit_errors) << p << " batch " << batch;
      EXPECT_EQ(cpu[p].symbol_errors, gpu[p].symbol_errors) << p;
    }
  }
  c.min_bit_errors = 500;
  c.batch = 0;
  const auto cpu_cut = run_uncoded(c, Backend::cpu(), {4.0});
  const auto gpu_cut = run_uncoded(c, Backend::cuda(0), {4.0});
  EXPECT_EQ(cpu_cut[0].frames, gpu_cut[0].frames);
  EXPECT_EQ(cpu_cut[0].bit_errors, gpu_cut[0].bit_errors);
}

}  // namespace
}  // namespace mimorx::sim

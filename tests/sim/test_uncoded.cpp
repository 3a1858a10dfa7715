// The uncoded link as the foundation issue states it: at 2x2 16-QAM and Es/N0 = 10 dB,
// BER(ML) <= BER(MMSE) <= BER(ZF) with a statistical margin. The three detectors see the same
// bits, channels and noise (common random numbers), so the margin is generous.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>

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

}  // namespace
}  // namespace mimorx::sim

// The coded link (LDPC transport blocks over MIMO, soft detection): waterfall behaviour,
// coding gain over the uncoded link, invariance to the batch size, bad input.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <utility>

#include "mimorx/core/error.hpp"
#include "mimorx/sim/coded.hpp"
#include "mimorx/sim/link.hpp"
#include "support/gpu.hpp"

namespace mimorx::sim {
namespace {

CodedConfig small_config(std::uint64_t seed) {
  CodedConfig c;
  c.shape = {2, 2, Modulation::qpsk};
  c.detector = "mmse";
  c.seed = seed;
  c.tbs = 256;
  c.code_rate = 0.5;
  c.blocks = 40;
  return c;
}

TEST(Coded, LinkFillsWholeVectorsAtTheTargetRate) {
  for (Modulation mod : {Modulation::qpsk, Modulation::qam16, Modulation::qam64}) {
    CodedConfig c = small_config(1);
    c.shape = {3, 4, mod};
    c.tbs = 1024;
    c.blocks = 1;
    CodedLink link;
    run_coded(c, Backend::cpu(), {30.0}, {}, [&](const CodedLink& l) { link = l; });
    const int per_vector = 3 * bits_per_symbol(mod);
    EXPECT_EQ(link.g % per_vector, 0) << to_string(mod);
    EXPECT_EQ(link.vectors_per_block * per_vector, link.g);
    // CRC bits and the rounding up of G only lower the rate below the target.
    EXPECT_LE(link.rate, c.code_rate);
    EXPECT_GT(link.rate, 0.8 * c.code_rate);
  }
}

TEST(Coded, HighSnrDecodesEveryBlockLowSnrNone) {
  const auto seed = test::fresh_seed();
  const CodedConfig c = small_config(seed);
  const auto r = run_coded(c, Backend::cpu(), {-10.0, 25.0});
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[0].blocks, c.blocks);
  EXPECT_EQ(r[0].bits, c.blocks * c.tbs);
  // At -10 dB Es/N0 (rate 1/2 QPSK needs about +1 dB Eb/N0 even without fading) every block
  // fails, and the TB CRC says so; at 25 dB every block decodes.
  EXPECT_EQ(r[0].block_errors, c.blocks);
  EXPECT_EQ(r[0].crc_failures, c.blocks);
  EXPECT_GT(r[0].ber(), 0.2);
  EXPECT_EQ(r[1].block_errors, 0);
  EXPECT_EQ(r[1].bit_errors, 0);
  EXPECT_EQ(r[1].crc_failures, 0);
  EXPECT_NEAR(r[1].ebn0_db - r[1].snr_db, r[0].ebn0_db - r[0].snr_db, 1e-12);
}

TEST(Coded, BeatsTheUncodedLinkAtTheSameEsN0) {
  const auto seed = test::fresh_seed();
  CodedConfig c = small_config(seed);
  c.shape = {2, 2, Modulation::qam16};
  c.tbs = 1024;
  c.blocks = 60;
  const double snr = 10.0;
  const auto coded = run_coded(c, Backend::cpu(), {snr});
  UncodedConfig u;
  u.shape = c.shape;
  u.detector = c.detector;
  u.seed = seed;
  u.frames = 20000;
  const auto uncoded = run_uncoded(u, Backend::cpu(), {snr});
  std::printf("Es/N0 %.1f dB: uncoded BER %.3e, coded BER %.3e BLER %.3f (rate 1/2)\n", snr,
              uncoded[0].ber(), coded[0].ber(), coded[0].bler());
  // Uncoded 2x2 16-QAM MMSE at 10 dB loses several percent of its bits; rate-1/2 LDPC over
  // fast fading brings that below a tenth.
  EXPECT_GT(uncoded[0].ber(), 0.03);
  EXPECT_LT(coded[0].ber(), 0.1 * uncoded[0].ber());
}

TEST(Coded, CountsDoNotDependOnTheBatch) {
  const auto seed = test::fresh_seed();
  CodedConfig c = small_config(seed);
  c.blocks = 23;
  std::vector<CodedPointResult> runs[2];
  for (int i = 0; i < 2; ++i) {
    c.batch_blocks = i == 0 ? 1 : 7;
    runs[i] = run_coded(c, Backend::cpu(), {2.0, 4.0});
  }
  for (std::size_t p = 0; p < 2; ++p) {
    EXPECT_EQ(runs[0][p].bit_errors, runs[1][p].bit_errors) << p;
    EXPECT_EQ(runs[0][p].block_errors, runs[1][p].block_errors) << p;
    EXPECT_EQ(runs[0][p].crc_failures, runs[1][p].crc_failures) << p;
  }
}

TEST(Coded, MinBlockErrorsStopsAPointEarly) {
  CodedConfig c = small_config(3);
  c.blocks = 100;
  c.batch_blocks = 5;
  c.min_block_errors = 10;
  const auto r = run_coded(c, Backend::cpu(), {-10.0});
  EXPECT_GE(r[0].block_errors, 10);
  EXPECT_LT(r[0].blocks, 100);
}

TEST(Coded, BadInputNamesTheProblem) {
  const auto expect_error = [](CodedConfig c, const std::string& word) {
    try {
      run_coded(c, Backend::cpu(), {10.0});
      ADD_FAILURE() << "accepted; expected an error naming '" << word << "'";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(word), std::string::npos) << e.what();
    }
  };
  CodedConfig c = small_config(1);
  c.detector = "psd";  // hard decisions only
  expect_error(c, "psd");
  c = small_config(1);
  c.blocks = 0;
  expect_error(c, "blocks");
  c = small_config(1);
  c.tbs = 0;
  expect_error(c, "tbs");
  c = small_config(1);
  c.code_rate = 0.99;
  expect_error(c, "rate");
  c = small_config(1);
  c.shape = {9, 9, Modulation::qpsk};
  expect_error(c, "mimo");
  EXPECT_THROW(run_coded(small_config(1), Backend::cpu(), {std::nan("")}), InvalidArgument);
}

TEST(Coded, MinBlockErrorsCutsAtTheSameBlockForAnyBatch) {
  const auto seed = test::fresh_seed();
  CodedConfig c = small_config(seed);
  c.blocks = 200;
  c.min_block_errors = 7;
  std::vector<CodedPointResult> runs[3];
  const std::int64_t batches[3] = {1, 6, 64};
  for (int i = 0; i < 3; ++i) {
    c.batch_blocks = batches[i];
    runs[i] = run_coded(c, Backend::cpu(), {0.0});
  }
  EXPECT_EQ(runs[0][0].block_errors, 7);
  for (int i = 1; i < 3; ++i) {
    EXPECT_EQ(runs[i][0].blocks, runs[0][0].blocks) << batches[i];
    EXPECT_EQ(runs[i][0].bit_errors, runs[0][0].bit_errors) << batches[i];
    EXPECT_EQ(runs[i][0].block_errors, 7) << batches[i];
  }
}

TEST(Coded, EarlyStopEndsTheSweepAtTheFirstPointWithoutErrors) {
  CodedConfig c = small_config(5);
  c.blocks = 20;
  c.early_stop = true;
  std::vector<double> batch_points;
  CodedHooks hooks;
  int batches = 0;
  hooks.batch_done = [&](const CodedPointResult&) { ++batches; };
  const auto r = run_coded(c, Backend::cpu(), {-10.0, 30.0, 40.0, 50.0}, hooks);
  ASSERT_EQ(r.size(), 2u);  // 30 dB decodes everything: 40 and 50 dB are not simulated
  EXPECT_EQ(r[1].block_errors, 0);
  EXPECT_GE(batches, 2);
}

TEST(Coded, CountsUndetectedErrors) {
  CodedConfig c = small_config(9);
  c.blocks = 30;
  const auto r = run_coded(c, Backend::cpu(), {-10.0});
  // Every block fails; those whose TB CRC still holds are the undetected ones.
  EXPECT_EQ(r[0].block_errors, r[0].crc_failures + r[0].undetected_errors);
}

// The device-resident link gives the CPU's counts: exactly with the detectors whose CPU and
// CUDA arithmetic are bit-identical (nway, kbest, trellis), float and integer decoders, for two
// batch sizes; within a few blocks with MMSE, whose LLRs may differ in the last bits
// (docs/linear.md).
TEST(CodedGpu, CountsEqualTheCpu) {
  MIMORX_REQUIRE_GPU();
  const auto seed = test::fresh_seed();
  const std::pair<const char*, bool> runs[] = {
      {"nway:1", false}, {"nway:1", true}, {"kbest:4", true}, {"trellis", true}};
  for (const auto& [detector, int8] : runs) {
    CodedConfig c = small_config(seed);
    c.shape = {4, 4, Modulation::qam16};
    c.tbs = 3824;
    c.detector = detector;
    c.decoder.quantized = int8;
    c.blocks = 40;
    const std::vector<double> snrs = {2.0, 6.0, 8.0};
    const auto cpu = run_coded(c, Backend::cpu(), snrs);
    for (std::int64_t batch : {0, 7}) {
      c.batch_blocks = batch;
      const auto gpu = run_coded(c, Backend::cuda(0), snrs);
      for (std::size_t p = 0; p < snrs.size(); ++p) {
        EXPECT_EQ(cpu[p].bit_errors, gpu[p].bit_errors) << detector << " " << p << " int8 " << int8;
        EXPECT_EQ(cpu[p].block_errors, gpu[p].block_errors) << p;
        EXPECT_EQ(cpu[p].crc_failures, gpu[p].crc_failures) << p;
        EXPECT_EQ(cpu[p].undetected_errors, gpu[p].undetected_errors) << p;
      }
    }
  }
  CodedConfig c = small_config(seed);
  c.blocks = 100;
  const auto cpu = run_coded(c, Backend::cpu(), {-10.0, 3.0, 25.0});
  const auto gpu = run_coded(c, Backend::cuda(0), {-10.0, 3.0, 25.0});
  EXPECT_EQ(cpu[0].block_errors, gpu[0].block_errors);
  EXPECT_NEAR(double(cpu[1].block_errors), double(gpu[1].block_errors), 3.0);
  EXPECT_EQ(cpu[2].block_errors, gpu[2].block_errors);
}

// Every run builds fresh plans (tables uploaded, then used at once on the steps' own streams):
// at an SNR where nothing fails, no run may lose a batch, its first ones included.
TEST(CodedGpu, FreshPlansDeliverTheirFirstBatches) {
  MIMORX_REQUIRE_GPU();
  CodedConfig c = small_config(test::fresh_seed());
  c.shape = {4, 4, Modulation::qam16};
  c.tbs = 3824;
  c.detector = "mmse";
  c.decoder.max_iters = 10;
  c.blocks = 64;
  c.batch_blocks = 16;
  for (const auto arithmetic : {ldpc::DecoderArithmetic::single, ldpc::DecoderArithmetic::half}) {
    c.decoder.arithmetic = arithmetic;
    for (int run = 0; run < 12; ++run) {
      const auto r = run_coded(c, Backend::cuda(0), {30.0});
      ASSERT_EQ(r[0].blocks, 64);
      ASSERT_EQ(r[0].block_errors, 0) << "run " << run << " arithmetic " << int(arithmetic);
    }
  }
}

TEST(CodedGpu, MinBlockErrorsCutsAsOnTheCpu) {
  MIMORX_REQUIRE_GPU();
  CodedConfig c = small_config(test::fresh_seed());
  c.detector = "nway:1";
  c.blocks = 500;
  c.min_block_errors = 9;
  const auto cpu = run_coded(c, Backend::cpu(), {0.0});
  c.batch_blocks = 16;
  const auto gpu = run_coded(c, Backend::cuda(0), {0.0});
  EXPECT_EQ(cpu[0].blocks, gpu[0].blocks);
  EXPECT_EQ(cpu[0].bit_errors, gpu[0].bit_errors);
}

}  // namespace
}  // namespace mimorx::sim

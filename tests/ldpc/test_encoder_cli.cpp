// mimorx ldpc encode | decode through the built binary, and its one-line errors.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <random>
#include <string>

#include "support/cli.hpp"
#include "support/gpu.hpp"

namespace mimorx::test {
namespace {

std::string temp_path(const std::string& name) {
  return ::testing::TempDir() + "mimorx_ldpc_cli_" + name;
}

std::string read_file(const std::string& path) {
  std::ifstream f(path);
  return std::string((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

int line_count(const std::string& s) {
  int n = 0;
  for (char c : s) n += c == '\n';
  return n;
}

TEST(LdpcCli, EncodeDecodeRoundTripWithLightNoise) {
#ifndef MIMORX_CLI_PATH
  GTEST_SKIP() << "CLI not built";
#endif
  std::mt19937_64 rng(fresh_seed());
  const std::string info = temp_path("info.txt"), cw = temp_path("cw.txt"),
                    llr = temp_path("llr.txt"), bin = temp_path("llr.bin"),
                    dec = temp_path("dec.txt"), dec2 = temp_path("dec2.txt");
  {
    std::ofstream f(info);
    for (int w = 0; w < 3; ++w) {
      for (int i = 0; i < 300; ++i) f << char('0' + (rng() & 1));
      f << "\n";
    }
  }
  auto r = run_cli("ldpc encode --k 300 --rate 0.5 --rv 0 --backend cpu -i " + info + " -o " + cw);
  ASSERT_EQ(r.status, 0) << r.out;
  const std::string coded = read_file(cw);
  ASSERT_EQ(line_count(coded), 3);
  {
    // LLR = +-4 with 2% of the signs flipped: well inside what R = 1/2 corrects.
    std::ofstream f(llr);
    std::ofstream b(bin, std::ios::binary);
    for (char c : coded) {
      if (c == '\n') {
        f << "\n";
        continue;
      }
      float v = c == '0' ? 4.f : -4.f;
      if (rng() % 50 == 0) v = -v;
      f << v << " ";
      b.write(reinterpret_cast<const char*>(&v), 4);  // little-endian hosts (x86, ARM)
    }
  }
  r = run_cli("ldpc decode --k 300 --rate 0.5 --iters 20 --algo nms --backend cpu -i " + llr +
              " -o " + dec);
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_EQ(read_file(dec), read_file(info));
  r = run_cli("ldpc decode --k 300 --rate 0.5 --binary --algo oms --backend cpu -i " + bin +
              " -o " + dec2);
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_EQ(read_file(dec2), read_file(info));
}

TEST(LdpcCli, NoRateMatchIsTheTransmittedColumns) {
#ifndef MIMORX_CLI_PATH
  GTEST_SKIP() << "CLI not built";
#endif
  const std::string info = temp_path("info2.txt"), cw = temp_path("cw2.txt");
  {
    std::ofstream f(info);
    for (int i = 0; i < 100; ++i) f << ((i * 7) % 3 == 0 ? '1' : '0');
    f << "\n";
  }
  auto r =
      run_cli("ldpc encode --bg 2 --z 10 --no-rate-match --backend cpu -i " + info + " -o " + cw);
  ASSERT_EQ(r.status, 0) << r.out;
  const std::string coded = read_file(cw);
  ASSERT_EQ(coded.size(), 50u * 10 + 1);  // 50 Z columns: the 2 Z punctured ones excluded
  // Systematic: the info bits after the first 2 Z appear first.
  EXPECT_EQ(coded.substr(0, 80), read_file(info).substr(20, 80));
}

TEST(LdpcCli, BadInputExitsTwoWithOneLine) {
#ifndef MIMORX_CLI_PATH
  GTEST_SKIP() << "CLI not built";
#endif
  auto r = run_cli("ldpc encode --bg 1 --z 17 --backend cpu < /dev/null");
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(line_count(r.out), 1) << r.out;
  EXPECT_NE(r.out.find("z"), std::string::npos) << r.out;
  const std::string bad = temp_path("bad.txt");
  std::ofstream(bad) << "1 2 3\n";  // 3 LLRs where E = 4 are expected
  r = run_cli("ldpc decode --bg 1 --z 2 --e 4 --backend cpu -i " + bad);
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(line_count(r.out), 1) << r.out;
  r = run_cli("ldpc encode --bg 1 --z 2 --rv 4 --backend cpu < /dev/null");
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(line_count(r.out), 1) << r.out;
  r = run_cli("ldpc ber --bg 2 --z 16 --snr 2 --frames 2 --layer-order sideways --backend cpu");
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(line_count(r.out), 1) << r.out;
  EXPECT_NE(r.out.find("layer-order"), std::string::npos) << r.out;
  r = run_cli("ldpc ber --bg 2 --z 16 --snr 2 --frames 2 --alpha-last 1.5 --backend cpu");
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(line_count(r.out), 1) << r.out;
  EXPECT_NE(r.out.find("alpha-last"), std::string::npos) << r.out;
  // A valid ramp runs and is named in the header.
  r = run_cli(
      "ldpc ber --bg 2 --z 16 --snr 8 --frames 4 --alpha 0.5 --alpha-last 0.875 "
      "--backend cpu");
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("alpha=0.5->0.875"), std::string::npos) << r.out;
  // The integer decoder runs, decodes clean frames, and says so; bp has no integer form.
  r = run_cli("ldpc ber --bg 2 --z 16 --snr 8 --frames 4 --algo oms --int8 --backend cpu");
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("beta=0.5 int8"), std::string::npos) << r.out;
  r = run_cli("ldpc ber --bg 2 --z 16 --snr 8 --frames 4 --algo bp --int8 --backend cpu");
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(line_count(r.out), 1) << r.out;
  EXPECT_NE(r.out.find("bp"), std::string::npos) << r.out;
}

TEST(LdpcCli, BerPrintsRowsAndJson) {
#ifndef MIMORX_CLI_PATH
  GTEST_SKIP() << "CLI not built";
#endif
  const std::string js = temp_path("ber.json");
  auto r = run_cli(
      "ldpc ber --bg 2 --z 16 --rate 0.5 --mod qpsk --snr 1:1:3 --frames 20 --seed 3 "
      "--backend cpu --json " +
      js);
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_EQ(line_count(r.out), 5) << r.out;  // table header, description, three SNR rows
  EXPECT_NE(read_file(js).find("\"bler\""), std::string::npos);
  // Both layer orders run.
  for (const char* order : {"natural", "extension-first"}) {
    r = run_cli(std::string("ldpc ber --bg 2 --z 16 --rate 0.5 --mod qpsk --snr 6 --frames 10 ") +
                "--seed 3 --backend cpu --layer-order " + order);
    ASSERT_EQ(r.status, 0) << r.out;
    EXPECT_EQ(line_count(r.out), 3) << r.out;
  }
}

}  // namespace
}  // namespace mimorx::test

// The command line as a user meets it: exit status 2 and one line for bad input; the sim's
// JSON holds the documented fields.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>

#include "mimorx/config.hpp"
#include "support/cli.hpp"

namespace mimorx {
namespace {

int lines(const std::string& s) { return int(std::count(s.begin(), s.end(), '\n')); }

TEST(Cli, InfoWorks) {
  const auto r = test::run_cli("info");
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("backends: cpu"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(MIMORX_HAS_MPI ? "\nmpi: built" : "\nmpi: (not built)"), std::string::npos)
      << r.out;
}

TEST(Cli, BadArgumentsExitTwoWithOneLine) {
  for (const char* args : {"sim --snr 1:x", "sim --mod 8psk", "sim --mimo 9", "sim --detector nope",
                           "sim --backend gpu0", "sim --frames 0", "sim --nonsense",
                           "detect --in /no/such/file", "frobnicate"}) {
    const auto r = test::run_cli(args);
    EXPECT_EQ(r.status, 2) << args << ": " << r.out;
    EXPECT_EQ(lines(r.out), 1) << args << ": " << r.out;
    EXPECT_NE(r.out.find("error"), std::string::npos) << args << ": " << r.out;
  }
}

TEST(Cli, SimWritesDocumentedJson) {
  const std::string path = ::testing::TempDir() + "mimorx_sim_test.json";
  const auto r = test::run_cli(
      "sim --mimo 2x2 --mod qpsk --detector mmse --snr 0,10 --frames 3000 "
      "--backend cpu --seed 5 --json " +
      path);
  if (r.status == 2 && r.out.find("not available") != std::string::npos) {
    GTEST_SKIP() << "mmse detector not in this build: " << r.out;
  }
  ASSERT_EQ(r.status, 0) << r.out;
  std::ifstream f(path);
  const auto j = nlohmann::json::parse(f);
  ASSERT_EQ(j["points"].size(), 2u);
  for (const auto& p : j["points"]) {
    for (const char* key : {"snr_db", "ber", "ser", "bit_errors", "bits"}) {
      EXPECT_TRUE(p.contains(key)) << key;
    }
    EXPECT_EQ(p["bits"].get<long>(), 3000L * 2 * 2);
    EXPECT_NEAR(p["ber"].get<double>(),
                double(p["bit_errors"].get<long>()) / p["bits"].get<double>(), 1e-12);
  }
  // More SNR, fewer errors.
  EXPECT_GT(j["points"][0]["ber"].get<double>(), j["points"][1]["ber"].get<double>());
  std::remove(path.c_str());
}

TEST(Cli, CodedSimWritesDocumentedJson) {
  const std::string path = ::testing::TempDir() + "mimorx_sim_coded_test.json";
  const auto r = test::run_cli(
      "sim --ldpc --mimo 2x2 --mod qpsk --tbs 256 --rate 0.5 --snr -10,25 --blocks 12 "
      "--backend cpu --seed 5 --json " +
      path);
  ASSERT_EQ(r.status, 0) << r.out;
  std::ifstream f(path);
  const auto j = nlohmann::json::parse(f);
  EXPECT_EQ(j["config"]["coding"], "ldpc");
  EXPECT_EQ(j["config"]["detectors"], nlohmann::json({"mmse"}));  // the coded default: soft
  EXPECT_EQ(j["config"]["g"].get<long>() % 4, 0);
  ASSERT_EQ(j["points"].size(), 2u);
  for (const auto& p : j["points"]) {
    for (const char* key : {"snr_db", "ebn0_db", "ber", "bler", "bit_errors", "bits",
                            "block_errors", "blocks", "crc_failures", "undetected_errors"}) {
      EXPECT_TRUE(p.contains(key)) << key;
    }
    EXPECT_EQ(p["blocks"].get<long>(), 12L);
    EXPECT_EQ(p["bits"].get<long>(), 12L * 256);
  }
  EXPECT_EQ(j["points"][0]["bler"].get<double>(), 1.0);
  EXPECT_EQ(j["points"][1]["bler"].get<double>(), 0.0);
  std::remove(path.c_str());
  // The integer decoder: same set-up, both points as clear (far below / far above the waterfall).
  const auto i8 = test::run_cli(
      "sim --ldpc --int8 --mimo 2x2 --mod qpsk --tbs 256 --rate 0.5 --snr -10,25 --blocks 12 "
      "--backend cpu --seed 5 --json " +
      path);
  ASSERT_EQ(i8.status, 0) << i8.out;
  EXPECT_NE(i8.out.find("alpha=0.75 int8"), std::string::npos) << i8.out;
  std::ifstream f8(path);
  const auto j8 = nlohmann::json::parse(f8);
  EXPECT_EQ(j8["config"]["int8"], true);
  EXPECT_EQ(j8["points"][0]["bler"].get<double>(), 1.0);
  EXPECT_EQ(j8["points"][1]["bler"].get<double>(), 0.0);
  std::remove(path.c_str());
  // The half-precision decoder (its CPU model here).
  const auto h = test::run_cli(
      "sim --ldpc --half --mimo 2x2 --mod qpsk --tbs 256 --rate 0.5 --snr -10,25 --blocks 12 "
      "--backend cpu --seed 5 --json " +
      path);
  ASSERT_EQ(h.status, 0) << h.out;
  EXPECT_NE(h.out.find("alpha=0.75 f16x2"), std::string::npos) << h.out;
  std::ifstream fh(path);
  const auto jh = nlohmann::json::parse(fh);
  EXPECT_EQ(jh["config"]["half"], true);
  EXPECT_EQ(j8["config"]["half"], false);
  EXPECT_EQ(jh["points"][0]["bler"].get<double>(), 1.0);
  EXPECT_EQ(jh["points"][1]["bler"].get<double>(), 0.0);
  std::remove(path.c_str());
  for (const char* args : {"sim --ldpc --detector psd", "sim --ldpc --frames 10", "sim --blocks 10",
                           "sim --ldpc --tbs 0", "sim --ldpc --decoder xyz",
                           "sim --ldpc --decoder bp --int8", "sim --ldpc --decoder bp --half",
                           "sim --ldpc --half --int8", "ldpc ber --bg 2 --z 16 --half --int8"}) {
    const auto e = test::run_cli(args);
    EXPECT_EQ(e.status, 2) << args << ": " << e.out;
    EXPECT_EQ(lines(e.out), 1) << args << ": " << e.out;
  }
}

}  // namespace
}  // namespace mimorx

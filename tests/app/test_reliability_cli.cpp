// The CLI's contract under hostile input (issue 41): every bad input ends with exit status 2 and
// one line on stderr; a run whose output cannot be written fails; no silently wrong output.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "support/cli.hpp"
#include "support/gpu.hpp"

namespace mimorx {
namespace {

using nlohmann::json;

int lines(const std::string& s) { return int(std::count(s.begin(), s.end(), '\n')); }

std::string temp_file(const std::string& text) {
  char name[] = "/tmp/mimorx_rel_XXXXXX";
  const int fd = mkstemp(name);
  if (fd >= 0) close(fd);
  std::ofstream(name, std::ios::binary) << text;
  return name;
}

// Exit status 2, exactly one line on stderr, containing `expect`.
void expect_refused(const std::string& args, const std::string& expect) {
  const auto r = test::run_cli_split(args);
  EXPECT_EQ(r.status, 2) << args << ": " << r.err;
  EXPECT_EQ(lines(r.err), 1) << args << ": " << r.err;
  EXPECT_NE(r.err.find(expect), std::string::npos) << args << ": " << r.err;
}

const char* const kGoodDetect =
    R"({"nt":2,"nr":2,"modulation":"qpsk","h":[1,0,0,0,0,0,1,0],"y":[1,1,1,1],"noise_var":0.1})";

TEST(ReliabilityCli, OutOfRangeIntegersAreErrors) {
  expect_refused("sim --frames 99999999999999999999", "out of range");
  expect_refused("sim --ldpc --blocks 99999999999999999999", "out of range");
  expect_refused("sim --seed -1", "negative");
  expect_refused("sim --seed 18446744073709551616", "out of range");
  expect_refused("ldpc ber --k 100 --rate 0.5 --seed -1", "negative");
  expect_refused("sim --frames 12abc", "not an integer");
}

TEST(ReliabilityCli, CommandsAndDetectorNames) {
  expect_refused("foo", "unknown command 'foo'");
  for (const char* d : {"mmse:4", "zf:1", "ml:2", "lr-zf:3"})
    expect_refused(std::string("sim --frames 10 --detector ") + d, "takes no parameter");
  expect_refused("sim --frames 10 --detector nway:", "nothing after ':'");
  expect_refused("sim --frames 10 --backend cpu --detector sts:0", "positive number");
}

TEST(ReliabilityCli, SnrListsAreBounded) {
  std::string list = "1";
  for (int i = 0; i < 20000; ++i) list += ",1";
  expect_refused("sim --snr " + list, "more than 10000 points");
  expect_refused("ldpc ber --k 100 --rate 0.5 --snr 300", "outside -50..100");
  expect_refused("ldpc ber --k 100 --rate 0.5 --snr -300:1:0", "outside -50..100");
  // Found by the fuzzer: a count beyond long's range reached a cast (undefined behaviour).
  expect_refused("sim --snr 0:1:33333333333333333333333333333333320", "more than 10000 points");
}

TEST(ReliabilityCli, LdpcCodeBounds) {
  expect_refused("ldpc encode --k 100 --rate 1e-300", "rate");
  expect_refused("ldpc encode --k 3 --rate 0.5", "allowed 5..8448");
  expect_refused("ldpc encode --k 100 --rate 0.5 --e 0", "allowed K'");
  expect_refused("ldpc encode --k 100 --rate 0.5 --e 50", "allowed K'");
  expect_refused("ldpc encode --k 100 --rate 0.5 --e 2147483647", "allowed K'");
  expect_refused("ldpc encode --bg 2 --z 2 --no-rate-match --e 50", "--e needs rate matching");
  expect_refused("ldpc decode --bg 2 --z 2 --iters 0", "allowed 1..1000");
  expect_refused("sim --ldpc --iters 1001", "allowed 1..1000");
  // The --json path is checked before the run.
  expect_refused("ldpc ber --k 100 --rate 0.5 --frames 100000 --json /no/such/dir/x.json",
                 "cannot write");
}

TEST(ReliabilityCli, ErrorLinesAreEscapedAndShort) {
  const auto nul = temp_file(std::string("ab\0cd\n", 6));
  expect_refused("ldpc decode --bg 2 --z 2 --no-rate-match -i " + nul, "ab\\x00cd");
  const auto huge = temp_file(std::string(100000, 'x') + "\n");
  const auto r = test::run_cli_split("ldpc decode --bg 2 --z 2 --no-rate-match -i " + huge);
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(lines(r.err), 1);
  EXPECT_LT(r.err.size(), 1000u) << r.err.size();
  std::remove(nul.c_str());
  std::remove(huge.c_str());
}

TEST(ReliabilityCli, WriteFailuresFail) {
  const auto in = temp_file(kGoodDetect);
  const auto bits = temp_file("11111\n");
  const auto basis = temp_file("[[1 2][3 5]]\n");
  for (const std::string& args :
       {"detect --in " + in + " --out /dev/full", "detect --in " + in + " > /dev/full",
        "ldpc encode --k 5 --rate 0.5 -i " + bits + " -o /dev/full",
        "ldpc encode --k 5 --rate 0.5 -i " + bits + " > /dev/full",
        std::string("ldpc ber --k 40 --rate 0.5 --frames 2 --snr 1 --json /dev/full"),
        std::string("ldpc ber --k 40 --rate 0.5 --frames 2 --snr 1 > /dev/full"),
        "lll " + basis + " > /dev/full",
        std::string("sim --mimo 2x2 --mod qpsk --detector mmse --snr 10 --frames 10 > /dev/full"),
        std::string("sim --mimo 2x2 --mod qpsk --detector mmse --snr 10 --frames 10 --json "
                    "/dev/full"),
        std::string("info > /dev/full")}) {
    const auto r = test::run_cli_split(args);
    EXPECT_EQ(r.status, 2) << args << ": " << r.err;
    EXPECT_EQ(lines(r.err), 1) << args << ": " << r.err;
    EXPECT_NE(r.err.find("No space left"), std::string::npos) << args << ": " << r.err;
  }
  for (const auto& f : {in, bits, basis}) std::remove(f.c_str());
}

TEST(ReliabilityCli, DetectJsonTypeErrorsNameTheField) {
  struct Case {
    std::string json, expect;
  };
  const std::string rest = R"("h":[1,0,0,0,0,0,1,0],"y":[1,1,1,1],"noise_var":0.1)";
  const std::vector<Case> cases = {
      {R"({"nt":"2","nr":2,"modulation":"qpsk",)" + rest + "}", "nt: must be an integer"},
      {R"({"nt":null,"nr":2,"modulation":"qpsk",)" + rest + "}", "nt: must be an integer"},
      {R"({"nt":2.5,"nr":2,"modulation":"qpsk",)" + rest + "}", "nt: must be an integer"},
      {R"({"nt":1e20,"nr":2,"modulation":"qpsk",)" + rest + "}", "nt: must be an integer"},
      {R"({"nt":99999999999999999999,"nr":2,"modulation":"qpsk",)" + rest + "}", "nt: "},
      {R"({"nt":[2],"nr":2,"modulation":"qpsk",)" + rest + "}", "nt: must be an integer"},
      {R"({"nt":2,"nr":2,"modulation":16,)" + rest + "}", "modulation: must be a string"},
      {R"({"nt":2,"nr":2,"modulation":"qpsk","vectors_per_channel":"1",)" + rest + "}",
       "vectors_per_channel: must be an integer"},
      {R"({"nt":2,"nr":2,"modulation":"qpsk","vectors_per_channel":true,)" + rest + "}",
       "vectors_per_channel: must be an integer"},
      {R"({"nt":2,"nr":2,"modulation":"qpsk","h":[1,0,0,0,0,0,1,null],"y":[1,1,1,1],)"
       R"("noise_var":0.1})",
       "h: must hold numbers only"},
      {R"({"nt":2,"nr":2,"modulation":"qpsk","h":[1,0,0,0,0,0,1,1e300],"y":[1,1,1,1],)"
       R"("noise_var":0.1})",
       "beyond float32"},
      {std::string(kGoodDetect) + " garbage", "not one valid JSON document"},
      {"[1,2]", "one JSON object"},
  };
  for (const auto& c : cases) {
    const auto f = temp_file(c.json);
    expect_refused("detect --in " + f, c.expect);
    std::remove(f.c_str());
  }
}

TEST(ReliabilityCli, DirectoriesAreNamed) {
  expect_refused("detect --in /tmp", "'/tmp' is a directory");
  expect_refused("lll /tmp", "'/tmp' is a directory");
  expect_refused("ldpc encode --k 5 --rate 0.5 -i /tmp", "'/tmp' is a directory");
}

// Random 16-QAM vectors through an n x n channel, y = H x + noise of deviation noise_sd, at a
// common scale.
json detect_input(double scale, double noise_var, int nt = 4, double noise_sd = 0.01) {
  std::mt19937 g(7);
  std::normal_distribution<double> n(0.0, 1.0);
  const int nr = nt, vectors = 20;
  std::vector<double> h, y;
  const double levels[] = {-3, -1, 1, 3};
  for (int v = 0; v < vectors; ++v) {
    std::vector<double> hv(2 * nr * nt), x(2 * nt);
    for (auto& e : hv) e = n(g) / std::sqrt(2.0);
    for (auto& e : x) e = levels[g() % 4] / std::sqrt(10.0);
    for (int i = 0; i < nr; ++i) {
      double re = noise_sd * n(g), im = noise_sd * n(g);
      for (int j = 0; j < nt; ++j) {
        const double hr = hv[2 * (j * nr + i)], hi = hv[2 * (j * nr + i) + 1];
        re += hr * x[2 * j] - hi * x[2 * j + 1];
        im += hr * x[2 * j + 1] + hi * x[2 * j];
      }
      y.push_back(re * scale);
      y.push_back(im * scale);
    }
    for (double e : hv) h.push_back(e * scale);
  }
  return {{"nt", nt}, {"nr", nr}, {"modulation", "16qam"},
          {"h", h},   {"y", y},   {"noise_var", noise_var * scale * scale}};
}

json detect(const json& input, const std::string& args) {
  const auto f = temp_file(input.dump());
  const auto r = test::run_cli_split("detect --in " + f + " " + args);
  std::remove(f.c_str());
  EXPECT_EQ(r.status, 0) << args << ": " << r.err;
  return r.status == 0 ? json::parse(r.out) : json();
}

TEST(ReliabilityCli, DetectorsAreScaleInvariant) {
  const json unit = detect_input(1.0, 1e-3), tiny = detect_input(1e-16, 1e-3);
  for (const char* d : {"ml", "psd", "sts", "zf", "mmse", "nway:4", "kbest:16"}) {
    const auto a = detect(unit, std::string("--detector ") + d);
    const auto b = detect(tiny, std::string("--detector ") + d);
    EXPECT_EQ(a["bits"], b["bits"]) << d;
  }
}

TEST(ReliabilityCli, LlrsAreAlwaysFinite) {
  for (double scale : {1.0, 1e-16}) {
    json in = detect_input(scale, 1.0);
    in["noise_var"] = 1e-40;
    for (const char* d : {"ml", "sts", "sts:4", "mmse", "zf", "nway:4", "kbest:16"}) {
      const auto r = detect(in, std::string("--soft --detector ") + d);
      ASSERT_TRUE(r.contains("llrs")) << d;
      for (const auto& l : r["llrs"]) EXPECT_TRUE(l.is_number()) << d << " scale " << scale;
    }
  }
}

TEST(ReliabilityCli, ZfRefusesRankDeficientChannels) {
  const std::string rest = R"(,"y":[1,1,1,1],"noise_var":0.1})";
  for (const char* h : {"[0,0,0,0,0,0,0,0]", "[1,0,1,0,1,0,1,0]"}) {
    const auto f = temp_file(std::string(R"({"nt":2,"nr":2,"modulation":"qpsk","h":)") + h + rest);
    expect_refused("detect --detector zf --in " + f, "rank");
    EXPECT_EQ(test::run_cli_split("detect --detector mmse --in " + f).status, 0);
    std::remove(f.c_str());
  }
}

// On H = 0 the observation carries no information: mmse's LLRs are about 0, and the list
// detectors' exactly 0 (every hypothesis has the same metric; a bit whose counter-hypothesis
// left the list takes the metric of the best candidate's flip, here the best one's).
TEST(ReliabilityCli, ZeroChannelLlrs) {
  for (int nt : {2, 4}) {
    json in = detect_input(1.0, 0.1, nt);
    for (auto& h : in["h"]) h = 0.0;
    const json mmse = detect(in, "--soft --detector mmse");
    for (const auto& l : mmse["llrs"]) EXPECT_LT(std::fabs(l.get<double>()), 1e-3);
    // sts is exact max-log: every metric is equal.
    for (const char* d : {"kbest:1", "kbest:4", "kbest:16", "nway:1", "nway:2", "trellis", "sts"}) {
      const json r = detect(in, std::string("--soft --detector ") + d);
      ASSERT_EQ(r["llrs"].size(), std::size_t(20 * nt * 4)) << d;
      for (const auto& l : r["llrs"]) EXPECT_EQ(l.get<double>(), 0.0) << d << " nt " << nt;
    }
  }
}

TEST(ReliabilityCli, SimBatchIsCappedByTheFrames) {
  const auto r = test::run_cli_split(
      "sim --mimo 2x2 --mod qpsk --detector mmse --snr 10 --frames 10 --batch 999999999999");
  EXPECT_EQ(r.status, 0) << r.err;
}

// Exact ML is exponential at low SNR: psd stops a vector at its node budget, says so on stderr
// (one warning line) and in the outputs, and ends in well under a second per vector.
TEST(ReliabilityCli, PsdHasANodeBudgetAtLowSnr) {
  const auto r = test::run_cli_split(
      "sim --mimo 8x8 --mod 256qam --snr -50 --frames 4 --backend cpu --detector psd");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("4 of 4 vectors reached psd's node budget"), std::string::npos) << r.err;
  const auto d = detect(detect_input(1.0, 1e5, 8, 300.0), "--detector psd");
  EXPECT_EQ(d.value("capped_vectors", 0), 20) << d.dump();
}

// sts has the same budget (DetectorOptions::psd_node_cap), reported the same way.
TEST(ReliabilityCli, StsHasANodeBudgetAtLowSnr) {
  const auto r = test::run_cli_split(
      "sim --mimo 8x8 --mod 256qam --snr -50 --frames 2 --backend cpu --detector sts:8");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("2 of 2 vectors reached sts's node budget"), std::string::npos) << r.err;
}

// sts on CUDA through the CLI: `detect --soft` gives the CPU's bits and LLRs (the same search,
// bit for bit: docs/sts.md), clipped too; `sim` runs it uncoded and coded.
TEST(ReliabilityCliGpu, StsDetectOnCudaEqualsCpu) {
  MIMORX_REQUIRE_GPU();
  const json in = detect_input(1.0, 0.05);
  for (const char* d : {"sts", "sts:4"}) {
    const auto cpu = detect(in, std::string("--soft --backend cpu --detector ") + d);
    const auto gpu = detect(in, std::string("--soft --backend cuda --detector ") + d);
    ASSERT_TRUE(gpu.contains("llrs")) << d << ": " << gpu.dump();
    EXPECT_EQ(cpu["bits"], gpu["bits"]) << d;
    EXPECT_EQ(cpu["llrs"], gpu["llrs"]) << d;
  }
}

TEST(ReliabilityCliGpu, StsSimOnCudaUncodedAndCoded) {
  MIMORX_REQUIRE_GPU();
  const std::string path = ::testing::TempDir() + "mimorx_sts_gpu_sim.json";
  for (const std::string args :
       {"sim --mimo 4x4 --mod 16qam --snr 0,30 --frames 200 --detector sts",
        "sim --mimo 4x4 --mod 16qam --snr 0,30 --frames 200 --detector sts:4",
        "sim --ldpc --mimo 4x4 --mod 16qam --tbs 1024 --rate 0.5 --snr -10,30 --blocks 8 "
        "--detector sts"}) {
    const auto r = test::run_cli_split(args + " --backend cuda --seed 5 --json " + path);
    ASSERT_EQ(r.status, 0) << args << ": " << r.err;
    std::ifstream f(path);
    const auto j = json::parse(f);
    ASSERT_EQ(j["points"].size(), 2u) << args;
    const auto& lo = j["points"][0];
    const auto& hi = j["points"][1];
    EXPECT_GT(lo["ber"].get<double>(), hi["ber"].get<double>()) << args;
    EXPECT_LT(hi["ber"].get<double>(), 1e-3) << args << ": 30 dB";
  }
  std::remove(path.c_str());
}

// lll's exact reading of integers: LllCli.ClearErrors (tests/lattice/test_lll_cli.cpp).

// A knapsack basis (entries near 2^50): the exact --check accepts the reduced result (a
// floating-point det U comes out near 0.9998 here), and a second matrix is named "matrix 1".
// --presort: in its input order this basis is beyond the float64 reduction (docs/lll.md).
TEST(ReliabilityCli, LllCheckIsExact) {
  std::mt19937_64 g(3);
  const int n = 40;
  std::string text = "[";
  for (int i = 0; i < n; ++i) {
    text += '[';
    text += std::to_string(g() >> 14);
    for (int j = 0; j < n; ++j) text += j == i ? " 1" : " 0";
    text += "]\n";
  }
  text += "]\n[[1 2][3 5]]\n";
  const auto f = temp_file(text);
  const auto r = test::run_cli_split("lll --check --presort " + f);
  std::remove(f.c_str());
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("check: matrix 0 (40 vectors, dim 41): LLL-reduced"), std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("check: matrix 1 (2 vectors, dim 2): LLL-reduced"), std::string::npos)
      << r.err;
}

// A 40x40 q-ary basis with q = 10^14 is full rank, but (shortest vectors first, --presort)
// beyond what the float64 reduction keeps apart: refused with the precision named, never called
// "linearly dependent", nothing printed. (In its input order the reduction gets through.)
TEST(ReliabilityCli, LllRefusesWhatDoubleCannotHold) {
  std::mt19937_64 g(11);
  const std::uint64_t q = 100000000000000ULL;
  const int n = 40, k = 20;
  std::string text = "[";
  for (int i = 0; i < n; ++i) {
    text += '[';
    for (int j = 0; j < n; ++j) {
      std::uint64_t v = 0;
      if (i < k) v = j < k ? std::uint64_t(i == j) : g() % q;
      if (i >= k) v = j == i ? q : 0;
      if (j) text += ' ';
      text += std::to_string(v);
    }
    text += "]\n";
  }
  const auto f = temp_file(text + "]\n");
  const auto r = test::run_cli_split("lll --presort " + f);
  std::remove(f.c_str());
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_EQ(lines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("lost precision"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("linearly dependent"), std::string::npos) << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;
}

}  // namespace
}  // namespace mimorx

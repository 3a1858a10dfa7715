// One dialect for every error-rate curve: `sim`, `sim --ldpc` and `ldpc ber` print the same
// columns, write the same JSON schema (provenance, config, points) and take the same stop rules
// and SNR options (--snr Es/N0 or --ebn0 Eb/N0); `ldpc ber` resumes like `sim`; the channel
// options of `sim` (correlation, block fading) are recorded and checked.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "support/cli.hpp"

namespace mimorx {
namespace {

using nlohmann::json;

std::string temp_path(const std::string& name) {
  return ::testing::TempDir() + "mimorx_curves_cli_" + std::to_string(::getpid()) + "_" + name;
}

json read_json(const std::string& path) {
  std::ifstream f(path);
  return json::parse(f);
}

std::vector<std::string> keys(const json& object) {
  std::vector<std::string> out;
  for (const auto& [k, v] : object.items()) out.push_back(k);
  std::sort(out.begin(), out.end());
  return out;
}

std::string first_line(const std::string& text) { return text.substr(0, text.find('\n')); }

json run_json(const std::string& args, std::string* out = nullptr) {
  const auto path = temp_path("run.json");
  const auto r = test::run_cli_split(args + " --backend cpu --json " + path);
  EXPECT_EQ(r.status, 0) << args << "\n" << r.err;
  if (out) *out = r.out;
  auto j = r.status == 0 ? read_json(path) : json();
  std::remove(path.c_str());
  return j;
}

const std::string kSim = "sim --mimo 2x2 --mod qpsk --detector mmse --seed 3 ";
const std::string kCoded = "sim --ldpc --mimo 2x2 --mod qpsk --tbs 256 --seed 3 ";
const std::string kBer = "ldpc ber --bg 2 --z 16 --mod qpsk --seed 3 ";

void expect_refused(const std::string& args, const std::string& needle) {
  const auto r = test::run_cli_split(args);
  EXPECT_EQ(r.status, 2) << args << "\n" << r.out << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << args << "\n" << r.err;
  EXPECT_NE(r.err.find(needle), std::string::npos) << args << "\n" << r.err;
}

TEST(CurvesCli, SimCodedAndLdpcBerShareColumnsAndSchema) {
  std::string out_coded, out_ber, out_sim;
  const json coded = run_json(kCoded + "--snr 1,2 --max-blocks 20", &out_coded);
  const json ber = run_json(kBer + "--snr 1,2 --max-blocks 20", &out_ber);
  const json sim = run_json(kSim + "--snr 1,2 --max-frames 100", &out_sim);
  ASSERT_FALSE(coded.is_null());
  ASSERT_FALSE(ber.is_null());
  ASSERT_FALSE(sim.is_null());
  // The table: the same header line for the two coded commands.
  EXPECT_EQ(first_line(out_coded), first_line(out_ber));
  EXPECT_NE(first_line(out_ber).find("block_errors"), std::string::npos) << out_ber;
  // The document: provenance, config, points; the points of both coded commands have the same
  // fields, and every config field of sim --ldpc is in ldpc ber's.
  for (const json* j : {&coded, &ber, &sim}) {
    EXPECT_EQ(keys(*j), (std::vector<std::string>{"config", "mimorx", "points"}));
    for (const char* k : {"version", "commit", "command"}) EXPECT_TRUE((*j)["mimorx"].contains(k));
    EXPECT_EQ((*j)["config"]["seed"], 3);
  }
  EXPECT_EQ(ber["mimorx"]["command"].get<std::string>().rfind("mimorx ldpc ber --bg 2", 0), 0u);
  EXPECT_EQ(keys(coded["points"][0]), keys(ber["points"][0]));
  for (const auto& [k, v] : coded["config"].items()) {
    if (k == "corr_tx" || k == "corr_rx" || k == "vectors_per_channel") continue;  // sim only
    EXPECT_TRUE(ber["config"].contains(k)) << k;
  }
  EXPECT_EQ(ber["config"]["detectors"], json({"maxlog"}));
  EXPECT_EQ(ber["config"]["coding"], "ldpc");
  EXPECT_TRUE(ber["points"][0]["crc_failures"].is_null());  // a code block has no CRC
  for (const char* k : {"min_errors", "max_blocks", "early_stop"}) {
    EXPECT_TRUE(ber["config"].contains(k)) << k;
  }
  // The fields every curve has.
  for (const char* k : {"detector", "snr_db", "ebn0_db", "ber", "bit_errors", "bits", "seconds"})
    EXPECT_TRUE(sim["points"][0].contains(k)) << k;
}

TEST(CurvesCli, LdpcBerTakesTheStopRules) {
  // --min-errors cuts a point at the block that makes it; --early-stop ends the sweep.
  const json j = run_json(kBer + "--snr -6,20,25 --max-blocks 120 --min-errors 7 --early-stop");
  ASSERT_EQ(j["points"].size(), 2u) << j.dump();
  EXPECT_EQ(j["points"][0]["block_errors"], 7);
  EXPECT_LT(j["points"][0]["blocks"].get<int>(), 120);
  EXPECT_EQ(j["points"][1]["block_errors"], 0);
  EXPECT_EQ(j["points"][1]["blocks"], 120);
  EXPECT_EQ(j["config"]["min_errors"], 7);
  EXPECT_EQ(j["config"]["early_stop"], true);
  // --frames and --blocks are the same option as --max-blocks.
  EXPECT_EQ(run_json(kBer + "--snr 20 --frames 9")["points"][0]["blocks"], 9);
  EXPECT_EQ(run_json(kBer + "--snr 20 --blocks 9")["points"][0]["blocks"], 9);
}

// --batch (code blocks per call) is recorded and changes no count, the exact cut of
// --min-errors included; a negative one is refused.
TEST(CurvesCli, LdpcBerBatchDoesNotChangeTheCounts) {
  const std::string args = kBer + "--snr -6,1 --max-blocks 40 --min-errors 7 ";
  const json base = run_json(args);
  ASSERT_EQ(base["points"].size(), 2u) << base.dump();
  EXPECT_EQ(base["points"][0]["block_errors"], 7);
  EXPECT_EQ(base["config"]["batch"], 0);
  for (int batch : {1, 6, 500}) {
    json j = run_json(args + "--batch " + std::to_string(batch));
    EXPECT_EQ(j["config"]["batch"], batch);
    for (std::size_t p = 0; p < 2; ++p) {
      for (const char* k : {"blocks", "block_errors", "bit_errors", "bits"})
        EXPECT_EQ(j["points"][p][k], base["points"][p][k]) << "batch " << batch << " " << k;
    }
  }
  expect_refused(kBer + "--snr 1 --batch -2", "batch");
}

TEST(CurvesCli, LdpcBerResumesLikeSim) {
  const auto full = temp_path("full.json"), part = temp_path("part.json");
  const std::string args = kBer + "--snr -4:1:-1 --max-blocks 40 --backend cpu ";
  ASSERT_EQ(test::run_cli(args + "--json " + full).status, 0);
  auto j = read_json(full);
  j["points"] = json::array({j["points"][1], j["points"][3]});
  std::ofstream(part) << j.dump();
  ASSERT_EQ(test::run_cli(args + "--json " + part + " --resume").status, 0);
  auto a = read_json(full)["points"], b = read_json(part)["points"];
  for (auto* p : {&a, &b})
    for (auto& x : *p) x.erase("seconds");
  EXPECT_EQ(a, b);
  // Another code: refused, naming the first field that differs.
  expect_refused("ldpc ber --bg 2 --z 32 --mod qpsk --seed 3 --snr 0 --backend cpu --json " + part +
                     " --resume",
                 "tbs = 160");
  std::remove(full.c_str());
  std::remove(part.c_str());
}

TEST(CurvesCli, Ebn0IsEsn0LessTheInformationBitsPerSymbol) {
  // Uncoded QPSK: Es/N0 = Eb/N0 + 10 log10(2).
  const json u = run_json(kSim + "--ebn0 4 --max-frames 50");
  EXPECT_NEAR(u["points"][0]["snr_db"].get<double>(), 4 + 10 * std::log10(2.0), 1e-9);
  EXPECT_NEAR(u["points"][0]["ebn0_db"].get<double>(), 4, 1e-9);
  // Coded: R = tbs / G, per stream.
  const json c = run_json(kCoded + "--ebn0 2,3 --max-blocks 2");
  const double rate = c["config"]["rate"].get<double>();
  EXPECT_NEAR(c["points"][1]["snr_db"].get<double>(), 3 + 10 * std::log10(2 * rate), 1e-9);
  EXPECT_NEAR(c["points"][1]["ebn0_db"].get<double>(), 3, 1e-9);
  const json b = run_json(kBer + "--ebn0 1 --max-blocks 2");
  const double rb = b["config"]["rate"].get<double>();
  EXPECT_NEAR(b["points"][0]["snr_db"].get<double>(), 1 + 10 * std::log10(2 * rb), 1e-9);
  expect_refused(kSim + "--snr 1 --ebn0 1", "ebn0");
  expect_refused(kBer + "--snr 1 --ebn0 1", "ebn0");
  expect_refused(kBer + "--ebn0 -48", "outside");  // Es/N0 -52 dB
  expect_refused(kSim + "--snr ''", "empty");
  expect_refused(kBer + "--ebn0 ''", "empty");
}

TEST(CurvesCli, DefaultSweepsStartInErrorsAndEndPastTheWaterfall) {
  // No --snr: the sweep is picked from the code and the modulation.
  const json b = run_json("ldpc ber --bg 2 --z 64 --max-blocks 20 --min-errors 3");
  ASSERT_GE(b["points"].size(), 6u);
  EXPECT_GT(b["points"][0]["block_errors"].get<int>(), 0);
  EXPECT_EQ(b["points"].back()["block_errors"], 0) << b.dump();
  const json c = run_json(kCoded + "--max-blocks 20 --min-errors 3");
  ASSERT_GE(c["points"].size(), 6u);
  EXPECT_GT(c["points"][0]["block_errors"].get<int>(), 0);
  EXPECT_EQ(c["points"].back()["block_errors"], 0) << c.dump();
}

TEST(CurvesCli, HelpShowsTheDefaults) {
  for (const char* cmd : {"sim --help", "ldpc ber --help"}) {
    const auto r = test::run_cli(cmd);
    ASSERT_EQ(r.status, 0);
    for (const char* d : {"--min-errors INT=", "--ebn0", "--early-stop", "--seed UINT=1",
                          "--backend TEXT=auto", "[default: "})
      EXPECT_NE(r.out.find(d), std::string::npos) << cmd << ": " << d;
  }
  const auto sim = test::run_cli("sim --help").out;
  for (const char* d : {"--mimo TEXT=4x4", "--corr-tx FLOAT=0", "--vectors-per-channel INT=1",
                        "INT=2500000", "INT=1000", "--detector TEXT=psd"})
    EXPECT_NE(sim.find(d), std::string::npos) << d;
  const auto ber = test::run_cli("ldpc ber --help").out;
  for (const char* d : {"--mod TEXT=bpsk", "INT=1000", "--min-errors INT=100",
                        "--decoder,--algo TEXT=nms", "--alpha FLOAT=0.75", "no bit interleaving"})
    EXPECT_NE(ber.find(d), std::string::npos) << d;
}

TEST(CurvesCli, CodeOptionsMessageNamesWhatWasGiven) {
  const auto r = test::run_cli_split("ldpc ber --bg 2 --k 9000 --rate 0.3 --backend cpu");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("(got --bg, --k)"), std::string::npos) << r.err;
  expect_refused("ldpc ber --rate 0.3 --backend cpu", "got none of them");
}

TEST(CurvesCli, ChannelOptionsAreRecordedAndChecked) {
  const json u = run_json(kSim +
                          "--snr 10 --max-frames 400 --corr-tx 0.5 --corr-rx 0.3 "
                          "--vectors-per-channel 4");
  EXPECT_EQ(u["config"]["corr_tx"], 0.5);
  EXPECT_EQ(u["config"]["corr_rx"], 0.3);
  EXPECT_EQ(u["config"]["vectors_per_channel"], 4);
  EXPECT_NE(u["config"]["channel"].get<std::string>().find("kronecker"), std::string::npos);
  EXPECT_NE(u["config"]["channel"].get<std::string>().find("per 4 received"), std::string::npos);
  const json c = run_json(kCoded + "--snr 3 --max-blocks 5 --vectors-per-channel 1000");
  EXPECT_NE(c["config"]["channel"].get<std::string>().find("within a transport block"),
            std::string::npos);
  // The default channel keeps its description (a --resume file of it stays valid).
  EXPECT_EQ(run_json(kSim + "--snr 10 --max-frames 10")["config"]["channel"],
            "rayleigh, one realisation per received vector");
  // Correlation costs MMSE errors at the same SNR and seed.
  const json iid = run_json(kSim + "--snr 12 --max-frames 4000");
  const json corr = run_json(kSim + "--snr 12 --max-frames 4000 --corr-tx 0.9 --corr-rx 0.9");
  EXPECT_GT(corr["points"][0]["bit_errors"].get<int>(), iid["points"][0]["bit_errors"].get<int>());
  for (const std::string& sub : {kSim, kCoded}) {
    expect_refused(sub + "--snr 1 --backend cpu --corr-tx 1", "corr-tx: 1");
    expect_refused(sub + "--snr 1 --backend cpu --corr-rx -0.2", "corr-rx: -0.2");
    expect_refused(sub + "--snr 1 --backend cpu --corr-rx nan", "corr");
    expect_refused(sub + "--snr 1 --backend cpu --vectors-per-channel 0", "vectors-per-channel: 0");
    expect_refused(sub + "--snr 1 --backend cpu --vectors-per-channel x", "vectors-per-channel");
  }
}

}  // namespace
}  // namespace mimorx

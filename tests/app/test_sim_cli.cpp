// `mimorx sim` as a user drives it: lists of detectors, stop rules, the JSON and CSV files
// written point by point, --resume, the progress line (on a terminal only) and bad input.
#include <fcntl.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "support/cli.hpp"

namespace mimorx {
namespace {

using nlohmann::json;

int lines(const std::string& s) { return int(std::count(s.begin(), s.end(), '\n')); }

std::string temp_path(const std::string& name) {
  return ::testing::TempDir() + "mimorx_sim_cli_" + std::to_string(::getpid()) + "_" + name;
}

json read_json(const std::string& path) {
  std::ifstream f(path);
  return json::parse(f);
}

std::string read_text(const std::string& path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

void write_json(const std::string& path, const json& j) { std::ofstream(path) << j.dump(2); }

bool exists(const std::string& path) { return ::access(path.c_str(), F_OK) == 0; }

// The points without their timing (the only field that differs between two runs).
json counts_of(json points) {
  for (auto& p : points) p.erase("seconds");
  return points;
}

// A small coded link whose waterfall lies within 0..4 dB: fast, with errors at the first points.
const std::string kCoded =
    "sim --ldpc --mimo 2x2 --mod qpsk --tbs 256 --rate 0.5 --backend cpu --seed 3 ";
const std::string kUncoded = "sim --mimo 2x2 --mod qpsk --backend cpu --seed 3 ";

TEST(SimCli, DetectorListGivesOneCurvePerDetector) {
  const auto path = temp_path("list.json");
  const auto r =
      test::run_cli(kCoded + "--detector mmse,kbest:4 --snr 0,2 --max-blocks 20 --json " + path);
  ASSERT_EQ(r.status, 0) << r.out;
  const auto j = read_json(path);
  EXPECT_EQ(j["config"]["detectors"], json({"mmse", "kbest:4"}));
  ASSERT_EQ(j["points"].size(), 4u);
  const std::vector<std::pair<std::string, double>> expected = {
      {"mmse", 0.0}, {"mmse", 2.0}, {"kbest:4", 0.0}, {"kbest:4", 2.0}};
  for (std::size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(j["points"][i]["detector"], expected[i].first) << i;
    EXPECT_EQ(j["points"][i]["snr_db"].get<double>(), expected[i].second) << i;
  }
  // The table: one header line with a detector column, then one row per point.
  EXPECT_NE(r.out.find("detector"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\nkbest:4 "), std::string::npos) << r.out;
  std::remove(path.c_str());
}

// sts (exact max-log, CPU) decodes like ml's exhaustive max-log LLRs: the same block errors up
// to float rounding of the LLRs.
TEST(SimCli, StsDecodesLikeExhaustiveMl) {
  const auto path = temp_path("sts.json");
  const auto r =
      test::run_cli(kCoded + "--detector sts,ml --snr 0,2 --max-blocks 20 --json " + path);
  ASSERT_EQ(r.status, 0) << r.out;
  const auto j = read_json(path);
  ASSERT_EQ(j["points"].size(), 4u);
  for (std::size_t i = 0; i < 2; ++i) {
    const auto& s = j["points"][i];
    const auto& m = j["points"][i + 2];
    EXPECT_EQ(s["detector"], "sts");
    EXPECT_EQ(m["detector"], "ml");
    EXPECT_LE(std::abs(s["block_errors"].get<int>() - m["block_errors"].get<int>()), 1) << i;
  }
  std::remove(path.c_str());
}

// sts is the max-log optimum: at 4x4 16-QAM with LDPC rate 1/2 it makes no more block errors than
// nway:4 and kbest:16 on the same blocks (one run, one seed: every detector sees the same
// channels and noise), within a paired statistical margin.
TEST(SimCli, StsBlerIsAtMostNwayAndKbest) {
  const auto path = temp_path("sts_coded.json");
  const auto r = test::run_cli(
      "sim --ldpc --mimo 4x4 --mod 16qam --tbs 256 --rate 0.5 --backend cpu --seed 7 "
      "--detector sts,nway:4,kbest:16 --snr 4,5,6 --max-blocks 600 --json " +
      path);
  ASSERT_EQ(r.status, 0) << r.out;
  const auto j = read_json(path);
  ASSERT_EQ(j["points"].size(), 9u);
  int sts_total = 0, other_total = 0;
  for (std::size_t i = 0; i < 3; ++i) {
    const int sts = j["points"][i]["block_errors"].get<int>();
    ASSERT_EQ(j["points"][i]["detector"], "sts");
    sts_total += sts;
    for (const std::size_t other : {3 + i, 6 + i}) {
      const int e = j["points"][other]["block_errors"].get<int>();
      other_total += e;
      EXPECT_LE(sts, e + 3.0 * std::sqrt(double(e)) + 3.0)
          << j["points"][other]["detector"] << " at point " << i;
    }
  }
  EXPECT_GT(sts_total, 20) << "the points should see errors";
  EXPECT_LT(2 * sts_total, other_total + 10) << "sts should not lose overall";
  std::remove(path.c_str());
}

TEST(SimCli, TableIsOneHeaderLineAndOneRowPerPoint) {
  const std::string cli = test::cli_path();
  const auto out = temp_path("table.txt");
  const std::string cmd = cli + " " + kUncoded +
                          "--detector mmse,zf --snr 0,10,20 --max-frames 500 2>/dev/null >" + out;
  ASSERT_EQ(std::system(cmd.c_str()), 0);
  const auto text = read_text(out);
  EXPECT_EQ(lines(text), 1 + 6) << text;
  EXPECT_EQ(text.rfind("detector", 0), 0u) << text;
  std::remove(out.c_str());
}

TEST(SimCli, MinErrorsCutsAPointAndMaxBlocksCapsIt) {
  const auto path = temp_path("stop.json");
  // At -5 dB every block is in error: 10 block errors end the point early; at 25 dB none is,
  // so the point runs to --max-blocks.
  const auto r = test::run_cli(kCoded + "--detector mmse --snr -5,25 --max-blocks 300 " +
                               "--min-errors 10 --json " + path);
  ASSERT_EQ(r.status, 0) << r.out;
  const auto j = read_json(path);
  EXPECT_EQ(j["config"]["min_errors"], 10);
  EXPECT_EQ(j["config"]["max_blocks"], 300);
  ASSERT_EQ(j["points"].size(), 2u);
  const auto& low = j["points"][0];
  EXPECT_GE(low["block_errors"].get<long>(), 10);
  EXPECT_LT(low["blocks"].get<long>(), 300);
  EXPECT_EQ(low["bits"].get<long>(), low["blocks"].get<long>() * 256);
  EXPECT_EQ(j["points"][1]["blocks"].get<long>(), 300);
  EXPECT_EQ(j["points"][1]["block_errors"].get<long>(), 0);
  std::remove(path.c_str());
}

// --batch sets the transport blocks per call of --ldpc, is recorded, and leaves the counts as
// they are, the stop rule's exact cut included; a negative one is refused.
TEST(SimCli, CodedBatchIsAppliedAndDoesNotChangeTheCounts) {
  const auto path = temp_path("batch.json");
  json points;
  for (int batch : {0, 3, 64}) {
    const auto r =
        test::run_cli(kCoded + "--detector mmse --snr -5,2 --max-blocks 40 " +
                      "--min-errors 7 --batch " + std::to_string(batch) + " --json " + path);
    ASSERT_EQ(r.status, 0) << r.out;
    const auto j = read_json(path);
    EXPECT_EQ(j["config"]["batch"], batch);
    if (batch == 0) {
      points = counts_of(j["points"]);
      EXPECT_EQ(points[0]["block_errors"], 7);
    } else {
      EXPECT_EQ(counts_of(j["points"]), points) << "batch " << batch;
    }
  }
  std::remove(path.c_str());
  const auto bad =
      test::run_cli_split(kCoded + "--detector mmse --snr 2 --max-blocks 5 --batch -3");
  EXPECT_EQ(bad.status, 2);
  EXPECT_EQ(lines(bad.err), 1) << bad.err;
  EXPECT_NE(bad.err.find("batch"), std::string::npos) << bad.err;
}

TEST(SimCli, UncodedMinErrorsCountsBitErrors) {
  const auto path = temp_path("stop_uncoded.json");
  const auto r = test::run_cli(kUncoded + "--detector zf --snr 0 --max-frames 100000 " +
                               "--min-errors 100 --json " + path);
  ASSERT_EQ(r.status, 0) << r.out;
  const auto p = read_json(path)["points"][0];
  EXPECT_GE(p["bit_errors"].get<long>(), 100);
  EXPECT_LT(p["frames"].get<long>(), 100000);
  std::remove(path.c_str());
}

TEST(SimCli, EarlyStopEndsEachDetectorsSweep) {
  const auto path = temp_path("early.json");
  const auto r = test::run_cli(kCoded + "--detector mmse,zf --snr 0,25,30,35 --max-blocks 10 " +
                               "--early-stop --json " + path);
  ASSERT_EQ(r.status, 0) << r.out;
  const auto j = read_json(path);
  EXPECT_EQ(j["config"]["early_stop"], true);
  ASSERT_EQ(j["points"].size(), 4u);  // per detector: 0 dB (errors), 25 dB (none), stop
  for (const auto& p : j["points"]) EXPECT_LE(p["snr_db"].get<double>(), 25.0);
  std::remove(path.c_str());
}

TEST(SimCli, JsonAndCsvHoldTheDocumentedFields) {
  const auto path = temp_path("doc.json"), csv = temp_path("doc.csv");
  const auto r = test::run_cli(kCoded + "--detector mmse,zf --snr 0,1 --max-blocks 15 --json " +
                               path + " --csv " + csv);
  ASSERT_EQ(r.status, 0) << r.out;
  const auto j = read_json(path);
  for (const char* key : {"version", "commit", "command"}) EXPECT_TRUE(j["mimorx"].contains(key));
  EXPECT_NE(j["mimorx"]["command"].get<std::string>().find("--detector mmse,zf"),
            std::string::npos);
  EXPECT_FALSE(j["mimorx"]["commit"].get<std::string>().empty());
  for (const char* key : {"coding",      "mimo",       "nt",         "nr",         "mod",
                          "detectors",   "backend",    "seed",       "channel",    "snr_definition",
                          "snr_db",      "min_errors", "max_blocks", "early_stop", "tbs",
                          "target_rate", "g",          "rate",       "decoder",    "iters"}) {
    EXPECT_TRUE(j["config"].contains(key)) << key;
  }
  const std::vector<std::string> fields = {
      "detector",          "snr_db", "ebn0_db",      "ber",    "bler",
      "bit_errors",        "bits",   "block_errors", "blocks", "crc_failures",
      "undetected_errors", "seconds"};
  std::string header;
  for (const auto& f : fields) {
    if (!header.empty()) header += ',';
    header += f;
  }
  const auto text = read_text(csv);
  std::istringstream in(text);
  std::string line;
  std::getline(in, line);
  EXPECT_EQ(line, header);
  ASSERT_EQ(j["points"].size(), 4u);
  for (const auto& p : j["points"]) {
    for (const auto& f : fields) EXPECT_TRUE(p.contains(f)) << f;
    EXPECT_NEAR(p["bler"].get<double>(),
                p["block_errors"].get<double>() / p["blocks"].get<double>(), 1e-12);
    EXPECT_LE(p["undetected_errors"].get<long>(), p["block_errors"].get<long>());
    ASSERT_TRUE(std::getline(in, line));
    const std::string start = p["detector"].get<std::string>() + ",";
    EXPECT_EQ(line.rfind(start, 0), 0u) << line;
    const std::string counts =
        fmt::format(",{},{},", p["block_errors"].get<long>(), p["blocks"].get<long>());
    EXPECT_NE(line.find(counts), std::string::npos) << line;
  }
  EXPECT_FALSE(std::getline(in, line));
  EXPECT_FALSE(exists(path + ".tmp"));
  EXPECT_FALSE(exists(csv + ".tmp"));
  std::remove(path.c_str());
  std::remove(csv.c_str());
}

TEST(SimCli, UncodedAndCodedShareTheirFieldNames) {
  const auto u = temp_path("u.json"), c = temp_path("c.json");
  ASSERT_EQ(test::run_cli(kUncoded + "--detector mmse --snr 5 --max-frames 100 --json " + u).status,
            0);
  ASSERT_EQ(test::run_cli(kCoded + "--snr 5 --max-blocks 2 --json " + c).status, 0);
  const auto ju = read_json(u), jc = read_json(c);
  for (const char* key : {"coding", "mimo", "nt", "nr", "mod", "detectors", "backend", "seed",
                          "channel", "snr_definition", "snr_db", "min_errors", "early_stop"}) {
    EXPECT_TRUE(ju["config"].contains(key)) << key;
    EXPECT_TRUE(jc["config"].contains(key)) << key;
  }
  for (const char* key :
       {"detector", "snr_db", "ebn0_db", "ber", "bit_errors", "bits", "seconds"}) {
    EXPECT_TRUE(ju["points"][0].contains(key)) << key;
    EXPECT_TRUE(jc["points"][0].contains(key)) << key;
  }
  EXPECT_EQ(jc["config"]["detectors"], json({"mmse"}));  // the coded default: a soft detector
  std::remove(u.c_str());
  std::remove(c.c_str());
}

// An interrupted sweep (its file holds some of the points) resumed gives the counts of the
// uninterrupted sweep, every point in sweep order.
void expect_resume_matches(const std::string& args, const std::vector<std::size_t>& keep) {
  const auto full = temp_path("full.json"), part = temp_path("part.json");
  ASSERT_EQ(test::run_cli(args + " --json " + full).status, 0);
  auto j = read_json(full);
  json kept = json::array();
  for (auto i : keep) kept.push_back(j["points"][i]);
  j["points"] = kept;
  write_json(part, j);
  const auto r = test::run_cli(args + " --json " + part + " --resume");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_EQ(counts_of(read_json(part)["points"]), counts_of(read_json(full)["points"])) << args;
  // The kept points were not simulated again: their timing is the file's.
  for (std::size_t k = 0; k < keep.size(); ++k) {
    EXPECT_EQ(read_json(part)["points"][keep[k]]["seconds"], kept[k]["seconds"]);
  }
  std::remove(full.c_str());
  std::remove(part.c_str());
}

TEST(SimCli, ResumeComputesOnlyTheMissingPoints) {
  expect_resume_matches(kCoded + "--detector mmse,kbest:4 --snr 0:1:3 --max-blocks 20", {0, 1});
  expect_resume_matches(kCoded + "--detector mmse,kbest:4 --snr 0:1:3 --max-blocks 20",
                        {0, 2, 4, 5});
  expect_resume_matches(kCoded + "--detector mmse,zf --snr 0,25,30 --max-blocks 10 --early-stop",
                        {0});
  expect_resume_matches(kUncoded + "--detector mmse,zf --snr 0:5:15 --max-frames 500", {0, 1, 2});
}

TEST(SimCli, ResumeWithoutAFileStartsFromScratch) {
  const auto path = temp_path("fresh.json");
  std::remove(path.c_str());
  const auto r = test::run_cli(kCoded + "--snr 0 --max-blocks 5 --resume --json " + path);
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_EQ(read_json(path)["points"].size(), 1u);
  std::remove(path.c_str());
}

// A file written before a flag existed resumes as if the flag were off, and only then.
TEST(SimCli, ResumeOfAFileThatPredatesAFlag) {
  const auto path = temp_path("predates.json");
  const std::string base =
      "sim --ldpc --mimo 2x2 --mod qpsk --backend cpu --max-blocks 5 --tbs 256 --seed 3 ";
  ASSERT_EQ(test::run_cli(base + "--snr 0 --json " + path).status, 0);
  json j = read_json(path);
  ASSERT_TRUE(j["config"].contains("half"));
  j["config"].erase("half");
  write_json(path, j);
  const auto on = test::run_cli(base + "--snr 0,1 --half --resume --json " + path);
  EXPECT_EQ(on.status, 2) << on.out;
  EXPECT_NE(on.out.find("half = nothing"), std::string::npos) << on.out;
  const auto off = test::run_cli(base + "--snr 0,1 --resume --json " + path);
  ASSERT_EQ(off.status, 0) << off.out;
  EXPECT_EQ(read_json(path)["points"].size(), 2u);
  std::remove(path.c_str());
}

TEST(SimCli, ResumeOfAnotherConfigurationIsRefused) {
  const auto path = temp_path("other.json");
  const std::string base = "sim --ldpc --mimo 2x2 --mod qpsk --backend cpu --max-blocks 5 ";
  ASSERT_EQ(test::run_cli(base + "--snr 0 --tbs 256 --seed 3 --json " + path).status, 0);
  const auto before = read_text(path);
  for (const auto& [args, field] : std::vector<std::pair<std::string, std::string>>{
           {"--tbs 512 --seed 3", "tbs"},
           {"--tbs 256 --seed 4", "seed"},
           {"--tbs 256 --seed 3 --int8", "int8"},
           {"--tbs 256 --seed 3 --half", "half"},
           {"--tbs 256 --seed 3 --decoder oms", "decoder"},
           {"--tbs 256 --seed 3 --iters 5", "iters"}}) {
    // Another SNR list, stop rule and backend are allowed; the field named is not.
    const auto r =
        test::run_cli(base + "--snr 0,1 --min-errors 3 --resume --json " + path + " " + args);
    EXPECT_EQ(r.status, 2) << r.out;
    EXPECT_EQ(lines(r.out), 1) << r.out;
    EXPECT_NE(r.out.find(field + " = "), std::string::npos) << r.out;
    EXPECT_EQ(read_text(path), before);  // the file is left as it was
  }
  // The uncoded mode is another configuration too.
  const auto u = test::run_cli(
      "sim --mimo 2x2 --mod qpsk --backend cpu --seed 3 --snr 0 "
      "--max-frames 5 --resume --json " +
      path);
  EXPECT_EQ(u.status, 2) << u.out;
  EXPECT_NE(u.out.find("coding"), std::string::npos) << u.out;
  // Not a file of mimorx sim.
  write_json(path, json{{"a", 1}});
  const auto bad = test::run_cli(base + "--snr 0 --resume --json " + path);
  EXPECT_EQ(bad.status, 2) << bad.out;
  EXPECT_EQ(lines(bad.out), 1) << bad.out;
  std::remove(path.c_str());
}

// Runs the CLI with stderr on a pseudo-terminal (stdout to /dev/null) and returns what the
// terminal received.
std::string run_on_terminal(const std::string& args) {
  const int master = ::posix_openpt(O_RDWR | O_NOCTTY);
  if (master < 0 || ::grantpt(master) != 0 || ::unlockpt(master) != 0) return "no pty";
  const std::string slave_name = ::ptsname(master);
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::setsid();
    const int slave = ::open(slave_name.c_str(), O_RDWR);
    const int null = ::open("/dev/null", O_WRONLY);
    if (slave < 0 || null < 0) ::_exit(127);
    ::dup2(null, STDOUT_FILENO);
    ::dup2(slave, STDERR_FILENO);
    const std::string cmd = "OMP_NUM_THREADS=1 " + test::cli_path() + " " + args;
    ::execl("/bin/sh", "sh", "-c", cmd.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  std::string out;
  char buf[4096];
  while (true) {
    const ssize_t n = ::read(master, buf, sizeof buf);
    if (n > 0) {
      out.append(buf, std::size_t(n));
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else {
      break;  // EIO once the child has closed the terminal
    }
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  ::close(master);
  return out;
}

TEST(SimCli, ProgressLineOnlyOnATerminal) {
  // A point of about a second on one thread (more under a sanitizer), whatever the host's core
  // count: several progress updates, which come at most every 200 ms.
  const std::string args =
      "sim --ldpc --int8 --mimo 4x4 --mod 16qam --tbs 1024 --detector mmse --snr 6 "
      "--max-blocks 6000 --backend cpu";
  const auto term = run_on_terminal(args);
  EXPECT_NE(term.find("\rmmse 6.00 dB: "), std::string::npos) << term;
  EXPECT_NE(term.find("/6000 blocks"), std::string::npos) << term;
  EXPECT_NE(term.find("Mbit/s"), std::string::npos) << term;
  EXPECT_NE(term.find(" left"), std::string::npos) << term;
  EXPECT_NE(term.find("\r\033[K"), std::string::npos) << term;  // erased when the point ends
  const auto piped = test::run_cli(args);
  ASSERT_EQ(piped.status, 0) << piped.out;
  EXPECT_EQ(piped.out.find('\r'), std::string::npos) << piped.out;
  EXPECT_EQ(piped.out.find("Mbit/s"), std::string::npos) << piped.out;
}

TEST(SimCli, WriteFailureExitsTwoNamingTheFile) {
  for (const std::string opt : {"--json", "--csv"}) {
    const auto r = test::run_cli(kCoded + "--snr 0 --max-blocks 2 " + opt + " /dev/full");
    EXPECT_EQ(r.status, 2) << opt << ": " << r.out;
    EXPECT_EQ(lines(r.out), 1) << opt << ": " << r.out;
    EXPECT_NE(r.out.find("/dev/full"), std::string::npos) << r.out;
  }
  const auto r = test::run_cli(kCoded + "--snr 0 --max-blocks 2 --json /no/such/dir/x.json");
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_EQ(lines(r.out), 1) << r.out;
}

// Out-of-range values are refused under the option's own name, in every mode and in ldpc ber,
// not under the library field that holds them.
TEST(SimCli, BadNumbersAreNamedAsTyped) {
  const std::pair<std::string, std::string> cases[] = {
      {"sim --ldpc --max-blocks 0", "max-blocks: 0"},
      {"sim --max-frames 0", "max-frames: 0"},
      {"sim --nr --slots 0", "slots: 0"},
      {"sim --ldpc --iters 0", "iters: 0"},
      {"sim --vectors-per-channel 0", "vectors-per-channel: 0"},
      {"sim --min-errors -1", "min-errors: "},
      {"sim --ldpc --min-errors -1", "min-errors: "},
      {"sim --nr --min-errors -1", "min-errors: "},
      {"sim --batch -1", "batch: -1"},
      {"sim --ldpc --batch -1", "batch: -1"},
      {"sim --nr --batch -1", "batch: -1"},
      {"sim --corr-tx 1", "corr-tx: 1"},
      {"sim --corr-rx -0.5", "corr-rx: -0.5"},
      {"sim --ldpc --alpha-last 5", "alpha-last: 5"},
      {"sim --ldpc --rate 1.5", "rate: 1.5"},
      {"sim --nr --prb 0", "prb: 0"},
      {"sim --nr --nrx 0", "nrx: 0"},
      {"sim --nr --dmrs-add-pos 5", "dmrs-add-pos: 5"},
      {"sim --nr --mcs-table foo", "mcs-table: 'foo'"},
      {"ldpc ber --bg 2 --z 16 --alpha-last 5", "alpha-last: 5"}};
  for (const auto& [args, needle] : cases) {
    const auto r = test::run_cli_split(args + " --backend cpu");
    EXPECT_EQ(r.status, 2) << args << ": " << r.out << r.err;
    EXPECT_EQ(lines(r.err), 1) << args << ": " << r.err;
    EXPECT_NE(r.err.find("error: " + needle), std::string::npos) << args << ": " << r.err;
  }
}

TEST(SimCli, BadInputExitsTwoWithOneLine) {
  const auto path = temp_path("same");
  for (const std::string& args : std::vector<std::string>{
           "sim --detector mmse,,zf", "sim --detector mmse,mmse", "sim --detector mmse,nope",
           "sim --ldpc --detector mmse,psd", "sim --resume",
           "sim --json " + path + " --csv " + path, "sim --ldpc --max-frames 5",
           "sim --max-blocks 5", "sim --min-errors -1", "sim --ldpc --max-blocks 0"}) {
    const auto r = test::run_cli(args);
    EXPECT_EQ(r.status, 2) << args << ": " << r.out;
    EXPECT_EQ(lines(r.out), 1) << args << ": " << r.out;
    EXPECT_NE(r.out.find("error"), std::string::npos) << args << ": " << r.out;
  }
  EXPECT_FALSE(exists(path));
}

}  // namespace
}  // namespace mimorx

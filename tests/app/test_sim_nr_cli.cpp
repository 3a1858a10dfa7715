// `mimorx sim --nr` as a user drives it: the JSON's config (tbs, mcs, prb, ...) and points
// (throughput, bler_tx, residual_bler), the CSV, --resume, and bad options (one stderr line,
// exit 2).
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "mimorx/nr/slot.hpp"
#include "mimorx/nr/tbs.hpp"
#include "support/cli.hpp"
#include "support/gpu.hpp"

namespace mimorx {
namespace {

using nlohmann::json;

std::string temp_path(const std::string& name) {
  return ::testing::TempDir() + "mimorx_sim_nr_cli_" + std::to_string(::getpid()) + "_" + name;
}

json read_json(const std::string& path) {
  std::ifstream f(path);
  return json::parse(f);
}

const std::string kNr =
    "sim --nr --prb 4 --layers 2 --nrx 2 --mcs 9 --backend cpu --seed 5 --slots 12 ";

TEST(SimNrCli, EstimatedCsiRunsAndIsRecorded) {
  for (const char* csi : {"ls-linear", "ls-lmmse"}) {
    const auto path = temp_path(std::string("csi_") + csi + ".json");
    const auto r = test::run_cli(kNr + "--channel tdl-c:300:100:low --csi " + csi +
                                 " --snr -10,40 --json " + path);
    ASSERT_EQ(r.status, 0) << r.out;
    const auto j = read_json(path);
    EXPECT_EQ(j["config"]["csi"], csi);
    EXPECT_EQ(j["points"][0]["residual_bler"], 1.0) << csi;
    EXPECT_EQ(j["points"][1]["residual_bler"], 0.0) << csi;
    std::remove(path.c_str());
  }
}

TEST(SimNrCli, JsonHoldsTheLinkAndThePointsCounts) {
  const auto path = temp_path("nr.json");
  const auto csv = temp_path("nr.csv");
  const auto r = test::run_cli(kNr + "--harq 2 --snr -10,40 --json " + path + " --csv " + csv);
  ASSERT_EQ(r.status, 0) << r.out;
  const auto j = read_json(path);
  const auto& c = j["config"];
  EXPECT_EQ(c["coding"], "nr");
  EXPECT_EQ(c["mcs"], 9);
  EXPECT_EQ(c["mcs_table"], 1);
  EXPECT_EQ(c["prb"], 4);
  EXPECT_EQ(c["layers"], 2);
  EXPECT_EQ(c["harq"], 2);
  EXPECT_EQ(c["csi"], "perfect");
  EXPECT_EQ(c["max_slots"], 12);
  nr::SlotConfig sc;
  sc.n_prb = 4;
  sc.layers = 2;
  const nr::SlotPlan plan(sc);
  EXPECT_EQ(c["tbs"], nr::transport_block_size(plan.tbs_input(nr::McsTable::qam64, 9)));
  EXPECT_EQ(c["g"], plan.data_re_count() * 2 * 2);
  ASSERT_EQ(j["points"].size(), 2u);
  const auto& low = j["points"][0];
  const auto& high = j["points"][1];
  // -10 dB: nothing delivered, every block takes both transmissions; 40 dB: every block on its
  // first.
  EXPECT_EQ(low["throughput"], 0.0);
  EXPECT_EQ(low["bler_tx"], json({1.0, 1.0}));
  EXPECT_EQ(low["residual_bler"], 1.0);
  EXPECT_EQ(low["slots"], 12);
  EXPECT_EQ(low["blocks"], 6);
  EXPECT_EQ(high["bler_tx"], json({0.0, 0.0}));
  EXPECT_EQ(high["throughput"].get<double>(), c["tbs"].get<double>());
  EXPECT_EQ(high["throughput_fraction"], 1.0);
  EXPECT_EQ(high["blocks"], 12);
  // The CSV keeps the list in one quoted field.
  std::ifstream f(csv);
  std::stringstream text;
  text << f.rdbuf();
  EXPECT_NE(text.str().find("\"[1.0,1.0]\""), std::string::npos) << text.str();
  // --resume keeps both points: nothing to simulate, the same document.
  const auto again = test::run_cli(kNr + "--harq 2 --snr -10,40 --resume --json " + path);
  ASSERT_EQ(again.status, 0) << again.out;
  EXPECT_EQ(read_json(path)["points"], j["points"]);
  std::remove(path.c_str());
  std::remove(csv.c_str());
}

TEST(SimNrCli, BadOptionsExitTwoWithOneLine) {
  for (const std::string bad : {"--mcs 29",
                                "--mcs-table 4",
                                "--prb 0",
                                "--prb 274",
                                "--layers 5",
                                "--scs 60",
                                "--dmrs-type 3",
                                "--dmrs-add-pos 4",
                                "--harq 0",
                                "--harq 5",
                                "--channel tdl-z:30:0:low",
                                "--channel rayleigh",
                                "--nrx 1",
                                "--slots 0",
                                "--csi estimated",
                                "--backend cuda:x",
                                "--mimo 4x4",
                                "--tbs 1000",
                                "--ldpc",
                                "--detector psd",
                                "--snr 5 --ebn0 3"}) {
    const auto r = test::run_cli_split(kNr + bad + " --snr 5");
    EXPECT_EQ(r.status, 2) << bad << "\n" << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << bad << "\n" << r.err;
  }
  // The NR options need --nr.
  const auto r = test::run_cli_split("sim --mimo 2x2 --mcs 5 --snr 5 --max-frames 10");
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_NE(r.err.find("--nr"), std::string::npos) << r.err;
}

// The same sweep on both backends: every point's counts equal (only the timing differs), for a
// flat and a TDL channel with estimated CSI and HARQ, several detectors.
TEST(SimNrCliGpu, CudaPointsEqualCpuPoints) {
  MIMORX_REQUIRE_GPU();
  for (const std::string& extra : {std::string("--harq 3 --detector mmse,nway:2"),
                                   std::string("--channel tdl-c:300:100:low --csi ls-lmmse "
                                               "--harq 2 --detector mmse")}) {
    json got[2];
    const char* backends[2] = {"cpu", "cuda"};
    for (int b = 0; b < 2; ++b) {
      const auto path = temp_path(std::string("backend_") + backends[b] + ".json");
      std::string cmd = kNr + extra + " --snr 0,4,8 --slots 30 --json " + path;
      cmd.replace(cmd.find("--backend cpu"), 13, std::string("--backend ") + backends[b]);
      const auto r = test::run_cli(cmd);
      ASSERT_EQ(r.status, 0) << cmd << "\n" << r.out;
      got[b] = read_json(path);
      std::remove(path.c_str());
    }
    ASSERT_EQ(got[0]["points"].size(), got[1]["points"].size()) << extra;
    ASSERT_FALSE(got[0]["points"].empty());
    for (std::size_t i = 0; i < got[0]["points"].size(); ++i) {
      json a = got[0]["points"][i], g = got[1]["points"][i];
      a.erase("seconds");
      g.erase("seconds");
      EXPECT_EQ(a, g) << extra << " point " << i;
    }
    EXPECT_EQ(got[1]["config"]["backend"], "cuda:0");
  }
}

}  // namespace
}  // namespace mimorx

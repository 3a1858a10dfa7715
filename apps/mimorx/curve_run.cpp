#include "curve_run.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "command.hpp"
#include "commit.hpp"
#include "io.hpp"
#include "mimorx/channel/snr.hpp"
#include "mimorx/config.hpp"
#include "mimorx/core/error.hpp"
#include "mimorx/sim/sweep.hpp"
#include "sim/point_json.hpp"
#include "sim_ranks.hpp"
#include "sim_sweep.hpp"

namespace mimorx::cli {

const char* const kSnrDefinition =
    "Es/N0, Es=1 per transmit antenna, N0 per receive antenna; Eb/N0 per information bit";

namespace {

// The stdout table: one header line, then one row per point as the document lists them.
class Table {
 public:
  Table(std::vector<Column> columns, const std::vector<std::string>& detectors)
      : columns_(std::move(columns)) {
    for (const auto& d : detectors) detector_width_ = std::max(detector_width_, int(d.size()));
  }
  void header() const {
    std::string line = fmt::format("{:<{}}", "detector", detector_width_);
    for (const auto& c : columns_) line += fmt::format(" {:>{}}", c.key, c.width);
    std::puts(line.c_str());
    flush_stdout();  // a stdout that cannot be written fails before the run
  }
  // Prints the rows not printed yet up to points[last] (all of them when last is npos).
  void print_through(const ojson& points, std::size_t last = std::string::npos) {
    for (; printed_ < points.size() && printed_ <= last; ++printed_) row(points[printed_]);
    flush_stdout();
  }

 private:
  void row(const ojson& p) const {
    std::string line = fmt::format("{:<{}}", p.value("detector", "-"), detector_width_);
    for (const auto& c : columns_) {
      line += ' ';
      line += cell(p, c);
    }
    std::puts(line.c_str());
  }
  static std::string cell(const ojson& p, const Column& c) {
    const auto it = p.find(c.key);
    if (it == p.end() || !it->is_number()) return fmt::format("{:>{}}", "-", c.width);
    if (c.format == 'd') return fmt::format("{:>{}d}", it->get<std::int64_t>(), c.width);
    if (c.format == 'e') return fmt::format("{:>{}.4e}", it->get<double>(), c.width);
    return fmt::format("{:>{}.2f}", it->get<double>(), c.width);
  }
  std::vector<Column> columns_;
  int detector_width_ = 8;
  std::size_t printed_ = 0;
};

std::vector<double> pick(const std::vector<double>& snrs, const std::vector<std::size_t>& idx) {
  std::vector<double> out;
  for (auto i : idx) out.push_back(snrs[i]);
  return out;
}

// The points of the --json file of an earlier run of the same configuration (null: none yet,
// the run starts from scratch).
ojson kept_points(const std::string& path, const CurveMode& mode, const ojson& config) {
  const ojson file = read_resume_file(path);
  if (file.is_null()) return nullptr;
  check_same_config(file["config"], config, mode.identity, path);
  return file["points"];
}

// `value` of rank 0 on every rank.
void share_from_rank0(sim::Communicator* comm, ojson& value) {
  if (comm == nullptr || comm->size() == 1) return;
  std::string text = value.dump();
  comm->broadcast(text, 0);
  value = ojson::parse(text);
}

}  // namespace

ojson provenance() {
  return {{"version", MIMORX_VERSION}, {"commit", MIMORX_GIT_COMMIT}, {"command", command_line()}};
}

ojson curve_config(const std::string& coding, int nt, int nr, const std::string& mod,
                   const std::string& backend, std::uint64_t seed, const std::string& channel,
                   const std::vector<double>& snrs, std::int64_t min_errors,
                   const std::string& units_key, std::int64_t max_units, bool early_stop) {
  return {{"coding", coding},
          {"mimo", fmt::format("{}x{}", nt, nr)},
          {"nt", nt},
          {"nr", nr},
          {"mod", mod},
          {"detectors", ojson::array()},
          {"backend", backend},
          {"seed", seed},
          {"channel", channel},
          {"snr_definition", kSnrDefinition},
          {"snr_db", snrs},
          {"min_errors", min_errors},
          {units_key, max_units},
          {"early_stop", early_stop}};
}

std::vector<std::string> coded_fields() {
  const ojson point = sim::coded_point_json("", {}, true);
  std::vector<std::string> out;
  for (const auto& [k, v] : point.items()) out.push_back(k);
  return out;
}

const std::vector<Column>& coded_table() {
  static const std::vector<Column> table = {
      {"snr_db", 'f', 8},        {"ebn0_db", 'f', 8},     {"ber", 'e', 12},
      {"bler", 'e', 12},         {"bit_errors", 'd', 12}, {"bits", 'd', 12},
      {"block_errors", 'd', 12}, {"blocks", 'd', 9},      {"seconds", 'f', 8}};
  return table;
}

std::vector<double> esn0_points(const std::string& snr, const std::string& ebn0,
                                int bits_per_symbol, double code_rate,
                                const std::string& fallback) {
  require(snr.empty() || ebn0.empty(), "ebn0",
          "give either --snr (Es/N0) or --ebn0 (Eb/N0), not both");
  if (ebn0.empty()) return sim::parse_snr_list(snr.empty() ? fallback : snr);
  auto points = sim::parse_snr_list(ebn0);
  const double offset = channel::esn0_db_from_ebn0_db(0.0, bits_per_symbol, code_rate);
  for (double& p : points) {
    p = channel::esn0_db_from_ebn0_db(p, bits_per_symbol, code_rate);
    require(p >= sim::kMinSnrDb && p <= sim::kMaxSnrDb, "ebn0",
            fmt::format("Eb/N0 {:.2f} dB is Es/N0 {:.2f} dB here (+{:.2f} dB for {:.4g} "
                        "information bits per symbol), outside {}..{} dB",
                        p - offset, p, offset, bits_per_symbol * code_rate, sim::kMinSnrDb,
                        sim::kMaxSnrDb));
  }
  return points;
}

std::string check_snr_text(const std::string& text) {
  return text.empty() ? "empty; give a list like 8,14 or a range like 0:2:20" : "";
}

void check_curve_files(const CurveFiles& f) {
  require(!f.resume || !f.json.empty(), "resume",
          "needs --json FILE: the file of the run to continue");
  require(f.json.empty() || f.json != f.csv, "csv",
          "'" + f.csv + "' is also the --json file; give two different files");
}

void run_curves(const CurveFiles& f, const CurveMode& mode,
                const std::vector<std::string>& detectors, const std::vector<double>& snrs) {
  sim::Communicator* comm = mode.comm.get();
  const bool writer = writes_outputs(comm);
  ojson config = mode.config;
  ojson kept = nullptr;
  // Everything is validated before any output; rank 0 alone reads the --resume file and tells
  // the others which points it has.
  run_agreed(comm, [&] {
    for (const auto& d : detectors) config.update(mode.validate(d));
    if (f.resume && writer) kept = kept_points(f.json, mode, config);
  });
  share_from_rank0(comm, kept);
  SweepPoints points(detectors, snrs);
  if (!kept.is_null()) points.import(kept);
  config["detectors"] = points.all_detectors();
  if (comm != nullptr && comm->size() > 1) config["ranks"] = comm->size();
  ojson doc = {{"mimorx", provenance()}, {"config", config}, {"points", points.ordered()}};
  const ResultFiles files(f.json, f.csv, mode.fields);
  Table table(mode.table, config["detectors"].get<std::vector<std::string>>());
  run_agreed(comm, [&] {
    if (!writer) return;
    files.write(doc);  // a path that cannot be written fails before any simulation
    table.header();    // first: a stdout that cannot be written fails with one line on stderr
    std::fprintf(stderr, "%s\n", mode.describe(config).c_str());
  });
  ProgressLine progress(writer && stderr_is_terminal(), mode.units, mode.rule);
  for (std::size_t d = 0; d < detectors.size(); ++d) {
    const auto todo = points.missing(d, mode.error_key, mode.early_stop);
    if (todo.empty()) continue;
    std::size_t k = 0;  // the point of `todo` running now
    SweepHooks hooks;
    hooks.ready = [&] { progress.start(detectors[d], snrs[todo[0]]); };
    hooks.batch = [&](const PointProgress& p) { progress.update(p); };
    hooks.point = [&](ojson p) {
      progress.clear();
      if (writer && mode.after_point) mode.after_point(p);
      points.put(d, todo[k], std::move(p));
      if (writer) {
        doc["points"] = points.ordered();
        files.write(doc);
        table.print_through(doc["points"], points.position(d, todo[k]));
      }
      if (++k < todo.size()) progress.start(detectors[d], snrs[todo[k]]);
    };
    mode.run(detectors[d], pick(snrs, todo), hooks);
  }
  if (writer) table.print_through(doc["points"]);
}

}  // namespace mimorx::cli

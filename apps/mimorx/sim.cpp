// mimorx sim: link-level Monte-Carlo simulation: uncoded BER/SER per SNR point, or (--ldpc) 5G NR
// LDPC transport blocks with soft detection, BER/BLER per SNR point; one curve per detector of
// the --detector list, stop rules per point, results written point by point, --resume.
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <functional>
#include <memory>
#include <set>

#include "command.hpp"
#include "commit.hpp"
#include "decoder_params.hpp"
#include "io.hpp"
#include "mimorx/config.hpp"
#include "mimorx/core/error.hpp"
#include "mimorx/sim/coded.hpp"
#include "mimorx/sim/detector.hpp"
#include "mimorx/sim/link.hpp"
#include "mimorx/sim/sweep.hpp"
#include "sim_files.hpp"
#include "sim_progress.hpp"
#include "sim_sweep.hpp"

namespace {

using mimorx::cli::ojson;

struct SimOptions {
  // The default study: exact ML (sphere detector) for 4x4 16-QAM, down to BER ~1e-5, about a
  // minute on two CPU cores and a few seconds on a GPU.
  std::string mimo = "4x4";
  std::string mod = "16qam";
  std::string detector = "psd";
  std::string snr = "0:2:20";
  std::int64_t frames = 2500000;
  std::int64_t batch = 0;
  std::int64_t min_errors = 0;
  bool early_stop = false;
  std::string backend = "auto";
  std::uint64_t seed = 1;
  std::string json, csv;
  bool resume = false;
  // Coded mode (--ldpc).
  bool ldpc = false;
  int tbs = 1024;
  double rate = 0.5;
  std::string decoder = "nms";
  int iters = 10;
  float alpha = 0.75f, alpha_last = 0.f, beta = 0.5f;
  bool int8 = false;
  bool no_early_termination = false;
  std::int64_t blocks = 1000;
  bool frames_set = false, blocks_set = false, detector_set = false;
};

// What a mode (uncoded or coded) reports to the sweep while it runs one detector.
struct SweepHooks {
  std::function<void()> ready;                                   // validated, first point next
  std::function<void(const mimorx::cli::PointProgress&)> batch;  // the point so far
  std::function<void(ojson)> point;                              // a finished point
};

// A column of the stdout table: the JSON field it shows and how.
struct Column {
  std::string key;
  char format;  // 'f' fixed (2 decimals), 'e' scientific, 'd' integer
  int width;
};

// Everything in which the uncoded and the coded sweeps differ.
struct Mode {
  const char* units;      // "frames" or "blocks"
  std::string error_key;  // what --min-errors and --early-stop count
  mimorx::cli::StopRule rule;
  bool early_stop = false;
  ojson config;                       // the document's "config" ("detectors" filled later)
  std::vector<std::string> identity;  // config fields a --resume file must share
  std::vector<std::string> fields;    // the fields of a point (and the CSV columns)
  std::vector<Column> table;          // after the detector column
  // Validates a detector with everything else (no simulation); returns config fields it derives.
  std::function<ojson(const std::string& detector)> validate;
  std::function<void(const std::string& detector, const std::vector<double>& snrs,
                     const SweepHooks& hooks)>
      run;
  std::function<std::string(const ojson& config)> describe;  // the run in one line
};

// Thrown from a `ready` hook to stop a run once the library has validated it.
struct Validated {};

const char* const kChannel = "rayleigh, one realisation per received vector";
const char* const kSnrDefinition =
    "Es/N0, Es=1 per transmit antenna, N0 per receive antenna; Eb/N0 per information bit";

// "mmse,nway:4,kbest:16" (or "mmse, nway:4") -> its detectors (each one checked later, by the
// library).
std::vector<std::string> parse_detector_list(const std::string& text) {
  std::vector<std::string> out;
  std::size_t begin = 0;
  while (true) {
    const auto end = text.find(',', begin);
    auto item = text.substr(begin, end == std::string::npos ? std::string::npos : end - begin);
    const auto first = item.find_first_not_of(' '), last = item.find_last_not_of(' ');
    out.push_back(first == std::string::npos ? "" : item.substr(first, last - first + 1));
    mimorx::require(!out.back().empty(), "detector",
                    "empty entry in '" + text + "'; give one or a comma-separated list such as " +
                        "mmse,nway:4,kbest:16");
    if (end == std::string::npos) break;
    begin = end + 1;
  }
  const std::set<std::string> unique(out.begin(), out.end());
  mimorx::require(unique.size() == out.size(), "detector",
                  "'" + text + "' names a detector twice; give each once");
  return out;
}

ojson provenance() {
  return {{"version", MIMORX_VERSION},
          {"commit", MIMORX_GIT_COMMIT},
          {"command", mimorx::cli::command_line()}};
}

// The configuration fields both modes write, in the document's order.
ojson common_config(const SimOptions& o, const mimorx::detect::MimoShape& shape,
                    const mimorx::Backend& backend, const std::vector<double>& snrs) {
  return {{"coding", o.ldpc ? "ldpc" : "none"},
          {"mimo", o.mimo},
          {"nt", shape.nt},
          {"nr", shape.nr},
          {"mod", mimorx::to_string(shape.mod)},
          {"detectors", ojson::array()},
          {"backend", backend.name()},
          {"seed", o.seed},
          {"channel", kChannel},
          {"snr_definition", kSnrDefinition},
          {"snr_db", snrs},
          {"min_errors", o.min_errors},
          {o.ldpc ? "max_blocks" : "max_frames", o.ldpc ? o.blocks : o.frames},
          {"early_stop", o.early_stop}};
}

const std::vector<std::string> kCommonIdentity = {
    "coding", "nt", "nr", "mod", "seed", "channel", "snr_definition"};

ojson uncoded_point(const std::string& detector, const mimorx::sim::PointResult& r) {
  ojson p = {{"detector", detector}, {"snr_db", r.snr_db},
             {"ebn0_db", r.ebn0_db}, {"ber", r.ber()},
             {"ser", r.ser()},       {"bit_errors", r.bit_errors},
             {"bits", r.bits},       {"symbol_errors", r.symbol_errors},
             {"symbols", r.symbols}, {"frames", r.frames},
             {"seconds", r.seconds}};
  if (r.capped_vectors) p["capped_vectors"] = r.capped_vectors;  // only then: not a CSV column
  return p;
}

// psd's node budget stopped some searches of the point `p`: one warning line on stderr.
void warn_if_capped(const ojson& p) {
  const auto it = p.find("capped_vectors");
  if (it == p.end()) return;
  std::fprintf(stderr,
               "mimorx: warning: %s at %.2f dB: %lld of %lld vectors reached psd's node budget "
               "(%lld nodes per vector); their decisions are the best found, not guaranteed ML "
               "(docs/cli.md, Limits)\n",
               p.value("detector", "").c_str(), p.value("snr_db", 0.0),
               static_cast<long long>(it->get<std::int64_t>()),
               static_cast<long long>(p.value("frames", std::int64_t(0))),
               static_cast<long long>(mimorx::sim::kPsdNodeCap));
}

ojson coded_point(const std::string& detector, const mimorx::sim::CodedPointResult& r) {
  return {{"detector", detector},
          {"snr_db", r.snr_db},
          {"ebn0_db", r.ebn0_db},
          {"ber", r.ber()},
          {"bler", r.bler()},
          {"bit_errors", r.bit_errors},
          {"bits", r.bits},
          {"block_errors", r.block_errors},
          {"blocks", r.blocks},
          {"crc_failures", r.crc_failures},
          {"undetected_errors", r.undetected_errors},
          {"seconds", r.seconds}};
}

std::vector<std::string> keys_of(const ojson& object) {
  std::vector<std::string> out;
  for (const auto& [k, v] : object.items()) out.push_back(k);
  return out;
}

Mode uncoded_mode(const SimOptions& o, const std::vector<double>& snrs) {
  mimorx::require(!o.blocks_set, "max-blocks",
                  "--max-blocks (--blocks) counts transport blocks of --ldpc; the uncoded mode "
                  "counts received vectors: use --max-frames");
  const auto ant = mimorx::sim::parse_mimo(o.mimo);
  mimorx::sim::UncodedConfig c;
  c.shape = {ant.nt, ant.nr, mimorx::parse_modulation(o.mod)};
  c.seed = o.seed;
  c.frames = o.frames;
  c.batch = o.batch;
  c.min_bit_errors = o.min_errors;
  c.early_stop = o.early_stop;
  const auto backend = mimorx::Backend::parse(o.backend);
  Mode m;
  m.units = "frames";
  m.error_key = "bit_errors";
  m.rule = {c.frames, c.min_bit_errors};
  m.early_stop = c.early_stop;
  m.config = common_config(o, c.shape, backend, snrs);
  m.config["batch"] = c.batch;
  m.identity = kCommonIdentity;
  m.fields = keys_of(uncoded_point("", {}));
  m.table = {{"snr_db", 'f', 8},  {"ebn0_db", 'f', 8},     {"ber", 'e', 12},
             {"ser", 'e', 12},    {"bit_errors", 'd', 12}, {"bits", 'd', 12},
             {"frames", 'd', 10}, {"seconds", 'f', 8}};
  m.validate = [c, backend, snrs](const std::string& detector) {
    auto v = c;
    v.detector = detector;
    try {
      mimorx::sim::run_uncoded(v, backend, snrs, {[] { throw Validated{}; }, {}, {}});
    } catch (const Validated&) {
    }
    return ojson::object();
  };
  m.run = [c, backend](const std::string& detector, const std::vector<double>& points,
                       const SweepHooks& hooks) {
    auto v = c;
    v.detector = detector;
    mimorx::sim::UncodedHooks h;
    h.ready = hooks.ready;
    h.batch_done = [&](const mimorx::sim::PointResult& r) {
      hooks.batch({r.frames, r.bit_errors, r.bits});
    };
    h.point_done = [&](const mimorx::sim::PointResult& r) {
      hooks.point(uncoded_point(detector, r));
    };
    mimorx::sim::run_uncoded(v, backend, points, h);
  };
  m.describe = [](const ojson& cfg) {
    return fmt::format(
        "# mimorx sim: {}x{} {} detectors={} backend={} max_frames={} min_errors={} (bit "
        "errors){} seed={} (uncoded, i.i.d. Rayleigh, SNR = Es/N0)",
        cfg["nt"].get<int>(), cfg["nr"].get<int>(), cfg["mod"].get<std::string>(),
        fmt::join(cfg["detectors"].get<std::vector<std::string>>(), ","),
        cfg["backend"].get<std::string>(), cfg["max_frames"].get<std::int64_t>(),
        cfg["min_errors"].get<std::int64_t>(), cfg["early_stop"].get<bool>() ? " early_stop" : "",
        cfg["seed"].get<std::uint64_t>());
  };
  return m;
}

mimorx::sim::CodedConfig coded_config(const SimOptions& o) {
  mimorx::require(!o.frames_set, "max-frames",
                  "--max-frames (--frames) counts received vectors of the uncoded mode; with "
                  "--ldpc use --max-blocks (transport blocks per SNR point)");
  const auto ant = mimorx::sim::parse_mimo(o.mimo);
  mimorx::sim::CodedConfig c;
  c.shape = {ant.nt, ant.nr, mimorx::parse_modulation(o.mod)};
  c.seed = o.seed;
  c.tbs = o.tbs;
  c.code_rate = o.rate;
  c.decoder.algo = mimorx::ldpc::parse_decoder_algo(o.decoder, "decoder");
  mimorx::require(!(o.int8 && c.decoder.algo == mimorx::ldpc::DecoderAlgo::bp), "int8",
                  "bp has no integer form; use --decoder nms or oms with --int8");
  c.decoder.max_iters = o.iters;
  c.decoder.alpha = o.alpha;
  c.decoder.alpha_last = o.alpha_last;
  c.decoder.quantized = o.int8;
  c.decoder.early_termination = !o.no_early_termination;
  c.decoder.beta = o.beta;
  c.blocks = o.blocks;
  c.min_block_errors = o.min_errors;
  c.early_stop = o.early_stop;
  return c;
}

Mode coded_mode(const SimOptions& o, const std::vector<double>& snrs) {
  const auto c = coded_config(o);
  const auto backend = mimorx::Backend::parse(o.backend);
  Mode m;
  m.units = "blocks";
  m.error_key = "block_errors";
  m.rule = {c.blocks, c.min_block_errors};
  m.early_stop = c.early_stop;
  m.config = common_config(o, c.shape, backend, snrs);
  m.config.update({{"tbs", c.tbs},
                   {"target_rate", c.code_rate},
                   {"g", nullptr},
                   {"rate", nullptr},
                   {"decoder", o.decoder},
                   {"alpha", o.alpha},
                   {"alpha_last", o.alpha_last},
                   {"beta", o.beta},
                   {"int8", o.int8},
                   {"iters", c.decoder.max_iters},
                   {"early_termination", c.decoder.early_termination}});
  m.identity = kCommonIdentity;
  for (const char* k : {"tbs", "target_rate", "decoder", "alpha", "alpha_last", "beta", "int8",
                        "iters", "early_termination"})
    m.identity.emplace_back(k);
  m.fields = keys_of(coded_point("", {}));
  m.table = {{"snr_db", 'f', 8},        {"ebn0_db", 'f', 8},     {"ber", 'e', 12},
             {"bler", 'e', 12},         {"bit_errors", 'd', 12}, {"bits", 'd', 12},
             {"block_errors", 'd', 12}, {"blocks", 'd', 9},      {"seconds", 'f', 8}};
  m.validate = [c, backend, snrs](const std::string& detector) {
    auto v = c;
    v.detector = detector;
    ojson link;
    try {
      mimorx::sim::run_coded(v, backend, snrs,
                             {[&](const mimorx::sim::CodedLink& l) {
                                link = {{"g", l.g}, {"rate", l.rate}};
                                throw Validated{};
                              },
                              {},
                              {}});
    } catch (const Validated&) {
    }
    return link;
  };
  m.run = [c, backend](const std::string& detector, const std::vector<double>& points,
                       const SweepHooks& hooks) {
    auto v = c;
    v.detector = detector;
    mimorx::sim::CodedHooks h;
    h.ready = [&](const mimorx::sim::CodedLink&) { hooks.ready(); };
    h.batch_done = [&](const mimorx::sim::CodedPointResult& r) {
      hooks.batch({r.blocks, r.block_errors, r.bits});
    };
    h.point_done = [&](const mimorx::sim::CodedPointResult& r) {
      hooks.point(coded_point(detector, r));
    };
    mimorx::sim::run_coded(v, backend, points, h);
  };
  m.describe = [params = mimorx::cli::decoder_params(o.decoder, o.alpha, o.alpha_last, o.beta,
                                                     o.int8)](const ojson& cfg) {
    return fmt::format(
        "# mimorx sim --ldpc: {}x{} {} detectors={} backend={} tbs={} G={} rate={:.4f} "
        "decoder={}{} iters={}{} max_blocks={} min_errors={} (block errors){} seed={} (i.i.d. "
        "Rayleigh per vector, SNR = Es/N0)",
        cfg["nt"].get<int>(), cfg["nr"].get<int>(), cfg["mod"].get<std::string>(),
        fmt::join(cfg["detectors"].get<std::vector<std::string>>(), ","),
        cfg["backend"].get<std::string>(), cfg["tbs"].get<int>(), cfg["g"].dump(),
        cfg["rate"].is_number() ? cfg["rate"].get<double>() : 0.0,
        cfg["decoder"].get<std::string>(), params.empty() ? "" : " " + params,
        cfg["iters"].get<int>(),
        cfg.value("early_termination", true) ? "" : " no_early_termination",
        cfg["max_blocks"].get<std::int64_t>(), cfg["min_errors"].get<std::int64_t>(),
        cfg["early_stop"].get<bool>() ? " early_stop" : "", cfg["seed"].get<std::uint64_t>());
  };
  return m;
}

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
    mimorx::cli::flush_stdout();  // a stdout that cannot be written fails before the run
  }
  // Prints the rows not printed yet up to points[last] (all of them when last is npos).
  void print_through(const ojson& points, std::size_t last = std::string::npos) {
    for (; printed_ < points.size() && printed_ <= last; ++printed_) row(points[printed_]);
    mimorx::cli::flush_stdout();
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

// Keeps the points of the --json file of an earlier run of the same configuration.
void resume_from(const std::string& path, const Mode& mode, ojson& config,
                 mimorx::cli::SweepPoints& points) {
  const ojson file = mimorx::cli::read_resume_file(path);
  if (file.is_null()) return;  // nothing to keep yet: the run starts from scratch
  mimorx::cli::check_same_config(file["config"], config, mode.identity, path);
  points.import(file["points"]);
}

void run_sweep(const SimOptions& o, const Mode& mode, const std::vector<std::string>& detectors,
               const std::vector<double>& snrs) {
  ojson config = mode.config;
  for (const auto& d : detectors) config.update(mode.validate(d));  // all before any output
  mimorx::cli::SweepPoints points(detectors, snrs);
  if (o.resume) resume_from(o.json, mode, config, points);
  config["detectors"] = points.all_detectors();
  ojson doc = {{"mimorx", provenance()}, {"config", config}, {"points", points.ordered()}};
  const mimorx::cli::ResultFiles files(o.json, o.csv, mode.fields);
  files.write(doc);  // a path that cannot be written fails before any simulation
  Table table(mode.table, config["detectors"].get<std::vector<std::string>>());
  table.header();  // first: a stdout that cannot be written fails with one line on stderr
  std::fprintf(stderr, "%s\n", mode.describe(config).c_str());
  mimorx::cli::ProgressLine progress(mimorx::cli::stderr_is_terminal(), mode.units, mode.rule);
  for (std::size_t d = 0; d < detectors.size(); ++d) {
    const auto todo = points.missing(d, mode.error_key, mode.early_stop);
    if (todo.empty()) continue;
    std::size_t k = 0;  // the point of `todo` running now
    SweepHooks hooks;
    hooks.ready = [&] { progress.start(detectors[d], snrs[todo[0]]); };
    hooks.batch = [&](const mimorx::cli::PointProgress& p) { progress.update(p); };
    hooks.point = [&](ojson p) {
      progress.clear();
      warn_if_capped(p);
      points.put(d, todo[k], std::move(p));
      doc["points"] = points.ordered();
      files.write(doc);
      table.print_through(doc["points"], points.position(d, todo[k]));
      if (++k < todo.size()) progress.start(detectors[d], snrs[todo[k]]);
    };
    mode.run(detectors[d], pick(snrs, todo), hooks);
  }
  table.print_through(doc["points"]);
}

void run_sim(const SimOptions& o) {
  mimorx::require(!o.resume || !o.json.empty(), "resume",
                  "needs --json FILE: the file of the run to continue");
  mimorx::require(o.json.empty() || o.json != o.csv, "csv",
                  "'" + o.csv + "' is also the --json file; give two different files");
  const auto detectors = parse_detector_list(o.detector_set ? o.detector
                                             : o.ldpc       ? std::string("mmse")
                                                            : o.detector);
  const auto snrs = mimorx::sim::parse_snr_list(o.snr);
  const Mode mode = o.ldpc ? coded_mode(o, snrs) : uncoded_mode(o, snrs);
  run_sweep(o, mode, detectors, snrs);
}

void add_sim(CLI::App& app) {
  auto opts = std::make_shared<SimOptions>();
  auto* cmd = app.add_subcommand("sim", "Link-level BER/SER simulation over a MIMO channel");
  // An option given twice takes its last value, so that a script's defaults can be followed by
  // the user's choices (scripts/run).
  cmd->option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  cmd->add_option("--mimo", opts->mimo, "Antennas <nt>x<nr>, e.g. 4x4 or 2x4")
      ->capture_default_str();
  cmd->add_option("--mod", opts->mod, "bpsk, qpsk, 16qam, 64qam or 256qam")->capture_default_str();
  auto* detector =
      cmd->add_option("--detector", opts->detector,
                      "One or a comma-separated list (one curve each), e.g. mmse,nway:4,kbest:16. "
                      "Detectors: " +
                          fmt::format("{}", fmt::join(mimorx::sim::detector_names(), ", ")) +
                          " (with --ldpc a soft one; default there mmse)")
          ->capture_default_str();
  cmd->add_option("--snr", opts->snr, "Es/N0 in dB: a list 8,14 or a range start:step:stop")
      ->capture_default_str();
  auto* frames = cmd->add_option("--max-frames,--frames", opts->frames,
                                 "Received vectors per SNR point, at most (uncoded mode)")
                     ->capture_default_str();
  cmd->add_option("--batch", opts->batch, "Vectors per detector call (0 = automatic)")
      ->capture_default_str();
  cmd->add_option(
         "--min-errors", opts->min_errors,
         "Stop an SNR point once this many bit errors (with --ldpc: block errors) are seen (0 = "
         "never)")
      ->capture_default_str();
  cmd->add_flag("--early-stop", opts->early_stop,
                "End a detector's sweep after its first SNR point without errors (bit errors; "
                "with --ldpc block errors)")
      ->capture_default_str();
  cmd->add_option("--backend", opts->backend, "auto, cpu, cuda or cuda:N")->capture_default_str();
  cmd->add_option("--seed", opts->seed, "Seed of the Philox streams")->capture_default_str();
  cmd->add_option("--json", opts->json,
                  "Write the results to this JSON file, rewritten after every point")
      ->capture_default_str();
  cmd->add_option("--csv", opts->csv,
                  "Write the points to this CSV file too, rewritten after every point")
      ->capture_default_str();
  cmd->add_flag("--resume", opts->resume,
                "Keep the points already in the --json file (same configuration) and simulate "
                "only the missing ones")
      ->capture_default_str();
  cmd->add_flag("--ldpc", opts->ldpc,
                "Coded mode: 5G NR LDPC transport blocks (TS 38.212), soft detection, BER/BLER")
      ->capture_default_str();
  cmd->add_option("--tbs", opts->tbs, "--ldpc: information bits per transport block")
      ->capture_default_str();
  cmd->add_option("--rate", opts->rate, "--ldpc: target code rate")->capture_default_str();
  cmd->add_option("--decoder", opts->decoder, "--ldpc: nms, oms or bp")->capture_default_str();
  cmd->add_option("--iters", opts->iters, "--ldpc: decoder iterations")->capture_default_str();
  cmd->add_option("--alpha", opts->alpha, "--ldpc, nms: normalisation factor in (0, 1]")
      ->capture_default_str();
  cmd->add_option("--alpha-last", opts->alpha_last,
                  "--ldpc, nms: final factor of a per-iteration ramp from --alpha (0 = constant; "
                  "0.5 -> 0.875 suits low rates)")
      ->capture_default_str();
  cmd->add_option("--beta", opts->beta, "--ldpc, oms: offset")->capture_default_str();
  cmd->add_flag("--int8", opts->int8,
                "--ldpc, nms/oms: integer decoder (6-bit channel LLRs, 8-bit messages): 16 "
                "codewords per vector on the CPU, the paired kernel on CUDA")
      ->capture_default_str();
  cmd->add_flag("--no-early-termination", opts->no_early_termination,
                "--ldpc: run all --iters decoder iterations on every code block (by default a "
                "block stops at a zero syndrome); for timing the decoder's worst case")
      ->capture_default_str();
  auto* blocks = cmd->add_option("--max-blocks,--blocks", opts->blocks,
                                 "--ldpc: transport blocks per SNR point, at most")
                     ->capture_default_str();
  cmd->callback([opts, frames, detector, blocks] {
    opts->frames_set = frames->count() > 0;
    opts->detector_set = detector->count() > 0;
    opts->blocks_set = blocks->count() > 0;
    run_sim(*opts);
  });
}

}  // namespace
MIMORX_REGISTER_COMMAND(sim, add_sim);

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
#include "curve_run.hpp"
#include "decoder_params.hpp"
#include "mimorx/config.hpp"
#include "mimorx/core/error.hpp"
#include "mimorx/sim/coded.hpp"
#include "mimorx/sim/detector.hpp"
#include "mimorx/sim/link.hpp"
#include "mimorx/sim/sweep.hpp"
#include "option_names.hpp"
#include "sim/point_json.hpp"
#include "sim_nr.hpp"
#include "sim_ranks.hpp"
#include "snr_range.hpp"

namespace {

using mimorx::cli::ojson;

struct SimOptions {
  // The default study: exact ML (sphere detector) for 4x4 16-QAM, down to BER ~1e-5, about a
  // minute on two CPU cores and a few seconds on a GPU.
  std::string mimo = "4x4";
  std::string mod = "16qam";
  std::string detector = "psd";
  std::string snr, ebn0;  // neither: the default sweep (sweep_points)
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
  bool half = false;
  bool no_early_termination = false;
  std::int64_t blocks = 1000;
  // Channel (sim/channel_model.hpp).
  double corr_tx = 0.0, corr_rx = 0.0;
  std::int64_t vectors_per_channel = 1;
  bool frames_set = false, blocks_set = false, detector_set = false;
  // NR slots (--nr, sim_nr.hpp) and the options of the other modes that do not apply there.
  mimorx::cli::NrOptions nr;
  std::vector<CLI::Option*> not_nr;
};

using mimorx::cli::Column;
using mimorx::cli::CurveMode;
using mimorx::cli::SweepHooks;

// Thrown from a `ready` hook to stop a run once the library has validated it.
struct Validated {};

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

// "rayleigh, one realisation per received vector", or the correlation and block fading.
std::string channel_text(const mimorx::sim::ChannelModel& c, bool coded) {
  std::string text = "rayleigh";
  if (c.corr_tx != 0.0 || c.corr_rx != 0.0)
    text += fmt::format(", kronecker exponential corr_tx={:g} corr_rx={:g}", c.corr_tx, c.corr_rx);
  if (c.vectors_per_channel == 1) return text + ", one realisation per received vector";
  return text + fmt::format(", one realisation per {} received vectors{}", c.vectors_per_channel,
                            coded ? " within a transport block" : "");
}

mimorx::sim::ChannelModel channel_model(const SimOptions& o) {
  return {o.corr_tx, o.corr_rx, o.vectors_per_channel};
}

// The configuration fields both modes write, in the document's order.
ojson common_config(const SimOptions& o, const mimorx::detect::MimoShape& shape,
                    const mimorx::Backend& backend, const std::vector<double>& snrs) {
  ojson c = mimorx::cli::curve_config(
      o.ldpc ? "ldpc" : "none", shape.nt, shape.nr, mimorx::to_string(shape.mod), backend.name(),
      o.seed, channel_text(channel_model(o), o.ldpc), snrs, o.min_errors,
      o.ldpc ? "max_blocks" : "max_frames", o.ldpc ? o.blocks : o.frames, o.early_stop);
  c["mimo"] = o.mimo;
  c["corr_tx"] = o.corr_tx;
  c["corr_rx"] = o.corr_rx;
  c["vectors_per_channel"] = o.vectors_per_channel;
  return c;
}

const std::vector<std::string> kCommonIdentity = {
    "coding", "nt", "nr", "mod", "seed", "channel", "snr_definition"};

// psd's or sts's node budget stopped some searches of the point `p`: one warning line on stderr.
void warn_if_capped(const ojson& p) {
  const auto it = p.find("capped_vectors");
  if (it == p.end()) return;
  const std::string name = p.value("detector", "");
  std::fprintf(
      stderr,
      "mimorx: warning: %s at %.2f dB: %lld of %lld vectors reached %s's node budget "
      "(%lld nodes per vector); their decisions are the best found, not guaranteed ML "
      "(docs/cli.md, Limits)\n",
      name.c_str(), p.value("snr_db", 0.0), static_cast<long long>(it->get<std::int64_t>()),
      static_cast<long long>(p.value("frames", std::int64_t(0))),
      name.substr(0, name.find(':')).c_str(), static_cast<long long>(mimorx::sim::kPsdNodeCap));
}

std::vector<std::string> keys_of(const ojson& object) {
  std::vector<std::string> out;
  for (const auto& [k, v] : object.items()) out.push_back(k);
  return out;
}

using Comm = std::shared_ptr<mimorx::sim::Communicator>;

CurveMode uncoded_mode(const SimOptions& o, const std::vector<double>& snrs, const Comm& comm) {
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
  c.channel = channel_model(o);
  c.comm = comm;
  const auto backend = mimorx::cli::rank_backend(o.backend, comm.get());
  CurveMode m;
  m.comm = comm;
  m.units = "frames";
  m.error_key = "bit_errors";
  m.rule = {c.frames, c.min_bit_errors};
  m.early_stop = c.early_stop;
  m.config = common_config(o, c.shape, backend, snrs);
  m.config["batch"] = c.batch;
  m.identity = kCommonIdentity;
  m.fields = keys_of(mimorx::sim::uncoded_point_json("", {}));
  m.after_point = warn_if_capped;
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
      hooks.point(mimorx::sim::uncoded_point_json(detector, r));
    };
    mimorx::sim::run_uncoded(v, backend, points, h);
  };
  m.describe = [](const ojson& cfg) {
    return fmt::format(
        "# mimorx sim: {}x{} {} detectors={} backend={} max_frames={} min_errors={} (bit "
        "errors){} seed={} (uncoded; {}; SNR = Es/N0)",
        cfg["nt"].get<int>(), cfg["nr"].get<int>(), cfg["mod"].get<std::string>(),
        fmt::join(cfg["detectors"].get<std::vector<std::string>>(), ","),
        cfg["backend"].get<std::string>(), cfg["max_frames"].get<std::int64_t>(),
        cfg["min_errors"].get<std::int64_t>(), cfg["early_stop"].get<bool>() ? " early_stop" : "",
        cfg["seed"].get<std::uint64_t>(), cfg["channel"].get<std::string>());
  };
  return m;
}

mimorx::ldpc::DecoderSettings decoder_settings(const SimOptions& o) {
  mimorx::ldpc::DecoderSettings d;
  d.algo = mimorx::ldpc::parse_decoder_algo(o.decoder, "decoder");
  d.arithmetic = mimorx::cli::decoder_arithmetic(d.algo, o.int8, o.half);
  d.max_iters = o.iters;
  d.alpha = o.alpha;
  d.alpha_last = o.alpha_last;
  d.quantized = o.int8;
  d.early_termination = !o.no_early_termination;
  d.beta = o.beta;
  return d;
}

mimorx::sim::CodedConfig coded_config(const SimOptions& o, const Comm& comm) {
  mimorx::require(!o.frames_set, "max-frames",
                  "--max-frames (--frames) counts received vectors of the uncoded mode; with "
                  "--ldpc use --max-blocks (transport blocks per SNR point)");
  const auto ant = mimorx::sim::parse_mimo(o.mimo);
  mimorx::sim::CodedConfig c;
  c.shape = {ant.nt, ant.nr, mimorx::parse_modulation(o.mod)};
  c.seed = o.seed;
  c.tbs = o.tbs;
  c.code_rate = o.rate;
  c.decoder = decoder_settings(o);
  c.blocks = o.blocks;
  c.batch_blocks = o.batch;
  c.min_block_errors = o.min_errors;
  c.early_stop = o.early_stop;
  c.channel = channel_model(o);
  c.comm = comm;
  return c;
}

CurveMode coded_mode(const SimOptions& o, const mimorx::sim::CodedConfig& c,
                     const std::vector<double>& snrs) {
  const auto backend = mimorx::cli::rank_backend(o.backend, c.comm.get());
  CurveMode m;
  m.comm = c.comm;
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
                   {"half", o.half},
                   {"iters", c.decoder.max_iters},
                   {"early_termination", c.decoder.early_termination},
                   {"batch", c.batch_blocks}});
  m.identity = kCommonIdentity;
  for (const char* k : {"tbs", "target_rate", "decoder", "alpha", "alpha_last", "beta", "int8",
                        "half", "iters", "early_termination"})
    m.identity.emplace_back(k);
  m.fields = mimorx::cli::coded_fields();
  m.table = mimorx::cli::coded_table();
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
      hooks.point(mimorx::sim::coded_point_json(detector, r, true));
    };
    mimorx::sim::run_coded(v, backend, points, h);
  };
  m.describe = [params = mimorx::cli::decoder_params(o.decoder, o.alpha, o.alpha_last, o.beta,
                                                     o.int8, o.half)](const ojson& cfg) {
    return fmt::format(
        "# mimorx sim --ldpc: {}x{} {} detectors={} backend={} tbs={} G={} rate={:.4f} "
        "decoder={}{} iters={}{} max_blocks={} min_errors={} (block errors){} seed={} ({}; "
        "SNR = Es/N0)",
        cfg["nt"].get<int>(), cfg["nr"].get<int>(), cfg["mod"].get<std::string>(),
        fmt::join(cfg["detectors"].get<std::vector<std::string>>(), ","),
        cfg["backend"].get<std::string>(), cfg["tbs"].get<int>(), cfg["g"].dump(),
        cfg["rate"].is_number() ? cfg["rate"].get<double>() : 0.0,
        cfg["decoder"].get<std::string>(), params.empty() ? "" : " " + params,
        cfg["iters"].get<int>(),
        cfg.value("early_termination", true) ? "" : " no_early_termination",
        cfg["max_blocks"].get<std::int64_t>(), cfg["min_errors"].get<std::int64_t>(),
        cfg["early_stop"].get<bool>() ? " early_stop" : "", cfg["seed"].get<std::uint64_t>(),
        cfg["channel"].get<std::string>());
  };
  return m;
}

// The SNR points: --snr, --ebn0 or the default sweep (uncoded 0:2:20; coded from the rates the
// detectors can achieve on the channel at the code's rate, docs/cli.md).
std::vector<double> sweep_points(const SimOptions& o, const mimorx::detect::MimoShape& shape,
                                 double code_rate, const std::vector<std::string>& detectors) {
  const int m = mimorx::bits_per_symbol(shape.mod);
  std::string fallback = "0:2:20";
  if (o.ldpc && o.snr.empty() && o.ebn0.empty()) {
    std::set<mimorx::cli::Receiver> receivers;
    for (const auto& d : detectors) receivers.insert(mimorx::cli::receiver_of(d));
    double lowest = 1e9, highest = -1e9;
    for (const auto r : receivers) {
      const double t = mimorx::cli::mimo_capacity_snr_db(
          shape.nt, shape.nr, shape.nt * m * code_rate, channel_model(o), r);
      lowest = std::min(lowest, t);
      highest = std::max(highest, t);
    }
    fallback = mimorx::cli::sweep_from_thresholds(lowest, highest, 1.0, 8.0, 5.0);
  }
  return mimorx::cli::esn0_points(o.snr, o.ebn0, m, code_rate, fallback);
}

// What run_curves runs: built from the options alone (no simulation, no other rank).
struct SimCurves {
  mimorx::cli::CurveFiles files;
  CurveMode mode;
  std::vector<std::string> detectors;
  std::vector<double> snrs;
};

SimCurves sim_curves(const SimOptions& o, const Comm& comm) {
  const mimorx::cli::CurveFiles files{o.json, o.csv, o.resume};
  mimorx::cli::check_curve_files(files);
  const auto detectors = parse_detector_list(o.detector_set           ? o.detector
                                             : o.ldpc || o.nr.enabled ? std::string("mmse")
                                                                      : o.detector);
  if (o.nr.enabled) {
    for (const CLI::Option* opt : o.not_nr)
      mimorx::require(opt->count() == 0, opt->get_name().substr(2),
                      "does not apply with --nr: the MCS (--mcs, --mcs-table), --layers and "
                      "--nrx set the link, --slots the points' length");
    mimorx::cli::NrCommon k;
    k.detectors = detectors;
    k.snr = o.snr;
    k.ebn0 = o.ebn0;
    k.backend = o.backend;
    k.seed = o.seed;
    k.min_errors = o.min_errors;
    k.batch = o.batch;
    k.early_stop = o.early_stop;
    k.decoder = decoder_settings(o);
    k.decoder_config = {{"decoder", o.decoder},
                        {"alpha", o.alpha},
                        {"alpha_last", o.alpha_last},
                        {"beta", o.beta},
                        {"int8", o.int8},
                        {"half", o.half},
                        {"iters", o.iters},
                        {"early_termination", !o.no_early_termination}};
    k.decoder_params =
        mimorx::cli::decoder_params(o.decoder, o.alpha, o.alpha_last, o.beta, o.int8, o.half);
    k.files = files;
    k.comm = comm;
    auto nr = mimorx::cli::nr_curves(o.nr, k);
    return {files, std::move(nr.mode), detectors, std::move(nr.snrs)};
  }
  mimorx::cli::check_nr_options_unused(o.nr);
  if (o.ldpc) {
    const auto c = coded_config(o, comm);
    const auto g = mimorx::sim::transport_config(c).g;
    const auto snrs = sweep_points(o, c.shape, double(c.tbs) / double(g), detectors);
    return {files, coded_mode(o, c, snrs), detectors, snrs};
  }
  const auto ant = mimorx::sim::parse_mimo(o.mimo);
  const mimorx::detect::MimoShape shape{ant.nt, ant.nr, mimorx::parse_modulation(o.mod)};
  const auto snrs = sweep_points(o, shape, 1.0, detectors);
  return {files, uncoded_mode(o, snrs, comm), detectors, snrs};
}

void run_sim(const SimOptions& o, const Comm& comm) {
  SimCurves run;
  // Bad options fail on every rank alike: one line from rank 0, no abort.
  mimorx::cli::run_agreed(
      comm.get(), [&] { run = mimorx::cli::naming_options([&] { return sim_curves(o, comm); }); });
  run.mode.validate = [validate = run.mode.validate](const std::string& detector) {
    return mimorx::cli::naming_options([&] { return validate(detector); });
  };
  mimorx::cli::run_curves(run.files, run.mode, run.detectors, run.snrs);
}

void add_sim(CLI::App& app) {
  auto opts = std::make_shared<SimOptions>();
  auto* cmd = app.add_subcommand("sim", "Link-level BER/SER simulation over a MIMO channel");
  // An option given twice takes its last value, so that a script's defaults can be followed by
  // the user's choices (scripts/run).
  cmd->option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  opts->not_nr.push_back(
      cmd->add_option("--mimo", opts->mimo, "Antennas <nt>x<nr>, e.g. 4x4 or 2x4")
          ->capture_default_str());
  opts->not_nr.push_back(cmd->add_option("--mod", opts->mod, "bpsk, qpsk, 16qam, 64qam or 256qam")
                             ->capture_default_str());
  auto* detector =
      cmd->add_option("--detector", opts->detector,
                      "One or a comma-separated list (one curve each), e.g. mmse,nway:4,kbest:16. "
                      "Detectors: " +
                          fmt::format("{}", fmt::join(mimorx::sim::detector_names(), ", ")) +
                          " (with --ldpc a soft one; default there mmse)")
          ->capture_default_str();
  auto* snr = cmd->add_option("--snr", opts->snr,
                              "Es/N0 in dB: a list 8,14 or a range start:step:stop [default: "
                              "0:2:20 uncoded; with --ldpc in 1 dB steps from the Es/N0 at which "
                              "the rate the detectors can achieve equals the code's information "
                              "rate, to 8 dB further and 5 dB past the highest such Es/N0 "
                              "(docs/cli.md)]");
  cmd->add_option("--ebn0", opts->ebn0,
                  "Eb/N0 per information bit in dB instead of --snr: Es/N0 = Eb/N0 + 10 log10(R "
                  "m), R the code rate (1 uncoded), m bits per symbol, per stream")
      ->excludes(snr)
      ->check(CLI::Validator(mimorx::cli::check_snr_text, "", ""));
  snr->check(CLI::Validator(mimorx::cli::check_snr_text, "", ""));
  opts->not_nr.push_back(
      cmd->add_option("--corr-tx", opts->corr_tx,
                      "Kronecker correlation between adjacent transmit antennas (exponential model "
                      "rho^|i-j|), in [0, 1)")
          ->capture_default_str());
  opts->not_nr.push_back(
      cmd->add_option("--corr-rx", opts->corr_rx,
                      "Kronecker correlation between adjacent receive antennas, in [0, 1)")
          ->capture_default_str());
  opts->not_nr.push_back(
      cmd->add_option(
             "--vectors-per-channel", opts->vectors_per_channel,
             "Block fading: received vectors per channel realisation (with --ldpc within a "
             "transport block)")
          ->capture_default_str());
  auto* frames = cmd->add_option("--max-frames,--frames", opts->frames,
                                 "Received vectors per SNR point, at most (uncoded mode)")
                     ->capture_default_str();
  cmd->add_option("--batch", opts->batch,
                  "Received vectors per call; with --ldpc and --nr transport blocks per call "
                  "(0 = automatic; the counts do not depend on it)")
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
  opts->not_nr.push_back(
      cmd->add_flag("--ldpc", opts->ldpc,
                    "Coded mode: 5G NR LDPC transport blocks (TS 38.212), soft detection, BER/BLER")
          ->capture_default_str());
  opts->not_nr.push_back(
      cmd->add_option("--tbs", opts->tbs, "--ldpc: information bits per transport block")
          ->capture_default_str());
  opts->not_nr.push_back(
      cmd->add_option("--rate", opts->rate, "--ldpc: target code rate")->capture_default_str());
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
  cmd->add_flag("--half", opts->half,
                "--ldpc, nms/oms: half-precision decoder (two codewords per thread in f16x2 "
                "on CUDA; its bit-exact model on the CPU, slow; docs/ldpc_half.md)")
      ->capture_default_str();
  cmd->add_flag("--no-early-termination", opts->no_early_termination,
                "--ldpc: run all --iters decoder iterations on every code block (by default a "
                "block stops at a zero syndrome); for timing the decoder's worst case")
      ->capture_default_str();
  auto* blocks = cmd->add_option("--max-blocks,--blocks", opts->blocks,
                                 "--ldpc: transport blocks per SNR point, at most")
                     ->capture_default_str();
  opts->not_nr.push_back(frames);
  opts->not_nr.push_back(blocks);
  mimorx::cli::add_nr_options(*cmd, opts->nr);
  cmd->callback([opts, frames, detector, blocks] {
    opts->frames_set = frames->count() > 0;
    opts->detector_set = detector->count() > 0;
    opts->blocks_set = blocks->count() > 0;
    mimorx::cli::run_on_ranks([&](const Comm& comm) { run_sim(*opts, comm); });
  });
}

}  // namespace
MIMORX_REGISTER_COMMAND(sim, add_sim);

// mimorx sim: link-level Monte-Carlo simulation: uncoded BER/SER per SNR point, or (--ldpc) 5G NR
// LDPC transport blocks with soft detection, BER/BLER per SNR point.
#include <fmt/format.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "command.hpp"
#include "decoder_params.hpp"
#include "mimorx/core/error.hpp"
#include "mimorx/sim/coded.hpp"
#include "mimorx/sim/detector.hpp"
#include "mimorx/sim/link.hpp"
#include "mimorx/sim/sweep.hpp"

namespace {

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
  std::string backend = "auto";
  std::uint64_t seed = 1;
  std::string json;
  // Coded mode (--ldpc).
  bool ldpc = false;
  int tbs = 1024;
  double rate = 0.5;
  std::string decoder = "nms";
  int iters = 10;
  float alpha = 0.75f, alpha_last = 0.f, beta = 0.5f;
  bool int8 = false;
  std::int64_t blocks = 1000;
  bool frames_set = false, blocks_set = false, detector_set = false;
};

// The --json file, opened before the run so that a bad path fails before any work.
std::ofstream open_json(const std::string& path) {
  std::ofstream f;
  if (!path.empty()) {
    f.open(path);
    mimorx::require(bool(f), "json", "cannot open '" + path + "' for writing");
  }
  return f;
}

// The configuration fields both modes write.
nlohmann::json common_config(const SimOptions& o, const mimorx::detect::MimoShape& shape,
                             const std::string& detector, const mimorx::Backend& backend) {
  return {{"mimo", o.mimo},       {"nt", shape.nt},
          {"nr", shape.nr},       {"mod", mimorx::to_string(shape.mod)},
          {"detector", detector}, {"backend", backend.name()},
          {"seed", o.seed}};
}

void run_coded_sim(const SimOptions& o) {
  mimorx::require(!o.frames_set, "frames",
                  "--frames counts received vectors of the uncoded mode; with --ldpc use "
                  "--blocks (transport blocks per SNR point)");
  const auto ant = mimorx::sim::parse_mimo(o.mimo);
  mimorx::sim::CodedConfig c;
  c.shape = {ant.nt, ant.nr, mimorx::parse_modulation(o.mod)};
  // The uncoded default (psd) gives hard decisions only; the coded default is soft MMSE.
  c.detector = o.detector_set ? o.detector : "mmse";
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
  c.decoder.beta = o.beta;
  c.blocks = o.blocks;
  c.min_block_errors = o.min_errors;
  const auto snrs = mimorx::sim::parse_snr_list(o.snr);
  const auto backend = mimorx::Backend::parse(o.backend);
  std::ofstream json_file = open_json(o.json);
  mimorx::sim::CodedLink link;
  auto results = mimorx::sim::run_coded(
      c, backend, snrs,
      [](const auto& r) {
        fmt::print("{:8.2f} {:8.2f} {:12.4e} {:12.4e} {:12d} {:12d} {:9d} {:9d} {:8.2f}\n",
                   r.snr_db, r.ebn0_db, r.ber(), r.bler(), r.bit_errors, r.bits, r.block_errors,
                   r.blocks, r.seconds);
        std::fflush(stdout);
      },
      [&](const mimorx::sim::CodedLink& l) {
        link = l;
        const std::string params =
            mimorx::cli::decoder_params(o.decoder, o.alpha, o.alpha_last, o.beta, o.int8);
        fmt::print(
            "# mimorx sim --ldpc: {}x{} {} detector={} backend={} tbs={} G={} rate={:.4f} "
            "decoder={}{} iters={} blocks/point={} seed={} (i.i.d. Rayleigh per vector, SNR = "
            "Es/N0)\n",
            c.shape.nt, c.shape.nr, mimorx::to_string(c.shape.mod), c.detector, backend.name(),
            c.tbs, l.g, l.rate, o.decoder, params.empty() ? "" : " " + params, c.decoder.max_iters,
            c.blocks, c.seed);
        fmt::print("{:>8} {:>8} {:>12} {:>12} {:>12} {:>12} {:>9} {:>9} {:>8}\n", "snr_db",
                   "ebn0_db", "ber", "bler", "bit_errors", "bits", "blk_err", "blocks", "time_s");
      });
  if (json_file) {
    nlohmann::json j;
    j["config"] = common_config(o, c.shape, c.detector, backend);
    j["config"].update({{"blocks", c.blocks},
                        {"coding", "ldpc"},
                        {"tbs", c.tbs},
                        {"target_rate", c.code_rate},
                        {"g", link.g},
                        {"rate", link.rate},
                        {"decoder", o.decoder},
                        {"alpha", o.alpha},
                        {"alpha_last", o.alpha_last},
                        {"beta", o.beta},
                        {"int8", o.int8},
                        {"iters", c.decoder.max_iters},
                        {"channel", "rayleigh, one realisation per received vector"},
                        {"snr_definition",
                         "Es/N0, Es=1 per transmit antenna, N0 per receive antenna; "
                         "Eb/N0 per information bit"}});
    for (const auto& r : results) {
      j["points"].push_back({{"snr_db", r.snr_db},
                             {"ebn0_db", r.ebn0_db},
                             {"ber", r.ber()},
                             {"bler", r.bler()},
                             {"bit_errors", r.bit_errors},
                             {"bits", r.bits},
                             {"block_errors", r.block_errors},
                             {"blocks", r.blocks},
                             {"crc_failures", r.crc_failures},
                             {"seconds", r.seconds}});
    }
    json_file << j.dump(2) << "\n";
  }
}

void run_sim(const SimOptions& o) {
  if (o.ldpc) {
    run_coded_sim(o);
    return;
  }
  mimorx::require(!o.blocks_set, "blocks", "--blocks needs --ldpc (coded mode)");
  const auto ant = mimorx::sim::parse_mimo(o.mimo);
  mimorx::sim::UncodedConfig c;
  c.shape = {ant.nt, ant.nr, mimorx::parse_modulation(o.mod)};
  c.detector = o.detector;
  c.seed = o.seed;
  c.frames = o.frames;
  c.batch = o.batch;
  c.min_bit_errors = o.min_errors;
  const auto snrs = mimorx::sim::parse_snr_list(o.snr);
  const auto backend = mimorx::Backend::parse(o.backend);
  std::ofstream json_file = open_json(o.json);
  auto results = mimorx::sim::run_uncoded(
      c, backend, snrs,
      [](const auto& r) {
        fmt::print("{:8.2f} {:8.2f} {:12.4e} {:12.4e} {:12d} {:12d} {:9d} {:8.2f}\n", r.snr_db,
                   r.ebn0_db, r.ber(), r.ser(), r.bit_errors, r.bits, r.frames, r.seconds);
        std::fflush(stdout);
      },
      [&] {
        fmt::print(
            "# mimorx sim: {}x{} {} detector={} backend={} frames/point={} seed={} (uncoded, "
            "i.i.d. Rayleigh, SNR = Es/N0)\n",
            c.shape.nt, c.shape.nr, mimorx::to_string(c.shape.mod), c.detector, backend.name(),
            c.frames, c.seed);
        fmt::print("{:>8} {:>8} {:>12} {:>12} {:>12} {:>12} {:>9} {:>8}\n", "snr_db", "ebn0_db",
                   "ber", "ser", "bit_errors", "bits", "frames", "time_s");
      });
  if (json_file) {
    nlohmann::json j;
    j["config"] = common_config(o, c.shape, c.detector, backend);
    j["config"].update(
        {{"frames", c.frames},
         {"coding", "none"},
         {"channel", "rayleigh"},
         {"snr_definition", "Es/N0, Es=1 per transmit antenna, N0 per receive antenna"}});
    for (const auto& r : results) {
      j["points"].push_back({{"snr_db", r.snr_db},
                             {"ebn0_db", r.ebn0_db},
                             {"ber", r.ber()},
                             {"ser", r.ser()},
                             {"bit_errors", r.bit_errors},
                             {"bits", r.bits},
                             {"symbol_errors", r.symbol_errors},
                             {"symbols", r.symbols},
                             {"frames", r.frames},
                             {"seconds", r.seconds}});
    }
    json_file << j.dump(2) << "\n";
  }
}

void add_sim(CLI::App& app) {
  auto opts = std::make_shared<SimOptions>();
  auto* cmd = app.add_subcommand("sim", "Link-level BER/SER simulation over a MIMO channel");
  cmd->add_option("--mimo", opts->mimo, "Antennas <nt>x<nr>, e.g. 4x4 or 2x4")
      ->capture_default_str();
  cmd->add_option("--mod", opts->mod, "bpsk, qpsk, 16qam, 64qam or 256qam")->capture_default_str();
  auto* detector =
      cmd->add_option(
             "--detector", opts->detector,
             "zf, mmse, ml, psd[:LANES], nway:N, kbest:K, trellis, lr-zf, lr-mmse, lr-mmse-sic (with "
             "--ldpc: a soft one, default mmse)")
          ->capture_default_str();
  cmd->add_option("--snr", opts->snr, "Es/N0 in dB: a list 8,14 or a range start:step:stop")
      ->capture_default_str();
  auto* frames = cmd->add_option("--frames", opts->frames, "Received vectors per SNR point")
                     ->capture_default_str();
  cmd->add_option("--batch", opts->batch, "Vectors per detector call (0 = automatic)")
      ->capture_default_str();
  cmd->add_option(
         "--min-errors", opts->min_errors,
         "Stop an SNR point once this many bit errors (with --ldpc: block errors) are seen (0 = "
         "run all)")
      ->capture_default_str();
  cmd->add_option("--backend", opts->backend, "auto, cpu, cuda or cuda:N")->capture_default_str();
  cmd->add_option("--seed", opts->seed, "Seed of the Philox streams")->capture_default_str();
  cmd->add_option("--json", opts->json, "Also write the results to this JSON file");
  cmd->add_flag("--ldpc", opts->ldpc,
                "Coded mode: 5G NR LDPC transport blocks (TS 38.212), soft detection, BER/BLER");
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
                "codewords per vector on the CPU, the paired kernel on CUDA");
  auto* blocks = cmd->add_option("--blocks", opts->blocks, "--ldpc: transport blocks per SNR point")
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

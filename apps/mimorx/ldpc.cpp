// mimorx ldpc encode | decode | ber: the 5G NR LDPC codec from the command line (docs/ldpc.md).
//
// Code: --bg B --z Z (K' = K = 22Z or 10Z information bits per block), or --k K' --rate R (base
// graph and Zc chosen as TS 38.212 §7.2.2 / §5.2.2 do for a block of K' bits; F = K - K' filler
// bits are added and removed internally). Rate matching (§5.4.2, Qm = 1, one block): E = --e, or
// ceil(K' / --rate), or, with neither, every non-filler bit of the circular buffer (N - F).
// --no-rate-match: the transmitted columns of the mother codeword, 66Z (BG1) or 50Z (BG2) bits
// (the 2Z punctured systematic columns are excluded; filler positions are included, as 0).
// Formats: one code block per line. Bits: characters 0/1 (whitespace ignored). LLRs: numbers
// separated by whitespace (positive = bit 0), or with --binary float32 little-endian, blocks
// back to back. ber: the curves of `mimorx sim` (curve_run.hpp) for one code block over AWGN.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "command.hpp"
#include "curve_run.hpp"
#include "decoder_params.hpp"
#include "io.hpp"
#include "ldpc_io.hpp"
#include "mimorx/core/backend.hpp"
#include "mimorx/core/buffer.hpp"
#include "mimorx/core/error.hpp"
#include "mimorx/core/rng.hpp"
#include "mimorx/ldpc/decoder.hpp"
#include "mimorx/ldpc/encoder.hpp"
#include "mimorx/ldpc/rate_match.hpp"
#include "mimorx/ldpc/segmentation.hpp"
#include "mimorx/modem/demap.hpp"
#include "mimorx/modem/modulation.hpp"
#include "mimorx/sim/coded.hpp"
#include "option_names.hpp"
#include "sim/point_json.hpp"
#include "snr_range.hpp"

namespace {

using namespace mimorx;
using namespace mimorx::ldpc;

struct Options {
  int bg = 0, z = 0, k = 0, e = 0, rv = 0, iters = 10;
  double rate = 0.0;
  bool no_rate_match = false, binary = false;
  std::string algo = "nms", backend = "auto", in = "-", out = "-";
  std::string layer_order = "extension-first";
  float alpha = 0.75f, alpha_last = 0.f, beta = 0.5f;
  bool int8 = false;
  bool half = false;
  // ber (the stop rules and files of curve_run.hpp)
  std::string mod = "bpsk", snr, ebn0, json, csv;  // no --snr/--ebn0: from the capacity limit
  std::int64_t blocks = 1000, min_errors = 100;
  std::int64_t batch = 0;  // ldpc ber: code blocks per call (0 = automatic)
  bool early_stop = false, resume = false;
  bool no_early_termination = false;
  std::uint64_t seed = 1;
  bool e_set = false;  // --e given (0 included)
};

// The largest E (rate-matched bits per block) a run may ask for: rate 1/124 of the largest
// block; a larger E only repeats the circular buffer and costs memory (8 bytes per bit).
constexpr int kMaxE = 1 << 20;

// One code block's parameters, resolved from the options.
struct Code {
  BaseGraph bg;
  int z, k_prime, k, n;  // n: full mother codeword (68Z / 52Z)
  int tx;                // bits per block on the air: E, or 66Z / 50Z without rate matching
  bool rate_match;
  RateMatchConfig rm;
};

// --e as given: at least K' (a code rate above 1 cannot be decoded), at most kMaxE.
int checked_e(int e, int k_prime) {
  require(e >= k_prime && e <= kMaxE, "e",
          fmt::format("{}; allowed K' = {} .. {} (a code rate of at most 1)", e, k_prime, kMaxE));
  return e;
}

// E from --rate (ceil(K' / R)) or, with neither --e nor --rate, every non-filler bit of the
// circular buffer; rounded up to whole modulation symbols (ber).
int derived_e(const Options& o, const Code& c, int ncb, int qm) {
  const double e = o.rate > 0 ? std::ceil(c.k_prime / o.rate) : ncb - (c.k - c.k_prime);
  require(e <= kMaxE, "rate",
          fmt::format("{} gives E = ceil(K' / R) = {:.4g} bits per block; the most is {} (a rate "
                      "of at least {:.3g} for K' = {})",
                      o.rate, e, kMaxE, double(c.k_prime) / kMaxE, c.k_prime));
  return (int(e) + qm - 1) / qm * qm;
}

Code resolve(const Options& o, int qm = 1) {
  Code c{};
  const bool by_graph = o.bg != 0 || o.z != 0;
  if (by_graph == (o.k != 0)) {
    std::string given;
    for (const auto& [name, value] : {std::pair{"--bg", o.bg}, {"--z", o.z}, {"--k", o.k}}) {
      if (value != 0) given += (given.empty() ? "" : ", ") + std::string(name);
    }
    throw InvalidArgument("code: give either --bg and --z, or --k and --rate (got " +
                          (given.empty() ? std::string("none of them") : given) + ")");
  }
  require(o.rate == 0.0 || (std::isfinite(o.rate) && o.rate > 0.0 && o.rate <= 0.95), "rate",
          fmt::format("{}; allowed (0, 0.95]", o.rate));
  if (by_graph) {
    require(o.bg == 1 || o.bg == 2, "bg", fmt::format("{}; allowed 1 or 2", o.bg));
    require(is_lifting_size(o.z), "z",
            fmt::format("{} is not a 5G NR lifting size (TS 38.212 Table 5.3.2-1)", o.z));
    c.bg = BaseGraph(o.bg);
    c.z = o.z;
    c.k = (o.bg == 1 ? 22 : 10) * o.z;
    c.k_prime = c.k;
  } else {
    require(o.rate > 0.0, "rate", "--k needs --rate (the code rate that picks the base graph)");
    // The smallest lifting size is 2 and a block needs K' > 2 Zc (its first 2 Zc bits are
    // punctured), so K' starts at 5.
    require(o.k >= 5 && o.k <= 8448, "k", fmt::format("{} bits; allowed 5..8448", o.k));
    c.bg = select_base_graph(o.k, o.rate);
    require(c.bg == BaseGraph::bg1 || o.k <= 3840, "k",
            fmt::format("{} bits at rate {} selects BG2, whose blocks hold at most 3840 bits", o.k,
                        o.rate));
    int kb = 22;
    if (c.bg == BaseGraph::bg2) kb = o.k > 640 ? 10 : o.k > 560 ? 9 : o.k > 192 ? 8 : 6;
    c.z = 0;
    for (int z : lifting_sizes()) {
      if (kb * z >= o.k) {
        c.z = z;
        break;
      }
    }
    c.k = (c.bg == BaseGraph::bg1 ? 22 : 10) * c.z;
    c.k_prime = o.k;
  }
  c.n = (c.bg == BaseGraph::bg1 ? 68 : 52) * c.z;
  c.rate_match = !o.no_rate_match;
  const int ncb = (c.bg == BaseGraph::bg1 ? 66 : 50) * c.z;
  if (c.rate_match) {
    const int e = o.e_set ? checked_e(o.e, c.k_prime) : derived_e(o, c, ncb, qm);
    c.rm = RateMatchConfig{c.bg, c.z, c.k_prime, ncb, e, 1, o.rv};
    validate(c.rm);
    c.tx = e;
  } else {
    require(o.rv == 0, "rv", "--rv needs rate matching (drop --no-rate-match)");
    require(!o.e_set, "e", "--e needs rate matching (drop --no-rate-match or --e)");
    c.tx = ncb;
  }
  return c;
}

// Blocks of 0/1 bits as text: one block of `per_block` characters per line.
std::string bit_lines(const std::vector<std::uint8_t>& bits, int per_block) {
  std::string out;
  out.reserve(bits.size() + bits.size() / std::size_t(per_block));
  for (std::size_t i = 0; i < bits.size(); ++i) {
    out += char('0' + bits[i]);
    if ((i + 1) % std::size_t(per_block) == 0) out += '\n';
  }
  return out;
}

// Encodes a batch of K'-bit blocks into the bits sent per block (E or 66Z/50Z).
std::vector<std::uint8_t> encode_blocks(const Code& c, const Backend& backend,
                                        const std::vector<std::uint8_t>& info, int num) {
  std::vector<std::uint8_t> full(std::size_t(num) * c.k, 0);
  for (int w = 0; w < num; ++w) {
    std::copy_n(info.begin() + std::size_t(w) * c.k_prime, c.k_prime,
                full.begin() + std::size_t(w) * c.k);
  }
  EncoderPlan plan(c.bg, c.z, backend);
  std::vector<std::uint8_t> cw(std::size_t(num) * c.n);
  if (backend.is_cuda()) {
    auto d_in = Buffer<std::uint8_t>::device(full.size(), backend.device());
    auto d_cw = Buffer<std::uint8_t>::device(cw.size(), backend.device());
    d_in.copy_from_host(full.data(), full.size());
    plan.encode(d_in, num, d_cw);
    d_cw.copy_to_host(cw.data(), cw.size());
  } else {
    plan.encode(View<const std::uint8_t>(full.data(), std::int64_t(full.size()), Memory::host), num,
                View<std::uint8_t>(cw.data(), std::int64_t(cw.size()), Memory::host));
  }
  std::vector<std::uint8_t> tx(std::size_t(num) * c.tx);
  for (int w = 0; w < num; ++w) {
    std::span<const std::uint8_t> one(cw.data() + std::size_t(w) * c.n, c.n);
    std::span<std::uint8_t> dst(tx.data() + std::size_t(w) * c.tx, c.tx);
    if (c.rate_match) {
      rate_match(c.rm, one, dst);
    } else {
      std::copy(one.begin() + 2 * c.z, one.end(), dst.begin());
    }
  }
  return tx;
}

// Decodes num blocks of received LLRs (c.tx each); returns K' bits per block.
std::vector<std::uint8_t> decode_blocks(const Code& c, DecoderPlan& plan, const Backend& backend,
                                        const std::vector<float>& llr, int num,
                                        std::vector<int>* iters = nullptr) {
  std::vector<float> mother(std::size_t(num) * c.n, 0.f);
  for (int w = 0; w < num; ++w) {
    std::span<const float> one(llr.data() + std::size_t(w) * c.tx, c.tx);
    std::span<float> dst(mother.data() + std::size_t(w) * c.n, c.n);
    if (c.rate_match) {
      rate_recover(c.rm, one, dst);
    } else {
      for (int i = 0; i < c.tx; ++i) {
        require(std::isfinite(one[i]), "llr",
                fmt::format("block {} value {} is NaN or Inf; LLRs must be finite", w, i));
      }
      std::copy(one.begin(), one.end(), dst.begin() + 2 * c.z);
      for (int p = c.k_prime; p < c.k; ++p) dst[p] = kFillerLlr;
    }
  }
  std::vector<std::uint8_t> bits(std::size_t(num) * c.k);
  std::vector<int> it(num, 0);
  if (backend.is_cuda()) {
    auto d_llr = Buffer<float>::device(mother.size(), backend.device());
    auto d_bits = Buffer<std::uint8_t>::device(bits.size(), backend.device());
    auto d_it = Buffer<int>::device(num, backend.device());
    d_llr.copy_from_host(mother.data(), mother.size());
    plan.decode(d_llr, num, d_bits, d_it);
    d_bits.copy_to_host(bits.data(), bits.size());
    d_it.copy_to_host(it.data(), num);
  } else {
    plan.decode(View<const float>(mother.data(), std::int64_t(mother.size()), Memory::host), num,
                View<std::uint8_t>(bits.data(), std::int64_t(bits.size()), Memory::host),
                View<int>(it.data(), num, Memory::host));
  }
  std::vector<std::uint8_t> out(std::size_t(num) * c.k_prime);
  for (int w = 0; w < num; ++w) {
    std::copy_n(bits.begin() + std::size_t(w) * c.k, c.k_prime,
                out.begin() + std::size_t(w) * c.k_prime);
  }
  if (iters) *iters = std::move(it);
  return out;
}

void run_encode(const Options& o) {
  const Code c = resolve(o);
  const Backend backend = Backend::parse(o.backend);
  const auto info = mimorx::cli::read_bit_blocks(mimorx::cli::read_input(o.in, "input"), c.k_prime);
  const int num = int(info.size() / std::size_t(c.k_prime));
  const auto tx = encode_blocks(c, backend, info, num);
  mimorx::cli::write_output(o.out, bit_lines(tx, c.tx), "output");
}

DecoderPlan make_decoder(const Code& c, const Options& o, const Backend& backend) {
  require(o.iters >= 1 && o.iters <= kMaxDecoderIters, "iters",
          fmt::format("{}; allowed 1..{}", o.iters, kMaxDecoderIters));
  DecoderConfig dc{c.bg, c.z};
  dc.algo = parse_decoder_algo(o.algo);
  dc.arithmetic = mimorx::cli::decoder_arithmetic(dc.algo, o.int8, o.half);
  dc.layer_order = parse_layer_order(o.layer_order);
  dc.max_iters = o.iters;
  dc.alpha = o.alpha;
  dc.alpha_last = o.alpha_last;
  dc.beta = o.beta;
  dc.quantized = o.int8;
  dc.early_termination = !o.no_early_termination;
  return DecoderPlan(dc, backend);
}

void run_decode(const Options& o) {
  const Code c = resolve(o);
  const Backend backend = Backend::parse(o.backend);
  DecoderPlan plan = make_decoder(c, o, backend);  // options first, then the input
  const auto llr =
      mimorx::cli::read_llr_blocks(mimorx::cli::read_input(o.in, "input"), c.tx, o.binary);
  const int num = int(llr.size() / std::size_t(c.tx));
  const auto bits = decode_blocks(c, plan, backend, llr, num);
  mimorx::cli::write_output(o.out, bit_lines(bits, c.k_prime), "output");
}

// One SNR point of `ldpc ber`: blocks until max_blocks or the block that makes min_errors
// block errors. Bits and noise are Philox streams addressed by the block index only, so every
// SNR point sees the same bits and noise shapes and a point's counts do not depend on the
// points before it (--resume, --early-stop).
sim::CodedPointResult ber_point(
    const Options& o, const Code& c, DecoderPlan& plan, const Backend& backend, Modulation mod,
    double esn0, const std::function<void(const sim::CodedPointResult&)>& batch_done) {
  const auto t0 = std::chrono::steady_clock::now();
  const int qm = bits_per_symbol(mod);
  const double rate = double(c.k_prime) / c.tx;
  sim::CodedPointResult r;
  r.snr_db = esn0;
  r.ebn0_db = esn0 - 10.0 * std::log10(rate * qm);
  const float n0 = float(std::pow(10.0, -esn0 / 10.0));
  const float sd = std::sqrt(n0 / 2.f);
  const std::int64_t batch = std::min<std::int64_t>(o.blocks, o.batch > 0 ? o.batch : 256);
  bool stopped = false;
  while (!stopped && r.blocks < o.blocks) {
    const int num = int(std::min<std::int64_t>(batch, o.blocks - r.blocks));
    std::vector<std::uint8_t> info(std::size_t(num) * c.k_prime);
    const std::uint64_t base = std::uint64_t(r.blocks) * c.k_prime;
    for (std::size_t i = 0; i < info.size(); ++i)
      info[i] = rng::uniform_at(o.seed, 0, base + i) < 0.5f;
    const auto tx = encode_blocks(c, backend, info, num);
    std::vector<float> llr(tx.size());
    const std::int64_t syms = std::int64_t(tx.size()) / qm;
    const std::uint64_t nbase = std::uint64_t(r.blocks) * c.tx / qm * 2;
    for (std::int64_t s = 0; s < syms; ++s) {
      cf32 x = map_symbol(mod, tx.data() + s * qm);
      x.re += sd * rng::gaussian_at(o.seed, 1, nbase + 2 * s);
      x.im += sd * rng::gaussian_at(o.seed, 1, nbase + 2 * s + 1);
      maxlog_llrs(mod, x, n0, llr.data() + s * qm);
    }
    const auto got = decode_blocks(c, plan, backend, llr, num);
    for (int w = 0; w < num && !stopped; ++w) {
      int e = 0;
      for (int i = 0; i < c.k_prime; ++i) {
        e += got[std::size_t(w) * c.k_prime + i] != info[std::size_t(w) * c.k_prime + i];
      }
      r.bit_errors += e;
      r.bits += c.k_prime;
      r.blocks += 1;
      r.block_errors += e > 0;
      stopped = o.min_errors > 0 && r.block_errors >= o.min_errors;
    }
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (batch_done) batch_done(r);
  }
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

// `ldpc ber` as a curve of the common dialect (curve_run.hpp): one antenna, AWGN, the max-log
// demapper as its detector ("maxlog"), a code block without CRC.
void run_ber(const Options& o) {
  const mimorx::cli::CurveFiles files{o.json, o.csv, o.resume};
  mimorx::cli::check_curve_files(files);
  const Modulation mod = parse_modulation(o.mod);
  const int qm = bits_per_symbol(mod);
  const Code c = resolve(o, qm);
  const Backend backend = Backend::parse(o.backend);
  require(c.tx % qm == 0, "mod",
          fmt::format("{} bits per block are not a multiple of Qm = {}; pick --e", c.tx, qm));
  require(o.blocks >= 1, "max-blocks", fmt::format("{}; must be >= 1", o.blocks));
  require(o.min_errors >= 0, "min-errors", fmt::format("{}; must be >= 0", o.min_errors));
  require(o.batch >= 0, "batch", fmt::format("{}; must be >= 0 (0 = automatic)", o.batch));
  const double rate = double(c.k_prime) / c.tx;
  const double limit = mimorx::cli::awgn_capacity_snr_db(rate * qm);
  const auto snrs = mimorx::cli::esn0_points(
      o.snr, o.ebn0, qm, rate, mimorx::cli::sweep_from_thresholds(limit, limit, 0.5, 4.0, 0.0));
  auto plan = std::make_shared<DecoderPlan>(make_decoder(c, o, backend));
  mimorx::cli::CurveMode m;
  m.units = "blocks";
  m.error_key = "block_errors";
  m.rule = {o.blocks, o.min_errors};
  m.early_stop = o.early_stop;
  m.config = mimorx::cli::curve_config("ldpc", 1, 1, to_string(mod), backend.name(), o.seed, "awgn",
                                       snrs, o.min_errors, "max_blocks", o.blocks, o.early_stop);
  m.config.update({{"tbs", c.k_prime},
                   {"target_rate", o.rate > 0 ? mimorx::cli::ojson(o.rate) : nullptr},
                   {"g", c.tx},
                   {"rate", rate},
                   {"decoder", o.algo},
                   {"alpha", o.alpha},
                   {"alpha_last", o.alpha_last},
                   {"beta", o.beta},
                   {"int8", o.int8},
                   {"half", o.half},
                   {"iters", o.iters},
                   {"early_termination", !o.no_early_termination},
                   {"batch", o.batch},
                   {"bg", int(c.bg)},
                   {"z", c.z},
                   {"k", c.k_prime},
                   {"e", c.tx},
                   {"rv", o.rv},
                   {"rate_match", c.rate_match},
                   {"layer_order", o.layer_order},
                   {"interleaving", "none"}});
  m.identity = {"coding",
                "nt",
                "nr",
                "mod",
                "seed",
                "channel",
                "snr_definition",
                "tbs",
                "g",
                "decoder",
                "alpha",
                "alpha_last",
                "beta",
                "int8",
                "half",
                "iters",
                "bg",
                "z",
                "rv",
                "rate_match",
                "layer_order",
                "early_termination"};
  m.fields = mimorx::cli::coded_fields();
  m.table = mimorx::cli::coded_table();
  m.validate = [](const std::string&) { return mimorx::cli::ojson::object(); };
  m.run = [&o, c, plan, backend, mod](const std::string& detector,
                                      const std::vector<double>& points,
                                      const mimorx::cli::SweepHooks& hooks) {
    if (hooks.ready) hooks.ready();
    for (double esn0 : points) {
      const auto r =
          ber_point(o, c, *plan, backend, mod, esn0, [&](const sim::CodedPointResult& p) {
            hooks.batch({p.blocks, p.block_errors, p.bits});
          });
      hooks.point(mimorx::sim::coded_point_json(detector, r, false));
      if (o.early_stop && r.block_errors == 0) break;
    }
  };
  m.describe = [params = mimorx::cli::decoder_params(o.algo, o.alpha, o.alpha_last, o.beta, o.int8,
                                                     o.half),
                &o](const mimorx::cli::ojson& cfg) {
    return fmt::format(
        "# mimorx ldpc ber: BG{} Z={} K'={} E={} R={:.4f} {} (no bit interleaving) {}{} iters={} "
        "backend={} max_blocks={} min_errors={} (block errors){} seed={} (AWGN, max-log "
        "demapper; SNR = Es/N0)",
        cfg["bg"].get<int>(), cfg["z"].get<int>(), cfg["k"].get<int>(), cfg["e"].get<int>(),
        cfg["rate"].get<double>(), cfg["mod"].get<std::string>(), o.algo,
        params.empty() ? "" : " " + params, o.iters, cfg["backend"].get<std::string>(),
        cfg["max_blocks"].get<std::int64_t>(), cfg["min_errors"].get<std::int64_t>(),
        cfg["early_stop"].get<bool>() ? " early_stop" : "", cfg["seed"].get<std::uint64_t>());
  };
  mimorx::cli::run_curves(files, m, {"maxlog"}, snrs);
}

void add_code_options(CLI::App* cmd, Options* o) {
  cmd->add_option("--bg", o->bg, "Base graph 1 or 2 (with --z; 0: not given)")
      ->capture_default_str();
  cmd->add_option("--z", o->z, "Lifting size Z (TS 38.212 Table 5.3.2-1; 0: not given)")
      ->capture_default_str();
  cmd->add_option("--k", o->k, "Information bits K' per block, 5..8448 (with --rate; 0: not given)")
      ->capture_default_str();
  cmd->add_option("--rate", o->rate,
                  "Code rate: picks the base graph with --k; E = ceil(K'/R) (0: not given, E "
                  "from --e or every non-filler bit of the circular buffer)")
      ->capture_default_str();
  cmd->add_option_function<int>(
      "--e",
      [o](int e) {
        o->e = e;
        o->e_set = true;
      },
      "Rate-matched bits per block, K'..1048576 (overrides --rate for E) [default: from --rate]");
  cmd->add_option("--rv", o->rv, "Redundancy version 0..3")->capture_default_str();
  cmd->add_flag("--no-rate-match", o->no_rate_match,
                "Raw transmitted columns: 66Z (BG1) / 50Z (BG2) bits, 2Z punctured excluded");
  cmd->add_option("--backend", o->backend, "auto, cpu or cuda[:N]")->capture_default_str();
}

void add_decoder_options(CLI::App* cmd, Options* o) {
  cmd->add_option("--iters", o->iters, "Maximum decoder iterations")->capture_default_str();
  cmd->add_flag("--no-early-termination", o->no_early_termination,
                "Run all --iters iterations on every code block (by default a block stops at a "
                "zero syndrome)")
      ->capture_default_str();
  // --decoder as in `sim --ldpc`; --algo is the same option.
  cmd->add_option("--decoder,--algo", o->algo, "bp, nms or oms")->capture_default_str();
  cmd->add_option("--layer-order", o->layer_order, "Layered decoders: extension-first or natural")
      ->capture_default_str();
  cmd->add_option("--alpha", o->alpha, "nms: normalisation factor in (0, 1]")
      ->capture_default_str();
  cmd->add_option("--alpha-last", o->alpha_last,
                  "nms: final factor of a linear per-iteration ramp from --alpha (0 = constant; "
                  "0.5 -> 0.875 suits low rates)")
      ->capture_default_str();
  cmd->add_option("--beta", o->beta, "oms: offset in LLR units")->capture_default_str();
  cmd->add_flag("--int8", o->int8,
                "nms/oms: integer decoder (6-bit channel LLRs, 8-bit messages): 16 codewords per "
                "vector on the CPU, the paired kernel on CUDA");
  cmd->add_flag("--half", o->half,
                "nms/oms: half-precision decoder (two codewords per thread in f16x2 on CUDA; its "
                "bit-exact model on the CPU, slow; docs/ldpc_half.md)");
}

void add_ldpc(CLI::App& app) {
  auto* ldpc = app.add_subcommand("ldpc", "5G NR LDPC: encode, decode, BER over AWGN");
  ldpc->require_subcommand(1);
  auto o = std::make_shared<Options>();
  auto* enc = ldpc->add_subcommand("encode",
                                   "Encode: one block of K' bits (0/1) per line in, "
                                   "one block of E bits per line out");
  add_code_options(enc, o.get());
  enc->add_option("-i,--input", o->in, "Input file ('-': stdin)")->capture_default_str();
  enc->add_option("-o,--output", o->out, "Output file ('-': stdout)")->capture_default_str();
  enc->callback([o] { run_encode(*o); });
  auto* dec = ldpc->add_subcommand(
      "decode", "Decode: one block of E LLRs per line in (positive = 0), K' bits per line out");
  add_code_options(dec, o.get());
  dec->add_option("-i,--input", o->in, "Input file ('-': stdin)")->capture_default_str();
  dec->add_option("-o,--output", o->out, "Output file ('-': stdout)")->capture_default_str();
  dec->add_flag("--binary", o->binary, "Input LLRs are float32 little-endian, blocks back to back");
  add_decoder_options(dec, o.get());
  dec->callback([o] { mimorx::cli::naming_options([&] { run_decode(*o); }); });
  auto* ber = ldpc->add_subcommand(
      "ber",
      "BER/BLER of one code block over AWGN (one antenna, max-log demapper): the columns, JSON "
      "and stop rules of `mimorx sim`");
  // As in `sim`: an option given twice takes its last value.
  ber->option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  add_code_options(ber, o.get());
  ber->add_option("--mod", o->mod,
                  "bpsk, qpsk, 16qam, 64qam, 256qam; the rate-matched bits are mapped in order "
                  "(Qm = 1 rate matching: no bit interleaving, unlike TS 38.212 for Qm > 1)")
      ->capture_default_str();
  auto* snr = ber->add_option(
      "--snr", o->snr,
      "Es/N0 in dB: a list 1,2 or a range start:step:stop [default: 4 dB in 0.5 dB steps from "
      "the Shannon limit of the code's R Qm bits per symbol, rounded down]");
  ber->add_option("--ebn0", o->ebn0,
                  "Eb/N0 per information bit in dB instead of --snr: Es/N0 = Eb/N0 + 10 log10(R "
                  "Qm)")
      ->excludes(snr)
      ->check(CLI::Validator(mimorx::cli::check_snr_text, "", ""));
  snr->check(CLI::Validator(mimorx::cli::check_snr_text, "", ""));
  ber->add_option("--max-blocks,--blocks,--frames", o->blocks, "Code blocks per SNR point, at most")
      ->capture_default_str();
  ber->add_option("--batch", o->batch,
                  "Code blocks per call (0 = automatic; the counts do not depend on it)")
      ->capture_default_str();
  ber->add_option("--min-errors", o->min_errors,
                  "Stop an SNR point once this many block errors are seen (0 = never)")
      ->capture_default_str();
  ber->add_flag("--early-stop", o->early_stop,
                "End the sweep after its first SNR point without a block error");
  ber->add_option("--seed", o->seed, "Random seed (Philox)")->capture_default_str();
  add_decoder_options(ber, o.get());
  ber->add_option("--json", o->json,
                  "Write the results to this JSON file, rewritten after every point");
  ber->add_option("--csv", o->csv, "Write the points to this CSV file too");
  ber->add_flag("--resume", o->resume,
                "Keep the points already in the --json file (same configuration) and simulate "
                "only the missing ones");
  ber->callback([o] { mimorx::cli::naming_options([&] { run_ber(*o); }); });
}

}  // namespace
MIMORX_REGISTER_COMMAND(ldpc, add_ldpc);

#include "sim_nr.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "mimorx/core/error.hpp"
#include "mimorx/sim/nr_link.hpp"
#include "sim_ranks.hpp"
#include "snr_range.hpp"

namespace mimorx::cli {

namespace {

// Thrown from the `ready` hook to stop a run once the library has validated it.
struct Validated {};

std::string channel_name(const std::optional<channel::TdlConfig>& tdl) {
  if (!tdl) return "flat rayleigh, one realisation per slot";
  return channel::tdl_name(*tdl);
}

sim::NrLinkConfig link_config(const NrOptions& o, const NrCommon& k) {
  sim::NrLinkConfig c;
  require(o.scs == 15 || o.scs == 30, "scs", std::to_string(o.scs) + "; allowed 15 or 30 (kHz)");
  c.slot.numerology = o.scs == 15 ? 0 : 1;
  c.slot.n_prb = o.prb;
  c.slot.layers = o.layers;
  require(o.dmrs_type == 1 || o.dmrs_type == 2, "dmrs-type",
          std::to_string(o.dmrs_type) + "; allowed 1 or 2");
  c.slot.dmrs_type = o.dmrs_type == 1 ? nr::DmrsType::type1 : nr::DmrsType::type2;
  c.slot.additional_position = o.dmrs_add_pos;
  c.mcs_table = nr::parse_mcs_table(o.mcs_table);
  c.mcs = o.mcs;
  c.n_rx = o.nrx;
  require(o.channel == "iid" || o.channel.rfind("tdl", 0) == 0, "channel",
          "'" + o.channel + "'; give iid (flat Rayleigh), tdl-<a..e>:DS:fD:corr (e.g. " +
              "tdl-c:300:100:low) or tdla30|tdlb100|tdlc300-fD:corr (e.g. tdlb100-400:low)");
  if (o.channel != "iid") c.tdl = channel::parse_tdl(o.channel);
  c.harq_transmissions = o.harq;
  if (o.csi == "perfect") {
    c.csi = sim::NrCsi::perfect;
  } else if (o.csi == "ls-linear") {
    c.csi = sim::NrCsi::ls_linear;
  } else if (o.csi == "ls-lmmse") {
    c.csi = sim::NrCsi::ls_lmmse;
  } else {
    throw InvalidArgument("csi: '" + o.csi +
                          "'; give perfect (the true H and N0), ls-linear or ls-lmmse (DM-RS "
                          "estimates with linear or LMMSE interpolation, docs/nr_estimate.md)");
  }
  c.decoder = k.decoder;
  c.seed = k.seed;
  c.max_slots = o.slots;
  c.min_block_errors = k.min_errors;
  c.batch_blocks = k.batch;
  c.early_stop = k.early_stop;
  c.comm = k.comm;
  return c;
}

ojson nr_point(const std::string& detector, const sim::NrPointResult& r) {
  std::vector<double> bler_tx;
  for (std::size_t i = 0; i < r.tx_errors.size(); ++i) bler_tx.push_back(r.bler_tx(i));
  return {{"detector", detector},
          {"snr_db", r.snr_db},
          {"ebn0_db", r.ebn0_db},
          {"throughput", r.throughput()},
          {"throughput_fraction", r.throughput_fraction()},
          {"bler_tx", bler_tx},
          {"residual_bler", r.residual_bler()},
          {"tx_errors", r.tx_errors},
          {"block_errors", r.block_errors()},
          {"blocks", r.blocks},
          {"slots", r.slots},
          {"undetected_errors", r.undetected_errors},
          {"seconds", r.seconds}};
}

std::vector<double> nr_sweep(const NrOptions& o, const NrCommon& k, const sim::NrLinkSetup& s,
                             int nt, int nr) {
  const int m = bits_per_symbol(s.mod);
  std::string fallback;
  if (k.snr.empty() && k.ebn0.empty()) {
    double lowest = 1e9, highest = -1e9;
    std::set<Receiver> receivers;
    for (const auto& d : k.detectors) receivers.insert(receiver_of(d));
    for (const auto r : receivers) {
      const double t = mimo_capacity_snr_db(nt, nr, nt * m * s.rate, {}, r);
      lowest = std::min(lowest, t);
      highest = std::max(highest, t);
    }
    fallback = sweep_from_thresholds(lowest, highest, 1.0, 8.0, 5.0);
  }
  (void)o;
  return esn0_points(k.snr, k.ebn0, m, s.rate, fallback);
}

}  // namespace

void add_nr_options(CLI::App& cmd, NrOptions& o) {
  cmd.add_flag("--nr", o.enabled,
               "NR slots (docs/nr_link.md): MCS tables, TBS, layers on a resource grid, flat or "
               "TDL channel, HARQ; throughput and BLER per transmission (CPU or CUDA backend, same "
               "counts)")
      ->capture_default_str();
  const auto add = [&](CLI::Option* opt) { o.options.push_back(opt->capture_default_str()); };
  add(cmd.add_option("--mcs", o.mcs, "--nr: MCS index (0..28; table 2: 0..27)"));
  add(cmd.add_option("--mcs-table", o.mcs_table,
                     "--nr: 1 (64QAM), 2 (256QAM) or 3 (64QAM low SE), TS 38.214 5.1.3.1"));
  add(cmd.add_option("--prb", o.prb, "--nr: PRBs of the grid, 1..273"));
  add(cmd.add_option("--layers", o.layers,
                     "--nr: layers 1..4, one per transmit antenna (no precoding)"));
  add(cmd.add_option("--scs", o.scs, "--nr: subcarrier spacing in kHz, 15 or 30"));
  add(cmd.add_option("--dmrs-type", o.dmrs_type, "--nr: DM-RS configuration type, 1 or 2"));
  add(cmd.add_option("--dmrs-add-pos", o.dmrs_add_pos, "--nr: dmrs-AdditionalPosition, 0..3"));
  add(cmd.add_option("--harq", o.harq,
                     "--nr: transmissions per transport block at most, 1..4 (rv 0, 2, 3, 1)"));
  add(cmd.add_option("--channel", o.channel,
                     "--nr: iid (flat Rayleigh, one realisation per slot) or "
                     "tdl-X:DS:fD:corr, e.g. tdl-c:300:100:low, or a TS 38.104 profile "
                     "tdla30|tdlb100|tdlc300-fD:corr, e.g. tdlb100-400:low (docs/channel.md)"));
  add(cmd.add_option("--nrx", o.nrx, "--nr: receive antennas, 1..8, at least --layers"));
  add(cmd.add_option("--slots", o.slots, "--nr: slots per SNR point, at most"));
  add(cmd.add_option(
      "--csi", o.csi,
      "--nr: the receiver's channel knowledge: perfect (true H and N0), ls-linear or "
      "ls-lmmse (DM-RS estimates of H and N0)"));
}

void check_nr_options_unused(const NrOptions& o) {
  for (const CLI::Option* opt : o.options)
    require(opt->count() == 0, opt->get_name().substr(2), "applies to --nr only");
}

NrCurves nr_curves(const NrOptions& o, const NrCommon& k) {
  const Backend backend = rank_backend(k.backend, k.comm.get());
  const sim::NrLinkConfig c = link_config(o, k);
  const sim::NrLinkSetup s = sim::nr_link_setup(c);
  const auto snrs = nr_sweep(o, k, s, c.slot.layers, c.n_rx);
  CurveMode m;
  m.comm = k.comm;
  m.units = "slots";
  m.error_key = "block_errors";
  m.rule = {c.max_slots, c.min_block_errors};
  m.early_stop = c.early_stop;
  m.config = curve_config("nr", c.slot.layers, c.n_rx, to_string(s.mod), backend.name(), c.seed,
                          channel_name(c.tdl), snrs, c.min_block_errors, "max_slots", c.max_slots,
                          c.early_stop);
  m.config.update({{"mcs", c.mcs},
                   {"mcs_table", int(c.mcs_table)},
                   {"prb", c.slot.n_prb},
                   {"layers", c.slot.layers},
                   {"scs_khz", o.scs},
                   {"dmrs_type", o.dmrs_type},
                   {"dmrs_add_pos", o.dmrs_add_pos},
                   {"harq", c.harq_transmissions},
                   {"csi", o.csi},
                   {"tbs", s.tbs},
                   {"target_rate", s.target_rate},
                   {"data_res", s.data_res},
                   {"g", s.g},
                   {"rate", s.rate},
                   {"code_blocks", s.code_blocks},
                   {"batch", c.batch_blocks}});
  m.config.update(k.decoder_config);
  m.identity = {"coding",         "nt",           "nr",        "mod", "seed",   "channel",
                "snr_definition", "mcs",          "mcs_table", "prb", "layers", "scs_khz",
                "dmrs_type",      "dmrs_add_pos", "harq",      "csi", "tbs"};
  for (const auto& [key, v] : k.decoder_config.items()) m.identity.push_back(key);
  const ojson fields = nr_point("", {});
  for (const auto& [key, v] : fields.items()) m.fields.push_back(key);
  m.table = {{"snr_db", 'f', 8},         {"ebn0_db", 'f', 8},
             {"throughput", 'f', 11},    {"throughput_fraction", 'f', 19},
             {"residual_bler", 'e', 13}, {"block_errors", 'd', 12},
             {"blocks", 'd', 8},         {"slots", 'd', 8},
             {"seconds", 'f', 8}};
  m.validate = [c, backend, snrs](const std::string& detector) {
    auto v = c;
    v.detector = detector;
    try {
      sim::run_nr_link(v, backend, snrs,
                       {[](const sim::NrLinkSetup&) { throw Validated{}; }, {}, {}});
    } catch (const Validated&) {
    }
    return ojson::object();
  };
  m.run = [c, backend](const std::string& detector, const std::vector<double>& points,
                       const SweepHooks& hooks) {
    auto v = c;
    v.detector = detector;
    sim::NrHooks h;
    h.ready = [&](const sim::NrLinkSetup&) { hooks.ready(); };
    h.batch_done = [&](const sim::NrPointResult& r) {
      hooks.batch({r.slots, r.block_errors(), r.delivered_bits});
    };
    h.point_done = [&](const sim::NrPointResult& r) { hooks.point(nr_point(detector, r)); };
    sim::run_nr_link(v, backend, points, h);
  };
  m.describe = [params = k.decoder_params](const ojson& cfg) {
    return fmt::format(
        "# mimorx sim --nr: {} PRB {} kHz, {} layers x {} rx, mcs={} (table {}) {} tbs={} G={} "
        "rate={:.4f}, dmrs type {} add-pos {}, harq={} csi={}, detectors={} backend={} "
        "decoder={}{} "
        "max_slots={} min_errors={} (residual block errors){} seed={} (channel {}; SNR = Es/N0 "
        "per RE)",
        cfg["prb"].get<int>(), cfg["scs_khz"].get<int>(), cfg["layers"].get<int>(),
        cfg["nr"].get<int>(), cfg["mcs"].get<int>(), cfg["mcs_table"].get<int>(),
        cfg["mod"].get<std::string>(), cfg["tbs"].get<int>(), cfg["g"].get<std::int64_t>(),
        cfg["rate"].get<double>(), cfg["dmrs_type"].get<int>(), cfg["dmrs_add_pos"].get<int>(),
        cfg["harq"].get<int>(), cfg["csi"].get<std::string>(),
        fmt::join(cfg["detectors"].get<std::vector<std::string>>(), ","),
        cfg["backend"].get<std::string>(), cfg["decoder"].get<std::string>(),
        params.empty() ? "" : " " + params, cfg["max_slots"].get<std::int64_t>(),
        cfg["min_errors"].get<std::int64_t>(), cfg["early_stop"].get<bool>() ? " early_stop" : "",
        cfg["seed"].get<std::uint64_t>(), cfg["channel"].get<std::string>());
  };
  return {std::move(m), snrs};
}

}  // namespace mimorx::cli

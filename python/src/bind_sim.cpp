// The link simulator's sweeps (uncoded BER/SER, LDPC-coded BER/BLER): the library entry points
// the CLI's `mimorx sim` calls; the Python side assembles the CLI's JSON document from them.
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "bindings.hpp"
#include "mimorx/sim/coded.hpp"
#include "mimorx/sim/link.hpp"
#include "mimorx/sim/sweep.hpp"
#include "sim/point_json.hpp"

namespace mimorx::python {

namespace nb = nanobind;

namespace {

// A point's JSON object (sim/point_json.hpp: strings, numbers, null) as a dict, keys in order.
nb::dict to_dict(const nlohmann::ordered_json& point) {
  nb::dict d;
  for (const auto& [key, v] : point.items()) {
    const char* k = key.c_str();
    if (v.is_string()) {
      d[k] = v.get<std::string>();
    } else if (v.is_number_unsigned()) {
      d[k] = v.get<std::uint64_t>();
    } else if (v.is_number_integer()) {
      d[k] = v.get<std::int64_t>();
    } else if (v.is_number_float()) {
      d[k] = v.get<double>();
    } else {
      d[k] = nb::none();
    }
  }
  return d;
}

nb::list uncoded(int nt, int nr, const std::string& mod, const std::string& detector,
                 std::uint64_t seed, std::int64_t frames, std::int64_t batch,
                 std::int64_t min_bit_errors, bool early_stop, const std::string& backend,
                 const std::vector<double>& snr_db, double corr_tx, double corr_rx,
                 std::int64_t vectors_per_channel) {
  sim::UncodedConfig c;
  c.shape = {nt, nr, parse_modulation(mod)};
  c.detector = detector;
  c.seed = seed;
  c.frames = frames;
  c.batch = batch;
  c.min_bit_errors = min_bit_errors;
  c.early_stop = early_stop;
  c.channel = {corr_tx, corr_rx, vectors_per_channel};
  const Backend b = Backend::parse(backend);
  std::vector<sim::PointResult> points;
  {
    nb::gil_scoped_release unlocked;
    points = sim::run_uncoded(c, b, snr_db);
  }
  nb::list out;
  for (const auto& r : points) out.append(to_dict(sim::uncoded_point_json(detector, r)));
  return out;
}

nb::tuple coded(int nt, int nr, const std::string& mod, const std::string& detector,
                std::uint64_t seed, int tbs, double rate, const std::string& decoder, int iters,
                float alpha, float alpha_last, float beta, bool int8, bool early_termination,
                std::int64_t blocks, std::int64_t batch_blocks, std::int64_t min_block_errors,
                bool early_stop, const std::string& backend, const std::vector<double>& snr_db,
                double corr_tx, double corr_rx, std::int64_t vectors_per_channel, bool half) {
  sim::CodedConfig c;
  c.shape = {nt, nr, parse_modulation(mod)};
  c.detector = detector;
  c.seed = seed;
  c.tbs = tbs;
  c.code_rate = rate;
  c.decoder.algo = ldpc::parse_decoder_algo(decoder, "decoder");
  require(!(int8 && c.decoder.algo == ldpc::DecoderAlgo::bp), "int8",
          "bp has no integer form; use decoder='nms' or 'oms' with int8=True");
  require(!(int8 && half), "half", "half=True and int8=True choose different decoder arithmetics");
  require(!(half && c.decoder.algo == ldpc::DecoderAlgo::bp), "half",
          "bp has no half-precision form; use decoder='nms' or 'oms' with half=True");
  c.decoder.arithmetic = half ? ldpc::DecoderArithmetic::half : ldpc::DecoderArithmetic::automatic;
  c.decoder.max_iters = iters;
  c.decoder.alpha = alpha;
  c.decoder.alpha_last = alpha_last;
  c.decoder.beta = beta;
  c.decoder.quantized = int8;
  c.decoder.early_termination = early_termination;
  c.blocks = blocks;
  c.batch_blocks = batch_blocks;
  c.min_block_errors = min_block_errors;
  c.early_stop = early_stop;
  c.channel = {corr_tx, corr_rx, vectors_per_channel};
  const Backend b = Backend::parse(backend);
  std::vector<sim::CodedPointResult> points;
  sim::CodedLink link;
  {
    nb::gil_scoped_release unlocked;
    points = sim::run_coded(c, b, snr_db, {}, [&](const sim::CodedLink& l) { link = l; });
  }
  nb::list out;
  for (const auto& r : points) out.append(to_dict(sim::coded_point_json(detector, r, true)));
  return nb::make_tuple(out, link.g, link.rate);
}

}  // namespace

void bind_sim(nb::module_& m) {
  m.def("run_uncoded", &uncoded, nb::arg("nt"), nb::arg("nr"), nb::arg("mod"), nb::arg("detector"),
        nb::arg("seed"), nb::arg("frames"), nb::arg("batch"), nb::arg("min_bit_errors"),
        nb::arg("early_stop"), nb::arg("backend"), nb::arg("snr_db"), nb::arg("corr_tx") = 0.0,
        nb::arg("corr_rx") = 0.0, nb::arg("vectors_per_channel") = 1);
  m.def("run_coded", &coded, nb::arg("nt"), nb::arg("nr"), nb::arg("mod"), nb::arg("detector"),
        nb::arg("seed"), nb::arg("tbs"), nb::arg("rate"), nb::arg("decoder"), nb::arg("iters"),
        nb::arg("alpha"), nb::arg("alpha_last"), nb::arg("beta"), nb::arg("int8"),
        nb::arg("early_termination"), nb::arg("blocks"), nb::arg("batch_blocks"),
        nb::arg("min_block_errors"), nb::arg("early_stop"), nb::arg("backend"), nb::arg("snr_db"),
        nb::arg("corr_tx") = 0.0, nb::arg("corr_rx") = 0.0, nb::arg("vectors_per_channel") = 1,
        nb::arg("half") = false);
  m.def("parse_snr_list", &sim::parse_snr_list, nb::arg("text"));
  m.def(
      "parse_mimo",
      [](const std::string& t) {
        const auto a = sim::parse_mimo(t);
        return nb::make_tuple(a.nt, a.nr);
      },
      nb::arg("text"));
}

}  // namespace mimorx::python

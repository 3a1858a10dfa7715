// mimorx detect: batch detection of received vectors read from a file, so that independent
// tools can check mimorx's detectors. Format (JSON, documented in docs/cli.md):
//   {"nt": 2, "nr": 2, "modulation": "16qam",
//    "h": [re, im, ...]   C channels, each nr x nt column-major, complex interleaved,
//    "y": [re, im, ...]   V vectors of nr complex samples,
//    "noise_var": 0.1 or [one per vector],
//    "vectors_per_channel": 1}
// Output JSON: {"detector", "nt", "nr", "modulation", "vectors", "bits": [V*nt*m 0/1],
//               "llrs": [V*nt*m] (with --soft)}, bit order per detect/common.hpp.
#include <fmt/format.h>

#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>

#include "command.hpp"
#include "mimorx/core/buffer.hpp"
#include "mimorx/core/error.hpp"
#include "mimorx/sim/detector.hpp"

namespace {

using mimorx::require;
using nlohmann::json;

struct DetectOptions {
  std::string in, out = "-", detector = "mmse", backend = "auto";
  bool soft = false;
};

template <class T>
std::vector<T> numbers(const json& j, const std::string& key) {
  require(j.contains(key), key, "missing from the input file");
  if (j[key].is_number()) return {j[key].get<T>()};
  require(j[key].is_array(), key, "must be a number or an array of numbers");
  std::vector<T> v;
  v.reserve(j[key].size());
  for (const auto& e : j[key]) {
    require(e.is_number(), key, "must hold numbers only");
    v.push_back(e.get<T>());
  }
  return v;
}

void run_detect(const DetectOptions& o) {
  json j;
  {
    std::ifstream f(o.in);
    require(bool(f), "in", "cannot open '" + o.in + "'");
    try {
      f >> j;
    } catch (const json::exception& e) {
      throw mimorx::InvalidArgument("in: '" + o.in + "' is not valid JSON (" + e.what() + ")");
    }
  }
  require(j.contains("nt") && j.contains("nr") && j.contains("modulation"), "in",
          "needs the keys nt, nr, modulation, h, y, noise_var");
  const int nt = j["nt"].get<int>(), nr = j["nr"].get<int>();
  require(nt >= 1 && nt <= 64 && nr >= 1 && nr <= 64, "nt/nr", "must be 1..64");
  const auto mod = mimorx::parse_modulation(j["modulation"].get<std::string>());
  const int vpc = j.value("vectors_per_channel", 1);
  require(vpc >= 1, "vectors_per_channel", "must be >= 1");
  const auto h = numbers<float>(j, "h");
  const auto y = numbers<float>(j, "y");
  const auto n0 = numbers<float>(j, "noise_var");
  const std::size_t per_h = std::size_t(2) * nr * nt, per_y = std::size_t(2) * nr;
  require(!h.empty() && h.size() % per_h == 0, "h",
          fmt::format("has {} numbers, not a multiple of 2*nr*nt = {}", h.size(), per_h));
  require(!y.empty() && y.size() % per_y == 0, "y",
          fmt::format("has {} numbers, not a multiple of 2*nr = {}", y.size(), per_y));
  const std::int64_t channels = std::int64_t(h.size() / per_h);
  const std::int64_t vectors = std::int64_t(y.size() / per_y);

  const auto backend = mimorx::Backend::parse(o.backend);
  const mimorx::detect::MimoShape shape{nt, nr, mod};
  auto det = mimorx::sim::make_detector(o.detector, shape, backend, o.soft);
  const auto mem = mimorx::memory_of(backend);
  auto hb = mimorx::Buffer<mimorx::cf32>(h.size() / 2, mem);
  auto yb = mimorx::Buffer<mimorx::cf32>(y.size() / 2, mem);
  auto nb = mimorx::Buffer<float>(n0.size(), mem);
  hb.copy_from_host(reinterpret_cast<const mimorx::cf32*>(h.data()), h.size() / 2);
  yb.copy_from_host(reinterpret_cast<const mimorx::cf32*>(y.data()), y.size() / 2);
  nb.copy_from_host(n0.data(), n0.size());
  const std::size_t nbits = std::size_t(vectors) * shape.bits_per_vector();
  auto bits = mimorx::Buffer<std::uint8_t>(nbits, mem);
  auto llrs = mimorx::Buffer<float>(o.soft ? nbits : 0, mem);
  mimorx::detect::DetectInput in;
  in.h = mimorx::ConstMatrixBatch<mimorx::cf32>(hb.data(), channels, nr, nt, mem);
  in.y = mimorx::ConstMatrixBatch<mimorx::cf32>(yb.data(), vectors, nr, 1, mem);
  in.noise_var = mimorx::View<const float>(nb.data(), std::int64_t(n0.size()), mem);
  in.vectors_per_channel = vpc;
  mimorx::detect::validate(in, shape, backend);
  require(!o.soft || det->soft(), "soft", "detector '" + o.detector + "' has no soft output");
  det->run(in, mimorx::View<std::uint8_t>(bits), mimorx::View<float>(llrs));

  std::vector<std::uint8_t> hb_bits(nbits);
  bits.copy_to_host(hb_bits.data(), nbits);
  json r;
  r["detector"] = o.detector;
  r["backend"] = backend.name();
  r["nt"] = nt;
  r["nr"] = nr;
  r["modulation"] = mimorx::to_string(mod);
  r["vectors"] = vectors;
  r["bits"] = hb_bits;
  if (o.soft) {
    std::vector<float> l(nbits);
    llrs.copy_to_host(l.data(), nbits);
    r["llrs"] = l;
  }
  if (o.out == "-") {
    std::cout << r.dump() << "\n";
  } else {
    std::ofstream f(o.out);
    require(bool(f), "out", "cannot open '" + o.out + "' for writing");
    f << r.dump() << "\n";
  }
}

void add_detect(CLI::App& app) {
  auto opts = std::make_shared<DetectOptions>();
  auto* cmd =
      app.add_subcommand("detect", "Detect received vectors from a JSON file (docs/cli.md)");
  cmd->add_option("--in", opts->in, "Input JSON: nt, nr, modulation, h, y, noise_var")->required();
  cmd->add_option("--out", opts->out, "Output JSON file, - for stdout")->capture_default_str();
  cmd->add_option(
         "--detector", opts->detector,
         "zf, mmse, ml, psd[:LANES], nway:N, kbest:K, trellis, lr-zf, lr-mmse, lr-mmse-sic")
      ->capture_default_str();
  cmd->add_flag("--soft", opts->soft, "Also write max-log LLRs (positive = bit 0)");
  cmd->add_option("--backend", opts->backend, "auto, cpu, cuda or cuda:N")->capture_default_str();
  cmd->callback([opts] { run_detect(*opts); });
}

}  // namespace
MIMORX_REGISTER_COMMAND(detect, add_detect);

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

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <nlohmann/json.hpp>

#include "command.hpp"
#include "detect_scale.hpp"
#include "io.hpp"
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

const json& field(const json& j, const std::string& key) {
  const auto it = j.find(key);
  require(it != j.end(), key,
          "missing from the input file (it needs nt, nr, modulation, h, y, noise_var)");
  return *it;
}

// An integer in lo..hi: 2, not "2", 2.5, 1e20 or true.
int integer_field(const json& j, const std::string& key, std::int64_t lo, std::int64_t hi) {
  const json& v = field(j, key);
  const auto range = fmt::format("an integer in {}..{}", lo, hi);
  require(v.is_number_integer(), key, "must be " + range + ", not " + v.dump().substr(0, 40));
  const bool huge = v.is_number_unsigned() && v.get<std::uint64_t>() > std::uint64_t(hi);
  const std::int64_t x = huge ? hi : v.get<std::int64_t>();
  require(!huge && x >= lo && x <= hi, key, v.dump() + " is out of range; must be " + range);
  return int(v.get<std::int64_t>());
}

float to_float(const json& v, const std::string& key) {
  require(v.is_number(), key, "must hold numbers only, not " + v.dump().substr(0, 40));
  const double d = v.get<double>();
  require(std::isfinite(d) && std::fabs(d) <= std::numeric_limits<float>::max(), key,
          fmt::format("{} is beyond float32's range (|x| <= 3.4e38)", d));
  return float(d);
}

// A number or an array of numbers, each within float32's range.
std::vector<float> numbers(const json& j, const std::string& key) {
  const json& v = field(j, key);
  if (v.is_number()) return {to_float(v, key)};
  require(v.is_array(), key, "must be a number or an array of numbers");
  std::vector<float> out;
  out.reserve(v.size());
  for (const auto& e : v) out.push_back(to_float(e, key));
  return out;
}

json read_input_json(const std::string& path) {
  const std::string text = mimorx::cli::read_input(path, "in");
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  require(!j.is_discarded(), "in",
          "'" + path +
              "' is not one valid JSON document (check the syntax and that nothing "
              "follows the closing brace)");
  require(j.is_object(), "in", "'" + path + "' must hold one JSON object {\"nt\": ..., ...}");
  return j;
}

// The detectors' view of the numbers of d at h, y, noise_var (host copies or device buffers).
mimorx::detect::DetectInput input_of(const mimorx::cli::DetectNumbers& d, const float* h,
                                     const float* y, const float* noise_var, mimorx::Memory mem) {
  const std::int64_t channels = std::int64_t(d.h.size()) / (2 * d.nr * d.nt);
  const std::int64_t vectors = std::int64_t(d.y.size()) / (2 * d.nr);
  mimorx::detect::DetectInput in;
  in.h = mimorx::ConstMatrixBatch<mimorx::cf32>(reinterpret_cast<const mimorx::cf32*>(h), channels,
                                                d.nr, d.nt, mem);
  in.y = mimorx::ConstMatrixBatch<mimorx::cf32>(reinterpret_cast<const mimorx::cf32*>(y), vectors,
                                                d.nr, 1, mem);
  in.noise_var = mimorx::View<const float>(noise_var, std::int64_t(d.noise_var.size()), mem);
  in.vectors_per_channel = d.vectors_per_channel;
  return in;
}

void run_detect(const DetectOptions& o) {
  const json j = read_input_json(o.in);
  const int nt = integer_field(j, "nt", 1, 64), nr = integer_field(j, "nr", 1, 64);
  const json& modulation = field(j, "modulation");
  require(modulation.is_string(), "modulation",
          "must be a string such as \"16qam\", not " + modulation.dump().substr(0, 40));
  const auto mod = mimorx::parse_modulation(modulation.get<std::string>());
  const int vpc =
      j.contains("vectors_per_channel") ? integer_field(j, "vectors_per_channel", 1, INT32_MAX) : 1;
  mimorx::cli::DetectNumbers d{
      nt, nr, vpc, numbers(j, "h"), numbers(j, "y"), numbers(j, "noise_var")};
  const std::size_t per_h = std::size_t(2) * nr * nt, per_y = std::size_t(2) * nr;
  require(!d.h.empty() && d.h.size() % per_h == 0, "h",
          fmt::format("has {} numbers, not a multiple of 2*nr*nt = {}", d.h.size(), per_h));
  require(!d.y.empty() && d.y.size() % per_y == 0, "y",
          fmt::format("has {} numbers, not a multiple of 2*nr = {}", d.y.size(), per_y));
  const std::int64_t vectors = std::int64_t(d.y.size() / per_y);
  const mimorx::detect::MimoShape shape{nt, nr, mod};
  mimorx::detect::validate(
      input_of(d, d.h.data(), d.y.data(), d.noise_var.data(), mimorx::Memory::host), shape,
      mimorx::Backend::cpu());
  if (o.detector == "zf") mimorx::cli::require_full_rank(d, o.detector);
  mimorx::cli::normalise_scale(d);

  const auto backend = mimorx::Backend::parse(o.backend);
  auto det = mimorx::sim::make_detector(o.detector, shape, backend, o.soft);
  require(!o.soft || det->soft(), "soft", "detector '" + o.detector + "' has no soft output");
  const auto mem = mimorx::memory_of(backend);
  auto hb = mimorx::Buffer<float>(d.h.size(), mem);
  auto yb = mimorx::Buffer<float>(d.y.size(), mem);
  auto nb = mimorx::Buffer<float>(d.noise_var.size(), mem);
  hb.copy_from_host(d.h.data(), d.h.size());
  yb.copy_from_host(d.y.data(), d.y.size());
  nb.copy_from_host(d.noise_var.data(), d.noise_var.size());
  const std::size_t nbits = std::size_t(vectors) * shape.bits_per_vector();
  auto bits = mimorx::Buffer<std::uint8_t>(nbits, mem);
  auto llrs = mimorx::Buffer<float>(o.soft ? nbits : 0, mem);
  det->run(input_of(d, hb.data(), yb.data(), nb.data(), mem), mimorx::View<std::uint8_t>(bits),
           mimorx::View<float>(llrs));
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
  if (const auto capped = det->capped_vectors()) {
    r["capped_vectors"] = capped;
    std::fprintf(stderr,
                 "mimorx: warning: %lld of %lld vectors reached psd's node budget (%lld nodes per "
                 "vector); their bits are the best found, not guaranteed ML (docs/cli.md, "
                 "Limits)\n",
                 static_cast<long long>(capped), static_cast<long long>(vectors),
                 static_cast<long long>(mimorx::sim::kPsdNodeCap));
  }
  if (o.soft) {
    std::vector<float> l(nbits);
    llrs.copy_to_host(l.data(), nbits);
    mimorx::cli::saturate_llrs(l);
    r["llrs"] = l;
  }
  mimorx::cli::write_output(o.out, r.dump() + "\n", "out");
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

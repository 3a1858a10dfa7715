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
#include "detect_input.hpp"
#include "detect_scale.hpp"
#include "io.hpp"
#include "mimorx/core/buffer.hpp"
#include "mimorx/core/error.hpp"
#include "mimorx/detect/factory.hpp"

namespace {

using mimorx::require;
using nlohmann::json;

struct DetectOptions {
  std::string in, out = "-", detector = "mmse", backend = "auto";
  bool soft = false;
};

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
  auto [d, mod] = mimorx::cli::parse_detect_input(mimorx::cli::read_input(o.in, "in"), o.in);
  const int nt = d.nt, nr = d.nr;
  const std::int64_t vectors = std::int64_t(d.y.size()) / (2 * nr);
  const mimorx::detect::MimoShape shape{nt, nr, mod};
  mimorx::detect::validate(
      input_of(d, d.h.data(), d.y.data(), d.noise_var.data(), mimorx::Memory::host), shape,
      mimorx::Backend::cpu());
  if (o.detector == "zf") mimorx::cli::require_full_rank(d, o.detector);
  mimorx::cli::normalise_scale(d);

  const auto backend = mimorx::Backend::parse(o.backend);
  auto det = mimorx::detect::make_detector(o.detector, shape, backend, o.soft);
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
    const std::string base = o.detector.substr(0, o.detector.find(':'));  // psd or sts
    std::fprintf(stderr,
                 "mimorx: warning: %lld of %lld vectors reached %s's node budget (%lld nodes per "
                 "vector); their bits are the best found, not guaranteed ML%s (docs/cli.md, "
                 "Limits)\n",
                 static_cast<long long>(capped), static_cast<long long>(vectors), base.c_str(),
                 static_cast<long long>(mimorx::detect::kPsdNodeCap),
                 o.soft ? ", their LLRs not exact" : "");
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
         "zf, mmse, ml, psd[:LANES], sts[:CLIP], nway:N, kbest:K, trellis, lr-zf, lr-mmse, "
         "lr-mmse-sic")
      ->capture_default_str();
  cmd->add_flag("--soft", opts->soft, "Also write max-log LLRs (positive = bit 0)");
  cmd->add_option("--backend", opts->backend, "auto, cpu, cuda or cuda:N")->capture_default_str();
  cmd->callback([opts] { run_detect(*opts); });
}

}  // namespace
MIMORX_REGISTER_COMMAND(detect, add_detect);

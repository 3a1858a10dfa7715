// Linear detector throughput on the GPU: LinearPlan::run (equaliser kernel + detection
// kernel; the device NaN check is off, it synchronises) timed with CUDA events, median of 50.
// Throughput = detected bits / s. Floor: bytes moved (y, H, N0 in; LLRs and bits out; the
// equaliser written once and read per vector) at ~3 TB/s.
// Usage: gpubench_linear_detect [out.jsonl]
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "mimorx/core/backend.hpp"
#include "mimorx/core/buffer.hpp"
#include "mimorx/detect/linear.hpp"

using namespace mimorx;
using namespace mimorx::detect;

namespace {
struct Case {
  LinearKind kind;
  bool soft;
  MimoShape shape;
  std::int64_t channels;
  int vpc;
  bool check;
};
}  // namespace

int main(int argc, char** argv) {
  if (!cuda_available()) {
    std::printf("gpubench_linear: no CUDA GPU available; nothing measured\n");
    return 0;
  }
  std::ofstream json;
  if (argc > 1) json.open(argv[1], std::ios::app);
  const auto dev = cuda_devices().front();
  const double peak_bw = 3.0e12;
  std::printf("Linear detectors on %s; timed: LinearPlan::run, median of 50\n", dev.name.c_str());
  std::printf(
      "| kind | out | shape | channels x vpc | check | ms | Gbit/s | Mvec/s | GB/s | of 3 TB/s "
      "|\n");
  std::printf("|---|---|---|---|---|---|---|---|---|---|\n");
  const MimoShape s44{4, 4, Modulation::qam16};
  const std::vector<Case> cases = {
      {LinearKind::mmse, true, s44, 1 << 16, 14, false},
      {LinearKind::mmse, true, s44, 1 << 16, 14, true},
      {LinearKind::mmse, true, s44, 1 << 20, 1, false},
      {LinearKind::zf, true, s44, 1 << 16, 14, false},
      {LinearKind::mmse, false, s44, 1 << 16, 14, false},
      {LinearKind::mmse, true, MimoShape{8, 8, Modulation::qam64}, 1 << 14, 14, false},
  };
  std::mt19937_64 rng(7);
  std::normal_distribution<float> g(0.f, std::sqrt(0.5f));
  for (const Case& cs : cases) {
    const MimoShape s = cs.shape;
    const std::int64_t C = cs.channels, V = C * cs.vpc;
    std::vector<cf32> hh(std::size_t(C) * s.nr * s.nt), yh(std::size_t(V) * s.nr);
    for (auto& e : hh) e = cf32(g(rng), g(rng));
    for (auto& e : yh) e = cf32(2.f * g(rng), 2.f * g(rng));  // only the cost matters here
    const float n0v = 0.1f;
    Buffer<cf32> h = Buffer<cf32>::device(hh.size()), y = Buffer<cf32>::device(yh.size());
    Buffer<float> n0 = Buffer<float>::device(1);
    h.copy_from_host(hh.data(), hh.size());
    y.copy_from_host(yh.data(), yh.size());
    n0.copy_from_host(&n0v, 1);
    const std::int64_t nb = V * s.bits_per_vector();
    Buffer<std::uint8_t> bits = Buffer<std::uint8_t>::device(nb);
    Buffer<float> llrs(cs.soft ? nb : 0, Memory::device);
    LinearConfig cfg{s, cs.kind, cs.soft, cs.check};
    LinearPlan plan(cfg, Backend::cuda(0));
    DetectInput in{ConstMatrixBatch<cf32>(h.data(), C, s.nr, s.nt, Memory::device),
                   ConstMatrixBatch<cf32>(y.data(), V, s.nr, 1, Memory::device),
                   View<const float>(n0), cs.vpc};
    for (int i = 0; i < 3; ++i) plan.run(in, View<std::uint8_t>(bits), View<float>(llrs));
    GpuTimer timer;
    std::vector<float> ms;
    for (int i = 0; i < 50; ++i) {
      timer.start();
      plan.run(in, View<std::uint8_t>(bits), View<float>(llrs));
      timer.stop();
      ms.push_back(timer.elapsed_ms());
    }
    std::sort(ms.begin(), ms.end());
    const double t = double(ms[ms.size() / 2]) * 1e-3;
    const double w_bytes = double(C) * s.nt * (s.nr * 8.0 + 4.0);
    const double bytes = double(V) * s.nr * 8.0 + double(C) * s.nr * s.nt * 8.0 + 2 * w_bytes +
                         double(nb) * (1.0 + (cs.soft ? 4.0 : 0.0));
    const double gbps = double(nb) / t / 1e9;
    const char* kind = cs.kind == LinearKind::mmse ? "mmse" : "zf";
    std::printf("| %s | %s | %dx%d %s | %lld x %d | %s | %.3f | %.1f | %.0f | %.0f | %.1f%% |\n",
                kind, cs.soft ? "soft" : "hard", s.nt, s.nr, to_string(s.mod).c_str(), (long long)C,
                cs.vpc, cs.check ? "yes" : "no", t * 1e3, gbps, double(V) / t / 1e6,
                bytes / t / 1e9, 100.0 * bytes / t / peak_bw);
    std::fflush(stdout);
    if (json.is_open()) {
      nlohmann::json j = {{"bench", "linear"},
                          {"device", dev.name},
                          {"kind", kind},
                          {"soft", cs.soft},
                          {"nt", s.nt},
                          {"nr", s.nr},
                          {"mod", to_string(s.mod)},
                          {"channels", C},
                          {"vectors_per_channel", cs.vpc},
                          {"device_check", cs.check},
                          {"ms", t * 1e3},
                          {"gbit_per_s", gbps},
                          {"gbytes_per_s", bytes / t / 1e9},
                          {"bytes_floor_ms", bytes / peak_bw * 1e3}};
      json << j.dump() << "\n";
    }
  }
  return 0;
}

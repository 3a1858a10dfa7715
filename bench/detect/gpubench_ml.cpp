// Exhaustive ML throughput on the GPU: i.i.d. Rayleigh channels, one received vector per channel,
// Es/N0 = 10 dB, batches large enough to fill the device (tens of millions of threads).
// Timed: MlPlan::run as a user calls it (device NaN/Inf validation, workspace reset, search and
// reduction kernels, bit decoding), median of 7 after a warm-up. Throughput = detected bits/s.
//
// Operation-count floor (docs/ml.md): the search visits M^(nt-1) column-0 hypotheses per vector
// (the last column is minimised in closed form) at about 22 FP32 instructions each (z update 2,
// base 1, two slicers 10, distance and metric 3, code 3, compare and select 3), plus per chunk
// (M^(nt-2) per vector) the middle columns 4 nr (nt-2), the projections h_l^H rb, w^H rb and the
// residual energy 18 nr, about 12 more, and about 6 per real level of column 0 (ml_math.hpp).
// `floor Gbit/s` is the throughput if every lane of every SM retired one such instruction per
// cycle at 1.98 GHz (the H100 SXM boost clock); `fraction` is measured / floor.
// Usage: gpubench_ml_detect [out.jsonl]
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "detect/ml_cuda.hpp"
#include "mimorx/config.hpp"
#include "mimorx/core/backend.hpp"
#include "mimorx/core/buffer.hpp"
#include "mimorx/detect/ml.hpp"

using namespace mimorx;
using namespace mimorx::detect;

namespace {

struct Row {
  MimoShape shape;
  bool soft;
  std::int64_t vectors;
};

double ops_per_vector(const MimoShape& s) {
  const double m = constellation_size(s.mod), levels = axis_levels(s.mod);
  double chunks = 1;
  for (int t = 2; t < s.nt; ++t) chunks *= m;
  const double per_chunk = (s.nt >= 2 ? m * 22.0 + levels * 6.0 : 22.0) + 18.0 * s.nr +
                           4.0 * s.nr * (s.nt > 2 ? s.nt - 2 : 0) + 12.0;
  return chunks * per_chunk;
}

}  // namespace

int main(int argc, char** argv) {
  if (!cuda_available()) {
    std::printf("gpubench_ml: no CUDA GPU available; nothing measured\n");
    return 0;
  }
  std::ofstream json;
  if (argc > 1) json.open(argv[1], std::ios::app);
  const auto dev = cuda_devices().front();
  const double lanes_per_s = double(dev.sm_count) * 128.0 * 1.98e9;
  std::printf("Exhaustive ML on %s (%d SMs); timed: MlPlan::run, median of 7; Es/N0 10 dB\n",
              dev.name.c_str(), dev.sm_count);
  std::printf(
      "| shape | output | vectors | hypotheses/vector | ms | Mvec/s | Gbit/s | "
      "instr/vector (floor) | floor Gbit/s | fraction |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|---|\n");
  const Row rows[] = {
      {{2, 2, Modulation::qpsk}, false, 1 << 22},  {{2, 2, Modulation::qam16}, false, 1 << 22},
      {{4, 4, Modulation::qpsk}, false, 1 << 21},  {{4, 4, Modulation::qam16}, false, 1 << 18},
      {{2, 2, Modulation::qam16}, true, 1 << 22},  {{4, 4, Modulation::qam16}, true, 1 << 16},
      {{3, 3, Modulation::qam64}, false, 1 << 14}, {{8, 8, Modulation::qpsk}, false, 1 << 12},
  };
  std::mt19937_64 rng(2024);
  std::normal_distribution<float> g(0.f, std::sqrt(0.5f));
  for (const Row& row : rows) {
    const MimoShape& s = row.shape;
    const std::int64_t V = row.vectors;
    const int m = bits_per_symbol(s.mod);
    std::vector<cf32> h(std::size_t(V * s.nr * s.nt)), y(std::size_t(V * s.nr));
    for (auto& e : h) e = {g(rng), g(rng)};
    const float n0 = 0.1f;
    const float sd = std::sqrt(n0);
    for (std::int64_t v = 0; v < V; ++v) {
      std::vector<cf32> x(std::size_t(s.nt));
      for (auto& xt : x) {
        std::uint8_t b[8] = {};
        const auto r = rng();
        for (int k = 0; k < m; ++k) b[k] = std::uint8_t((r >> k) & 1);
        xt = map_symbol(s.mod, b);
      }
      for (int i = 0; i < s.nr; ++i) {
        cf32 acc{sd * g(rng), sd * g(rng)};
        for (int t = 0; t < s.nt; ++t)
          acc += h[std::size_t(v * s.nr * s.nt + t * s.nr + i)] * x[std::size_t(t)];
        y[std::size_t(v * s.nr + i)] = acc;
      }
    }
    Buffer<cf32> dh = Buffer<cf32>::device(h.size()), dy = Buffer<cf32>::device(y.size());
    Buffer<float> dn = Buffer<float>::device(1);
    dh.copy_from_host(h.data(), h.size());
    dy.copy_from_host(y.data(), y.size());
    dn.copy_from_host(&n0, 1);
    const std::size_t nb = std::size_t(V * s.bits_per_vector());
    Buffer<std::uint8_t> bits = Buffer<std::uint8_t>::device(row.soft ? 0 : nb);
    Buffer<float> llrs = Buffer<float>::device(row.soft ? nb : 0);
    DetectInput in;
    in.h = ConstMatrixBatch<cf32>(dh.data(), V, s.nr, s.nt, Memory::device);
    in.y = ConstMatrixBatch<cf32>(dy.data(), V, s.nr, 1, Memory::device);
    in.noise_var = View<const float>(dn.data(), 1, Memory::device);
    MlPlan plan({s, row.soft}, Backend::cuda(0));
    plan.run(in, View<std::uint8_t>(bits), View<float>(llrs));  // warm-up
    std::vector<float> times;
    GpuTimer timer;
    for (int i = 0; i < 7; ++i) {
      timer.start();
      plan.run(in, View<std::uint8_t>(bits), View<float>(llrs));
      timer.stop();
      times.push_back(timer.elapsed_ms());
    }
    std::sort(times.begin(), times.end());
    const double ms = times[times.size() / 2];
    const double mvps = double(V) / (ms * 1e-3) / 1e6;
    const double gbps = mvps * 1e6 * s.bits_per_vector() / 1e9;
    const double ops = ops_per_vector(s);
    const double floor_gbps = lanes_per_s / ops * s.bits_per_vector() / 1e9;
    std::printf("| %dx%d %s | %s | %lld | %lld | %.3f | %.1f | %.3f | %.0f | %.2f | %.2f |\n", s.nt,
                s.nr, to_string(s.mod).c_str(), row.soft ? "soft" : "hard", (long long)V,
                (long long)plan.hypotheses(), ms, mvps, gbps, ops, floor_gbps, gbps / floor_gbps);
    std::fflush(stdout);
    if (json.is_open()) {
      nlohmann::json j = {{"bench", "ml"},
                          {"device", dev.name},
                          {"nt", s.nt},
                          {"nr", s.nr},
                          {"mod", to_string(s.mod)},
                          {"soft", row.soft},
                          {"vectors", V},
                          {"ms", ms},
                          {"mvectors_per_s", mvps},
                          {"gbit_per_s", gbps},
                          {"instr_per_vector", ops},
                          {"floor_gbit_per_s", floor_gbps}};
      json << j.dump() << "\n";
    }
  }
#if MIMORX_HAS_CUDA
  // Work per thread (hard): the plan lets a thread run consecutive chunks, up to 256 column-0
  // hypotheses; this sweep calls the kernel entry with other caps to show why.
  {
    const MimoShape s{4, 4, Modulation::qam16};
    const std::int64_t V = 1 << 18;
    std::vector<cf32> h(std::size_t(V * 16)), y(std::size_t(V * 4));
    for (auto& e : h) e = {g(rng), g(rng)};
    for (auto& e : y) e = {2 * g(rng), 2 * g(rng)};
    Buffer<cf32> dh = Buffer<cf32>::device(h.size()), dy = Buffer<cf32>::device(y.size());
    dh.copy_from_host(h.data(), h.size());
    dy.copy_from_host(y.data(), y.size());
    Buffer<std::uint8_t> bits = Buffer<std::uint8_t>::device(std::size_t(V * 16));
    Buffer<unsigned char> ws = Buffer<unsigned char>::device(
        mimorx::detect::detail::ml_workspace_bytes(V, 4, s.mod, false));
    std::printf(
        "\n| 4x4 16qam hard, kernel only: max hypotheses per thread | ms | Gbit/s "
        "|\n|---|---|---|\n");
    for (int cap : {16, 64, 256, 1024, 4096}) {
      auto once = [&] {
        mimorx::detect::detail::ml_cuda(s.mod, 4, 4, false, dh.data(), 16, dy.data(), 4, 1, V,
                                        nullptr, 1, bits.data(), nullptr, ws.data(), 0, nullptr,
                                        cap);
      };
      once();
      std::vector<float> times;
      GpuTimer timer;
      for (int i = 0; i < 7; ++i) {
        timer.start();
        once();
        timer.stop();
        times.push_back(timer.elapsed_ms());
      }
      std::sort(times.begin(), times.end());
      const double ms = times[3];
      const double gbps = double(V) * 16 / (ms * 1e-3) / 1e9;
      std::printf("| %d | %.3f | %.3f |\n", cap, ms, gbps);
      if (json.is_open()) {
        nlohmann::json j = {{"bench", "ml_per_thread_sweep"},
                            {"device", dev.name},
                            {"max_hypotheses_per_thread", cap},
                            {"ms", ms},
                            {"gbit_per_s", gbps}};
        json << j.dump() << "\n";
      }
    }
  }
#endif
  return 0;
}

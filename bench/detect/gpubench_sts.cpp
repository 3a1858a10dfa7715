// Exact max-log soft detection by the single tree search (StsPlan) on the GPU: i.i.d. Rayleigh
// channels, QAM symbols, Es/N0 per receive antenna = SNR (N0 = nt 10^(-SNR/10), as the sphere
// benchmark), one shared N0. Timed: StsPlan::run as a user calls it (device NaN/Inf check, the
// per-channel sorted QR kernel, the channel sort and the search kernel), median of 5 after a
// warm-up. Throughput = hard bits (= LLRs) per second, as the other detector benchmarks report.
// Each workload runs exact (clip 0) and with clip 4 (sts:4); the node counts per vector come from
// SearchStats, and Gnode/s (all nodes of the batch / time) gives the cost per node.
// Rows with 1 vector per channel pay one QR per vector; the rows with 1024 vectors per channel
// show the search alone (the PSD benchmark's set-up). The 4x4 16-QAM rows also run the search
// with both schedules (StsSchedule::refill, one_per_vector); the automatic choice is refill when
// exact and one_per_vector when clipped.
// Usage: gpubench_sts_detect [out.jsonl]
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
#include "mimorx/detect/sts.hpp"

using namespace mimorx;
using namespace mimorx::detect;

namespace {

struct Row {
  MimoShape shape;
  double snr_db;
  std::int64_t vectors;
  int vpc;  // vectors per channel
  bool both_schedules;
};

}  // namespace

int main(int argc, char** argv) {
  if (!cuda_available()) {
    std::printf("gpubench_sts: no CUDA GPU available; nothing measured\n");
    return 0;
  }
  std::ofstream json;
  if (argc > 1) {
    json.open(argv[1], std::ios::app);
    if (!json) {
      std::fprintf(stderr, "gpubench_sts: cannot open %s for writing\n", argv[1]);
      return 2;
    }
  }
  const auto dev = cuda_devices().front();
  std::printf("STS soft sphere decoder on %s (%d SMs); timed: StsPlan::run, median of 5\n",
              dev.name.c_str(), dev.sm_count);
  std::printf(
      "| shape | SNR dB | clip | threads | vectors | vectors/channel | ms | Mvec/s | Gbit/s | "
      "avg nodes | max nodes | Gnode/s |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|---|---|---|\n");
  const Row rows[] = {
      {{4, 4, Modulation::qam16}, 10.0, 1 << 18, 1, true},
      {{4, 4, Modulation::qam16}, 20.0, 1 << 20, 1, true},
      {{4, 4, Modulation::qam64}, 20.0, 1 << 18, 1, false},
      {{8, 8, Modulation::qam16}, 20.0, 1 << 16, 1, false},
      {{4, 4, Modulation::qam16}, 10.0, 1 << 20, 1024, true},
      {{4, 4, Modulation::qam16}, 20.0, 1 << 20, 1024, true},
  };
  std::mt19937_64 rng(2024);
  std::normal_distribution<float> g(0.f, std::sqrt(0.5f));
  for (const Row& row : rows) {
    const MimoShape& s = row.shape;
    const std::int64_t V = row.vectors, C = V / row.vpc;
    const int m = bits_per_symbol(s.mod);
    std::vector<cf32> h(std::size_t(C * s.nr * s.nt)), y(std::size_t(V * s.nr));
    for (auto& e : h) e = {g(rng), g(rng)};
    const float n0 = float(s.nt * std::pow(10.0, -row.snr_db / 10.0));
    const float sd = std::sqrt(n0);
    std::vector<cf32> x(std::size_t(s.nt));
    for (std::int64_t v = 0; v < V; ++v) {
      for (auto& xt : x) {
        std::uint8_t b[8] = {};
        const auto r = rng();
        for (int k = 0; k < m; ++k) b[k] = std::uint8_t((r >> k) & 1);
        xt = map_symbol(s.mod, b);
      }
      const cf32* hc = &h[std::size_t((v / row.vpc) * s.nr * s.nt)];
      for (int i = 0; i < s.nr; ++i) {
        cf32 acc{sd * g(rng), sd * g(rng)};
        for (int t = 0; t < s.nt; ++t) acc += hc[t * s.nr + i] * x[std::size_t(t)];
        y[std::size_t(v * s.nr + i)] = acc;
      }
    }
    Buffer<cf32> dh = Buffer<cf32>::device(h.size()), dy = Buffer<cf32>::device(y.size());
    Buffer<float> dn = Buffer<float>::device(1);
    dh.copy_from_host(h.data(), h.size());
    dy.copy_from_host(y.data(), y.size());
    dn.copy_from_host(&n0, 1);
    const std::size_t nb = std::size_t(V * s.bits_per_vector());
    Buffer<std::uint8_t> bits = Buffer<std::uint8_t>::device(nb);
    Buffer<float> llrs = Buffer<float>::device(nb);
    Buffer<SearchStats> stats = Buffer<SearchStats>::device(std::size_t(V));
    DetectInput in;
    in.h = ConstMatrixBatch<cf32>(dh.data(), C, s.nr, s.nt, Memory::device);
    in.y = ConstMatrixBatch<cf32>(dy.data(), V, s.nr, 1, Memory::device);
    in.noise_var = View<const float>(dn.data(), 1, Memory::device);
    in.vectors_per_channel = row.vpc;
    for (const float clip : {0.f, 4.f})
      for (const bool refill : {true, false}) {
        // Other rows: the automatic schedule only (refill exact, one thread per vector clipped).
        if (!row.both_schedules && refill != (clip == 0.f)) continue;
        StsConfig cfg;
        cfg.shape = s;
        cfg.clip = clip;
        cfg.schedule = refill ? StsSchedule::refill : StsSchedule::one_per_vector;
        StsPlan plan(cfg, Backend::cuda(0));
        const View<std::uint8_t> vb(bits);
        const View<float> vl(llrs);
        plan.run(in, vb, vl, View<SearchStats>(stats));  // warm-up, and the node counts
        std::vector<SearchStats> st(static_cast<std::size_t>(V));
        stats.copy_to_host(st.data(), st.size());
        double nodes = 0, max_nodes = 0;
        for (const SearchStats& e : st) {
          nodes += double(e.nodes);
          max_nodes = std::max(max_nodes, double(e.nodes));
        }
        std::vector<float> times;
        GpuTimer timer;
        for (int i = 0; i < 5; ++i) {
          timer.start();
          plan.run(in, vb, vl);
          timer.stop();
          times.push_back(timer.elapsed_ms());
        }
        std::sort(times.begin(), times.end());
        const double ms = times[times.size() / 2];
        const double mvps = double(V) / (ms * 1e-3) / 1e6;
        const double gbps = mvps * 1e6 * s.bits_per_vector() / 1e9;
        const double gnodes = nodes / (ms * 1e-3) / 1e9;
        std::printf(
            "| %dx%d %s | %.0f | %g | %s | %lld | %d | %.3f | %.2f | %.3f | %.1f | %.0f | %.2f |\n",
            s.nt, s.nr, to_string(s.mod).c_str(), row.snr_db, double(clip),
            refill ? "refill" : "one per vector", (long long)V, row.vpc, ms, mvps, gbps,
            nodes / double(V), max_nodes, gnodes);
        std::fflush(stdout);
        if (json.is_open()) {
          nlohmann::json j = {{"bench", "sts"},
                              {"device", dev.name},
                              {"nt", s.nt},
                              {"nr", s.nr},
                              {"mod", to_string(s.mod)},
                              {"snr_db", row.snr_db},
                              {"clip", clip},
                              {"schedule", refill ? "refill" : "one_per_vector"},
                              {"vectors", V},
                              {"vectors_per_channel", row.vpc},
                              {"ms", ms},
                              {"mvectors_per_s", mvps},
                              {"gbit_per_s", gbps},
                              {"avg_nodes", nodes / double(V)},
                              {"max_nodes", max_nodes},
                              {"gnodes_per_s", gnodes}};
          json << j.dump() << "\n";
          if (!json) {
            std::fprintf(stderr, "gpubench_sts: writing %s failed\n", argv[1]);
            return 2;
          }
        }
      }
  }
  return 0;
}

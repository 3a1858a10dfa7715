// The single-tree-search soft sphere decoder on the CPU (OpenMP over vectors): detected bits
// per second and nodes per vector, i.i.d. Rayleigh channels, 64 channels of 16 vectors each.
// Arguments: nt (= nr), bits per symbol, Es/N0 in dB, LLR clip (0 = exact), sorted QR (1/0).
#include <benchmark/benchmark.h>

#include <cmath>
#include <random>
#include <vector>

#include "mimorx/detect/sts.hpp"

using namespace mimorx;
using namespace mimorx::detect;

namespace {

void BM_Sts(benchmark::State& state) {
  const int nt = int(state.range(0)), nr = nt;
  const auto mod = Modulation(int(state.range(1)));
  const double snr = double(state.range(2));
  const std::int64_t C = 64;
  const int vpc = 16;
  const std::int64_t V = C * vpc;
  std::mt19937_64 rng(42);
  std::normal_distribution<float> g(0.f, std::sqrt(0.5f));
  std::vector<cf32> h(std::size_t(C * nr * nt)), y(std::size_t(V * nr));
  for (auto& e : h) e = cf32(g(rng), g(rng));
  const float n0 = float(std::pow(10.0, -snr / 10.0) * nt);
  for (std::int64_t v = 0; v < V; ++v) {
    std::vector<cf32> x(static_cast<std::size_t>(nt));
    for (auto& s : x) {
      std::uint8_t b[8];
      for (int k = 0; k < bits_per_symbol(mod); ++k) b[k] = std::uint8_t(rng() & 1);
      s = map_symbol(mod, b);
    }
    for (int i = 0; i < nr; ++i) {
      cf32 acc = cf32(g(rng), g(rng)) * std::sqrt(n0);
      for (int t = 0; t < nt; ++t)
        acc += h[std::size_t((v / vpc) * nr * nt + t * nr + i)] * x[std::size_t(t)];
      y[std::size_t(v * nr + i)] = acc;
    }
  }
  DetectInput in;
  in.h = ConstMatrixBatch<cf32>(h.data(), C, nr, nt, Memory::host);
  in.y = ConstMatrixBatch<cf32>(y.data(), V, nr, 1, Memory::host);
  in.noise_var = View<const float>(&n0, 1, Memory::host);
  in.vectors_per_channel = vpc;
  StsConfig cfg;
  cfg.shape = {nt, nr, mod};
  cfg.clip = float(state.range(3));
  cfg.sorted_qr = state.range(4) != 0;
  StsPlan plan(cfg, Backend::cpu());
  const std::int64_t nbits = V * cfg.shape.bits_per_vector();
  std::vector<std::uint8_t> bits(static_cast<std::size_t>(nbits));
  std::vector<float> llrs(static_cast<std::size_t>(nbits));
  std::vector<SearchStats> stats(static_cast<std::size_t>(V));
  for (auto _ : state) {
    plan.run(in, View<std::uint8_t>(bits.data(), nbits, Memory::host),
             View<float>(llrs.data(), nbits, Memory::host),
             View<SearchStats>(stats.data(), V, Memory::host));
    benchmark::DoNotOptimize(llrs.data());
  }
  double nodes = 0;
  for (const auto& s : stats) nodes += double(s.nodes);
  state.counters["nodes_per_vector"] = nodes / double(V);
  state.counters["bits_per_s"] =
      benchmark::Counter(double(nbits), benchmark::Counter::kIsIterationInvariantRate);
  state.SetItemsProcessed(state.iterations() * V);
}

}  // namespace

BENCHMARK(BM_Sts)
    ->ArgsProduct({{2, 4}, {2, 4, 6}, {0, 10, 20, 30}, {0, 4}, {1}})
    ->ArgsProduct({{4}, {4}, {0, 10, 20, 30}, {0}, {0}})
    ->ArgNames({"nt", "bits", "snr", "clip", "sorted"})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

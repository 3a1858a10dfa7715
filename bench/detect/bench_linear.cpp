// CPU linear detectors (OpenMP over channels): LinearPlan::run on host buffers,
// 4x4 16-QAM, 4096 channels x 14 vectors.
#include <benchmark/benchmark.h>

#include <cmath>
#include <random>
#include <vector>

#include "mimorx/detect/linear.hpp"

using namespace mimorx;
using namespace mimorx::detect;

namespace {
void BM_LinearCpu(benchmark::State& state) {
  const LinearKind kind = state.range(0) ? LinearKind::mmse : LinearKind::zf;
  const bool soft = state.range(1) != 0;
  const MimoShape s{4, 4, Modulation::qam16};
  const std::int64_t C = 4096;
  const int vpc = 14;
  const std::int64_t V = C * vpc;
  std::mt19937_64 rng(2);
  std::normal_distribution<float> g(0.f, std::sqrt(0.5f));
  Buffer<cf32> h = Buffer<cf32>::host(C * 16), y = Buffer<cf32>::host(V * 4);
  for (std::int64_t i = 0; i < C * 16; ++i) h[i] = cf32(g(rng), g(rng));
  for (std::int64_t i = 0; i < V * 4; ++i) y[i] = cf32(2.f * g(rng), 2.f * g(rng));
  Buffer<float> n0 = Buffer<float>::host(1);
  n0[0] = 0.1f;
  const std::int64_t nb = V * s.bits_per_vector();
  Buffer<std::uint8_t> bits = Buffer<std::uint8_t>::host(nb);
  Buffer<float> llrs(soft ? nb : 0, Memory::host);
  LinearPlan plan(LinearConfig{s, kind, soft, true}, Backend::cpu());
  DetectInput in{ConstMatrixBatch<cf32>(h.data(), C, 4, 4, Memory::host),
                 ConstMatrixBatch<cf32>(y.data(), V, 4, 1, Memory::host), View<const float>(n0),
                 vpc};
  for (auto _ : state) {
    plan.run(in, View<std::uint8_t>(bits), View<float>(llrs));
    benchmark::ClobberMemory();
  }
  state.counters["Gbit/s"] = benchmark::Counter(double(nb) * double(state.iterations()) / 1e9,
                                                benchmark::Counter::kIsRate);
  state.SetLabel(std::string(state.range(0) ? "mmse" : "zf") + (soft ? " soft" : " hard"));
}
BENCHMARK(BM_LinearCpu)
    ->Args({0, 0})
    ->Args({0, 1})
    ->Args({1, 0})
    ->Args({1, 1})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
}  // namespace

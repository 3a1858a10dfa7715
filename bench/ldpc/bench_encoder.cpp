// CPU encoder throughput per core (Google Benchmark, one thread): information bits per second
// of EncoderPlan (byte-wise reference) and of the host emulation of the CUDA kernel's
// bit-packed algorithm (src/ldpc/encoder_packed.hpp), and of rate matching one block.
#include <benchmark/benchmark.h>
#include <omp.h>

#include <vector>

#include "ldpc/encoder_packed.hpp"
#include "mimorx/core/rng.hpp"
#include "mimorx/ldpc/encoder.hpp"
#include "mimorx/ldpc/rate_match.hpp"

using namespace mimorx;
using namespace mimorx::ldpc;

namespace {
std::vector<std::uint8_t> random_info(int k) {
  std::vector<std::uint8_t> v(k);
  for (int i = 0; i < k; ++i) v[i] = rng::uniform_at(3, 1, i) < 0.5f;
  return v;
}

void bytewise(benchmark::State& st, BaseGraph bg, int z) {
  omp_set_num_threads(1);
  EncoderPlan plan(bg, z, Backend::cpu());
  auto info = random_info(plan.k());
  std::vector<std::uint8_t> cw(plan.n());
  for (auto _ : st) {
    plan.encode(View<const std::uint8_t>(info.data(), plan.k(), Memory::host), 1,
                View<std::uint8_t>(cw.data(), plan.n(), Memory::host));
    benchmark::DoNotOptimize(cw.data());
  }
  st.counters["info_bit/s"] =
      benchmark::Counter(double(plan.k()) * st.iterations(), benchmark::Counter::kIsRate);
}

void packed(benchmark::State& st, BaseGraph bg, int z) {
  EncoderPlan plan(bg, z, Backend::cpu());
  auto info = random_info(plan.k());
  std::vector<std::uint8_t> cw(plan.n());
  for (auto _ : st) {
    mimorx::ldpc::detail::encode_packed_host(plan.tables(), info.data(), cw.data());
    benchmark::DoNotOptimize(cw.data());
  }
  st.counters["info_bit/s"] =
      benchmark::Counter(double(plan.k()) * st.iterations(), benchmark::Counter::kIsRate);
}

void ratematch(benchmark::State& st, BaseGraph bg, int z) {
  EncoderPlan plan(bg, z, Backend::cpu());
  auto info = random_info(plan.k());
  std::vector<std::uint8_t> cw(plan.n());
  plan.encode(View<const std::uint8_t>(info.data(), plan.k(), Memory::host), 1,
              View<std::uint8_t>(cw.data(), plan.n(), Memory::host));
  const RateMatchConfig rm{
      bg, z, plan.k(), (bg == BaseGraph::bg1 ? 66 : 50) * z, 2 * plan.k() / 6 * 6, 6, 0};
  std::vector<std::uint8_t> out(rm.e);
  for (auto _ : st) {
    rate_match(rm, cw, out);
    benchmark::DoNotOptimize(out.data());
  }
  st.counters["info_bit/s"] =
      benchmark::Counter(double(plan.k()) * st.iterations(), benchmark::Counter::kIsRate);
}
}  // namespace

BENCHMARK_CAPTURE(bytewise, bg1_z384, BaseGraph::bg1, 384);
BENCHMARK_CAPTURE(bytewise, bg2_z384, BaseGraph::bg2, 384);
BENCHMARK_CAPTURE(bytewise, bg1_z64, BaseGraph::bg1, 64);
BENCHMARK_CAPTURE(packed, bg1_z384, BaseGraph::bg1, 384);
BENCHMARK_CAPTURE(packed, bg2_z384, BaseGraph::bg2, 384);
BENCHMARK_CAPTURE(packed, bg1_z64, BaseGraph::bg1, 64);
BENCHMARK_CAPTURE(ratematch, bg1_z384_r05_64qam, BaseGraph::bg1, 384);

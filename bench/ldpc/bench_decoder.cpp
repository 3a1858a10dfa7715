// CPU decoder throughput per core (Google Benchmark, one thread): information bits per second
// of the CPU decoders, 10 iterations without early termination (BP: 20). The layered decoders
// decode 16 codewords per batch (decoder_batch_cpu.cpp): they get 32 words per call, BP 2.
#include <benchmark/benchmark.h>
#include <omp.h>

#include <vector>

#include "mimorx/core/rng.hpp"
#include "mimorx/ldpc/decoder.hpp"

using namespace mimorx;
using namespace mimorx::ldpc;

namespace {
void run(benchmark::State& st, BaseGraph bg, int z, int rows, DecoderAlgo algo, bool quantized) {
  omp_set_num_threads(1);
  DecoderConfig cfg{bg, z};
  cfg.rows = rows;
  cfg.algo = algo;
  cfg.quantized = quantized;
  cfg.early_termination = false;
  cfg.max_iters = algo == DecoderAlgo::bp ? 20 : 10;
  DecoderPlan plan(cfg, Backend::cpu());
  const int num = algo == DecoderAlgo::bp ? 2 : 32;  // layered: 16 codewords per batch
  std::vector<float> llr(std::size_t(num) * plan.n());
  for (std::size_t i = 0; i < llr.size(); ++i) llr[i] = 1.f + 2.f * rng::gaussian_at(5, 1, i);
  std::vector<std::uint8_t> bits(std::size_t(num) * plan.packed_bytes());
  for (auto _ : st) {
    plan.decode_packed(View<const float>(llr.data(), std::int64_t(llr.size()), Memory::host), num,
                       View<std::uint8_t>(bits.data(), std::int64_t(bits.size()), Memory::host));
    benchmark::DoNotOptimize(bits.data());
  }
  st.counters["info_bits/s"] =
      benchmark::Counter(double(num) * plan.k(), benchmark::Counter::kIsIterationInvariantRate);
  st.counters["edge_updates/s"] = benchmark::Counter(double(num) * plan.edges() * cfg.max_iters,
                                                     benchmark::Counter::kIsIterationInvariantRate);
}
}  // namespace

BENCHMARK_CAPTURE(run, paper_2080_1760_nms_int8, BaseGraph::bg1, 80, 6, DecoderAlgo::nms, true);
BENCHMARK_CAPTURE(run, paper_2080_1760_nms_float, BaseGraph::bg1, 80, 6, DecoderAlgo::nms, false);
BENCHMARK_CAPTURE(run, bg1_z384_r13_nms_int8, BaseGraph::bg1, 384, 46, DecoderAlgo::nms, true);
BENCHMARK_CAPTURE(run, bg1_z384_r13_nms_float, BaseGraph::bg1, 384, 46, DecoderAlgo::nms, false);
BENCHMARK_CAPTURE(run, bg1_z384_r13_oms_float, BaseGraph::bg1, 384, 46, DecoderAlgo::oms, false);
BENCHMARK_CAPTURE(run, bg1_z384_r13_bp20, BaseGraph::bg1, 384, 46, DecoderAlgo::bp, false);
BENCHMARK_CAPTURE(run, bg1_z384_r0917_nms_int8, BaseGraph::bg1, 384, 4, DecoderAlgo::nms, true);
BENCHMARK_CAPTURE(run, bg2_z384_r15_nms_int8, BaseGraph::bg2, 384, 42, DecoderAlgo::nms, true);

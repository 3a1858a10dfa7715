// LLL on the CPU (Google Benchmark): the float64 reference (Schnorr-Euchner), CR-AS-LLL with
// OpenMP (float32) and the block method, on the bases of tests/support/lll_inputs.hpp,
// delta 0.75. Time per basis; counters: swaps per basis and the orthogonality defect.
#include <benchmark/benchmark.h>

#include <vector>

#include "lattice/lll_internal.hpp"
#include "mimorx/lattice/lll.hpp"
#include "mimorx/lattice/quality.hpp"
#include "support/lll_inputs.hpp"

using namespace mimorx;
using mimorx::lattice::check_lll;
using mimorx::lattice::LllConfig;
using mimorx::lattice::LllMethod;
using mimorx::lattice::LllPlan;

namespace {

constexpr int kPool = 64;  // distinct inputs cycled through

// Basis k (n x n) of the pool into b.
template <class F>
void load_basis(const std::vector<double>& in, int k, int n, std::vector<F>& b) {
  std::copy(in.begin() + std::size_t(k) * n * n, in.begin() + std::size_t(k + 1) * n * n,
            b.begin());
}

void BM_Reference(benchmark::State& state, const char* kind) {
  const int n = int(state.range(0));
  const auto in = test::lll_input(kind, n, kPool);
  std::vector<double> b(std::size_t(n) * n);
  double defect = 0;
  std::int64_t swaps = 0, runs = 0;
  int k = 0;
  for (auto _ : state) {
    state.PauseTiming();
    load_basis(in, k, n, b);
    state.ResumeTiming();
    const auto st = lattice::detail::se_lll_double(n, n, b.data(), nullptr, 0.75);
    benchmark::DoNotOptimize(b.data());
    state.PauseTiming();
    swaps += st.swaps;
    if (runs < kPool)
      defect += check_lll(n, n, b.data(), {0.75, 1e-6, 1e-9, false}).orthogonality_defect;
    ++runs;
    k = (k + 1) % kPool;
    state.ResumeTiming();
  }
  state.counters["swaps"] = double(swaps) / double(runs);
  state.counters["orth_defect"] = defect / double(std::min<std::int64_t>(runs, kPool));
}

void BM_AllSwapFloat(benchmark::State& state, const char* kind) {
  const int n = int(state.range(0));
  const auto in = test::lll_input(kind, n, kPool);
  std::vector<float> b(std::size_t(n) * n);
  int k = 0;
  for (auto _ : state) {
    state.PauseTiming();
    load_basis(in, k, n, b);
    state.ResumeTiming();
    lattice::detail::all_swap_cpu<float>(n, n, b.data(), nullptr, 0.75,
                                         lattice::detail::default_max_iter(n), 1);
    benchmark::DoNotOptimize(b.data());
    k = (k + 1) % kPool;
  }
}

void BM_BlockDouble(benchmark::State& state) {
  const int n = int(state.range(0));
  const auto in = test::lll_input("gaussian", n, 1);
  LllConfig cfg{n, n};
  cfg.method = LllMethod::block;
  LllPlan plan(cfg, Backend::cpu());
  std::vector<double> b(in.size());
  for (auto _ : state) {
    state.PauseTiming();
    b = in;
    state.ResumeTiming();
    plan.run(MatrixBatch<double>(b.data(), 1, n, n, Memory::host), {}, {});
  }
}

// The plan's float32 path without T, one basis per run: presort, reduction and the check that
// the output is still on the input lattice (range(1) = 1) or without that check (0;
// LllConfig::lattice_check), to show the check's cost.
void BM_PlanFloatNoT(benchmark::State& state, LllMethod method) {
  const int n = int(state.range(0));
  const bool check = state.range(1) != 0;
  const auto in = test::lll_input("gaussian", n, kPool);
  LllConfig cfg{n, n};
  cfg.method = method;
  cfg.cpu_threads = 1;
  cfg.lattice_check = check;
  LllPlan plan(cfg, Backend::cpu());
  std::vector<float> b(std::size_t(n) * n);
  int k = 0;
  for (auto _ : state) {
    state.PauseTiming();
    load_basis(in, k, n, b);
    state.ResumeTiming();
    plan.run(MatrixBatch<float>(b.data(), 1, n, n, Memory::host), {}, {});
    benchmark::DoNotOptimize(b.data());
    k = (k + 1) % kPool;
  }
}

}  // namespace

BENCHMARK_CAPTURE(BM_PlanFloatNoT, all_swap, LllMethod::all_swap)
    ->ArgsProduct({{8, 32, 64}, {0, 1}})
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_PlanFloatNoT, block, LllMethod::block)
    ->ArgsProduct({{128, 256}, {0, 1}})
    ->Unit(benchmark::kMillisecond)
    ->Iterations(4);
BENCHMARK_CAPTURE(BM_Reference, gaussian, "gaussian")
    ->Arg(8)
    ->Arg(16)
    ->Arg(32)
    ->Arg(64)
    ->Arg(128)
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_Reference, toeplitz, "toeplitz")
    ->Arg(8)
    ->Arg(16)
    ->Arg(32)
    ->Arg(64)
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_AllSwapFloat, gaussian, "gaussian")
    ->Arg(8)
    ->Arg(16)
    ->Arg(32)
    ->Arg(64)
    ->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_BlockDouble)->Arg(128)->Arg(256)->Unit(benchmark::kMillisecond)->Iterations(2);

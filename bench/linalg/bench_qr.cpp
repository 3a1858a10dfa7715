// CPU batched QR (OpenMP over the batch): QrPlan::run on host buffers.
#include <benchmark/benchmark.h>

#include <cmath>
#include <random>
#include <vector>

#include "mimorx/linalg/qr.hpp"

using namespace mimorx;
using namespace mimorx::linalg;

namespace {
void BM_QrCpu(benchmark::State& state) {
  const QrModel model = QrModel(state.range(0));
  const bool sorted = state.range(1) != 0;
  const int nr = 4, nt = 4;
  const std::int64_t C = 8400;
  QrPlan plan(QrConfig{.nr = nr, .nt = nt, .model = model, .sorted = sorted}, Backend::cpu());
  const int m = plan.rows(), n = plan.cols();
  std::mt19937_64 rng(1);
  std::normal_distribution<float> g(0.f, std::sqrt(0.5f));
  Buffer<cf32> h = Buffer<cf32>::host(C * nr * nt);
  for (std::int64_t i = 0; i < C * nr * nt; ++i) h[i] = cf32(g(rng), g(rng));
  const bool cplx = model == QrModel::complex;
  Buffer<cf32> q(cplx ? C * m * n : 0, Memory::host), r(cplx ? C * n * n : 0, Memory::host);
  Buffer<float> qr_(cplx ? 0 : C * m * n, Memory::host), rr(cplx ? 0 : C * n * n, Memory::host);
  Buffer<int> perm = Buffer<int>::host(C * n), status = Buffer<int>::host(C);
  QrInput in{.h = ConstMatrixBatch<cf32>(h.data(), C, nr, nt, Memory::host)};
  QrOutput out;
  if (cplx) {
    out.q = MatrixBatch<cf32>::over(q, C, m, n);
    out.r = MatrixBatch<cf32>::over(r, C, n, n);
  } else {
    out.q_real = MatrixBatch<float>::over(qr_, C, m, n);
    out.r_real = MatrixBatch<float>::over(rr, C, n, n);
  }
  out.perm = View<int>(perm);
  out.status = View<int>(status);
  for (auto _ : state) {
    plan.run(in, out);
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations() * C);
  state.SetLabel(std::string(cplx                    ? "complex 4x4"
                             : model == QrModel::rvd ? "rvd 8x8"
                                                     : "mrvd 8x8") +
                 (sorted ? " sorted" : ""));
}
BENCHMARK(BM_QrCpu)
    ->Args({0, 0})
    ->Args({0, 1})
    ->Args({2, 0})
    ->Args({2, 1})
    ->Unit(benchmark::kMicrosecond)
    ->UseRealTime();
}  // namespace

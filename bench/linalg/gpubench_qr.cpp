// Batched QR kernel time on the GPU (QrPlan::run with a status view, so the call is one
// asynchronous kernel launch), CUDA events, median of many repeats after a warm-up.
// Cases: 8400 4x4 channels (MRVD: 8x8 real; complex 4x4), plain and sorted, and a batch that
// fills the GPU. Floors: bytes moved (H in; Q, R, perm, status out) at ~3 TB/s, and flops.
// Usage: gpubench_qr_linalg [out.jsonl]
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
#include "mimorx/linalg/qr.hpp"

using namespace mimorx;
using namespace mimorx::linalg;

namespace {

const char* model_name(QrModel m) {
  return m == QrModel::complex ? "complex" : m == QrModel::rvd ? "rvd" : "mrvd";
}

struct Case {
  int nr, nt;
  QrModel model;
  bool sorted;
  std::int64_t channels;
};

}  // namespace

int main(int argc, char** argv) {
  if (!cuda_available()) {
    std::printf("gpubench_qr: no CUDA GPU available; nothing measured\n");
    return 0;
  }
  std::ofstream json;
  if (argc > 1) json.open(argv[1], std::ios::app);
  const auto dev = cuda_devices().front();
  const double peak_bw = 3.0e12;  // bytes/s, the H100/H200 HBM3 order of magnitude
  std::printf("Batched QR on %s (%d SMs); timed: QrPlan::run, one kernel, median of 200\n",
              dev.name.c_str(), dev.sm_count);
  std::printf(
      "| model | shape (model) | sorted | channels | us | us back-to-back | Mprob/s | GB/s | of 3 "
      "TB/s | GFLOP/s |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|---|\n");
  const std::vector<Case> cases = {
      {4, 4, QrModel::mrvd, false, 8400},       {4, 4, QrModel::mrvd, true, 8400},
      {4, 4, QrModel::complex, false, 8400},    {4, 4, QrModel::complex, true, 8400},
      {4, 4, QrModel::rvd, false, 8400},        {4, 4, QrModel::mrvd, false, 1 << 20},
      {4, 4, QrModel::complex, false, 1 << 20}, {8, 8, QrModel::complex, true, 1 << 18},
  };
  std::mt19937_64 rng(42);
  std::normal_distribution<float> g(0.f, std::sqrt(0.5f));
  for (const Case& cs : cases) {
    QrConfig cfg{.nr = cs.nr, .nt = cs.nt, .model = cs.model, .sorted = cs.sorted};
    QrPlan plan(cfg, Backend::cuda(0));
    const int m = plan.rows(), n = plan.cols();
    const std::int64_t C = cs.channels;
    const bool cplx = cs.model == QrModel::complex;
    const std::size_t es = cplx ? sizeof(cf32) : sizeof(float);
    std::vector<cf32> hh(std::size_t(C) * cs.nr * cs.nt);
    for (auto& e : hh) e = cf32(g(rng), g(rng));
    Buffer<cf32> h = Buffer<cf32>::device(hh.size());
    h.copy_from_host(hh.data(), hh.size());
    Buffer<cf32> q(cplx ? C * m * n : 0, Memory::device), r(cplx ? C * n * n : 0, Memory::device);
    Buffer<float> qr_(cplx ? 0 : C * m * n, Memory::device),
        rr(cplx ? 0 : C * n * n, Memory::device);
    Buffer<int> perm = Buffer<int>::device(C * n), status = Buffer<int>::device(C);
    QrInput in{.h = ConstMatrixBatch<cf32>(h.data(), C, cs.nr, cs.nt, Memory::device)};
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
    for (int i = 0; i < 5; ++i) plan.run(in, out);
    GpuTimer timer;
    std::vector<float> ms;
    for (int i = 0; i < 200; ++i) {
      timer.start();
      plan.run(in, out);
      timer.stop();
      ms.push_back(timer.elapsed_ms());
    }
    std::sort(ms.begin(), ms.end());
    const double t = double(ms[ms.size() / 2]) * 1e-3;
    // Steady state: 200 runs back to back between one pair of events, so the host work of
    // one run overlaps the kernel of the previous one (what a pipeline of batches sees).
    timer.start();
    for (int i = 0; i < 200; ++i) plan.run(in, out);
    timer.stop();
    const double t_b2b = double(timer.elapsed_ms()) * 1e-3 / 200.0;
    const double bytes = double(C) * (double(cs.nr) * cs.nt * sizeof(cf32) + double(m) * n * es +
                                      double(n) * n * es + double(n) * 4 + 4);
    // MGS with one re-orthogonalisation pass: ~2 * 2mn^2 real multiply-adds (x4 for complex).
    const double flops = double(C) * 4.0 * m * n * n * (cplx ? 4.0 : 1.0);
    std::printf("| %s | %dx%d | %s | %lld | %.2f | %.2f | %.1f | %.0f | %.1f%% | %.0f |\n",
                model_name(cs.model), m, n, cs.sorted ? "yes" : "no", (long long)C, t * 1e6,
                t_b2b * 1e6, double(C) / t / 1e6, bytes / t / 1e9, 100.0 * bytes / t / peak_bw,
                flops / t / 1e9);
    std::fflush(stdout);
    if (json.is_open()) {
      nlohmann::json j = {{"bench", "qr"},
                          {"device", dev.name},
                          {"model", model_name(cs.model)},
                          {"nr", cs.nr},
                          {"nt", cs.nt},
                          {"rows", m},
                          {"cols", n},
                          {"sorted", cs.sorted},
                          {"channels", C},
                          {"us", t * 1e6},
                          {"us_back_to_back", t_b2b * 1e6},
                          {"gbytes_per_s", bytes / t / 1e9},
                          {"gflops", flops / t / 1e9},
                          {"bytes_floor_us", bytes / peak_bw * 1e6}};
      json << j.dump() << "\n";
    }
  }
  return 0;
}

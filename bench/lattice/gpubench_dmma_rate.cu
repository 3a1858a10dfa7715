// The float64 tensor-core rate of each mma shape on this GPU: the ceiling of the lattice
// component's products (mma_f64.cuh). One wave of blocks (one per SM, 4 / 8 / 16 warps), every
// warp issuing mmas into 4 independent accumulators with operands in registers: no loads, no
// shared memory, so the figure is the pipe's rate alone. On sm_90 m8n8k4 runs at half the rate
// of m16n8k4 / k8 / k16 (the same instruction rate, half the work), which is why warp_mma issues
// m16n8k4 there (mma_f64.cuh).
// Usage: gpubench_dmma_rate_lattice [out.jsonl]
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "core/cuda_check.hpp"
#include "mimorx/core/backend.hpp"
#include "mimorx/core/buffer.hpp"

using namespace mimorx;

namespace {

constexpr int kChains = 4;  // independent accumulators a warp

// Shape id: 884 (m8n8k4), 1684, 1688, 16816 (m16n8kK); multiply-adds an instruction below.
template <int S>
__global__ void dmma_kernel(const double* in, double* out, int iters) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  double c[kChains][4] = {};
  double x[8], y[4];
  for (int i = 0; i < 8; ++i) x[i] = in[(threadIdx.x + 32 * i) % 64];
  for (int i = 0; i < 4; ++i) y[i] = in[(threadIdx.x + 7 * i) % 64];
  for (int it = 0; it < iters; ++it) {
#pragma unroll
    for (int j = 0; j < kChains; ++j) {
      if constexpr (S == 884) {
        asm volatile(
            "mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, "
            "{%0, %1};"
            : "+d"(c[j][0]), "+d"(c[j][1])
            : "d"(x[j]), "d"(y[j]));
      } else if constexpr (S == 1684) {
        asm volatile(
            "mma.sync.aligned.m16n8k4.row.col.f64.f64.f64.f64 {%0, %1, %2, %3}, {%4, "
            "%5}, {%6}, {%0, %1, %2, %3};"
            : "+d"(c[j][0]), "+d"(c[j][1]), "+d"(c[j][2]), "+d"(c[j][3])
            : "d"(x[j]), "d"(x[j + 4]), "d"(y[j]));
      } else if constexpr (S == 1688) {
        asm volatile(
            "mma.sync.aligned.m16n8k8.row.col.f64.f64.f64.f64 {%0, %1, %2, %3}, {%4, "
            "%5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};"
            : "+d"(c[j][0]), "+d"(c[j][1]), "+d"(c[j][2]), "+d"(c[j][3])
            : "d"(x[0]), "d"(x[1]), "d"(x[2]), "d"(x[3]), "d"(y[j]), "d"(y[(j + 1) % 4]));
      } else {
        asm volatile(
            "mma.sync.aligned.m16n8k16.row.col.f64.f64.f64.f64 {%0, %1, %2, %3}, {%4, "
            "%5, %6, %7, %8, %9, %10, %11}, {%12, %13, %14, %15}, {%0, %1, %2, %3};"
            : "+d"(c[j][0]), "+d"(c[j][1]), "+d"(c[j][2]), "+d"(c[j][3])
            : "d"(x[0]), "d"(x[1]), "d"(x[2]), "d"(x[3]), "d"(x[4]), "d"(x[5]), "d"(x[6]),
              "d"(x[7]), "d"(y[0]), "d"(y[1]), "d"(y[2]), "d"(y[3]));
      }
    }
  }
  double s = 0;
  for (int j = 0; j < kChains; ++j)
    for (int t = 0; t < 4; ++t) s += c[j][t];
  out[blockIdx.x * blockDim.x + threadIdx.x] = s;  // keeps the mmas alive
#else
  (void)in, (void)iters;
  if (blockIdx.x == 0 && threadIdx.x == 0) out[0] = -1;  // not built for sm_90: no figure
#endif
}

template <int S>
double tflops(int sms, int warps, int macs_per_inst, const double* in, double* out) {
  const int iters = 4096;
  GpuTimer timer;                                       // the default stream
  dmma_kernel<S><<<sms, 32 * warps>>>(in, out, iters);  // warm-up
  MIMORX_CUDA_CHECK_LAUNCH();
  timer.start();
  dmma_kernel<S><<<sms, 32 * warps>>>(in, out, iters);
  MIMORX_CUDA_CHECK_LAUNCH();
  timer.stop();
  const double ms = timer.elapsed_ms();
  const double macs = double(sms) * warps * iters * kChains * macs_per_inst;
  return 2 * macs / (ms * 1e-3) / 1e12;
}

}  // namespace

int main(int argc, char** argv) {
  if (cuda_devices().empty()) {
    std::printf("no CUDA device\n");
    return 0;
  }
  const auto dev = cuda_devices().at(0);
  if (dev.major < 9) {
    std::printf("%s: the float64 mma shapes beyond m8n8k4 need sm_90\n", dev.name.c_str());
    return 0;
  }
  std::printf("device: %s\n\n", dev.name.c_str());
  std::ofstream jl;
  if (argc > 1) jl.open(argv[1], std::ios::app);
  auto in = Buffer<double>::device(64);
  in.fill_bytes(0);
  auto out = Buffer<double>::device(std::size_t(dev.sm_count) * 32 * 16);
  std::printf("| mma shape (float64) | warps an SM | TFLOPS |\n|---|---|---|\n");
  struct Shape {
    const char* name;
    int macs;
    double (*run)(int, int, int, const double*, double*);
  };
  const Shape shapes[] = {{"m8n8k4", 256, tflops<884>},
                          {"m16n8k4", 512, tflops<1684>},
                          {"m16n8k8", 1024, tflops<1688>},
                          {"m16n8k16", 2048, tflops<16816>}};
  for (int warps : {4, 8, 16})
    for (const Shape& sh : shapes) {
      const double tf = sh.run(dev.sm_count, warps, sh.macs, in.data(), out.data());
      double first = 0;
      out.copy_to_host(&first, 1);
      if (first == -1) {
        std::printf("this build has no sm_90 code (MIMORX_CUDA_ARCHS): no figures\n");
        return 0;
      }
      std::printf("| %s | %d | %.1f |\n", sh.name, warps, tf);
      if (jl)
        jl << nlohmann::json{{"bench", "dmma_rate"},
                             {"device", dev.name},
                             {"shape", sh.name},
                             {"warps_per_sm", warps},
                             {"tflops", tf}}
                  .dump()
           << "\n";
    }
  return 0;
}

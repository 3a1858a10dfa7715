// K-best detector on the GPU, same set-up as gpubench_nway (8400 vectors = one 20 MHz LTE slot,
// and a larger batch): QR kernel and detection kernel times, throughput in information bits per
// second. `kernel` is the one the plan dispatches (warp: one warp per vector, the bitonic top-K
// network of kbest_warp_network.cuh; block: one block per vector, CUB block radix sort).
//
// Floor of the warp kernel (docs/kbest.md, GPU mapping): its selection network alone, at 3 warp
// instructions per compare-exchange stage and key register spread over lanes (shuffle, minimum,
// maximum) and 1 per register pair within a lane (minimum, maximum), with the stage counts the
// kernel runs per level (chunk sort, register merges, lane merges, the top levels in one
// register; nothing on the levels above the last that keep every child). `floor Gbit/s` is the
// throughput if every scheduler of every SM issued one such warp instruction per cycle at 1.98 GHz
// (the H100/H200 SXM boost clock); `fraction` is measured / floor. The child distances, the
// exactness check, the path updates and the LLRs come on top, so the fraction states how much of
// the issue rate the network gets. Usage: gpubench_kbest_detect [out.jsonl]
#include <cstdio>
#include <string>

#include "detect/kbest_cuda.hpp"
#include "gpubench_nway_common.hpp"
#include "mimorx/detect/kbest.hpp"

using namespace mimorx;
using namespace mimorx::bench;

namespace {

constexpr double kClockHz = 1.98e9;

// Warp instructions of stages J, J/2, ..., 1 over E key registers (kbest_warp_network.cuh).
double merge_instructions(int e, int j) {
  double n = 0;
  for (; j >= 1; j /= 2) n += j >= 32 ? e : 3.0 * e;
  return n;
}
// warp::select_smallest<C> on R registers.
double select_instructions(int c, int r) {
  double n = 0;
  for (int k = 2; k <= c; k *= 2) n += merge_instructions(r, k / 2);
  int e = r;
  while (e > 1 && e * 32 > c) {
    e /= 2;
    n += e + merge_instructions(e, c / 2);
  }
  if (e == 1 && c < 32) {
    for (int p = c; p < 32; p *= 2) n += 2 + merge_instructions(1, c / 2);
  }
  return n;
}
// Per vector: every level's selection, with the kernel's register count per level.
double network_instructions(int nt, int levels, int k) {
  int kp = 8;
  while (kp < k) kp *= 2;
  double n = 0;
  int paths = 1;
  for (int l = 2 * nt - 1; l >= 0; --l) {
    const int children = (paths < kp ? paths : kp) * levels;
    int regs = 1;
    while (regs * 32 < children) regs *= 2;
    // Above the last level a list that keeps every child is not sorted.
    if (l == 0 || children > k) n += select_instructions(kp < regs * 32 ? kp : regs * 32, regs);
    paths = paths < kp ? paths * levels : kp;
  }
  return n;
}

}  // namespace

int main(int argc, char** argv) {
  if (!cuda_available()) {
    std::printf("gpubench_kbest: no CUDA GPU available, nothing measured\n");
    return 0;
  }
  const char* json = argc > 1 ? argv[1] : nullptr;
  const std::string dev = device_name();
  const double warp_issue_per_s = double(cuda_devices()[0].sm_count) * 4 * kClockHz;
  std::printf("K-best detector on %s (throughput = information bits / s)\n\n", dev.c_str());
  std::printf(
      "| nt x nr | mod | K | kernel | vectors | QR us | detect us | detect Gbit/s | network "
      "instr/vector | floor Gbit/s | fraction |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|---|---|\n");
  struct Case {
    int nt;
    Modulation mod;
    int k;
  };
  const Case cases[] = {{2, Modulation::qam16, 16}, {4, Modulation::qam16, 16},
                        {4, Modulation::qam16, 64}, {4, Modulation::qam64, 16},
                        {4, Modulation::qam64, 64}, {4, Modulation::qam64, 256}};
  std::uint64_t seed = 99;
  for (std::int64_t v : {kSlot, 16 * kSlot, 64 * kSlot}) {
    for (const auto& c : cases) {
      const detect::MimoShape s{c.nt, c.nt, c.mod};
      const bool warp = detect::kbest_cuda::warp_kernel_fits(c.nt, c.mod, c.k);
      if (v > 16 * kSlot && !warp) continue;  // the block kernel takes seconds there
      BenchData data(s, v, 1, seed++);
      Stream st = Stream::create();
      detect::KbestPlan plan(detect::KbestConfig{s, c.k, 8.f}, Backend::cuda());
      const std::int64_t nbits = v * c.nt * bits_per_symbol(c.mod);
      Buffer<std::uint8_t> bits = Buffer<std::uint8_t>::device(std::size_t(nbits));
      Buffer<float> llrs = Buffer<float>::device(std::size_t(nbits));
      const auto in = data.device_input();
      const int reps = v > kSlot ? 5 : 11;
      const float qr_ms = median_ms(st, reps, [&] { plan.qr(in, st); });
      const float det_ms = median_ms(
          st, reps, [&] { plan.search(in, View<std::uint8_t>(bits), View<float>(llrs), st); });
      const double gbps = double(nbits) / (det_ms * 1e-3) / 1e9;
      const int bpv = c.nt * bits_per_symbol(c.mod);
      const double net = warp ? network_instructions(c.nt, axis_levels(c.mod), c.k) : 0;
      const double floor_gbps = warp ? warp_issue_per_s / net * bpv / 1e9 : 0;
      char floor_cells[96] = "- | - | -";
      char floor_json[96] = "";
      if (warp) {
        std::snprintf(floor_cells, sizeof floor_cells, "%.0f | %.2f | %.3f", net, floor_gbps,
                      gbps / floor_gbps);
        std::snprintf(floor_json, sizeof floor_json,
                      ",\"network_instr_per_vector\":%.0f,\"select_floor_gbps\":%.4f", net,
                      floor_gbps);
      }
      std::printf("| %dx%d | %s | %d | %s | %lld | %.1f | %.1f | %.3f | %s |\n", c.nt, c.nt,
                  to_string(c.mod).c_str(), c.k, warp ? "warp" : "block", static_cast<long long>(v),
                  qr_ms * 1e3, det_ms * 1e3, gbps, floor_cells);
      std::fflush(stdout);
      char line[640];
      std::snprintf(line, sizeof line,
                    "{\"bench\":\"kbest\",\"device\":\"%s\",\"nt\":%d,\"nr\":%d,\"mod\":\"%s\","
                    "\"k\":%d,\"kernel\":\"%s\",\"vectors\":%lld,\"qr_us\":%.3f,\"detect_us\":%.3f,"
                    "\"detect_gbps\":%.4f%s}",
                    dev.c_str(), c.nt, c.nt, to_string(c.mod).c_str(), c.k, warp ? "warp" : "block",
                    static_cast<long long>(v), qr_ms * 1e3, det_ms * 1e3, gbps, floor_json);
      append_json(json, line);
    }
  }
  return 0;
}

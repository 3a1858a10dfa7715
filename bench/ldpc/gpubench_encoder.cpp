// LDPC encoding throughput on the GPU: EncoderPlan::encode on device buffers (unpacked info bits
// in, unpacked full mother codewords out), CUDA events, 2 warm-ups, median of 7 repeats.
// Figure of merit: information bits per second. Floor: HBM traffic of k + n bytes per word at
// the H100 SXM's 3.35 TB/s (the kernel keeps the codeword in shared memory, so this is its
// only global traffic besides the tables).
// Usage: gpubench_encoder_ldpc [out.jsonl]
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "mimorx/core/backend.hpp"
#include "mimorx/core/buffer.hpp"
#include "mimorx/core/rng.hpp"
#include "mimorx/ldpc/encoder.hpp"

using namespace mimorx;
using namespace mimorx::ldpc;

int main(int argc, char** argv) {
  if (!cuda_available()) {
    std::printf("gpubench_encoder: no CUDA GPU available; nothing to measure\n");
    return 0;
  }
  std::ofstream json;
  if (argc > 1) json.open(argv[1], std::ios::app);
  const auto dev = cuda_devices().at(0);
  std::printf("device: %s, %d SMs\n", dev.name.c_str(), dev.sm_count);
  struct Case {
    BaseGraph bg;
    int z;
  };
  const std::vector<Case> cases = {{BaseGraph::bg1, 384}, {BaseGraph::bg1, 208},
                                   {BaseGraph::bg1, 64},  {BaseGraph::bg2, 384},
                                   {BaseGraph::bg2, 104}, {BaseGraph::bg2, 16}};
  std::printf(
      "| BG | Z | K | N | words | kernel ms | info Gbit/s | HBM floor ms | fraction of floor "
      "|\n|---|---|---|---|---|---|---|---|---|\n");
  for (const Case& c : cases) {
    EncoderPlan plan(c.bg, c.z, Backend::cuda());
    const int num = int(std::min<std::int64_t>(300000000LL / plan.n(), 1 << 18));
    Buffer<std::uint8_t> info = Buffer<std::uint8_t>::device(std::size_t(num) * plan.k());
    Buffer<std::uint8_t> cw = Buffer<std::uint8_t>::device(std::size_t(num) * plan.n());
    {
      // Random info bits: uniforms thresholded on the host once, then copied.
      std::vector<std::uint8_t> h(info.size());
      for (std::size_t i = 0; i < h.size(); ++i) h[i] = rng::uniform_at(11, 1, i) < 0.5f;
      info.copy_from_host(h.data(), h.size());
    }
    Stream s = Stream::create();
    auto once = [&] { plan.encode(info, num, cw, s); };
    once();
    once();
    std::vector<double> ms;
    for (int r = 0; r < 7; ++r) {
      GpuTimer t(s);
      t.start();
      once();
      t.stop();
      ms.push_back(t.elapsed_ms());
    }
    std::sort(ms.begin(), ms.end());
    const double kms = ms[ms.size() / 2];
    const double gbps = double(num) * plan.k() / (kms * 1e-3) / 1e9;
    const double floor_ms = double(num) * (plan.k() + plan.n()) / 3.35e12 * 1e3;
    std::printf("| %d | %d | %d | %d | %d | %.3f | %.1f | %.3f | %.2f |\n", int(c.bg), c.z,
                plan.k(), plan.n(), num, kms, gbps, floor_ms, floor_ms / kms);
    if (json.is_open()) {
      nlohmann::json j = {{"bench", "ldpc_encoder"},
                          {"device", dev.name},
                          {"bg", int(c.bg)},
                          {"z", c.z},
                          {"k", plan.k()},
                          {"n", plan.n()},
                          {"words", num},
                          {"kernel_ms", kms},
                          {"info_gbit_s", gbps},
                          {"hbm_floor_ms", floor_ms}};
      json << j.dump() << "\n";
    }
  }
  return 0;
}

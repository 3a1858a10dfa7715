// K-best detector on the GPU, same set-up as gpubench_nway (8400 vectors = one 20 MHz LTE slot,
// and a larger batch): QR kernel and detection kernel (one block per vector, CUB block radix
// sort of the K * sqrt(M) children per level) times, throughput in information bits per second.
#include <cstdio>
#include <string>

#include "gpubench_nway_common.hpp"
#include "mimorx/detect/kbest.hpp"

using namespace mimorx;
using namespace mimorx::bench;

int main(int argc, char** argv) {
  if (!cuda_available()) {
    std::printf("gpubench_kbest: no CUDA GPU available, nothing measured\n");
    return 0;
  }
  const char* json = argc > 1 ? argv[1] : nullptr;
  const std::string dev = device_name();
  std::printf("K-best detector on %s (throughput = information bits / s)\n\n", dev.c_str());
  std::printf("| nt x nr | mod | K | vectors | QR us | detect us | detect Gbit/s |\n");
  std::printf("|---|---|---|---|---|---|---|\n");
  struct Case {
    int nt;
    Modulation mod;
    int k;
  };
  const Case cases[] = {{2, Modulation::qam16, 16},
                        {4, Modulation::qam16, 16},
                        {4, Modulation::qam16, 64},
                        {4, Modulation::qam64, 64},
                        {4, Modulation::qam64, 256}};
  std::uint64_t seed = 99;
  for (std::int64_t v : {kSlot, 16 * kSlot}) {
    for (const auto& c : cases) {
      const detect::MimoShape s{c.nt, c.nt, c.mod};
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
      std::printf("| %dx%d | %s | %d | %lld | %.1f | %.1f | %.3f |\n", c.nt, c.nt,
                  to_string(c.mod).c_str(), c.k, static_cast<long long>(v), qr_ms * 1e3,
                  det_ms * 1e3, gbps);
      char line[512];
      std::snprintf(line, sizeof line,
                    "{\"bench\":\"kbest\",\"device\":\"%s\",\"nt\":%d,\"nr\":%d,\"mod\":\"%s\","
                    "\"k\":%d,\"vectors\":%lld,\"qr_us\":%.3f,\"detect_us\":%.3f,"
                    "\"detect_gbps\":%.4f}",
                    dev.c_str(), c.nt, c.nt, to_string(c.mod).c_str(), c.k,
                    static_cast<long long>(v), qr_ms * 1e3, det_ms * 1e3, gbps);
      append_json(json, line);
    }
  }
  return 0;
}

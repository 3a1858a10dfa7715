// N-way detector on the GPU, the paper's set-up: 8400 MIMO symbols (one 20 MHz LTE slot) and a
// batch 64 times larger that fills the GPU, i.i.d. Gaussian channels; throughput = information
// bits detected per second (V * nt * log2 M / time). Reports the QR kernel, the detection kernel
// (search + LLR merge), the serial total (pinned H2D of H and y, QR, detection, D2H of the LLRs on
// one stream), a pipelined total (chunks over three streams, copies overlapping kernels), and the
// host-link bound: the time of the H2D copy of H and y alone (and of the D2H copy of the LLRs).
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "gpubench_nway_common.hpp"
#include "mimorx/detect/nway.hpp"

using namespace mimorx;
using namespace mimorx::bench;

namespace {

struct Paper {
  int nt;
  Modulation mod;
  int n;
  double detect_mbps, total_mbps;  // GTX 560 Ti (Wu et al. 2014), -1 where not quoted here
};
const Paper kPaper[] = {{4, Modulation::qam16, 1, 782.5, 181.3},
                        {4, Modulation::qam16, 4, 192.5, -1},
                        {4, Modulation::qam64, 1, 230.7, -1},
                        {4, Modulation::qam64, 4, 58.3, 46.7}};

std::string paper_cell(int nt, Modulation mod, int n, bool total) {
  for (const auto& p : kPaper) {
    if (p.nt == nt && p.mod == mod && p.n == n) {
      const double v = total ? p.total_mbps : p.detect_mbps;
      if (v > 0) return std::to_string(v).substr(0, std::to_string(v).find('.') + 2);
    }
  }
  return "";
}

struct Row {
  float qr_ms, detect_ms, qr_b2b_ms, detect_b2b_ms, serial_ms, pipe_ms, in_ms, out_ms;
};

Row measure(const BenchData& data, int n_ways, bool full) {
  const auto& s = data.shape;
  const std::int64_t V = data.vectors, nbits = V * s.nt * bits_per_symbol(s.mod);
  Row r{};
  Stream st = Stream::create();
  detect::NwayPlan plan(detect::NwayConfig{s, n_ways, 8.f}, Backend::cuda());
  Buffer<std::uint8_t> bits = Buffer<std::uint8_t>::device(std::size_t(nbits));
  Buffer<float> llrs = Buffer<float>::device(std::size_t(nbits));
  const auto in = data.device_input();
  const int reps = V > kSlot ? 7 : 21;
  r.qr_ms = median_ms(st, reps, [&] { plan.qr(in, st); });
  r.detect_ms = median_ms(
      st, reps, [&] { plan.search(in, View<std::uint8_t>(bits), View<float>(llrs), st); });
  const int calls = V > kSlot ? 10 : 50;
  r.qr_b2b_ms = back_to_back_ms(st, 5, calls, [&] { plan.qr(in, st); });
  r.detect_b2b_ms = back_to_back_ms(
      st, 5, calls, [&] { plan.search(in, View<std::uint8_t>(bits), View<float>(llrs), st); });
  if (!full) return r;

  // Host link alone.
  Buffer<cf32> dh = Buffer<cf32>::device(data.h.size()), dy = Buffer<cf32>::device(data.y.size());
  Buffer<float> hl = Buffer<float>::pinned(std::size_t(nbits));
  r.in_ms = median_ms(st, reps, [&] {
    dh.copy_from(data.h_host, st);
    dy.copy_from(data.y_host, st);
  });
  r.out_ms = median_ms(st, reps, [&] { llrs.copy_to_host(hl.data(), hl.size(), st); });

  // Serial: one stream, copy in, QR, search, copy LLRs out.
  const auto din = data.input(dh.data(), dy.data(), 0, V, Memory::device);
  r.serial_ms = median_ms(st, reps, [&] {
    dh.copy_from(data.h_host, st);
    dy.copy_from(data.y_host, st);
    plan.qr(din, st);
    plan.search(din, View<std::uint8_t>(bits), View<float>(llrs), st);
    llrs.copy_to_host(hl.data(), hl.size(), st);
  });

  // Pipelined: chunks (multiples of vpc) round-robin over streams, one plan each. Defaults:
  // three streams, 4 slots per chunk (a quarter slot for the one-slot batch);
  // MIMORX_NWAY_STREAMS / MIMORX_NWAY_CHUNK override them (chunk in vectors).
  const char* env_streams = std::getenv("MIMORX_NWAY_STREAMS");
  const char* env_chunk = std::getenv("MIMORX_NWAY_CHUNK");
  const int kStreams = env_streams ? std::max(1, std::atoi(env_streams)) : 3;
  const std::int64_t chunk = std::min<std::int64_t>(
      V, env_chunk ? std::max<std::int64_t>(data.vpc, std::atoll(env_chunk) / data.vpc * data.vpc)
                   : (V > kSlot ? 4 * kSlot : kSlot / 4));
  const int mbits = s.nt * bits_per_symbol(s.mod);
  std::vector<Stream> ss;
  std::vector<detect::NwayPlan> plans;
  for (int i = 0; i < kStreams; ++i) {
    ss.push_back(Stream::create());
    plans.emplace_back(detect::NwayConfig{s, n_ways, 8.f}, Backend::cuda());
  }
  auto pipeline = [&] {
    for (std::int64_t first = 0, c = 0; first < V; first += chunk, ++c) {
      const int i = int(c % kStreams);
      const std::int64_t count = std::min(chunk, V - first);
      const std::int64_t ch0 = first / data.vpc, chn = count / data.vpc;
      const Stream& q = ss[i];
      detail::copy_bytes(dh.data() + ch0 * s.nr * s.nt, Memory::device,
                         data.h_host.data() + ch0 * s.nr * s.nt, Memory::host,
                         std::size_t(chn) * s.nr * s.nt * sizeof(cf32), q.handle());
      detail::copy_bytes(dy.data() + first * s.nr, Memory::device,
                         data.y_host.data() + first * s.nr, Memory::host,
                         std::size_t(count) * s.nr * sizeof(cf32), q.handle());
      const auto cin = data.input(dh.data(), dy.data(), first, count, Memory::device);
      plans[i].qr(cin, q);
      plans[i].search(
          cin, View<std::uint8_t>(bits.data() + first * mbits, count * mbits, Memory::device),
          View<float>(llrs.data() + first * mbits, count * mbits, Memory::device), q);
      detail::copy_bytes(hl.data() + first * mbits, Memory::host, llrs.data() + first * mbits,
                         Memory::device, std::size_t(count) * mbits * sizeof(float), q.handle());
    }
    for (auto& q : ss) q.synchronize();
  };
  r.pipe_ms = median_wall_ms(reps, pipeline);
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  if (!cuda_available()) {
    std::printf("gpubench_nway: no CUDA GPU available, nothing measured\n");
    return 0;
  }
  // argv[1]: JSON lines file ("-" for none); argv[2]: only the cases whose label
  // "<nt>x<nr> <mod> N=<n> V=<vectors> vpc=<vpc>" contains this text (for profiling one case).
  const char* json = argc > 1 && std::string(argv[1]) != "-" ? argv[1] : nullptr;
  const std::string only = argc > 2 ? argv[2] : "";
  const std::string dev = device_name();
  std::printf("N-way detector on %s (throughput = information bits / s)\n\n", dev.c_str());
  std::printf(
      "| nt x nr | mod | N | vectors | vpc | QR us | QR us b2b | detect us | detect us b2b | "
      "detect Gbit/s | detect Gbit/s b2b | serial total "
      "Gbit/s | pipelined total Gbit/s | H,y H2D bound Gbit/s | pipelined / bound | LLR D2H "
      "bound Gbit/s | paper detect Mbit/s | paper total Mbit/s |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
  struct Case {
    int nt;
    Modulation mod;
    std::int64_t vectors;
    int vpc;
  };
  std::vector<Case> cases;
  for (std::int64_t v : {kSlot, 64 * kSlot}) {
    for (int nt : {2, 4}) {
      for (Modulation mod : {Modulation::qam16, Modulation::qam64})
        cases.push_back({nt, mod, v, 1});
    }
  }
  for (Modulation mod : {Modulation::qam16, Modulation::qam64})
    cases.push_back({4, mod, 64 * kSlot, 12});
  std::uint64_t seed = 1234;
  for (const auto& c : cases) {
    const detect::MimoShape s{c.nt, c.nt, c.mod};
    BenchData data(s, c.vectors, c.vpc, seed++);
    const double bits = double(c.vectors) * c.nt * bits_per_symbol(c.mod);
    for (int n = 1; n <= c.nt; ++n) {
      if (c.vpc > 1 && n != 1 && n != c.nt) continue;
      const std::string label = std::to_string(c.nt) + "x" + std::to_string(c.nt) + " " +
                                to_string(c.mod) + " N=" + std::to_string(n) +
                                " V=" + std::to_string(c.vectors) + " vpc=" + std::to_string(c.vpc);
      if (label.find(only) == std::string::npos) continue;
      const Row r = measure(data, n, true);
      auto gbps = [&](float ms) { return ms > 0 ? bits / (ms * 1e-3) / 1e9 : 0.0; };
      std::printf(
          "| %dx%d | %s | %d | %lld | %d | %.1f | %.1f | %.1f | %.1f | %.2f | %.2f | %.2f | %.2f | "
          "%.2f | %.2f | %.2f | %s | %s |\n",
          c.nt, c.nt, to_string(c.mod).c_str(), n, static_cast<long long>(c.vectors), c.vpc,
          r.qr_ms * 1e3, r.qr_b2b_ms * 1e3, r.detect_ms * 1e3, r.detect_b2b_ms * 1e3,
          gbps(r.detect_ms), gbps(r.detect_b2b_ms), gbps(r.serial_ms), gbps(r.pipe_ms),
          gbps(r.in_ms), r.in_ms > 0 ? r.in_ms / r.pipe_ms : 0.0, gbps(r.out_ms),
          paper_cell(c.nt, c.mod, n, false).c_str(), paper_cell(c.nt, c.mod, n, true).c_str());
      char line[1024];
      std::snprintf(line, sizeof line,
                    "{\"bench\":\"nway\",\"device\":\"%s\",\"nt\":%d,\"nr\":%d,\"mod\":\"%s\","
                    "\"n_ways\":%d,\"vectors\":%lld,\"vpc\":%d,\"qr_us\":%.3f,\"detect_us\":%.3f,"
                    "\"qr_b2b_us\":%.3f,\"detect_b2b_us\":%.3f,"
                    "\"serial_total_us\":%.3f,\"pipelined_total_us\":%.3f,\"h2d_hy_us\":%.3f,"
                    "\"d2h_llr_us\":%.3f,\"detect_gbps\":%.4f,\"pipelined_gbps\":%.4f}",
                    dev.c_str(), c.nt, c.nt, to_string(c.mod).c_str(), n,
                    static_cast<long long>(c.vectors), c.vpc, r.qr_ms * 1e3, r.detect_ms * 1e3,
                    r.qr_b2b_ms * 1e3, r.detect_b2b_ms * 1e3, r.serial_ms * 1e3, r.pipe_ms * 1e3,
                    r.in_ms * 1e3, r.out_ms * 1e3, gbps(r.detect_ms), gbps(r.pipe_ms));
      append_json(json, line);
    }
  }
  return 0;
}

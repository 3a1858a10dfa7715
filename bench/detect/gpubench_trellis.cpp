// Trellis detector on the GPU. Throughput = information bits detected per second
// (V * nt * log2 Q / time), i.i.d. Gaussian channels (the search has a fixed complexity, so y
// need not follow the model for timing).
//  * The paper's set-up (Wu, Sun, Cavallaro; GeForce 9600GT): 2100 received vectors (one 5 MHz
//    LTE slot), 2x2 and 4x4, Q = 4, 16, 64; kernels only (QR + search) and with the host-device
//    transfers (pinned H2D of H and y, QR, search, D2H of the LLRs, one stream), beside the
//    paper's figures (Mbit/s).
//  * A batch that fills the GPU (kernels only): 4x4 16-QAM and 64-QAM (and QPSK), with the
//    operation-count floor. Per vector the search evaluates (nt-1) Q^2 reduction edges at
//    kOpsPerEdge instructions each (a broadcast LDS.128 of the incoming path, 3 FFMA + FMUL for
//    |u - R_ii x|^2, FADD of the path distance, FSETP + 2 SEL for the running minimum and its
//    index). `edge floor` is the throughput if every lane of every SM retired one such
//    instruction per cycle at 1.98 GHz (the H100/H200 SXM boost clock); `model floor` adds the
//    extension steps, the residuals and the max-log merge (counts in docs/trellis.md).
// Usage: gpubench_trellis_detect [out.jsonl|-] [label filter]
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "gpubench_nway_common.hpp"
#include "mimorx/detect/trellis.hpp"

using namespace mimorx;
using namespace mimorx::bench;

namespace {

constexpr std::int64_t kLteSlot5MHz = 2100;  // the paper's batch
constexpr double kClockHz = 1.98e9;
constexpr double kOpsPerEdge = 9;

struct Paper {
  int nt, q;
  double mbps, total_mbps;  // GeForce 9600GT: without / with host-device transfers
};
const Paper kPaper[] = {{2, 4, 180.1, 62.67}, {2, 16, 63.05, 41.52}, {2, 64, 8.80, 8.27},
                        {4, 4, 54.19, 20.54}, {4, 16, 28.17, 15.35}, {4, 64, 4.23, 3.85}};

const Paper* paper(int nt, int q) {
  for (const auto& p : kPaper)
    if (p.nt == nt && p.q == q) return &p;
  return nullptr;
}

// Instruction counts per vector (docs/trellis.md, "Sharing and operation count").
struct Ops {
  double edges = 0, model = 0;
};
Ops ops_per_vector(const detect::MimoShape& s) {
  const double nt = s.nt, Q = constellation_size(s.mod), nb = s.bits_per_vector();
  const double edges = (nt - 1) * Q * Q;
  const double ext_steps = Q * nt * (nt - 1) / 2;
  double terms = 0;  // residual terms (one complex multiply-accumulate each)
  for (int i = 1; i < s.nt; ++i) {
    terms += s.nt - i;                                       // shared by reduction and extension
    for (int r = 0; r <= i - 2; ++r) terms += s.nt - 1 - r;  // the rest of list L_i's extension
  }
  terms *= Q;
  Ops o;
  o.edges = edges * kOpsPerEdge;
  // Residual term: 4 FFMA + ~6 to unpack the vertex's amplitudes; extension step: two
  // slicers (4 each), the edge weight (4), the distance (1), the path word (2); merge: ~4 per
  // (list path, bit).
  o.model = o.edges + 10 * terms + 15 * ext_steps + 4 * nb * nt * Q;
  return o;
}

struct Row {
  float qr_ms = 0, search_ms = 0, total_ms = 0, serial_ms = 0;
};

Row measure(const BenchData& data, bool transfers) {
  const auto& s = data.shape;
  const std::int64_t V = data.vectors, nbits = V * s.bits_per_vector();
  Row r;
  Stream st = Stream::create();
  detect::TrellisPlan plan(detect::TrellisConfig{s, 8.f, false}, Backend::cuda());
  Buffer<std::uint8_t> bits = Buffer<std::uint8_t>::device(std::size_t(nbits));
  Buffer<float> llrs = Buffer<float>::device(std::size_t(nbits));
  const auto in = data.device_input();
  const int reps = V > 100000 ? 7 : 21;
  r.qr_ms = median_ms(st, reps, [&] { plan.qr(in, st); });
  r.search_ms = median_ms(
      st, reps, [&] { plan.search(in, View<std::uint8_t>(bits), View<float>(llrs), st); });
  r.total_ms = median_ms(st, reps, [&] {
    plan.qr(in, st);
    plan.search(in, View<std::uint8_t>(bits), View<float>(llrs), st);
  });
  if (!transfers) return r;
  Buffer<cf32> dh = Buffer<cf32>::device(data.h.size()), dy = Buffer<cf32>::device(data.y.size());
  Buffer<float> hl = Buffer<float>::pinned(std::size_t(nbits));
  const auto din = data.input(dh.data(), dy.data(), 0, V, Memory::device);
  r.serial_ms = median_ms(st, reps, [&] {
    dh.copy_from(data.h_host, st);
    dy.copy_from(data.y_host, st);
    plan.qr(din, st);
    plan.search(din, View<std::uint8_t>(bits), View<float>(llrs), st);
    llrs.copy_to_host(hl.data(), hl.size(), st);
  });
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  if (!cuda_available()) {
    std::printf("gpubench_trellis: no CUDA GPU available, nothing measured\n");
    return 0;
  }
  const char* json = argc > 1 && std::string(argv[1]) != "-" ? argv[1] : nullptr;
  const std::string only = argc > 2 ? argv[2] : "";
  const auto devs = cuda_devices();
  const std::string dev = device_name();
  const double lanes_per_s = double(devs[0].sm_count) * 128 * kClockHz;
  std::printf("Trellis detector on %s (throughput = information bits / s)\n\n", dev.c_str());

  std::printf("Paper set-up (2100 vectors, one stream):\n\n");
  std::printf(
      "| nt x nr | Q | QR us | search us | kernels Mbit/s | with transfers Mbit/s | paper Mbit/s "
      "| paper with transfers Mbit/s |\n|---|---|---|---|---|---|---|---|\n");
  std::uint64_t seed = 4321;
  for (int nt : {2, 4}) {
    for (Modulation mod : {Modulation::qpsk, Modulation::qam16, Modulation::qam64}) {
      const int Q = constellation_size(mod);
      const std::string label =
          "paper " + std::to_string(nt) + "x" + std::to_string(nt) + " " + to_string(mod);
      if (label.find(only) == std::string::npos) continue;
      const detect::MimoShape s{nt, nt, mod};
      BenchData data(s, kLteSlot5MHz, 1, seed++);
      const Row r = measure(data, true);
      const double bits = double(kLteSlot5MHz) * s.bits_per_vector();
      auto mbps = [&](float ms) { return ms > 0 ? bits / (ms * 1e-3) / 1e6 : 0.0; };
      const Paper* p = paper(nt, Q);
      std::printf("| %dx%d | %d | %.1f | %.1f | %.1f | %.1f | %.2f | %.2f |\n", nt, nt, Q,
                  r.qr_ms * 1e3, r.search_ms * 1e3, mbps(r.total_ms), mbps(r.serial_ms),
                  p ? p->mbps : 0.0, p ? p->total_mbps : 0.0);
      char line[1024];
      std::snprintf(line, sizeof line,
                    "{\"bench\":\"trellis\",\"case\":\"paper\",\"device\":\"%s\",\"nt\":%d,"
                    "\"nr\":%d,\"mod\":\"%s\",\"q\":%d,\"vectors\":%lld,\"qr_us\":%.3f,"
                    "\"search_us\":%.3f,\"kernels_us\":%.3f,\"serial_total_us\":%.3f,"
                    "\"kernels_mbps\":%.3f,\"with_transfers_mbps\":%.3f,\"paper_mbps\":%.2f,"
                    "\"paper_with_transfers_mbps\":%.2f}",
                    dev.c_str(), nt, nt, to_string(mod).c_str(), Q,
                    static_cast<long long>(kLteSlot5MHz), r.qr_ms * 1e3, r.search_ms * 1e3,
                    r.total_ms * 1e3, r.serial_ms * 1e3, mbps(r.total_ms), mbps(r.serial_ms),
                    p ? p->mbps : 0.0, p ? p->total_mbps : 0.0);
      append_json(json, line);
    }
  }

  std::printf("\nBatches that fill the GPU (kernels only):\n\n");
  std::printf(
      "| nt x nr | mod | vectors | QR us | search us | search Gbit/s | QR + search Gbit/s | "
      "edge floor Gbit/s | search / edge floor | model floor Gbit/s | search / model floor "
      "|\n|---|---|---|---|---|---|---|---|---|---|---|\n");
  struct Fill {
    Modulation mod;
    std::int64_t vectors;
  };
  for (const Fill& f : {Fill{Modulation::qpsk, 4 << 20}, Fill{Modulation::qam16, 2 << 20},
                        Fill{Modulation::qam64, 1 << 19}}) {
    const detect::MimoShape s{4, 4, f.mod};
    const std::string label = "fill 4x4 " + to_string(f.mod);
    if (label.find(only) == std::string::npos) continue;
    BenchData data(s, f.vectors, 1, seed++);
    const Row r = measure(data, false);
    const double bits = double(f.vectors) * s.bits_per_vector();
    auto gbps = [&](float ms) { return ms > 0 ? bits / (ms * 1e-3) / 1e9 : 0.0; };
    const Ops o = ops_per_vector(s);
    const double edge_floor = lanes_per_s / o.edges * s.bits_per_vector() / 1e9;
    const double model_floor = lanes_per_s / o.model * s.bits_per_vector() / 1e9;
    std::printf("| 4x4 | %s | %lld | %.1f | %.1f | %.2f | %.2f | %.2f | %.3f | %.2f | %.3f |\n",
                to_string(f.mod).c_str(), static_cast<long long>(f.vectors), r.qr_ms * 1e3,
                r.search_ms * 1e3, gbps(r.search_ms), gbps(r.total_ms), edge_floor,
                gbps(r.search_ms) / edge_floor, model_floor, gbps(r.search_ms) / model_floor);
    char line[1024];
    std::snprintf(line, sizeof line,
                  "{\"bench\":\"trellis\",\"case\":\"fill\",\"device\":\"%s\",\"nt\":4,\"nr\":4,"
                  "\"mod\":\"%s\",\"vectors\":%lld,\"qr_us\":%.3f,\"search_us\":%.3f,"
                  "\"kernels_us\":%.3f,\"search_gbps\":%.4f,\"kernels_gbps\":%.4f,"
                  "\"edge_instr_per_vector\":%.0f,\"model_instr_per_vector\":%.0f,"
                  "\"edge_floor_gbps\":%.4f,\"model_floor_gbps\":%.4f}",
                  dev.c_str(), to_string(f.mod).c_str(), static_cast<long long>(f.vectors),
                  r.qr_ms * 1e3, r.search_ms * 1e3, r.total_ms * 1e3, gbps(r.search_ms),
                  gbps(r.total_ms), o.edges, o.model, edge_floor, model_floor);
    append_json(json, line);
  }
  return 0;
}

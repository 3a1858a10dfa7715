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
//  * Real time: 100 MHz NR carriers (3276 subcarriers x 14 symbols = 45864 vectors per 0.5 ms
//    slot), 4x4 64-QAM, detected end to end: per slot pinned H2D of H and y, QR, search, D2H
//    of the LLRs, slots round-robin over streams (4; MIMORX_TRELLIS_STREAMS overrides) with
//    one plan and one set of buffers each, so that copies overlap kernels. Slots per second
//    over 256 slots (wall clock, median of 3), carriers = slots/s x 0.5 ms. Two channel
//    layouts: H per resource element (vpc = 1, 128 B of H per vector in) and H per subcarrier
//    for the slot's 14 symbols (vpc = 14).
// Usage: gpubench_trellis_detect [out.jsonl|-] [label filter]
#include <algorithm>
#include <cstdio>
#include <cstdlib>
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
  detect::TrellisConfig cfg{s, 8.f, false};
  detect::TrellisPlan plan(cfg, Backend::cuda());
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

// Real time: slots of one 100 MHz NR carrier pipelined over streams (see the header).
constexpr int kSubcarriers = 3276, kSymbols = 14;
constexpr std::int64_t kNrSlot = std::int64_t(kSubcarriers) * kSymbols;
constexpr double kSlotSeconds = 0.5e-3;

struct RealTime {
  int streams = 0, slots = 0;
  double seconds = 0, one_slot_ms = 0, in_mb = 0, out_mb = 0;
};

RealTime real_time(const BenchData& data, int n_streams, int n_slots) {
  const auto& s = data.shape;
  const std::int64_t V = data.vectors, nbits = V * s.bits_per_vector();
  struct Lane {
    Stream st;
    detect::TrellisPlan plan;
    Buffer<cf32> dh, dy;
    Buffer<std::uint8_t> bits;
    Buffer<float> llrs, host_llrs;
  };
  std::vector<Lane> lanes;
  for (int i = 0; i < n_streams; ++i) {
    lanes.push_back(Lane{Stream::create(),
                         detect::TrellisPlan(detect::TrellisConfig{s, 8.f, false}, Backend::cuda()),
                         Buffer<cf32>::device(data.h.size()), Buffer<cf32>::device(data.y.size()),
                         Buffer<std::uint8_t>::device(std::size_t(nbits)),
                         Buffer<float>::device(std::size_t(nbits)),
                         Buffer<float>::pinned(std::size_t(nbits))});
  }
  auto slot = [&](Lane& l) {
    l.dh.copy_from(data.h_host, l.st);
    l.dy.copy_from(data.y_host, l.st);
    const auto in = data.input(l.dh.data(), l.dy.data(), 0, V, Memory::device);
    l.plan.run(in, View<std::uint8_t>(l.bits), View<float>(l.llrs), l.st);
    l.llrs.copy_to_host(l.host_llrs.data(), l.host_llrs.size(), l.st);
  };
  RealTime r;
  r.streams = n_streams;
  r.slots = n_slots;
  r.in_mb = double(data.in_bytes()) / 1e6;
  r.out_mb = double(nbits) * sizeof(float) / 1e6;
  // One slot alone (latency: nothing to overlap with).
  r.one_slot_ms = median_wall_ms(5, [&] {
    slot(lanes[0]);
    lanes[0].st.synchronize();
  });
  r.seconds = median_wall_ms(3,
                             [&] {
                               for (int k = 0; k < n_slots; ++k)
                                 slot(lanes[std::size_t(k % n_streams)]);
                               for (auto& l : lanes) l.st.synchronize();
                             }) *
              1e-3;
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
    {
      const Row r = measure(data, false);
      const double bits = double(f.vectors) * s.bits_per_vector();
      auto gbps = [&](float ms) { return ms > 0 ? bits / (ms * 1e-3) / 1e9 : 0.0; };
      const Ops o = ops_per_vector(s);
      const double edge_floor = lanes_per_s / o.edges * s.bits_per_vector() / 1e9;
      const double model_floor = lanes_per_s / o.model * s.bits_per_vector() / 1e9;
      const std::string mod_label = to_string(f.mod);
      std::printf("| 4x4 | %s | %lld | %.1f | %.1f | %.2f | %.2f | %.2f | %.3f | %.2f | %.3f |\n",
                  mod_label.c_str(), static_cast<long long>(f.vectors), r.qr_ms * 1e3,
                  r.search_ms * 1e3, gbps(r.search_ms), gbps(r.total_ms), edge_floor,
                  gbps(r.search_ms) / edge_floor, model_floor, gbps(r.search_ms) / model_floor);
      const std::string variant = "default";
      char line[1024];
      std::snprintf(
          line, sizeof line,
          "{\"bench\":\"trellis\",\"case\":\"fill\",\"device\":\"%s\",\"nt\":4,\"nr\":4,"
          "\"mod\":\"%s\",\"variant\":\"%s\",\"vectors\":%lld,\"qr_us\":%.3f,\"search_us\":%.3f,"
          "\"kernels_us\":%.3f,\"search_gbps\":%.4f,\"kernels_gbps\":%.4f,"
          "\"edge_instr_per_vector\":%.0f,\"model_instr_per_vector\":%.0f,"
          "\"edge_floor_gbps\":%.4f,\"model_floor_gbps\":%.4f}",
          dev.c_str(), to_string(f.mod).c_str(), variant.c_str(), static_cast<long long>(f.vectors),
          r.qr_ms * 1e3, r.search_ms * 1e3, r.total_ms * 1e3, gbps(r.search_ms), gbps(r.total_ms),
          o.edges, o.model, edge_floor, model_floor);
      append_json(json, line);
    }
  }

  const char* env_streams = std::getenv("MIMORX_TRELLIS_STREAMS");
  const int n_streams = env_streams ? std::max(1, std::atoi(env_streams)) : 4;
  std::printf(
      "\nReal time: 100 MHz NR carriers (%d subcarriers x %d symbols = %lld vectors per 0.5 ms "
      "slot), 4x4 64-QAM, H2D + QR + search + D2H of the LLRs, %d streams:\n\n",
      kSubcarriers, kSymbols, static_cast<long long>(kNrSlot), n_streams);
  std::printf(
      "| H | vpc | MB in per slot | MB out per slot | one slot alone us | slots | slots/s | "
      "carriers per GPU |\n|---|---|---|---|---|---|---|---|\n");
  for (int vpc : {1, kSymbols}) {
    const std::string label = "realtime vpc=" + std::to_string(vpc);
    if (label.find(only) == std::string::npos) continue;
    const detect::MimoShape s{4, 4, Modulation::qam64};
    BenchData data(s, kNrSlot, vpc, seed++);
    const int n_slots = 256;
    const RealTime r = real_time(data, n_streams, n_slots);
    const double slots_per_s = r.seconds > 0 ? n_slots / r.seconds : 0.0;
    const double carriers = slots_per_s * kSlotSeconds;
    const char* where = vpc == 1 ? "per resource element" : "per subcarrier and slot";
    std::printf("| %s | %d | %.2f | %.2f | %.1f | %d | %.0f | %.2f |\n", where, vpc, r.in_mb,
                r.out_mb, r.one_slot_ms * 1e3, n_slots, slots_per_s, carriers);
    char line[1024];
    std::snprintf(line, sizeof line,
                  "{\"bench\":\"trellis\",\"case\":\"realtime\",\"device\":\"%s\",\"nt\":4,"
                  "\"nr\":4,\"mod\":\"64qam\",\"subcarriers\":%d,\"symbols\":%d,"
                  "\"vectors_per_slot\":%lld,\"vpc\":%d,\"streams\":%d,\"slots\":%d,"
                  "\"in_mb_per_slot\":%.4f,\"out_mb_per_slot\":%.4f,\"one_slot_us\":%.3f,"
                  "\"seconds\":%.6f,\"slots_per_s\":%.2f,\"carriers\":%.4f}",
                  dev.c_str(), kSubcarriers, kSymbols, static_cast<long long>(kNrSlot), vpc,
                  r.streams, n_slots, r.in_mb, r.out_mb, r.one_slot_ms * 1e3, r.seconds,
                  slots_per_s, carriers);
    append_json(json, line);
  }
  return 0;
}

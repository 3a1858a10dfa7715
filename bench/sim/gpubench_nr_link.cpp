// Simulated NR slots per second (issue 36's figure): the slot chain of run_nr_link on CUDA
// (bits, LDPC encoding, QAM, grid, TDL channel, noise, DM-RS estimation, detection, HARQ
// combining, LDPC decoding and counting on the device) for a 100 MHz carrier, and the same
// chain on the CPU backend for a few slots.
// Set-up: 273 PRB at 30 kHz, 4 layers, 4 receive antennas, MCS 19 of table 1 (64-QAM),
// DM-RS type 1 with one additional position, TDL-C 300 ns 100 Hz low correlation, ls-lmmse CSI,
// one transmission per block; MMSE and nway:4.
// Usage: gpubench_nr_link_sim [out.jsonl] [cpu_slots (default 4)]
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "mimorx/core/backend.hpp"
#include "mimorx/sim/nr_link.hpp"

using namespace mimorx;

namespace {

sim::NrLinkConfig slot_chain(const std::string& detector) {
  sim::NrLinkConfig c;
  c.slot.numerology = 1;
  c.slot.n_prb = 273;
  c.slot.layers = 4;
  c.n_rx = 4;
  c.mcs_table = nr::McsTable::qam64;
  c.mcs = 19;
  c.tdl = channel::parse_tdl("tdl-c:300:100:low");
  c.csi = sim::NrCsi::ls_lmmse;
  c.detector = detector;
  c.harq_transmissions = 1;
  c.seed = 1;
  return c;
}

bool same_counts(const sim::NrPointResult& a, const sim::NrPointResult& b) {
  return a.blocks == b.blocks && a.slots == b.slots && a.tx_errors == b.tx_errors &&
         a.delivered_bits == b.delivered_bits && a.undetected_errors == b.undetected_errors;
}

}  // namespace

int main(int argc, char** argv) {
  if (!cuda_available()) {
    std::printf("gpubench_nr_link_sim: no CUDA GPU; skipped\n");
    return 0;
  }
  std::ofstream out;
  if (argc > 1) out.open(argv[1], std::ios::app);
  const std::int64_t cpu_slots = argc > 2 ? std::max(1, std::atoi(argv[2])) : 4;
  const double snr = 22.0;
  std::printf("%-8s %-6s %8s %10s %10s %10s %8s %s\n", "detector", "backend", "slots", "seconds",
              "slots/s", "Mbit/s", "BLER", "counts==cpu");
  for (const std::string detector : {"mmse", "nway:4"}) {
    sim::NrLinkConfig c = slot_chain(detector);
    int tbs = 0;
    sim::NrHooks hooks;
    hooks.ready = [&](const sim::NrLinkSetup& s) { tbs = s.tbs; };
    // CPU: a few slots; the GPU runs the same slots and must give the same counts.
    c.max_slots = cpu_slots;
    const auto cpu = sim::run_nr_link(c, Backend::cpu(), {snr}, hooks);
    const auto gpu_check = sim::run_nr_link(c, Backend::cuda(0), {snr});
    const bool equal = same_counts(cpu[0], gpu_check[0]);
    // GPU: a warm-up of a few batches, then a run of about 3 seconds.
    c.max_slots = 256;
    auto r = sim::run_nr_link(c, Backend::cuda(0), {snr});
    const double rate = double(r[0].slots) / r[0].seconds;
    c.max_slots = std::clamp<std::int64_t>(std::int64_t(rate * 3.0), 256, 1000000);
    r = sim::run_nr_link(c, Backend::cuda(0), {snr});
    const sim::NrPointResult* rows[2] = {&r[0], &cpu[0]};
    for (const sim::NrPointResult* p : rows) {
      const bool is_gpu = p == &r[0];
      const double slots_per_s = double(p->slots) / p->seconds;
      const double mbps = double(p->delivered_bits) / p->seconds / 1e6;
      std::printf("%-8s %-6s %8lld %10.3f %10.1f %10.1f %8.4f %s\n", detector.c_str(),
                  is_gpu ? "cuda" : "cpu", static_cast<long long>(p->slots), p->seconds,
                  slots_per_s, mbps, p->residual_bler(), equal ? "yes" : "NO");
      if (out) {
        out << nlohmann::json{{"bench", "sim_nr_link"},
                              {"backend", is_gpu ? "cuda" : "cpu"},
                              {"detector", detector},
                              {"prb", c.slot.n_prb},
                              {"scs_khz", 30},
                              {"layers", c.slot.layers},
                              {"n_rx", c.n_rx},
                              {"mcs", c.mcs},
                              {"mcs_table", 1},
                              {"tbs", tbs},
                              {"channel", "tdl-c:300:100:low"},
                              {"csi", "ls-lmmse"},
                              {"snr_db", snr},
                              {"slots", p->slots},
                              {"seconds", p->seconds},
                              {"slots_per_s", slots_per_s},
                              {"delivered_mbps", mbps},
                              {"bler", p->residual_bler()},
                              {"counts_equal_cpu", equal}}
                   .dump()
            << "\n";
      }
    }
  }
  return 0;
}

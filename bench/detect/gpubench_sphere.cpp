// PSD throughput on the GPU in the set-up of Jozsa et al. (ICCS 2013): i.i.d. Rayleigh
// channels, each serving many received vectors, SNR 0..30 dB, throughput = detected bits/s.
// The paper runs 20000 channels x 1200 vectors; we run 1024 channels x 1024 vectors per point
// (and fewer where one run would take more than ~1 s) so that the whole program stays under a
// minute. The timed region is SpherePlan::run as a user calls it: input validation (a device
// NaN/Inf check), the per-channel sorted QR kernel and the search kernel.
//
// MIMORX_PSD_SWEEP=1 adds a sweep over level sets, team widths, the initial radius and the
// kernel's register budget on 4x4 QPSK / 16-QAM / 64-QAM (docs/psd.md); MIMORX_PSD_TABLE=0 skips
// the main table (each point of which is measured with the automatic choice, psd_auto, and with
// the team kernel on the automatic levels, psd_team; MIMORX_PSD_SNR_STEP=2 for the paper's 2 dB
// steps, MIMORX_PSD_TEAM=0 without the team column); MIMORX_PSD_LANE_BLOCK=1 sweeps the lane
// kernel's block size and channel order; MIMORX_PSD_PAPER=1 runs the paper's full set-up (20000
// channels x 1200 vectors per point) for 4x4 QPSK and 16-QAM.
// Usage: gpubench_sphere_detect [out.jsonl]
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "detect/sphere_internal.hpp"
#include "mimorx/core/backend.hpp"
#include "mimorx/core/buffer.hpp"
#include "mimorx/detect/sphere.hpp"

using namespace mimorx;
using namespace mimorx::detect;

namespace {

struct Data {
  MimoShape shape;
  std::int64_t channels = 0;
  int vpc = 0;
  Buffer<cf32> h, y;
  Buffer<float> n0;
  Buffer<std::uint8_t> bits;
  Buffer<SearchStats> stats;
};

std::string levels_str(const PsdLevels& p) {
  std::string s = "lvl{";
  for (std::size_t i = 0; i < p.lvl.size(); ++i) {
    if (i) s += ',';
    s += std::to_string(p.lvl[i]);
  }
  s += "} paths{";
  for (std::size_t i = 0; i < p.paths.size(); ++i) {
    if (i) s += ',';
    s += std::to_string(p.paths[i]);
  }
  s += '}';
  return s;
}

// Channels, symbols and unit noise drawn once per shape; y formed per SNR.
struct Scenario {
  MimoShape shape;
  std::int64_t channels;
  int vpc;
  std::vector<cf32> h, x, w;
  Scenario(MimoShape s, std::int64_t c, int v, std::uint64_t seed) : shape(s), channels(c), vpc(v) {
    std::mt19937_64 rng(seed);
    std::normal_distribution<float> g(0.f, std::sqrt(0.5f));
    const std::int64_t V = c * v;
    h.resize(std::size_t(c * s.nr * s.nt));
    for (auto& e : h) e = cf32(g(rng), g(rng));
    x.resize(std::size_t(V * s.nt));
    const int mb = bits_per_symbol(s.mod);
    for (auto& e : x) {
      std::uint8_t b[8];
      const auto r = rng();
      for (int k = 0; k < mb; ++k) b[k] = std::uint8_t((r >> k) & 1);
      e = map_symbol(s.mod, b);
    }
    w.resize(std::size_t(V * s.nr));
    for (auto& e : w) e = cf32(g(rng), g(rng));
  }
  void fill(Data& d, double snr_db) const {
    const std::int64_t V = channels * vpc;
    const int nr = shape.nr, nt = shape.nt;
    const float n0 = float(std::pow(10.0, -snr_db / 10.0) * nt);
    const float sd = std::sqrt(n0);
    std::vector<cf32> y(std::size_t(V * nr));
    for (std::int64_t v = 0; v < V; ++v) {
      const cf32* hm = &h[std::size_t((v / vpc) * nr * nt)];
      for (int i = 0; i < nr; ++i) {
        cf32 acc = w[std::size_t(v * nr + i)] * sd;
        for (int t = 0; t < nt; ++t) acc += hm[t * nr + i] * x[std::size_t(v * nt + t)];
        y[std::size_t(v * nr + i)] = acc;
      }
    }
    d.shape = shape;
    d.channels = channels;
    d.vpc = vpc;
    if (d.h.size() != h.size()) d.h = Buffer<cf32>::device(h.size());
    if (d.y.size() != y.size()) d.y = Buffer<cf32>::device(y.size());
    if (d.n0.empty()) d.n0 = Buffer<float>::device(1);
    d.h.copy_from_host(h.data(), h.size());
    d.y.copy_from_host(y.data(), y.size());
    d.n0.copy_from_host(&n0, 1);
    const std::size_t nb = std::size_t(V * shape.bits_per_vector());
    if (d.bits.size() != nb) d.bits = Buffer<std::uint8_t>::device(nb);
    if (d.stats.size() != std::size_t(V)) d.stats = Buffer<SearchStats>::device(std::size_t(V));
  }
};

struct Result {
  double ms = 0, gbps = 0, mvps = 0, nodes = 0, max_nodes = 0, leaves = 0;
};

Result measure(SpherePlan& plan, Data& d, int repeats) {
  DetectInput in;
  const std::int64_t V = d.channels * d.vpc;
  in.h = ConstMatrixBatch<cf32>(d.h.data(), d.channels, d.shape.nr, d.shape.nt, Memory::device);
  in.y = ConstMatrixBatch<cf32>(d.y.data(), V, d.shape.nr, 1, Memory::device);
  in.noise_var = View<const float>(d.n0.data(), 1, Memory::device);
  in.vectors_per_channel = d.vpc;
  // Warm-up, with statistics (not timed).
  plan.run(in, View<std::uint8_t>(d.bits), View<float>{}, View<SearchStats>(d.stats));
  std::vector<SearchStats> st(static_cast<std::size_t>(V));
  d.stats.copy_to_host(st.data(), st.size());
  Result r;
  for (const auto& s : st) {
    r.nodes += double(s.nodes);
    r.leaves += double(s.leaves);
    r.max_nodes = std::max(r.max_nodes, double(s.nodes));
  }
  r.nodes /= double(V);
  r.leaves /= double(V);
  std::vector<float> times;
  GpuTimer timer;
  for (int i = 0; i < repeats; ++i) {
    timer.start();
    plan.run(in, View<std::uint8_t>(d.bits));
    timer.stop();
    times.push_back(timer.elapsed_ms());
  }
  std::sort(times.begin(), times.end());
  r.ms = times[times.size() / 2];
  r.gbps = double(V) * d.shape.bits_per_vector() / (r.ms * 1e-3) / 1e9;
  r.mvps = double(V) / (r.ms * 1e-3) / 1e6;
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  if (!cuda_available()) {
    std::printf("gpubench_sphere: no CUDA GPU available; nothing measured\n");
    return 0;
  }
  std::ofstream json;
  if (argc > 1) json.open(argv[1], std::ios::app);
  const auto dev = cuda_devices().front();
  const auto t_begin = std::chrono::steady_clock::now();
  auto elapsed_s = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t_begin).count();
  };
  auto emit = [&](const std::string& bench, const MimoShape& s, double snr, const PsdLevels& lv,
                  int team, std::int64_t C, int vpc, const Result& r, bool babai = false,
                  int min_blocks = 0) {
    std::printf(
        "| %s | %dx%d %s | %4.0f | %s | %d%s%s | %lld | %8.3f | %8.2f | %7.0f | %7.1f | %7.0f |\n",
        bench.c_str(), s.nt, s.nr, to_string(s.mod).c_str(), snr, levels_str(lv).c_str(), team,
        babai ? " babai" : "", min_blocks ? (" minb" + std::to_string(min_blocks)).c_str() : "",
        (long long)(C * vpc), r.ms, r.gbps, r.mvps, r.nodes, r.max_nodes);
    std::fflush(stdout);
    if (json.is_open()) {
      nlohmann::json j = {{"bench", bench},
                          {"device", dev.name},
                          {"nt", s.nt},
                          {"nr", s.nr},
                          {"mod", to_string(s.mod)},
                          {"snr_db", snr},
                          {"levels", levels_str(lv)},
                          {"team", team},
                          {"babai_initial_radius", babai},
                          {"min_blocks", min_blocks},
                          {"channels", C},
                          {"vectors_per_channel", vpc},
                          {"ms", r.ms},
                          {"gbit_per_s", r.gbps},
                          {"mvectors_per_s", r.mvps},
                          {"avg_nodes", r.nodes},
                          {"max_nodes", r.max_nodes},
                          {"avg_leaves", r.leaves}};
      json << j.dump() << "\n";
    }
  };
  std::printf("PSD on %s; timed: SpherePlan::run (validation + QR + search), median of 5\n",
              dev.name.c_str());
  std::printf(
      "| bench | shape | SNR dB | levels | team | vectors | ms | Gbit/s | Mvec/s | avg nodes | max "
      "nodes |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|---|---|\n");

  Data d;
  const char* table_env = std::getenv("MIMORX_PSD_TABLE");
  const bool table = !(table_env && std::string(table_env) == "0");
  // MIMORX_PSD_SNR_STEP=2: the paper's 2 dB steps (default 10); MIMORX_PSD_TEAM=0: automatic
  // choice only, no team-kernel column.
  const char* step_env = std::getenv("MIMORX_PSD_SNR_STEP");
  const double snr_step = step_env ? std::max(1.0, std::atof(step_env)) : 10.0;
  const char* team_env = std::getenv("MIMORX_PSD_TEAM");
  const bool with_team = !(team_env && std::string(team_env) == "0");
  const double table_budget_s = 100.0 * 10.0 / snr_step;
  for (int nt : {2, 4}) {
    if (!table) break;
    for (Modulation mod : {Modulation::qpsk, Modulation::qam16, Modulation::qam64}) {
      const MimoShape shape{nt, nt, mod};
      std::int64_t C = 1024;
      const int vpc = 1024;
      const Scenario sc(shape, C, vpc, 1234 + nt * 10 + bits_per_symbol(mod));
      // The automatic choice (one lane per vector), and the team kernel on the automatic levels
      // and team width.
      SphereConfig cfg;
      cfg.shape = shape;
      SpherePlan plan(cfg, Backend::cuda(0));
      SphereConfig tcfg = cfg;
      tcfg.levels = plan.levels();
      SpherePlan team_plan(tcfg, Backend::cuda(0));
      for (double snr = 0.0; snr <= 30.0 + 1e-9; snr += snr_step) {
        for (SpherePlan* pl : {&plan, &team_plan}) {
          if (pl == &team_plan && !with_team) continue;
          if (elapsed_s() > table_budget_s) {
            std::printf("(time budget reached; point skipped)\n");
            continue;
          }
          sc.fill(d, snr);
          // A point whose warm-up exceeds ~1 s is re-run on fewer channels.
          const auto t0 = std::chrono::steady_clock::now();
          Result r = measure(*pl, d, 1);
          const double first_s =
              std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
          std::int64_t Cn = C;
          if (first_s > 1.0) {
            Cn = std::max<std::int64_t>(16, std::int64_t(double(C) / first_s * 0.5));
            const Scenario small(shape, Cn, vpc, 99);
            small.fill(d, snr);
          }
          r = measure(*pl, d, first_s > 1.0 ? 3 : 5);
          emit(pl == &plan ? "psd_auto" : "psd_team", shape, snr, pl->levels(), pl->lanes(), Cn,
               vpc, r);
        }
      }
    }
  }

  if (const char* lb = std::getenv("MIMORX_PSD_LANE_BLOCK"); lb && std::string(lb) == "1") {
    // The lane kernel: block size and channel order (hardest first or their own).
    for (const auto& [shape, snr] : {std::pair{MimoShape{4, 4, Modulation::qpsk}, 20.0},
                                     std::pair{MimoShape{4, 4, Modulation::qam16}, 10.0},
                                     std::pair{MimoShape{4, 4, Modulation::qam16}, 20.0},
                                     std::pair{MimoShape{2, 2, Modulation::qam16}, 20.0},
                                     std::pair{MimoShape{4, 4, Modulation::qam64}, 30.0}}) {
      const Scenario sc(shape, 1024, 1024, 1234 + shape.nt * 10 + bits_per_symbol(shape.mod));
      sc.fill(d, snr);
      SphereConfig cfg;
      cfg.shape = shape;
      SpherePlan plan(cfg, Backend::cuda(0));
      for (int block : {64, 128, 256}) {
        for (int order : {0, 1}) {
          sphere::set_lane_block_override(block);
          sphere::set_lane_order_override(order);
          const Result r = measure(plan, d, 5);
          emit("psd_lane_block_" + std::to_string(block) + (order ? "_own_order" : "_hard_first"),
               shape, snr, plan.levels(), 1, 1024, 1024, r);
        }
      }
      sphere::set_lane_block_override(0);
      sphere::set_lane_order_override(0);
    }
  }
  if (const char* pp = std::getenv("MIMORX_PSD_PAPER"); pp && std::string(pp) == "1") {
    // The paper's set-up in full: 20000 channels x 1200 vectors per point (24 M vectors), 4x4
    // QPSK and 16-QAM, automatic parameters; the main table uses 1024 x 1024 per point.
    for (const MimoShape& shape :
         {MimoShape{4, 4, Modulation::qam16}, MimoShape{4, 4, Modulation::qpsk}}) {
      const Scenario sc(shape, 20000, 1200, 4321 + bits_per_symbol(shape.mod));
      SphereConfig cfg;
      cfg.shape = shape;
      SpherePlan plan(cfg, Backend::cuda(0));
      for (double snr : {10.0, 20.0, 30.0}) {
        sc.fill(d, snr);
        const Result r = measure(plan, d, 3);
        emit("psd_paper_setup", shape, snr, plan.levels(), plan.lanes(), 20000, 1200, r);
      }
    }
  }
  if (const char* ph = std::getenv("MIMORX_PSD_PHASES"); ph && std::string(ph) == "1") {
    // Where the time goes: SpherePlan::run with validation only (phases 4), validation + QR
    // (1), validation + search (2, reusing the QR of the previous call), everything (3) and the
    // search kernel without the search (10: its per-vector set-up and output), for both QR
    // kernels (qr 0: shared memory, 1: global memory).
    for (const MimoShape& shape :
         {MimoShape{4, 4, Modulation::qpsk}, MimoShape{4, 4, Modulation::qam16},
          MimoShape{2, 2, Modulation::qpsk}, MimoShape{4, 4, Modulation::qam64}}) {
      const Scenario sc(shape, 1024, 1024, 1234 + shape.nt * 10 + bits_per_symbol(shape.mod));
      sc.fill(d, shape.mod == Modulation::qam64 ? 30.0 : 20.0);
      SphereConfig cfg;
      cfg.shape = shape;
      SpherePlan plan(cfg, Backend::cuda(0));
      for (int qr : {0, 1}) {
        sphere::set_qr_mode_override(qr);
        for (int phases : {4, 1, 2, 3, 2 | 8}) {
          sphere::set_phase_override(phases);
          const Result r = measure(plan, d, 5);
          std::printf("| phases | %dx%d %s | qr %d | phases %d | %8.3f ms |\n", shape.nt, shape.nr,
                      to_string(shape.mod).c_str(), qr, phases, r.ms);
        }
      }
      sphere::set_phase_override(0);
      sphere::set_qr_mode_override(0);
    }
  }
  if (const char* pr = std::getenv("MIMORX_PSD_PROFILE"); pr && std::string(pr) == "1") {
    // One SpherePlan::run per point, for a profiler (ncu) to capture its kernels.
    for (const MimoShape& shape :
         {MimoShape{4, 4, Modulation::qam16}, MimoShape{4, 4, Modulation::qpsk}}) {
      const Scenario sc(shape, 1024, 1024, 1234 + shape.nt * 10 + bits_per_symbol(shape.mod));
      sc.fill(d, 20.0);
      SphereConfig cfg;
      cfg.shape = shape;
      SpherePlan plan(cfg, Backend::cuda(0));
      DetectInput in;
      in.h = ConstMatrixBatch<cf32>(d.h.data(), d.channels, shape.nr, shape.nt, Memory::device);
      in.y = ConstMatrixBatch<cf32>(d.y.data(), d.channels * d.vpc, shape.nr, 1, Memory::device);
      in.noise_var = View<const float>(d.n0.data(), 1, Memory::device);
      in.vectors_per_channel = d.vpc;
      plan.run(in, View<std::uint8_t>(d.bits));
      Stream{}.synchronize();
    }
  }
  if (const char* sw = std::getenv("MIMORX_PSD_SWEEP"); sw && std::string(sw) == "1") {
    // Level sets x team width (0 = automatic) x initial radius (infinite / Babai) x register
    // budget (0 = default; 10 = 48 registers), on the set-up of the main table.
    struct Cand {
      MimoShape shape;
      std::optional<PsdLevels> lv;
      std::vector<int> teams;
      std::vector<int> min_blocks;
      std::vector<double> snrs;
    };
    const MimoShape qpsk{4, 4, Modulation::qpsk}, q16{4, 4, Modulation::qam16},
        q64{4, 4, Modulation::qam64};
    const std::vector<double> s1020{10.0, 20.0};
    const std::vector<Cand> cands = {
        {qpsk, std::nullopt, {8, 16, 32}, {0, 10}, s1020},
        {qpsk, PsdLevels{{5, 1}, {2, 1}}, {8, 16, 32}, {0}, s1020},
        {qpsk, PsdLevels{{5, 1}, {1, 1}}, {8, 16}, {0}, s1020},
        {qpsk, PsdLevels{{6, 3, 1}, {4, 2, 1}}, {8, 16, 32}, {0}, s1020},
        {qpsk, PsdLevels{{7, 5, 3, 1}, {4, 4, 4, 1}}, {8, 16}, {0}, s1020},
        {qpsk, PsdLevels{{6, 1}, {2, 1}}, {8, 16, 32}, {0}, s1020},
        {q16, std::nullopt, {8, 16, 32}, {0, 10}, s1020},
        {q16, PsdLevels{{7, 5, 3, 1}, {1, 1, 1, 1}}, {8, 16}, {0}, s1020},
        {q16, PsdLevels{{7, 5, 3, 1}, {4, 4, 4, 1}}, {16, 32}, {0}, s1020},
        {q16, PsdLevels{{7, 6, 5, 4, 3, 2, 1}, {8, 8, 8, 8, 8, 8, 1}}, {8, 16, 32}, {0}, s1020},
        {q16, PsdLevels{{7, 6, 5, 4, 3, 2, 1}, {4, 4, 4, 4, 4, 4, 1}}, {8, 16}, {0}, s1020},
        {q16, PsdLevels{{7, 5, 3, 1}, {2, 1, 1, 1}}, {16, 32}, {0}, s1020},
        {q64, std::nullopt, {8, 16, 32}, {0}, {20.0}},
        {q64, PsdLevels{{8, 7, 6, 5, 4, 3, 2, 1}, {2, 2, 2, 2, 2, 2, 2, 1}}, {8, 16}, {0}, {20.0}},
    };
    for (const auto& c : cands) {
      const Scenario sc(c.shape, 1024, 1024, 1234 + c.shape.nt * 10 + bits_per_symbol(c.shape.mod));
      for (double snr : c.snrs) {
        sc.fill(d, snr);
        for (bool babai : {false, true}) {
          SphereConfig cfg;
          cfg.shape = c.shape;
          cfg.levels = c.lv;
          cfg.babai_initial_radius = babai;
          SpherePlan plan(cfg, Backend::cuda(0));
          for (int team : c.teams) {
            for (int mb : c.min_blocks) {
              if (elapsed_s() > 170) break;
              sphere::set_team_override(team);
              sphere::set_min_blocks_override(mb);
              const Result r = measure(plan, d, 3);
              sphere::set_team_override(0);
              sphere::set_min_blocks_override(0);
              emit("psd_sweep", c.shape, snr, plan.levels(), team, 1024, 1024, r, babai, mb);
            }
          }
        }
      }
    }
  }
  std::printf("total %.1f s\n", elapsed_s());
  return 0;
}

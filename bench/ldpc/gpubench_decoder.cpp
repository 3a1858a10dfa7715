// Layered min-sum LDPC decoding throughput on the GPU, in the set-up of Li Rongchun et al.
// (J. NUDT 2024): 10 iterations, no early termination, information bits per second, kernel
// only (DecoderPlan::decode_packed on device LLRs, CUDA events, 2 warm-ups, median of 7).
// Codes: the paper's (2080,1760) = BG1, Z=80, first 6 base rows (28 columns, the 2 punctured
// ones not transmitted: N = 26 x 80 = 2080, K = 22 x 80 = 1760, R = 0.846), BG1 Z=384 and BG2
// Z=384 at the rates given by the number of decoded base rows (R = K / ((kb + rows - 2) Z)).
// Beside it: end-to-end (pinned host float LLRs in, or on the integer path pre-quantised int8
// LLRs, packed bits out, copies overlapped with decoding on 3 streams, one plan per stream),
// and the effect of quantisation, Np and packing. Three paths per code: "int8 paired" (the
// integer default), "float" (one codeword per thread, single precision) and "f16x2 paired"
// (DecoderConfig::arithmetic = half: two codewords per thread in half precision, float LLRs).
// The LLRs are N(0, 1) draws (Philox): without early termination the kernel's work does not
// depend on the values.
// Usage: gpubench_decoder_ldpc [out.jsonl]
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "mimorx/core/backend.hpp"
#include "mimorx/core/buffer.hpp"
#include "mimorx/core/rng.hpp"
#include "mimorx/ldpc/decoder.hpp"
#include "mimorx/ldpc/encoder.hpp"

using namespace mimorx;
using namespace mimorx::ldpc;

namespace {

struct Case {
  std::string name;
  BaseGraph bg;
  int z;
  int rows;
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Floors for one decode of `num` words: HBM traffic (float LLRs in, packed bits out) at the
// H100 SXM's 3.35 TB/s, and shared-memory instructions: each edge update reads and writes the
// APP twice (4 accesses), one warp-wide access per SM per clock: 32 lanes x 132 SMs x 1.98 GHz.
struct Floor {
  double hbm_ms, smem_ms;
};
Floor floors(const DecoderPlan& p, int num, int iters, int sms, int lanes_per_access) {
  const double bytes = double(num) * (4.0 * p.n() + p.packed_bytes());
  const double accesses = double(num) * p.edges() * iters * 4.0 / lanes_per_access;
  return {bytes / 3.35e12 * 1e3, accesses / (32.0 * sms * 1.98e9) * 1e3};
}

}  // namespace

int main(int argc, char** argv) {
  if (!cuda_available()) {
    std::printf("gpubench_decoder: no CUDA GPU available; nothing to measure\n");
    return 0;
  }
  std::ofstream json;
  if (argc > 1) json.open(argv[1], std::ios::app);
  const auto dev = cuda_devices().at(0);
  std::printf("device: %s, %d SMs\n", dev.name.c_str(), dev.sm_count);
  const std::vector<Case> cases = {
      {"paper (2080,1760) BG1 Z=80 6 rows", BaseGraph::bg1, 80, 6},
      {"BG1 Z=384 R=1/3 (46 rows)", BaseGraph::bg1, 384, 46},
      {"BG1 Z=384 R=1/2 (24 rows)", BaseGraph::bg1, 384, 24},
      {"BG1 Z=384 R=2/3 (13 rows)", BaseGraph::bg1, 384, 13},
      {"BG1 Z=384 R=0.846 (6 rows, >=5/6)", BaseGraph::bg1, 384, 6},
      {"BG1 Z=384 R=0.917 (4 rows, >=8/9)", BaseGraph::bg1, 384, 4},
      {"BG2 Z=384 R=1/5 (42 rows)", BaseGraph::bg2, 384, 42},
      {"BG2 Z=384 R=1/3 (22 rows)", BaseGraph::bg2, 384, 22},
      {"BG2 Z=384 R=2/3 (7 rows)", BaseGraph::bg2, 384, 7},
  };
  const int iters = 10;
  std::printf(
      "| code | path | Np | blocks/SM | words | kernel ms | info Gbit/s | HBM floor ms | smem "
      "floor ms | end-to-end Gbit/s | end-to-end int8 LLRs Gbit/s |\n"
      "|---|---|---|---|---|---|---|---|---|---|---|\n");
  auto run_case = [&](const Case& c, bool quantized, int np, bool packed, bool e2e, int c2v = -1,
                      int lb = 0, int per_thread = 0,
                      DecoderArithmetic arith = DecoderArithmetic::automatic, int records = -1) {
    DecoderConfig cfg{c.bg, c.z};
    cfg.rows = c.rows;
    cfg.max_iters = iters;
    cfg.early_termination = false;
    cfg.quantized = quantized;
    cfg.codewords_per_block = np;
    cfg.check_input = false;
    cfg.c2v_shared = c2v;
    cfg.max_block_threads = lb;
    cfg.codewords_per_thread = per_thread;
    cfg.arithmetic = arith;
    cfg.c2v_records = records;
    DecoderPlan plan(cfg, Backend::cuda());
    // Enough words for ~8 waves of resident blocks, at most ~1.5 GB of LLRs.
    const int resident = plan.codewords_per_block() * plan.blocks_per_sm() * dev.sm_count;
    const int cap = int(std::min<std::int64_t>(400000000LL / plan.n(), 1 << 20));
    const int num = std::max(resident, std::min(resident * 8, cap));
    Buffer<float> llr = Buffer<float>::device(std::size_t(num) * plan.n());
    rng::fill_gaussian(Backend::cuda(), 7, 3, View<float>(llr));
    Buffer<std::uint8_t> out =
        Buffer<std::uint8_t>::device(std::size_t(num) * (packed ? plan.packed_bytes() : plan.k()));
    Stream s = Stream::create();
    auto once = [&] {
      if (packed) {
        plan.decode_packed(llr, num, out, {}, s);
      } else {
        plan.decode(llr, num, out, {}, s);
      }
    };
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
    const double kms = median(ms);
    const double gbps = double(num) * plan.k() / (kms * 1e-3) / 1e9;
    const Floor f = floors(plan, num, iters, dev.sm_count, 1);
    double e2e_gbps = 0, e2e_int8_gbps = 0;
    if (e2e) {
      // Pinned host LLRs -> device -> decode -> packed bits -> pinned host, chunked over 3
      // streams so that copies of one chunk overlap the decoding of another. Float LLRs, and
      // on the integer path also pre-quantised int8 LLRs (a quarter of the bytes to copy).
      const int nstreams = 3, chunk = std::max(1, num / 12);
      Buffer<float> h_llr = Buffer<float>::pinned(std::size_t(num) * plan.n());
      llr.copy_to_host(h_llr.data(), h_llr.size());
      Buffer<std::uint8_t> h_out =
          Buffer<std::uint8_t>::pinned(std::size_t(num) * plan.packed_bytes());
      std::vector<Stream> ss;
      std::vector<DecoderPlan> plans;
      std::vector<Buffer<std::uint8_t>> d_out;
      for (int i = 0; i < nstreams; ++i) {
        ss.push_back(Stream::create());
        plans.emplace_back(cfg, Backend::cuda());
        d_out.push_back(Buffer<std::uint8_t>::device(std::size_t(chunk) * plan.packed_bytes()));
      }
      auto measure = [&]<class In>(const Buffer<In>& h_in) {
        std::vector<Buffer<In>> d_in;
        for (int i = 0; i < nstreams; ++i)
          d_in.push_back(Buffer<In>::device(std::size_t(chunk) * plan.n()));
        auto pipeline = [&] {
          int i = 0;
          for (int w0 = 0; w0 < num; w0 += chunk, ++i) {
            const int si = i % nstreams, m = std::min(chunk, num - w0);
            mimorx::detail::copy_bytes(d_in[si].data(), Memory::device,
                                       h_in.data() + std::size_t(w0) * plan.n(), Memory::host,
                                       std::size_t(m) * plan.n() * sizeof(In), ss[si].handle());
            plans[si].decode_packed(
                View<const In>(d_in[si].data(), std::int64_t(m) * plan.n(), Memory::device), m,
                View<std::uint8_t>(d_out[si].data(), std::int64_t(m) * plan.packed_bytes(),
                                   Memory::device),
                {}, ss[si]);
            mimorx::detail::copy_bytes(h_out.data() + std::size_t(w0) * plan.packed_bytes(),
                                       Memory::host, d_out[si].data(), Memory::device,
                                       std::size_t(m) * plan.packed_bytes(), ss[si].handle());
          }
          for (auto& st : ss) st.synchronize();
        };
        pipeline();
        std::vector<double> e2e_ms;
        for (int r = 0; r < 3; ++r) {
          const auto t0 = std::chrono::steady_clock::now();
          pipeline();
          e2e_ms.push_back(
              std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0)
                  .count());
        }
        return double(num) * plan.k() / (median(e2e_ms) * 1e-3) / 1e9;
      };
      e2e_gbps = measure(h_llr);
      if (quantized) {
        Buffer<std::int8_t> h_q = Buffer<std::int8_t>::pinned(h_llr.size());
        plan.quantize_llrs(
            View<const float>(h_llr.data(), std::int64_t(h_llr.size()), Memory::host),
            View<std::int8_t>(h_q.data(), std::int64_t(h_q.size()), Memory::host));
        e2e_int8_gbps = measure(h_q);
      }
    }
    const char* path = quantized
                           ? (plan.codewords_per_thread() == 2 ? "int8 paired" : "int8 one/thread")
                       : plan.arithmetic() == DecoderArithmetic::half ? "f16x2 paired"
                                                                      : "float";
    const auto fmt_gbps = [](double v) { return v > 0 ? std::to_string(v).substr(0, 6) : "-"; };
    std::printf("| %s | %s%s, C2V %s%s | %d | %d | %d | %.3f | %.1f | %.3f | %.3f | %s | %s |\n",
                c.name.c_str(), path, packed ? "" : " unpacked",
                plan.c2v_in_shared() ? "smem" : (plan.c2v_records() ? "L2 records" : "L2"),
                lb == 512 ? ", 512-thread blocks" : "", plan.codewords_per_block(),
                plan.blocks_per_sm(), num, kms, gbps, f.hbm_ms, f.smem_ms,
                fmt_gbps(e2e_gbps).c_str(), fmt_gbps(e2e_int8_gbps).c_str());
    std::fflush(stdout);
    if (json.is_open()) {
      nlohmann::json j = {{"bench", "ldpc_decoder"},
                          {"device", dev.name},
                          {"code", c.name},
                          {"bg", int(c.bg)},
                          {"z", c.z},
                          {"rows", c.rows},
                          {"n", plan.n()},
                          {"k", plan.k()},
                          {"path", path},
                          {"packed", packed},
                          {"np", plan.codewords_per_block()},
                          {"codewords_per_thread", plan.codewords_per_thread()},
                          {"c2v_shared", plan.c2v_in_shared()},
                          {"c2v_records", plan.c2v_records()},
                          {"requested_max_block_threads", lb},  // 0: automatic
                          {"blocks_per_sm", plan.blocks_per_sm()},
                          {"words", num},
                          {"iterations", iters},
                          {"kernel_ms", kms},
                          {"info_gbps", gbps},
                          {"hbm_floor_ms", f.hbm_ms},
                          {"smem_floor_ms", f.smem_ms},
                          {"e2e_gbps", e2e_gbps},
                          {"e2e_int8_gbps", e2e_int8_gbps}};
      json << j.dump() << "\n";
    }
  };
  for (const Case& c : cases) {
    for (bool q : {true, false}) {
      try {  // float: single precision, one codeword per thread
        run_case(c, q, 0, true, q, -1, 0, 0, DecoderArithmetic::single);
      } catch (const std::exception& e) {
        std::printf("| %s | %s | error: %s |\n", c.name.c_str(), q ? "int8" : "float", e.what());
      }
    }
    try {  // the half path beside them, end-to-end from float LLRs too
      run_case(c, false, 0, true, true, -1, 0, 0, DecoderArithmetic::half);
    } catch (const std::exception& e) {
      std::printf("| %s | f16x2 | error: %s |\n", c.name.c_str(), e.what());
    }
  }
  // Table 3 of the paper: quantisation (above), Np and packing on the headline code; and
  // two codewords per thread (the paired kernel, the integer default) against one.
  for (int ci = 0; ci < int(cases.size()); ++ci)
    run_case(cases[ci], true, 0, true, false, -1, 0, 1);
  for (int np : {1, 2, 4, 8, 12, 16, 24}) {
    for (int per_thread : {1, 2}) {
      if (per_thread == 2 && np % 2) continue;
      try {
        run_case(cases[0], true, np, true, false, -1, 0, per_thread);
      } catch (const std::exception& e) {
        std::printf("| Np %d, %d per thread | error: %s |\n", np, per_thread, e.what());
      }
    }
  }
  run_case(cases[0], true, 0, false, false);
  run_case(cases[5], true, 0, false, false);
  // Register budget: 512-thread blocks (up to 128 registers) against 1024 (64).
  for (int ci : {0, 1, 5}) {
    for (bool q : {true, false})
      run_case(cases[ci], q, 0, true, false, -1, 512, 0, DecoderArithmetic::single);
    for (int lb : {512, 1024}) {
      run_case(cases[ci], false, 0, true, false, -1, lb, 0, DecoderArithmetic::half);
    }
  }
  // Where the compressed C2V records live: shared memory against the global (L2) workspace.
  for (int ci : {1, 2, 3, 6}) {
    for (int placement : {1, 0}) {
      try {
        run_case(cases[ci], true, 0, true, false, placement);
      } catch (const std::exception& e) {
        std::printf("| %s | C2V %d | error: %s |\n", cases[ci].name.c_str(), placement, e.what());
      }
    }
  }
  // The half path's messages (4 bytes per edge and pair): shared memory against L2.
  for (int ci : {0, 4, 5, 8}) {
    for (int placement : {1, 0}) {
      try {
        run_case(cases[ci], false, 0, true, false, placement, 0, 0, DecoderArithmetic::half);
      } catch (const std::exception& e) {
        std::printf("| %s | f16x2 C2V %d | error: %s |\n", cases[ci].name.c_str(), placement,
                    e.what());
      }
    }
  }
  // The half path's global workspace: one half pair per edge against compressed records.
  for (int ci : {1, 2, 3, 5, 6, 7}) {
    for (int records : {0, 1}) {
      try {
        run_case(cases[ci], false, 0, true, false, 0, 0, 0, DecoderArithmetic::half, records);
      } catch (const std::exception& e) {
        std::printf("| %s | f16x2 records %d | error: %s |\n", cases[ci].name.c_str(), records,
                    e.what());
      }
    }
  }
  // Early termination on encoded words (BPSK, AWGN at Eb/N0 = 2.5 dB for R ~ 1/3 and 5 dB for
  // R ~ 0.85: past the waterfall, as a link runs): 64 noisy encoded words tiled over the batch.
  std::printf(
      "\n| code | path | Eb/N0 dB | ET | mean iterations | kernel ms | info Gbit/s |\n"
      "|---|---|---|---|---|---|---|\n");
  for (int ci : {0, 1}) {
    const Case& c = cases[ci];
    const double ebn0 = ci == 0 ? 5.0 : 2.5;
    const LiftedGraph g(c.bg, c.z);
    const int base = 64;
    std::vector<std::uint8_t> info(std::size_t(base) * g.k()), cw(std::size_t(base) * g.n());
    for (std::size_t i = 0; i < info.size(); ++i) info[i] = rng::uniform_at(11, 1, i) < 0.5f;
    EncoderPlan enc(c.bg, c.z, Backend::cpu());
    enc.encode(View<const std::uint8_t>(info.data(), std::int64_t(info.size()), Memory::host), base,
               View<std::uint8_t>(cw.data(), std::int64_t(cw.size()), Memory::host));
    const int n_used = (g.info_cols() + c.rows) * c.z;
    const double rate = double(g.info_cols()) / (g.info_cols() + c.rows - 2);
    const float sigma2 = float(1.0 / (2.0 * rate * std::pow(10.0, ebn0 / 10.0)));
    const int num = ci == 0 ? 32768 : 2048;
    std::vector<float> h(std::size_t(num) * n_used);
    for (int w = 0; w < base; ++w) {  // 64 noisy words, then tiled
      for (int i = 0; i < n_used; ++i) {
        const float x = cw[std::size_t(w) * g.n() + i] ? -1.f : 1.f;
        const float y =
            x + std::sqrt(sigma2) * rng::gaussian_at(12, 0, std::uint64_t(w) * n_used + i);
        h[std::size_t(w) * n_used + i] = i < 2 * c.z ? 0.f : 2.f * y / sigma2;
      }
    }
    for (int w = base; w < num; ++w) {
      std::copy_n(h.begin() + std::size_t(w % base) * n_used, n_used,
                  h.begin() + std::size_t(w) * n_used);
    }
    Buffer<float> llr = Buffer<float>::device(h.size());
    llr.copy_from_host(h.data(), h.size());
    for (int run = 0; run < 4; ++run) {
      const bool et = run % 2 == 1, half = run >= 2;
      DecoderConfig cfg{c.bg, c.z};
      cfg.rows = c.rows;
      cfg.quantized = !half;
      cfg.arithmetic = half ? DecoderArithmetic::half : DecoderArithmetic::automatic;
      cfg.early_termination = et;
      cfg.check_input = false;
      DecoderPlan plan(cfg, Backend::cuda());
      Buffer<std::uint8_t> out =
          Buffer<std::uint8_t>::device(std::size_t(num) * plan.packed_bytes());
      Buffer<int> its = Buffer<int>::device(num);
      Stream st = Stream::create();
      plan.decode_packed(llr, num, out, its, st);
      std::vector<double> ms;
      for (int r = 0; r < 5; ++r) {
        GpuTimer t(st);
        t.start();
        plan.decode_packed(llr, num, out, its, st);
        t.stop();
        ms.push_back(t.elapsed_ms());
      }
      std::vector<int> hi(num);
      its.copy_to_host(hi.data(), hi.size());
      double mean = 0;
      for (int v : hi) mean += v;
      mean /= num;
      const double kms = median(ms);
      const double gbps = double(num) * plan.k() / (kms * 1e-3) / 1e9;
      std::printf("| %s | %s | %.1f | %s | %.2f | %.3f | %.1f |\n", c.name.c_str(),
                  half ? "f16x2" : "int8", ebn0, et ? "on" : "off", mean, kms, gbps);
      if (json.is_open()) {
        nlohmann::json j = {{"bench", "ldpc_decoder_et"},
                            {"device", dev.name},
                            {"code", c.name},
                            {"path", half ? "f16x2 paired" : "int8 paired"},
                            {"ebn0_db", ebn0},
                            {"early_termination", et},
                            {"mean_iterations", mean},
                            {"kernel_ms", kms},
                            {"info_gbps", gbps},
                            {"words", num}};
        json << j.dump() << "\n";
      }
    }
  }
  return 0;
}

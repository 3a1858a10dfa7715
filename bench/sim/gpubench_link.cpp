// Simulated information throughput of the coded link as `mimorx sim --ldpc` runs it (run_coded
// on CUDA: bits, encoding, channel, detection, decoding and counting on the device), beside the
// standalone LDPC decoder for the same code in the same process (the chain's bound), and the
// floor of the chain's generation step (float64 Box-Muller per Gaussian pair over the GPU's
// float64 rate).
// Set-up: 4x4, TBS 3824, rate 0.5, 10 iterations without early termination, the
// integer decoder; MMSE, nway:4, and 64-QAM; the float decoder in single and half precision.
// Usage: gpubench_link_sim [out.jsonl]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "mimorx/config.hpp"
#include "mimorx/core/backend.hpp"
#include "mimorx/core/buffer.hpp"
#include "mimorx/core/rng.hpp"
#include "mimorx/ldpc/decoder.hpp"
#include "mimorx/ldpc/transport_batch.hpp"
#include "mimorx/sim/coded.hpp"
#include "mimorx/sim/detector.hpp"
#include "mimorx/sim/link.hpp"
#include "sim/frames.hpp"

using namespace mimorx;

namespace {

struct Case {
  std::string name, detector;
  Modulation mod;
  ldpc::DecoderArithmetic arithmetic;  // of the float path
  bool int8;
};

// The decoder alone on as many code blocks as one batch of the chain holds, device LLRs in,
// unpacked bits out (what the chain asks of it): information Gbit/s, median of 5.
double decoder_gbps(const sim::CodedConfig& c, int words) {
  const ldpc::TransportPlan chain(sim::transport_config(c), Backend::cpu());
  ldpc::DecoderConfig dc{chain.segmentation().bg, chain.segmentation().zc};
  dc.with(c.decoder);
  dc.rows = chain.decoded_rows();  // the rows the chain decodes for one transmission
  dc.check_input = false;
  ldpc::DecoderPlan plan(dc, Backend::cuda(0));
  auto llrs = Buffer<float>::device(std::size_t(words) * plan.n());
  rng::fill_gaussian(Backend::cuda(0), 7, 1, View<float>(llrs));
  auto q = Buffer<std::int8_t>::device(llrs.size());
  q.fill_bytes(3);
  auto bits = Buffer<std::uint8_t>::device(std::size_t(words) * plan.k());
  std::vector<double> ms;
  for (int rep = 0; rep < 7; ++rep) {
    GpuTimer t;
    t.start();
    if (dc.quantized) {
      plan.decode(View<const std::int8_t>(q), words, View<std::uint8_t>(bits));
    } else {
      plan.decode(View<const float>(llrs), words, View<std::uint8_t>(bits));
    }
    t.stop();
    if (rep >= 2) ms.push_back(t.elapsed_ms());
  }
  std::sort(ms.begin(), ms.end());
  // Information bits of the transport block per code block: tbs / C.
  return double(words) * double(c.tbs) / chain.segmentation().c / (ms[ms.size() / 2] * 1e-3) / 1e9;
}

// Where a batch's time goes: each stage of the chain alone, timed with CUDA events on the
// legacy stream (median of 5 after a warm-up), for one batch of the automatic size.
// The stages call the CUDA kernels directly, so a build without CUDA has none to time.
nlohmann::json stage_profile(const sim::CodedConfig& c) {
#if !MIMORX_HAS_CUDA
  (void)c;
  return {};
#else
  const ldpc::TransportConfig tc = sim::transport_config(c);
  const std::int64_t vpb = tc.g / c.shape.bits_per_vector();
  const int blocks = int((std::int64_t(1) << 21) / vpb);
  const std::int64_t vecs = blocks * vpb;
  const Backend gpu = Backend::cuda(0);
  ldpc::TransportBatchPlan plan(tc, gpu, {.max_blocks = blocks, .check_llrs = false});
  auto det =
      sim::make_detector(c.detector, c.shape, gpu, {.soft = true, .check_device_values = false});
  auto tb = Buffer<std::uint8_t>::device(std::size_t(blocks) * c.tbs);
  auto out = Buffer<std::uint8_t>::device(tb.size());
  auto coded = Buffer<std::uint8_t>::device(std::size_t(blocks) * tc.g);
  auto hard = Buffer<std::uint8_t>::device(coded.size());
  auto llrs = Buffer<float>::device(coded.size());
  auto h = Buffer<cf32>::device(std::size_t(vecs) * c.shape.nr * c.shape.nt);
  auto y = Buffer<cf32>::device(std::size_t(vecs) * c.shape.nr);
  auto ok = Buffer<std::uint8_t>::device(std::size_t(blocks));
  auto errs = Buffer<int>::device(std::size_t(blocks));
  auto n0 = Buffer<float>::device(1);
  const float n0v = 0.1f;
  n0.copy_from_host(&n0v, 1);
  const Memory dm = Memory::device;
  detect::DetectInput in;
  in.h = ConstMatrixBatch<cf32>(h.data(), vecs, c.shape.nr, c.shape.nt, dm);
  in.y = ConstMatrixBatch<cf32>(y.data(), vecs, c.shape.nr, 1, dm);
  in.noise_var = View<const float>(n0.data(), 1, dm);
  const std::vector<std::pair<std::string, std::function<void()> > > stages = {
      {"bits", [&] { sim::detail::transport_bits_cuda(1, 0, blocks, c.tbs, tb.data(), nullptr); }},
      {"encode",
       [&] { plan.encode(View<const std::uint8_t>(tb), blocks, View<std::uint8_t>(coded)); }},
      {"channel",
       [&] {
         sim::detail::make_received_cuda(1, 0, vecs, c.shape.nt, c.shape.nr, c.shape.mod, n0v,
                                         coded.data(), h.data(), y.data(), nullptr);
       }},
      {"detect", [&] { det->run(in, View<std::uint8_t>(hard), View<float>(llrs)); }},
      {"decode",
       [&] {
         plan.decode(View<const float>(llrs), blocks, View<std::uint8_t>(out),
                     View<std::uint8_t>(ok));
       }},
      {"count",
       [&] {
         sim::detail::block_errors_cuda(tb.data(), out.data(), blocks, c.tbs, errs.data(), nullptr);
       }},
  };
  nlohmann::json j{{"blocks", blocks}, {"vectors", vecs}};
  double total = 0;
  for (const auto& [name, fn] : stages) {
    std::vector<double> ms;
    for (int rep = 0; rep < 6; ++rep) {
      GpuTimer t;
      t.start();
      fn();
      t.stop();
      if (rep > 0) ms.push_back(t.elapsed_ms());
    }
    std::sort(ms.begin(), ms.end());
    j[name + "_ms"] = ms[ms.size() / 2];
    total += ms[ms.size() / 2];
  }
  j["total_ms"] = total;
  j["stage_mbps"] = double(blocks) * c.tbs / (total * 1e-3) / 1e6;
  // Floor of the channel step: every Gaussian pair is one float32 Box-Muller (rng.hpp: about 70
  // float32 instructions with the log and sin/cos series, an IEEE division and a square root)
  // at the H200's 33.5e12 lane instructions per second (132 SMs x 128 lanes x 1.98 GHz).
  const double pairs = double(vecs) * (c.shape.nr * c.shape.nt + c.shape.nr);
  j["channel_floor_ms"] = pairs * 70 / 33.5e12 * 1e3;
  std::printf("  stages of one batch (%d blocks, %lld vectors):", blocks,
              static_cast<long long>(vecs));
  for (const auto& [name, fn] : stages)
    std::printf(" %s %.3f ms", name.c_str(), double(j[name + "_ms"]));
  std::printf("; sum %.3f ms = %.0f Mbit/s; channel floor %.3f ms\n", total,
              double(j["stage_mbps"]), double(j["channel_floor_ms"]));
  return j;
#endif
}

}  // namespace

int main(int argc, char** argv) {
  if (!cuda_available()) {
    std::printf("gpubench_link_sim: no CUDA GPU; skipped\n");
    return 0;
  }
  std::ofstream out;
  if (argc > 1) out.open(argv[1], std::ios::app);
  const std::vector<Case> cases = {
      {"4x4 16-QAM mmse int8", "mmse", Modulation::qam16, ldpc::DecoderArithmetic::automatic, true},
      {"4x4 16-QAM nway:4 int8", "nway:4", Modulation::qam16, ldpc::DecoderArithmetic::automatic,
       true},
      {"4x4 64-QAM mmse int8", "mmse", Modulation::qam64, ldpc::DecoderArithmetic::automatic, true},
      {"4x4 16-QAM mmse float", "mmse", Modulation::qam16, ldpc::DecoderArithmetic::single, false},
      {"4x4 16-QAM mmse half", "mmse", Modulation::qam16, ldpc::DecoderArithmetic::half, false},
  };
  std::printf("%-26s %8s %10s %10s %10s %10s %8s\n", "link", "blocks", "seconds", "Mbit/s",
              "dec Gbit/s", "fraction", "BLER");
  for (const auto& cs : cases) {
    sim::CodedConfig c;
    c.shape = {4, 4, cs.mod};
    c.detector = cs.detector;
    c.tbs = 3824;
    c.code_rate = 0.5;
    c.decoder.max_iters = 10;
    c.decoder.quantized = cs.int8;
    c.decoder.arithmetic = cs.arithmetic;
    c.decoder.early_termination = false;
    c.seed = 1;
    // Warm-up (plans, tables, first launches), then a run of about a second.
    c.blocks = 8192;
    auto r = sim::run_coded(c, Backend::cuda(0), {10.0});
    const double rate = double(r[0].blocks) / r[0].seconds;
    c.blocks = std::clamp<std::int64_t>(std::int64_t(rate * 1.5), 8192, 4000000);
    r = sim::run_coded(c, Backend::cuda(0), {10.0});
    const double mbps = double(r[0].bits) / r[0].seconds / 1e6;
    // As many code blocks as the chain decodes in one batch (2^21 received vectors).
    int batch_words = 0;
    sim::CodedConfig one = c;
    one.blocks = 1;
    sim::CodedHooks hooks;
    hooks.ready = [&](const sim::CodedLink& l) {
      batch_words = int((std::int64_t(1) << 21) / l.vectors_per_block);
    };
    sim::run_coded(one, Backend::cpu(), {30.0}, hooks);
    const double dec = decoder_gbps(c, batch_words);
    std::printf("%-26s %8lld %10.3f %10.1f %10.2f %10.3f %8.4f\n", cs.name.c_str(),
                static_cast<long long>(r[0].blocks), r[0].seconds, mbps, dec, mbps / 1e3 / dec,
                r[0].bler());
    if (out) {
      nlohmann::json j{{"bench", "sim_link"},
                       {"case", cs.name},
                       {"detector", cs.detector},
                       {"mod", to_string(cs.mod)},
                       {"tbs", c.tbs},
                       {"rate", c.code_rate},
                       {"int8", cs.int8},
                       {"arithmetic", cs.int8                                          ? "int8"
                                      : cs.arithmetic == ldpc::DecoderArithmetic::half ? "half"
                                                                                       : "single"},
                       {"iters", 10},
                       {"early_termination", false},
                       {"snr_db", 10.0},
                       {"blocks", r[0].blocks},
                       {"seconds", r[0].seconds},
                       {"info_mbps", mbps},
                       {"decoder_gbps", dec},
                       {"fraction_of_decoder", mbps / 1e3 / dec},
                       {"bler", r[0].bler()}};
      j["stages"] = stage_profile(c);
      out << j.dump() << "\n";
    }
  }
  // The uncoded link (bits, channel, detection, per-vector counts on the device).
  for (const char* d : {"mmse", "psd"}) {
    sim::UncodedConfig u;
    u.shape = {4, 4, Modulation::qam16};
    u.detector = d;
    u.frames = std::int64_t(1) << 22;
    sim::run_uncoded(u, Backend::cuda(0), {20.0});
    u.frames = std::int64_t(1) << 25;
    const auto r = sim::run_uncoded(u, Backend::cuda(0), {20.0});
    const double gbps = double(r[0].bits) / r[0].seconds / 1e9;
    std::printf("uncoded 4x4 16-QAM %-6s %lld vectors in %.3f s: %.2f Gbit/s detected, BER %.3e\n",
                d, static_cast<long long>(r[0].frames), r[0].seconds, gbps, r[0].ber());
    if (out) {
      out << nlohmann::json{{"bench", "sim_uncoded"}, {"detector", d},
                            {"mod", "16qam"},         {"snr_db", 20.0},
                            {"frames", r[0].frames},  {"seconds", r[0].seconds},
                            {"gbps", gbps},           {"ber", r[0].ber()}}
                 .dump()
          << "\n";
    }
  }
  return 0;
}

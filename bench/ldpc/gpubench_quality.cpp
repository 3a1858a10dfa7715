// Decoding quality sweep for the two low-rate codes (BG1 K=8448 R=1/3, BG2 K=3840
// R=1/5; AWGN, BPSK, no rate matching: all columns but the 2Z punctured ones sent): FER against
// Eb/N0 for flooding BP (20 iterations, CPU, OpenMP over words) and for the layered decoders
// (10 iterations, GPU: the float path is bit-exact with the CPU's) at several constant NMS
// alphas, NMS with a per-iteration alpha ramp, OMS, the integer path and the half-precision
// path (DecoderConfig::arithmetic = half, the f16x2 kernel; MIMORX_LDPC_QUALITY_DECODERS=half
// runs only those). Where the FER crosses
// 1e-2 (log-linear interpolation) gives each decoder's distance from BP.
// Random codewords (library encoder), LLR = 2y/sigma2, one Philox noise stream per point.
// Usage: MIMORX_LDPC_QUALITY=1 gpubench_quality_ldpc [out.jsonl] (about 4 minutes per code on
// the H100 and 16 CPU cores; without the variable it only says so, to keep
// scripts/device-check short). MIMORX_LDPC_QUALITY_WORDS: GPU words per point (default 12000);
// MIMORX_LDPC_BP_WORDS: BP words per point (default 3000); MIMORX_LDPC_QUALITY_CODES: 1, 2 or
// 12 (default); MIMORX_LDPC_QUALITY_DECODERS: run only the layered decoders whose name
// contains it; a point stops after 100 frame errors.
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "mimorx/core/backend.hpp"
#include "mimorx/core/buffer.hpp"
#include "mimorx/core/rng.hpp"
#include "mimorx/ldpc/base_graph.hpp"
#include "mimorx/ldpc/decoder.hpp"
#include "mimorx/ldpc/encoder.hpp"

using namespace mimorx;
using namespace mimorx::ldpc;

namespace {

int env_int(const char* name, int dflt) {
  const char* s = std::getenv(name);
  return s ? std::atoi(s) : dflt;
}

struct Decoder {
  std::string name;
  DecoderAlgo algo;
  float alpha;
  bool quantized;
  bool gpu;
  int iters;
  float alpha_last = 0.f;  // NMS: per-iteration ramp from alpha to alpha_last (0: constant)
  DecoderArithmetic arith = DecoderArithmetic::single;  // float path: single or half
};

struct Code {
  std::string name;
  BaseGraph bg;
  double rate;
  double from, to;  // Eb/N0 sweep (dB), step 0.05
};

// Eb/N0 where the FER crosses 1e-2 (log-linear between the bracketing points), or NaN.
double crossing(const std::vector<double>& snr, const std::vector<double>& fer) {
  for (std::size_t i = 1; i < snr.size(); ++i) {
    if (fer[i - 1] >= 1e-2 && fer[i] < 1e-2) {
      if (fer[i] <= 0) return snr[i];
      const double a = std::log10(fer[i - 1]), b = std::log10(fer[i]);
      return snr[i - 1] + (snr[i] - snr[i - 1]) * (a + 2.0) / (a - b);
    }
  }
  return std::nan("");
}

}  // namespace

int main(int argc, char** argv) {
  if (!cuda_available()) {
    std::printf("gpubench_quality: no CUDA GPU available; nothing to measure\n");
    return 0;
  }
  if (!std::getenv("MIMORX_LDPC_QUALITY")) {
    std::printf("gpubench_quality: set MIMORX_LDPC_QUALITY=1 to run the FER sweep (~8 min)\n");
    return 0;
  }
  std::ofstream json;
  if (argc > 1) json.open(argv[1], std::ios::app);
  const int gpu_words = env_int("MIMORX_LDPC_QUALITY_WORDS", 12000);
  const int bp_words = env_int("MIMORX_LDPC_BP_WORDS", 3000);
  const int z = 384;
  // MIMORX_LDPC_QUALITY_CODES: "1" (BG1 only), "2" (BG2 only) or "12" (default, both), so that
  // the two halves fit in separate device calls.
  const char* which = std::getenv("MIMORX_LDPC_QUALITY_CODES");
  const std::string sel = which ? which : "12";
  std::vector<Code> codes;
  if (sel.find('1') != std::string::npos) {
    codes.push_back({"BG1 K=8448 R=1/3", BaseGraph::bg1, 1.0 / 3, 0.35, 1.20});
  }
  if (sel.find('2') != std::string::npos) {
    codes.push_back({"BG2 K=3840 R=1/5", BaseGraph::bg2, 1.0 / 5, 0.15, 1.10});
  }
  // The constant alphas that are best for each code in a sweep of 0.5..0.8125
  // (docs/data/ldpc_quality_sweep_*.txt), the default, and the per-iteration ramps.
  std::vector<Decoder> decs = {{"BP 20", DecoderAlgo::bp, 0.75f, false, false, 20}};
  // MIMORX_LDPC_QUALITY_DECODERS: a substring; only the layered decoders whose name contains
  // it run (BP always runs: it is the reference).
  const char* only = std::getenv("MIMORX_LDPC_QUALITY_DECODERS");
  for (float a : {0.625f, 0.6875f, 0.75f}) {
    decs.push_back(
        {"NMS " + std::to_string(a).substr(0, 6) + " 10", DecoderAlgo::nms, a, false, true, 10});
  }
  decs.push_back({"NMS 0.5->0.875 10", DecoderAlgo::nms, 0.5f, false, true, 10, 0.875f});
  decs.push_back({"OMS 0.5 10", DecoderAlgo::oms, 0.75f, false, true, 10});
  decs.push_back({"NMS int8 0.75 10", DecoderAlgo::nms, 0.75f, true, true, 10});
  decs.push_back({"NMS int8 0.625->1 10", DecoderAlgo::nms, 0.625f, true, true, 10, 1.0f});
  decs.push_back({"OMS int8 0.5 10", DecoderAlgo::oms, 0.75f, true, true, 10});
  decs.push_back(
      {"NMS half 0.75 10", DecoderAlgo::nms, 0.75f, false, true, 10, 0.f, DecoderArithmetic::half});
  decs.push_back({"NMS half 0.5->0.875 10", DecoderAlgo::nms, 0.5f, false, true, 10, 0.875f,
                  DecoderArithmetic::half});
  decs.push_back(
      {"OMS half 0.5 10", DecoderAlgo::oms, 0.75f, false, true, 10, 0.f, DecoderArithmetic::half});
  if (only) {
    std::erase_if(decs, [&](const Decoder& d) {
      return d.algo != DecoderAlgo::bp && d.name.find(only) == std::string::npos;
    });
  }

  for (const Code& c : codes) {
    const LiftedGraph g(c.bg, z);
    const int n = g.n(), k = g.k();
    const int batch = std::min(gpu_words, 4096);
    // One batch of random codewords, reused at every point (the noise differs per point).
    std::vector<std::uint8_t> info(std::size_t(batch) * k), cw(std::size_t(batch) * n);
    for (std::size_t i = 0; i < info.size(); ++i) info[i] = rng::uniform_at(21, 1, i) < 0.5f;
    EncoderPlan enc(c.bg, z, Backend::cpu());
    enc.encode(View<const std::uint8_t>(info.data(), std::int64_t(info.size()), Memory::host),
               batch, View<std::uint8_t>(cw.data(), std::int64_t(cw.size()), Memory::host));
    std::vector<double> snrs;
    for (double s = c.from; s <= c.to + 1e-9; s += 0.05) snrs.push_back(std::round(s * 100) / 100);
    std::printf("\n%s (n = %d, k = %d), FER = frames with an info-bit error / frames\n",
                c.name.c_str(), n, k);
    std::printf("| decoder | Eb/N0 at FER 1e-2 | gap to BP dB | points (Eb/N0: errors/frames) |\n");
    std::printf("|---|---|---|---|\n");
    double bp_cross = std::nan("");
    std::vector<float> llr(std::size_t(batch) * n);
    Buffer<float> d_llr = Buffer<float>::device(llr.size());
    Buffer<std::uint8_t> d_out = Buffer<std::uint8_t>::device(std::size_t(batch) * k);
    std::vector<std::uint8_t> out(std::size_t(batch) * k);
    for (const Decoder& d : decs) {
      DecoderConfig cfg{c.bg, z};
      cfg.algo = d.algo;
      cfg.alpha = d.alpha;
      cfg.alpha_last = d.alpha_last;
      cfg.quantized = d.quantized;
      cfg.arithmetic = d.arith;
      cfg.max_iters = d.iters;
      cfg.early_termination = true;
      DecoderPlan plan(cfg, d.gpu ? Backend::cuda() : Backend::cpu());
      std::vector<double> fer;  // skipped points count as FER 1 (below) or 0 (above)
      std::string pts;
      int zero_run = 0;
      for (std::size_t si = 0; si < snrs.size(); ++si) {
        const double s = snrs[si];
        // Two error-free points in a row: the rest are below 1e-2 too. Layered decoders start
        // just below BP's crossing (they are not better than BP there).
        if (zero_run >= 2 || (d.algo != DecoderAlgo::bp && s < bp_cross - 0.051)) {
          fer.push_back(s < bp_cross ? 1.0 : 0.0);
          continue;
        }
        const float sigma2 = float(1.0 / (2.0 * c.rate * std::pow(10.0, s / 10.0)));
        const float sd = std::sqrt(sigma2);
        const int words = d.gpu ? gpu_words : bp_words;
        int errors = 0, frames = 0;
        // Stop a point after 100 frame errors (its FER is then known to ~10 %).
        for (int w0 = 0; w0 < words && errors < 100; w0 += batch) {
          const int m = std::min(batch, words - w0);
          const std::uint64_t seed = 1000 + std::uint64_t(si) * 7919 + std::uint64_t(c.bg);
#pragma omp parallel for schedule(static)
          for (int w = 0; w < m; ++w) {
            for (int i = 0; i < n; ++i) {
              const std::size_t idx = std::size_t(w) * n + i;
              const float x = cw[idx] ? -1.f : 1.f;
              const float y = x + sd * rng::gaussian_at(seed, 2, std::size_t(w0 + w) * n + i);
              llr[idx] = i < 2 * z ? 0.f : 2.f * y / sigma2;
            }
          }
          if (d.gpu) {
            d_llr.copy_from_host(llr.data(), std::size_t(m) * n);
            plan.decode(View<const float>(d_llr.data(), std::int64_t(m) * n, Memory::device), m,
                        View<std::uint8_t>(d_out.data(), std::int64_t(m) * k, Memory::device));
            d_out.copy_to_host(out.data(), std::size_t(m) * k);
          } else {
            // BP on the CPU: one plan call per thread over its share of the words.
#pragma omp parallel
            {
              const int nt = omp_get_num_threads(), t = omp_get_thread_num();
              const int lo = m * t / nt, hi = m * (t + 1) / nt;
              if (hi > lo) {
                DecoderPlan p(cfg, Backend::cpu());
                p.decode(View<const float>(llr.data() + std::size_t(lo) * n,
                                           std::int64_t(hi - lo) * n, Memory::host),
                         hi - lo,
                         View<std::uint8_t>(out.data() + std::size_t(lo) * k,
                                            std::int64_t(hi - lo) * k, Memory::host));
              }
            }
          }
          for (int w = 0; w < m; ++w) {
            bool bad = false;
            for (int i = 0; i < k && !bad; ++i) {
              bad = out[std::size_t(w) * k + i] != cw[std::size_t(w) * n + i];
            }
            errors += bad;
          }
          frames += m;
        }
        fer.push_back(double(errors) / frames);
        zero_run = errors == 0 ? zero_run + 1 : 0;
        char buf[64];
        std::snprintf(buf, sizeof buf, "%s%.2f: %d/%d", pts.empty() ? "" : ", ", s, errors, frames);
        pts += buf;
        if (json.is_open()) {
          json << nlohmann::json{{"bench", "ldpc_quality"}, {"code", c.name},
                                 {"decoder", d.name},       {"ebn0_db", s},
                                 {"errors", errors},        {"frames", frames}}
                      .dump()
               << "\n";
        }
      }
      const double x = crossing(snrs, fer);
      if (d.algo == DecoderAlgo::bp) bp_cross = x;
      std::printf("| %s | %.3f | %+.2f | %s |\n", d.name.c_str(), x, x - bp_cross, pts.c_str());
      std::fflush(stdout);
    }
  }
  return 0;
}

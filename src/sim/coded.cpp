#include "mimorx/sim/coded.hpp"

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <span>

#include "mimorx/core/buffer.hpp"
#include "mimorx/core/error.hpp"
#include "mimorx/ldpc/transport.hpp"
#include "mimorx/sim/detector.hpp"
#include "sim/checks.hpp"
#include "sim/frames_math.hpp"

namespace mimorx::sim {

namespace {

// The transport chain's configuration, with G rounded up to whole received vectors.
ldpc::TransportConfig transport_config(const CodedConfig& c) {
  ldpc::TransportConfig tc;
  tc.tbs = c.tbs;
  tc.code_rate = c.code_rate;
  tc.mod = c.shape.mod;
  tc.layers = 1;
  tc.decoder = c.decoder;
  const std::int64_t per_vector = std::int64_t(c.shape.nt) * bits_per_symbol(c.shape.mod);
  const std::int64_t g0 = ldpc::TransportPlan(tc, Backend::cpu()).g();
  tc.g = (g0 + per_vector - 1) / per_vector * per_vector;
  return tc;
}

std::int64_t auto_batch_blocks(const CodedConfig& c, const Backend& b, std::int64_t vectors) {
  if (c.batch_blocks > 0) return c.batch_blocks;
  // About 2^18 vectors per detector call on a GPU, 4096 on the CPU (progress stays frequent).
  const std::int64_t want_vectors = b.is_cuda() ? (std::int64_t(1) << 18) : 4096;
  return std::clamp<std::int64_t>(want_vectors / vectors, 1, c.blocks);
}

}  // namespace

std::vector<CodedPointResult> run_coded(const CodedConfig& c, const Backend& backend,
                                        const std::vector<double>& snr_db,
                                        const CodedProgress& progress, const CodedReady& ready) {
  return run_coded(c, backend, snr_db, CodedHooks{ready, {}, progress});
}

std::vector<CodedPointResult> run_coded(const CodedConfig& c, const Backend& backend,
                                        const std::vector<double>& snr_db,
                                        const CodedHooks& hooks) {
  const auto& s = c.shape;
  detail::check_shape_and_snr(s, snr_db);
  require(c.blocks >= 1, "blocks", std::to_string(c.blocks) + "; must be >= 1");
  require(c.batch_blocks >= 0, "batch_blocks",
          std::to_string(c.batch_blocks) + "; must be >= 0 (0 = automatic)");
  require(c.min_block_errors >= 0, "min_block_errors", "must be >= 0");
  // One transport chain per CPU thread: a plan's decoder holds its workspace, so blocks are
  // encoded and decoded in parallel with a plan each. On CUDA one plan serves all blocks.
  const int threads = backend.is_cuda() ? 1 : std::max(1, omp_get_max_threads());
  std::vector<ldpc::TransportPlan> plans;
  plans.reserve(std::size_t(threads));
  const ldpc::TransportConfig tc = transport_config(c);
  for (int t = 0; t < threads; ++t) plans.emplace_back(tc, backend);
  const ldpc::TransportPlan& tp = plans.front();
  const int m = bits_per_symbol(s.mod);
  const std::int64_t bpv = std::int64_t(s.nt) * m;
  const CodedLink link{tp.g(), tp.g() / bpv, double(c.tbs) / double(tp.g())};
  const std::int64_t vpb = link.vectors_per_block;
  const std::int64_t batch = auto_batch_blocks(c, backend, vpb);
  auto detector = make_detector(c.detector, s, backend, /*soft=*/true);
  const Memory mem = memory_of(backend);

  const std::size_t nv = std::size_t(batch * vpb);
  std::vector<std::uint8_t> tb(std::size_t(batch) * c.tbs);
  std::vector<std::uint8_t> decoded(std::size_t(threads) * c.tbs);
  std::vector<std::uint8_t> coded(std::size_t(batch) * tp.g());
  std::vector<cf32> h_host(nv * s.nr * s.nt), y_host(nv * s.nr);
  std::vector<float> llr_host(std::size_t(batch) * tp.g());
  Buffer<cf32> h(h_host.size(), mem), y(y_host.size(), mem);
  Buffer<float> n0buf(1, mem), llrs(llr_host.size(), mem);
  Buffer<std::uint8_t> hard(llr_host.size(), mem);

  if (hooks.ready) hooks.ready(link);
  std::vector<CodedPointResult> results;
  for (double snr : snr_db) {
    const auto t0 = std::chrono::steady_clock::now();
    CodedPointResult r;
    r.snr_db = snr;
    r.ebn0_db = snr - 10 * std::log10(double(m) * link.rate);
    const float n0 = float(std::pow(10.0, -snr / 10.0));
    n0buf.copy_from_host(&n0, 1);
    for (std::int64_t first = 0; first < c.blocks; first += batch) {
      const std::int64_t count = std::min(batch, c.blocks - first);
      // Transmitter: information bits and their codewords (the same at every SNR point).
#pragma omp parallel for num_threads(threads) schedule(static)
      for (std::int64_t b = 0; b < count; ++b) {
        const ldpc::TransportPlan& plan = plans[std::size_t(omp_get_thread_num())];
        std::uint8_t* bits = tb.data() + b * c.tbs;
        const std::uint64_t base = std::uint64_t(first + b) * std::uint64_t(c.tbs);
        for (int k = 0; k < c.tbs; ++k) bits[k] = detail::transport_bit(c.seed, base + k);
        plan.encode(std::span<const std::uint8_t>(bits, std::size_t(c.tbs)),
                    std::span<std::uint8_t>(coded.data() + b * tp.g(), std::size_t(tp.g())));
      }
      // Channel: vector v of block b is frame (first + b) * vpb + v of the Philox streams.
      const std::int64_t vecs = count * vpb;
#pragma omp parallel for schedule(static)
      for (std::int64_t v = 0; v < vecs; ++v) {
        detail::make_received(c.seed, first * vpb + v, s.nt, s.nr, s.mod, n0,
                              coded.data() + v * bpv, h_host.data() + v * s.nr * s.nt,
                              y_host.data() + v * s.nr);
      }
      h.copy_from_host(h_host.data(), std::size_t(vecs) * s.nr * s.nt);
      y.copy_from_host(y_host.data(), std::size_t(vecs) * s.nr);
      // Receiver: soft detection, then the LDPC chain per block.
      detect::DetectInput in;
      in.h = ConstMatrixBatch<cf32>(h.data(), vecs, s.nr, s.nt, mem);
      in.y = ConstMatrixBatch<cf32>(y.data(), vecs, s.nr, 1, mem);
      in.noise_var = View<const float>(n0buf.data(), 1, mem);
      detector->run(in, View<std::uint8_t>(hard.data(), vecs * bpv, mem),
                    View<float>(llrs.data(), vecs * bpv, mem));
      llrs.copy_to_host(llr_host.data(), std::size_t(vecs * bpv));
      std::int64_t bit_errors = 0, block_errors = 0, crc_failures = 0, undetected = 0;
#pragma omp parallel for num_threads(threads) schedule(dynamic) \
    reduction(+ : bit_errors, block_errors, crc_failures, undetected)
      for (std::int64_t b = 0; b < count; ++b) {
        const int t = omp_get_thread_num();
        std::uint8_t* out = decoded.data() + std::size_t(t) * c.tbs;
        const auto res = plans[std::size_t(t)].decode(
            std::span<const float>(llr_host.data() + b * tp.g(), std::size_t(tp.g())),
            std::span<std::uint8_t>(out, std::size_t(c.tbs)));
        const std::uint8_t* sent = tb.data() + b * c.tbs;
        std::int64_t errs = 0;
        for (int k = 0; k < c.tbs; ++k) errs += out[k] != sent[k];
        bit_errors += errs;
        block_errors += errs > 0;
        crc_failures += !res.tb_crc_ok;
        undetected += errs > 0 && res.tb_crc_ok;
      }
      r.bit_errors += bit_errors;
      r.block_errors += block_errors;
      r.crc_failures += crc_failures;
      r.undetected_errors += undetected;
      r.bits += count * c.tbs;
      r.blocks += count;
      if (hooks.batch_done) hooks.batch_done(r);
      if (c.min_block_errors > 0 && r.block_errors >= c.min_block_errors) break;
    }
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    results.push_back(r);
    if (hooks.point_done) hooks.point_done(r);
    if (c.early_stop && r.block_errors == 0) break;
  }
  return results;
}

}  // namespace mimorx::sim

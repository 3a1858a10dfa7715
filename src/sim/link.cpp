#include "mimorx/sim/link.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>

#include "mimorx/config.hpp"
#include "mimorx/core/buffer.hpp"
#include "mimorx/core/error.hpp"
#include "mimorx/sim/detector.hpp"
#include "sim/checks.hpp"
#include "sim/frames.hpp"

namespace mimorx::sim {

namespace {
std::int64_t auto_batch(const UncodedConfig& c, const Backend& b) {
  if (c.batch > 0) return c.batch;
  // Large enough to fill a GPU, small enough that the CPU reports progress often.
  const std::int64_t want = b.is_cuda() ? (std::int64_t(1) << 18) : 4096;
  return std::min<std::int64_t>(want, std::max<std::int64_t>(c.frames, 1));
}
}  // namespace

std::vector<PointResult> run_uncoded(const UncodedConfig& c, const Backend& backend,
                                     const std::vector<double>& snr_db, const Progress& progress,
                                     const Ready& ready) {
  return run_uncoded(c, backend, snr_db, UncodedHooks{ready, {}, progress});
}

std::vector<PointResult> run_uncoded(const UncodedConfig& c, const Backend& backend,
                                     const std::vector<double>& snr_db, const UncodedHooks& hooks) {
  const auto& s = c.shape;
  detail::check_shape_and_snr(s, snr_db);
  require(c.frames >= 1, "frames", std::to_string(c.frames) + "; must be >= 1");
  require(c.batch >= 0, "batch", std::to_string(c.batch) + "; must be >= 0 (0 = automatic)");
  require(c.min_bit_errors >= 0, "min_bit_errors", "must be >= 0");
  const int m = bits_per_symbol(s.mod);
  const int bpv = s.nt * m;
  const std::int64_t batch = auto_batch(c, backend);
  auto detector = make_detector(c.detector, s, backend, /*soft=*/false);
  const Memory mem = memory_of(backend);

  Buffer<std::uint8_t> bits(std::size_t(batch) * bpv, mem), decided(std::size_t(batch) * bpv, mem);
  Buffer<cf32> h(std::size_t(batch) * s.nr * s.nt, mem), y(std::size_t(batch) * s.nr, mem);
  Buffer<float> n0buf(1, mem);
  std::vector<std::uint8_t> sent_host(std::size_t(batch) * bpv), got_host(std::size_t(batch) * bpv);
  Buffer<float> no_llrs;

  if (hooks.ready) hooks.ready();
  std::vector<PointResult> results;
  for (double snr : snr_db) {
    const auto t0 = std::chrono::steady_clock::now();
    PointResult r;
    r.snr_db = snr;
    r.ebn0_db = snr - 10 * std::log10(double(m));
    const float n0 = float(std::pow(10.0, -snr / 10.0));
    n0buf.copy_from_host(&n0, 1);
    for (std::int64_t first = 0; first < c.frames; first += batch) {
      const std::int64_t count = std::min(batch, c.frames - first);
      const detail::FrameBatch fb{bits.data(), h.data(), y.data()};
      if (backend.is_cuda()) {
#if MIMORX_HAS_CUDA
        detail::make_frames_cuda(c.seed, first, count, s.nt, s.nr, s.mod, n0, fb, backend.device());
#endif
      } else {
        detail::make_frames_cpu(c.seed, first, count, s.nt, s.nr, s.mod, n0, fb);
      }
      detect::DetectInput in;
      in.h = ConstMatrixBatch<cf32>(h.data(), count, s.nr, s.nt, mem);
      in.y = ConstMatrixBatch<cf32>(y.data(), count, s.nr, 1, mem);
      in.noise_var = View<const float>(n0buf.data(), 1, mem);
      detector->run(in, View<std::uint8_t>(decided.data(), count * bpv, mem),
                    View<float>(nullptr, 0, mem));
      bits.copy_to_host(sent_host.data(), std::size_t(count) * bpv);
      decided.copy_to_host(got_host.data(), std::size_t(count) * bpv);
      for (std::int64_t v = 0; v < count * s.nt; ++v) {
        int errs = 0;
        for (int k = 0; k < m; ++k) errs += sent_host[v * m + k] != got_host[v * m + k];
        r.bit_errors += errs;
        r.symbol_errors += errs > 0;
      }
      r.bits += count * bpv;
      r.symbols += count * s.nt;
      r.frames += count;
      if (hooks.batch_done) hooks.batch_done(r);
      if (c.min_bit_errors > 0 && r.bit_errors >= c.min_bit_errors) break;
    }
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    results.push_back(r);
    if (hooks.point_done) hooks.point_done(r);
    if (c.early_stop && r.bit_errors == 0) break;
  }
  return results;
}

}  // namespace mimorx::sim

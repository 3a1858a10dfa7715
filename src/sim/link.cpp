#include "mimorx/sim/link.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <deque>
#include <span>

#include "mimorx/config.hpp"
#include "mimorx/core/buffer.hpp"
#include "mimorx/core/error.hpp"
#include "mimorx/sim/detector.hpp"
#include "sim/channel_model.hpp"
#include "sim/checks.hpp"
#include "sim/frames.hpp"
#include "sim/rounds.hpp"

namespace mimorx::sim {

namespace {
std::int64_t auto_batch(const UncodedConfig& c, const Backend& b) {
  // Large enough to fill a GPU, small enough that the CPU reports progress often.
  const std::int64_t want = c.batch > 0 ? c.batch : b.is_cuda() ? (std::int64_t(1) << 20) : 4096;
  return std::clamp<std::int64_t>(want, 1, std::min<std::int64_t>(c.frames, 1 << 26));
}

// Per received vector of a batch: bit errors (low byte) and symbol errors (high byte).
struct HostSlot {
  Buffer<std::uint16_t> errors;
  Event done;
  std::int64_t count = 0;
};

// Adds a round's vectors to the point in index order and stops exactly at the vector that makes
// min_bit_errors, whichever rank has it (so the counts depend neither on the batch nor on the
// number of ranks). `slot`: this rank's share of the round (null: none). Returns true when the
// point stopped.
bool add_round(const UncodedConfig& c, int bpv, int nt, const HostSlot* slot, Communicator& comm,
               PointResult& r) {
  const std::int64_t count = slot ? slot->count : 0;
  const std::int64_t limit = c.min_bit_errors;
  std::int64_t before = r.bit_errors;  // the point's bit errors before this rank's share
  if (limit > 0) {
    std::int64_t mine = 0;
    for (std::int64_t v = 0; v < count; ++v) mine += slot->errors[std::size_t(v)] & 0xff;
    before += detail::round_sums(comm, std::span<const std::int64_t>(&mine, 1)).before[0];
  }
  // bit errors, bits, symbol errors, symbols, frames of this rank's share up to the stop
  std::array<std::int64_t, 5> part{};
  for (std::int64_t v = 0; v < count && !(limit > 0 && before + part[0] >= limit); ++v) {
    const std::uint16_t e = slot->errors[std::size_t(v)];
    part[0] += e & 0xff;
    part[1] += bpv;
    part[2] += e >> 8;
    part[3] += nt;
    part[4] += 1;
  }
  comm.allreduce_sum(part);
  r.bit_errors += part[0];
  r.bits += part[1];
  r.symbol_errors += part[2];
  r.symbols += part[3];
  r.frames += part[4];
  return limit > 0 && r.bit_errors >= limit;
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
  const detail::ChannelModelPlan channel(c.channel, s, 0, backend);
  auto detector =
      make_detector(c.detector, s, backend, {.soft = false, .check_device_values = false});
  const Memory mem = memory_of(backend);
  const bool cuda = backend.is_cuda();
  const int dev = cuda ? backend.device() : 0;
  const Stream stream = cuda ? Stream::create(dev) : Stream{};

  const auto n = std::size_t(batch);
  Buffer<std::uint8_t> bits(n * bpv, mem, false, dev), decided(n * bpv, mem, false, dev);
  Buffer<cf32> h(n * s.nr * s.nt, mem, false, dev), y(n * s.nr, mem, false, dev);
  Buffer<float> n0buf(1, mem, false, dev);
  Buffer<std::uint16_t> errors(n, mem, false, dev);
  std::array<HostSlot, 2> slots;
  for (auto& sl : slots) sl.errors = Buffer<std::uint16_t>(n, Memory::host, cuda);

  // Queues frames [first, first + count) into `slot`.
  const auto enqueue = [&](std::int64_t first, std::int64_t count, float n0, HostSlot& slot) {
    const detail::FrameBatch fb{bits.data(), h.data(), y.data()};
    if (cuda) {
#if MIMORX_HAS_CUDA
      detail::make_frames_cuda(c.seed, first, count, s.nt, s.nr, s.mod, n0, fb, dev,
                               stream.handle());
#endif
    } else {
      detail::make_frames_cpu(c.seed, first, count, s.nt, s.nr, s.mod, n0, fb);
    }
    channel.apply(c.seed, first, count, n0, bits.data(), h.data(), y.data(), stream);
    detect::DetectInput in;
    in.h = ConstMatrixBatch<cf32>(h.data(), count, s.nr, s.nt, mem);
    in.y = ConstMatrixBatch<cf32>(y.data(), count, s.nr, 1, mem);
    in.noise_var = View<const float>(n0buf.data(), 1, mem);
    detector->run(in, View<std::uint8_t>(decided.data(), count * bpv, mem),
                  View<float>(nullptr, 0, mem), stream);
    if (cuda) {
#if MIMORX_HAS_CUDA
      detail::vector_errors_cuda(bits.data(), decided.data(), count, s.nt, m, errors.data(),
                                 stream.handle());
#endif
    } else {
      detail::vector_errors_cpu(bits.data(), decided.data(), count, s.nt, m, errors.data());
    }
    slot.count = count;
    slot.errors.copy_from(errors, std::size_t(count), stream);
    if (cuda) slot.done.record(stream);
  };

  if (hooks.ready) hooks.ready();
  // After `ready`: a validation that stops there involves no other rank.
  const auto comm = detail::communicator_of(c.comm);
  detail::RoundLayout layout(*comm, batch);
  std::vector<PointResult> results;
  for (double snr : snr_db) {
    const auto t0 = std::chrono::steady_clock::now();
    PointResult r;
    const std::int64_t capped_before = detector->capped_vectors();
    r.snr_db = snr;
    r.ebn0_db = snr - 10 * std::log10(double(m));
    const float n0 = float(std::pow(10.0, -snr / 10.0));
    n0buf.copy_from_host(&n0, 1, stream);
    // Rounds in index order, two in flight: the next round's share is queued while this one's
    // counts are summed over the ranks. A null entry: this rank has no share of that round.
    std::deque<HostSlot*> in_flight;
    std::int64_t next = 0;    // the first frame of the next round to queue
    std::int64_t queued = 0;  // rounds queued
    int slot = 0;
    bool stopped = false;
    layout.begin_point();
    while (!stopped) {
      while (in_flight.size() < 2 && next < c.frames) {
        const auto round = layout.round(queued++, next, c.frames);
        HostSlot* mine = nullptr;
        if (round.mine.count > 0) {
          mine = &slots[std::size_t(slot)];
          enqueue(round.mine.first, round.mine.count, n0, *mine);
          slot ^= 1;
        }
        in_flight.push_back(mine);
        next += round.size;
      }
      if (in_flight.empty()) break;
      HostSlot* done = in_flight.front();
      in_flight.pop_front();
      if (done) done->done.synchronize();
      layout.finished(done ? done->count : 0);
      stopped = add_round(c, bpv, s.nt, done, *comm, r);
      r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      if (hooks.batch_done) hooks.batch_done(r);
    }
    stream.synchronize();  // a batch queued past the stop is not counted
    std::int64_t capped = detector->capped_vectors() - capped_before;
    comm->allreduce_sum(std::span<std::int64_t>(&capped, 1));
    r.capped_vectors = capped;
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    results.push_back(r);
    if (hooks.point_done) hooks.point_done(r);
    if (c.early_stop && r.bit_errors == 0) break;
  }
  return results;
}

}  // namespace mimorx::sim

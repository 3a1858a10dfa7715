#include "mimorx/sim/coded.hpp"

#include <omp.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <climits>
#include <cmath>
#include <deque>
#include <span>

#include "mimorx/config.hpp"
#include "mimorx/core/buffer.hpp"
#include "mimorx/core/error.hpp"
#include "mimorx/ldpc/transport_batch.hpp"
#include "mimorx/sim/detector.hpp"
#include "sim/channel_model.hpp"
#include "sim/checks.hpp"
#include "sim/frames.hpp"
#include "sim/rounds.hpp"

namespace mimorx::sim {

namespace {

std::int64_t auto_batch_blocks(const CodedConfig& c, const Backend& b, std::int64_t vectors) {
  std::int64_t want = c.batch_blocks;
  if (want == 0) {
    // A GPU is filled by about 2^21 received vectors a batch; on the CPU, batches of 4096
    // vectors keep progress frequent, and at least 16 blocks a thread fill the integer
    // decoder's 16 SIMD lanes.
    want = b.is_cuda() ? (std::int64_t(1) << 21) / vectors
                       : std::max<std::int64_t>(4096 / vectors, 16 * omp_get_max_threads());
  }
  // Buffers hold batch x G values: keep every index inside int32 where the plans use int.
  const std::int64_t cap = std::max<std::int64_t>(1, (INT_MAX / 2) / (vectors * 64));
  return std::clamp<std::int64_t>(want, 1, std::min(c.blocks, cap));
}

// What comes back to the host for each block of a batch: its bit errors and its TB CRC flag.
struct HostSlot {
  Buffer<int> errors;
  Buffer<std::uint8_t> crc_ok;
  Event done;
  std::int64_t count = 0;
};

// The device-resident simulation step: everything from the information bits to the per-block
// error counts runs on the backend; on CUDA it is queued on the step's own stream without a
// host wait, so that two steps overlap (one batch's decoding beside the next one's detection).
class CodedStep {
 public:
  CodedStep(const CodedConfig& c, const Backend& backend, std::int64_t batch)
      : c_(c),
        backend_(backend),
        mem_(memory_of(backend)),
        stream_(backend.is_cuda() ? Stream::create(backend.device()) : Stream{}),
        plan_(transport_config(c), backend, {.max_blocks = int(batch), .check_llrs = false}),
        detector_(make_detector(c.detector, c.shape, backend,
                                {.soft = true, .check_device_values = false})),
        g_(plan_.g()),
        bpv_(c.shape.bits_per_vector()),
        vpb_(g_ / bpv_),
        channel_(c.channel, c.shape, vpb_, backend) {
    const auto n = std::size_t(batch);
    const int dev = backend.is_cuda() ? backend.device() : 0;
    tb_ = Buffer<std::uint8_t>(n * c.tbs, mem_, false, dev);
    decoded_ = Buffer<std::uint8_t>(n * c.tbs, mem_, false, dev);
    coded_ = Buffer<std::uint8_t>(n * g_, mem_, false, dev);
    hard_ = Buffer<std::uint8_t>(n * g_, mem_, false, dev);
    llrs_ = Buffer<float>(n * g_, mem_, false, dev);
    h_ = Buffer<cf32>(n * vpb_ * c.shape.nr * c.shape.nt, mem_, false, dev);
    y_ = Buffer<cf32>(n * vpb_ * c.shape.nr, mem_, false, dev);
    crc_ok_ = Buffer<std::uint8_t>(n, mem_, false, dev);
    errors_ = Buffer<int>(n, mem_, false, dev);
    n0_ = Buffer<float>(1, mem_, false, dev);
    slot_.errors = Buffer<int>(n, Memory::host, backend.is_cuda());
    slot_.crc_ok = Buffer<std::uint8_t>(n, Memory::host, backend.is_cuda());
  }

  CodedLink link() const { return {g_, vpb_, double(c_.tbs) / double(g_)}; }

  void set_noise(float n0) {
    n0_.copy_from_host(&n0, 1, stream_);
    n0_host_ = n0;
  }

  // Queues blocks [first, first + count); their counts land in slot().
  void enqueue(std::int64_t first, std::int64_t count) {
    HostSlot& slot = slot_;
    const auto& s = c_.shape;
    const std::int64_t vecs = count * vpb_;
    [[maybe_unused]] void* st = stream_.handle();
    if (backend_.is_cuda()) {
#if MIMORX_HAS_CUDA
      detail::transport_bits_cuda(c_.seed, first, count, c_.tbs, tb_.data(), st);
#endif
    } else {
      detail::transport_bits_cpu(c_.seed, first, count, c_.tbs, tb_.data());
    }
    plan_.encode(View<const std::uint8_t>(tb_.data(), count * c_.tbs, mem_), int(count),
                 View<std::uint8_t>(coded_.data(), count * g_, mem_), -1, stream_);
    // Vector v of block b is frame (first + b) * vpb + v of the Philox streams.
    if (backend_.is_cuda()) {
#if MIMORX_HAS_CUDA
      detail::make_received_cuda(c_.seed, first * vpb_, vecs, s.nt, s.nr, s.mod, n0_host_,
                                 coded_.data(), h_.data(), y_.data(), st);
#endif
    } else {
      detail::make_received_cpu(c_.seed, first * vpb_, vecs, s.nt, s.nr, s.mod, n0_host_,
                                coded_.data(), h_.data(), y_.data());
    }
    channel_.apply(c_.seed, first * vpb_, vecs, n0_host_, coded_.data(), h_.data(), y_.data(),
                   stream_);
    detect::DetectInput in;
    in.h = ConstMatrixBatch<cf32>(h_.data(), vecs, s.nr, s.nt, mem_);
    in.y = ConstMatrixBatch<cf32>(y_.data(), vecs, s.nr, 1, mem_);
    in.noise_var = View<const float>(n0_.data(), 1, mem_);
    detector_->run(in, View<std::uint8_t>(hard_.data(), vecs * bpv_, mem_),
                   View<float>(llrs_.data(), vecs * bpv_, mem_), stream_);
    plan_.decode(View<const float>(llrs_.data(), count * g_, mem_), int(count),
                 View<std::uint8_t>(decoded_.data(), count * c_.tbs, mem_),
                 View<std::uint8_t>(crc_ok_.data(), count, mem_), {}, {}, -1, stream_);
    if (backend_.is_cuda()) {
#if MIMORX_HAS_CUDA
      detail::block_errors_cuda(tb_.data(), decoded_.data(), count, c_.tbs, errors_.data(), st);
#endif
    } else {
      detail::block_errors_cpu(tb_.data(), decoded_.data(), count, c_.tbs, errors_.data());
    }
    slot.count = count;
    slot.errors.copy_from(errors_, std::size_t(count), stream_);
    slot.crc_ok.copy_from(crc_ok_, std::size_t(count), stream_);
    if (backend_.is_cuda()) slot.done.record(stream_);
  }

  HostSlot& slot() { return slot_; }

  // Waits for everything queued (before buffers are reused by another point or freed).
  void drain() { stream_.synchronize(); }

 private:
  const CodedConfig& c_;
  Backend backend_;
  Memory mem_;
  Stream stream_;
  ldpc::TransportBatchPlan plan_;
  std::unique_ptr<Detector> detector_;
  std::int64_t g_, bpv_, vpb_;
  detail::ChannelModelPlan channel_;
  float n0_host_ = 0;
  Buffer<std::uint8_t> tb_, decoded_, coded_, hard_, crc_ok_;
  Buffer<float> llrs_, n0_;
  Buffer<cf32> h_, y_;
  Buffer<int> errors_;
  HostSlot slot_;
};

// Adds a round's blocks to the point in block order and stops exactly at the block that makes
// min_block_errors, whichever rank has it (so the counts depend neither on the batch nor on the
// number of ranks). `slot`: this rank's share of the round (null: none). Returns true when the
// point stopped.
bool add_round(const CodedConfig& c, const HostSlot* slot, Communicator& comm,
               CodedPointResult& r) {
  const std::int64_t count = slot ? slot->count : 0;
  const std::int64_t limit = c.min_block_errors;
  std::int64_t before = r.block_errors;  // the point's block errors before this rank's share
  if (limit > 0) {
    std::int64_t mine = 0;
    for (std::int64_t b = 0; b < count; ++b) mine += slot->errors[std::size_t(b)] > 0;
    before += detail::round_sums(comm, std::span<const std::int64_t>(&mine, 1)).before[0];
  }
  // bit errors, bits, blocks, block errors, CRC failures, undetected errors of this rank's share
  // up to the stop
  std::array<std::int64_t, 6> part{};
  for (std::int64_t b = 0; b < count && !(limit > 0 && before + part[3] >= limit); ++b) {
    const int errs = slot->errors[std::size_t(b)];
    const bool ok = slot->crc_ok[std::size_t(b)] != 0;
    part[0] += errs;
    part[1] += c.tbs;
    part[2] += 1;
    part[3] += errs > 0;
    part[4] += !ok;
    part[5] += errs > 0 && ok;
  }
  comm.allreduce_sum(part);
  r.bit_errors += part[0];
  r.bits += part[1];
  r.blocks += part[2];
  r.block_errors += part[3];
  r.crc_failures += part[4];
  r.undetected_errors += part[5];
  return limit > 0 && r.block_errors >= limit;
}

}  // namespace

ldpc::TransportConfig transport_config(const CodedConfig& c) {
  ldpc::TransportConfig tc;
  tc.tbs = c.tbs;
  tc.code_rate = c.code_rate;
  tc.mod = c.shape.mod;
  tc.layers = 1;
  tc.decoder = c.decoder;
  const std::int64_t per_vector = c.shape.bits_per_vector();
  const std::int64_t g0 = ldpc::TransportPlan(tc, Backend::cpu()).g();
  tc.g = (g0 + per_vector - 1) / per_vector * per_vector;
  return tc;
}

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
  const ldpc::TransportConfig tc = transport_config(c);
  const std::int64_t vpb = tc.g / s.bits_per_vector();
  const std::int64_t batch = auto_batch_blocks(c, backend, vpb);
  // Two steps on CUDA (their streams overlap), one on the CPU (it has no concurrency to gain).
  std::vector<std::unique_ptr<CodedStep>> steps;
  for (int i = 0; i < (backend.is_cuda() ? 2 : 1); ++i)
    steps.push_back(std::make_unique<CodedStep>(c, backend, batch));
  const CodedLink link = steps.front()->link();
  const int m = bits_per_symbol(s.mod);

  if (hooks.ready) hooks.ready(link);
  // After `ready`: a validation that stops there involves no other rank.
  const auto comm = detail::communicator_of(c.comm);
  detail::RoundLayout layout(*comm, batch);
  std::vector<CodedPointResult> results;
  for (double snr : snr_db) {
    const auto t0 = std::chrono::steady_clock::now();
    CodedPointResult r;
    r.snr_db = snr;
    r.ebn0_db = snr - 10 * std::log10(double(m) * link.rate);
    for (auto& st : steps) st->set_noise(float(std::pow(10.0, -snr / 10.0)));
    // Rounds in block order, one in flight per step: the host queues the next rounds' shares
    // while the device computes, and sums a round's counts over the ranks, in round order, only
    // when its event has passed. A null entry: this rank has no share of that round.
    std::deque<CodedStep*> in_flight;
    std::int64_t next = 0;    // the first block of the next round to queue
    std::int64_t queued = 0;  // rounds queued
    std::size_t turn = 0;
    bool stopped = false;
    layout.begin_point();
    while (!stopped) {
      while (in_flight.size() < steps.size() && next < c.blocks) {
        const auto round = layout.round(queued++, next, c.blocks);
        CodedStep* mine = nullptr;
        if (round.mine.count > 0) {
          mine = steps[turn].get();
          mine->enqueue(round.mine.first, round.mine.count);
          turn = (turn + 1) % steps.size();
        }
        in_flight.push_back(mine);
        next += round.size;
      }
      if (in_flight.empty()) break;
      CodedStep* done = in_flight.front();
      in_flight.pop_front();
      if (done) done->slot().done.synchronize();
      layout.finished(done ? done->slot().count : 0);
      stopped = add_round(c, done ? &done->slot() : nullptr, *comm, r);
      r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      if (hooks.batch_done) hooks.batch_done(r);
    }
    for (auto& st : steps) st->drain();  // a batch queued past the stop is not counted
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    results.push_back(r);
    if (hooks.point_done) hooks.point_done(r);
    if (c.early_stop && r.block_errors == 0) break;
  }
  return results;
}

}  // namespace mimorx::sim

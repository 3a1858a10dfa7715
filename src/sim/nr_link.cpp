#include "mimorx/sim/nr_link.hpp"

#include <omp.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <climits>
#include <cmath>
#include <memory>
#include <optional>
#include <vector>

#include "mimorx/core/error.hpp"
#include "mimorx/ldpc/transport_batch.hpp"
#include "mimorx/modem/modem.hpp"
#include "mimorx/nr/estimate.hpp"
#include "mimorx/nr/tbs.hpp"
#include "mimorx/sim/detector.hpp"
#include "sim/checks.hpp"
#include "sim/frames.hpp"
#include "sim/nr_link_grid.hpp"
#include "sim/nr_link_step.hpp"
#include "sim/rounds.hpp"

namespace mimorx::sim {

namespace {

void check_config(const NrLinkConfig& c) {
  nr::validate(c.slot);
  require(c.n_rx >= 1 && c.n_rx <= 8, "n_rx", std::to_string(c.n_rx) + "; allowed 1..8");
  require(c.n_rx >= c.slot.layers, "n_rx",
          std::to_string(c.n_rx) + " receive antennas for " + std::to_string(c.slot.layers) +
              " layers; give at least as many receive antennas as layers");
  require(c.mcs >= 0 && c.mcs <= nr::max_mcs(c.mcs_table), "mcs",
          std::to_string(c.mcs) + "; table " + nr::to_string(c.mcs_table) + " allows 0.." +
              std::to_string(nr::max_mcs(c.mcs_table)));
  require(c.harq_transmissions >= 1 && c.harq_transmissions <= kMaxHarqTransmissions, "harq",
          std::to_string(c.harq_transmissions) + "; allowed 1..4 transmissions");
  require(c.max_slots >= 1, "max_slots", std::to_string(c.max_slots) + "; must be >= 1");
  require(c.min_block_errors >= 0, "min_block_errors", "must be >= 0");
  require(c.batch_blocks >= 0, "batch_blocks",
          std::to_string(c.batch_blocks) + "; must be >= 0 (0 = automatic)");
}

Modulation modulation_of(int qm) {
  switch (qm) {
    case 2:
      return Modulation::qpsk;
    case 4:
      return Modulation::qam16;
    case 6:
      return Modulation::qam64;
    default:
      return Modulation::qam256;
  }
}

std::int64_t auto_batch(const NrLinkConfig& c, const Backend& b, std::int64_t grid_res,
                        std::int64_t g) {
  std::int64_t want = c.batch_blocks;
  if (want == 0) {
    // CPU: about 2^18 grid REs a batch (progress stays frequent, the grids stay small). GPU:
    // about 2^22 grid REs a batch fill the device's grid kernels, detector and decoder.
    want = b.is_cuda() ? (std::int64_t(1) << 22) / grid_res
                       : std::clamp<std::int64_t>((std::int64_t(1) << 18) / grid_res, 1,
                                                  std::max(64, 4 * omp_get_max_threads()));
  }
  // Buffers hold batch x G values: keep every index inside int32 where the plans use int.
  const std::int64_t cap = std::max<std::int64_t>(1, (INT_MAX / 4) / g);
  return std::clamp<std::int64_t>(want, 1, cap);
}

// The per-batch state of the link: every buffer sized for `batch` blocks on the host.
class NrStep final : public detail::NrLinkStep {
 public:
  NrStep(const NrLinkConfig& c, std::int64_t batch)
      : c_(c),
        plan_(c.slot),
        tc_(nr_transport_config(c)),
        chain_(tc_, Backend::cpu(), {.max_blocks = int(batch), .check_llrs = false}),
        mapper_(tc_.mod, Backend::cpu()),
        detector_(make_detector(c.detector, {c.slot.layers, c.n_rx, tc_.mod}, Backend::cpu(),
                                {.soft = true, .check_device_values = false})),
        channel_(c, plan_),
        v_(c.slot.layers),
        m_(bits_per_symbol(tc_.mod)),
        res_(detail::grid_res(plan_)),
        data_(plan_.data_re_count()),
        g_(chain_.g()),
        tbs_(chain_.tbs()) {
    const auto n = std::size_t(batch);
    tb_.resize(n * tbs_);
    sent_.resize(n * tbs_);
    decoded_.resize(n * tbs_);
    coded_.resize(n * g_);
    symbols_.resize(n * g_ / m_);
    harq_.assign(n * chain_.harq_size(), 0.f);
    x_.resize(n * std::size_t(res_) * v_);
    h_.resize(n * std::size_t(res_) * c.n_rx * v_);
    if (c.csi != NrCsi::perfect) {
      h_est_.resize(h_.size());
      n0_est_.resize(n);
    }
    y_.resize(n * std::size_t(res_) * c.n_rx);
    h_data_.resize(n * std::size_t(data_) * c.n_rx * v_);
    y_data_.resize(n * std::size_t(data_) * c.n_rx);
    noise_.resize(n * std::size_t(data_));
    hard_.resize(n * g_);
    llrs_.resize(n * g_);
    cw_llrs_.resize(n * g_);
    crc_.resize(n);
  }

  std::int64_t g() const { return g_; }
  int tbs() const { return tbs_; }
  int data_res() const { return data_; }
  int code_blocks() const { return chain_.code_blocks(); }

  // Blocks [first, first + count): per block the transmissions it used (1..N) and whether it
  // was delivered (TB CRC passed with the sent bits) or not.
  void run(std::int64_t first, std::int64_t count, float n0, std::vector<int>& used,
           std::vector<std::uint8_t>& delivered, std::vector<std::uint8_t>& undetected) override {
    const auto cnt = std::size_t(count);
    detail::transport_bits_cpu(c_.seed, first, count, tbs_, sent_.data());
    used.assign(cnt, 0);
    delivered.assign(cnt, 0);
    undetected.assign(cnt, 0);
    std::fill_n(harq_.begin(), cnt * chain_.harq_size(), 0.f);
    // pending[p]: the block (0-based in the batch) whose data is in compact position p.
    std::vector<std::int64_t> pending(cnt);
    for (std::size_t b = 0; b < cnt; ++b) pending[b] = std::int64_t(b);
    std::copy_n(sent_.begin(), cnt * tbs_, tb_.begin());
    for (int tx = 0; tx < c_.harq_transmissions && !pending.empty(); ++tx) {
      transmit(first, pending, tx, n0);
      std::vector<std::int64_t> still;
      std::size_t keep = 0;
      for (std::size_t p = 0; p < pending.size(); ++p) {
        const auto b = std::size_t(pending[p]);
        used[b] = tx + 1;
        if (crc_[p]) {
          const bool same = std::equal(decoded_.begin() + std::ptrdiff_t(p * tbs_),
                                       decoded_.begin() + std::ptrdiff_t((p + 1) * tbs_),
                                       tb_.begin() + std::ptrdiff_t(p * tbs_));
          delivered[b] = same;
          undetected[b] = !same;
          continue;  // acknowledged: no retransmission
        }
        // Keep the block's bits and HARQ buffer, moved to compact position `keep`.
        if (keep != p) {
          std::copy_n(tb_.begin() + std::ptrdiff_t(p * tbs_), tbs_,
                      tb_.begin() + std::ptrdiff_t(keep * tbs_));
          const auto hs = chain_.harq_size();
          std::copy_n(harq_.begin() + std::ptrdiff_t(p * hs), hs,
                      harq_.begin() + std::ptrdiff_t(keep * hs));
        }
        still.push_back(pending[p]);
        ++keep;
      }
      pending.swap(still);
    }
  }

 private:
  // One transmission (redundancy version of `tx`) of the pending blocks, in compact order.
  void transmit(std::int64_t first, const std::vector<std::int64_t>& pending, int tx, float n0) {
    const int num = int(pending.size());
    const int rv = detail::kNrRvSequence[std::size_t(tx)];
    const int n_rx = c_.n_rx;
    const auto mem = Memory::host;
    chain_.encode(View<const std::uint8_t>(tb_.data(), std::int64_t(num) * tbs_, mem), num,
                  View<std::uint8_t>(coded_.data(), num * g_, mem), rv);
    mapper_.run(View<const std::uint8_t>(coded_.data(), num * g_, mem),
                View<cf32>(symbols_.data(), num * g_ / m_, mem));
    const std::size_t hg = std::size_t(res_) * n_rx * v_, yg = std::size_t(res_) * n_rx;
    const std::size_t hd = std::size_t(data_) * n_rx * v_, yd = std::size_t(data_) * n_rx;
    const std::size_t sym = std::size_t(data_) * v_;
    // The channel plan has one workspace: its calls run in turn (each parallel inside).
    for (int p = 0; p < num; ++p)
      channel_.generate(c_.seed, first + pending[std::size_t(p)], tx,
                        {h_.data() + std::size_t(p) * hg, hg});
#pragma omp parallel for schedule(static)
    for (int p = 0; p < num; ++p) {
      const std::int64_t block = first + pending[std::size_t(p)];
      const auto P = std::size_t(p);
      const std::size_t xg = std::size_t(res_) * v_;
      std::span<cf32> h(h_.data() + P * hg, hg), y(y_.data() + P * yg, yg);
      std::span<cf32> x(x_.data() + P * xg, xg);
      detail::place_layers(plan_, {symbols_.data() + P * sym, sym}, x);
      detail::place_dmrs(plan_, x);
      detail::receive_grid(c_.seed, detail::nr_noise_slot(block, tx), plan_, n_rx, h, x, n0, y);
      detail::gather_data_y(plan_, n_rx, y, {y_data_.data() + P * yd, yd});
      if (c_.csi == NrCsi::perfect) {
        detail::data_re_csi(plan_, n_rx, h, n0, {h_data_.data() + P * hd, hd},
                            {noise_.data() + P * std::size_t(data_), std::size_t(data_)});
      }
    }
    if (c_.csi != NrCsi::perfect) estimate_csi(num, n0);
    const std::int64_t vecs = std::int64_t(num) * data_;
    detect::DetectInput in;
    in.h = ConstMatrixBatch<cf32>(h_data_.data(), vecs, n_rx, v_, mem);
    in.y = ConstMatrixBatch<cf32>(y_data_.data(), vecs, n_rx, 1, mem);
    in.noise_var = View<const float>(noise_.data(), vecs, mem);
    detector_->run(in, View<std::uint8_t>(hard_.data(), num * g_, mem),
                   View<float>(llrs_.data(), num * g_, mem));
    for (int p = 0; p < num; ++p) {
      const auto off = std::size_t(p) * std::size_t(g_);
      detail::llrs_to_codeword({llrs_.data() + off, std::size_t(g_)}, v_, m_,
                               {cw_llrs_.data() + off, std::size_t(g_)});
    }
    const auto hs = std::int64_t(chain_.harq_size());
    chain_.accumulate(View<const float>(cw_llrs_.data(), num * g_, mem), num,
                      View<float>(harq_.data(), num * hs, mem), rv);
    chain_.decode_harq(View<const float>(harq_.data(), num * hs, mem), num,
                       View<std::uint8_t>(decoded_.data(), std::int64_t(num) * tbs_, mem),
                       View<std::uint8_t>(crc_.data(), num, mem));
  }

  // The DM-RS estimator's H and N0 on the whole grids of the batch, then at the data REs. The
  // LMMSE design follows the point's SNR: the estimator is rebuilt when N0 changes.
  void estimate_csi(int num, float n0) {
    if (!estimator_ || estimator_n0_ != n0) {
      estimator_.emplace(plan_, c_.n_rx, detail::nr_estimator_config(c_, n0), Backend::cpu());
      estimator_n0_ = n0;
    }
    const auto mem = Memory::host;
    const std::size_t hg = std::size_t(res_) * c_.n_rx * v_;
    estimator_->estimate(
        View<const cf32>(y_.data(), std::int64_t(num) * res_ * c_.n_rx, mem), num,
        MatrixBatch<cf32>(h_est_.data(), std::int64_t(num) * res_, c_.n_rx, v_, mem),
        View<float>(n0_est_.data(), num, mem));
    const std::size_t hd = std::size_t(data_) * c_.n_rx * v_;
#pragma omp parallel for schedule(static)
    for (int p = 0; p < num; ++p) {
      const auto P = std::size_t(p);
      detail::data_re_csi(plan_, c_.n_rx, {h_est_.data() + P * hg, hg}, n0_est_[P],
                          {h_data_.data() + P * hd, hd},
                          {noise_.data() + P * std::size_t(data_), std::size_t(data_)});
    }
  }

  const NrLinkConfig& c_;
  nr::SlotPlan plan_;
  ldpc::TransportConfig tc_;
  ldpc::TransportBatchPlan chain_;
  modem::Mapper mapper_;
  std::unique_ptr<Detector> detector_;
  detail::NrSlotChannel channel_;
  int v_, m_;
  std::int64_t res_;
  int data_;
  std::int64_t g_;
  int tbs_;
  std::vector<std::uint8_t> tb_, sent_, decoded_, coded_, hard_, crc_;
  std::vector<cf32> symbols_, x_, h_, y_, h_data_, y_data_, h_est_;
  std::vector<float> n0_est_;
  std::optional<nr::ChannelEstimator> estimator_;
  float estimator_n0_ = -1.f;
  std::vector<float> harq_, noise_, llrs_, cw_llrs_;
};

}  // namespace

ldpc::TransportConfig nr_transport_config(const NrLinkConfig& c) {
  check_config(c);
  const nr::SlotPlan plan(c.slot);
  const nr::TbsInput in = plan.tbs_input(c.mcs_table, c.mcs);
  const nr::McsEntry e = nr::mcs_entry(c.mcs_table, c.mcs);
  ldpc::TransportConfig tc;
  tc.tbs = nr::transport_block_size(in);
  // With G given, the rate only selects the base graph (TS 38.212 §7.2.2), and every rate below
  // 0.25 selects BG2: the low-SE rows under the chain's floor of 0.1 select what they would.
  tc.code_rate = std::max(e.code_rate(), 0.1);
  tc.mod = modulation_of(e.qm);
  tc.layers = c.slot.layers;
  tc.g = std::int64_t(plan.data_re_count()) * c.slot.layers * e.qm;
  tc.decoder = c.decoder;
  return tc;
}

NrLinkSetup nr_link_setup(const NrLinkConfig& c) {
  const ldpc::TransportConfig tc = nr_transport_config(c);
  const ldpc::TransportPlan chain(tc, Backend::cpu());
  NrLinkSetup s;
  s.tbs = tc.tbs;
  s.mod = tc.mod;
  s.target_rate = nr::mcs_entry(c.mcs_table, c.mcs).code_rate();
  s.data_res = nr::SlotPlan(c.slot).data_re_count();
  s.g = chain.g();
  s.rate = double(s.tbs) / double(s.g);
  s.code_blocks = chain.segmentation().c;
  return s;
}

std::vector<NrPointResult> run_nr_link(const NrLinkConfig& c, const Backend& backend,
                                       const std::vector<double>& snr_db, const NrHooks& hooks) {
  check_config(c);
  detail::check_shape_and_snr({c.slot.layers, c.n_rx, Modulation::qpsk}, snr_db);
  const NrLinkSetup setup = nr_link_setup(c);
  const nr::SlotPlan plan(c.slot);
  const std::int64_t batch =
      std::min(auto_batch(c, backend, detail::grid_res(plan), setup.g), c.max_slots);
  // Builds the detector and the channel: their errors come here.
  const std::unique_ptr<detail::NrLinkStep> step =
      backend.is_cuda() ? detail::make_nr_step_cuda(c, backend, batch)
                        : std::make_unique<NrStep>(c, batch);
  if (hooks.ready) hooks.ready(setup);
  // After `ready`: a validation that stops there involves no other rank.
  const auto comm = detail::communicator_of(c.comm);
  detail::RoundLayout layout(*comm, batch);

  std::vector<NrPointResult> results;
  std::vector<int> used;
  std::vector<std::uint8_t> delivered, undetected;
  const int m = bits_per_symbol(setup.mod);
  for (double snr : snr_db) {
    const auto t0 = std::chrono::steady_clock::now();
    NrPointResult r;
    r.snr_db = snr;
    r.ebn0_db = snr - 10 * std::log10(double(m) * setup.rate);
    r.tbs = setup.tbs;
    r.tx_errors.assign(std::size_t(c.harq_transmissions), 0);
    const auto n0 = float(std::pow(10.0, -snr / 10.0));
    const std::size_t harq = std::size_t(c.harq_transmissions);
    std::int64_t next = 0;   // the first block of the next round
    std::int64_t round = 0;  // rounds run
    bool stopped = false;
    layout.begin_point();
    while (!stopped) {
      // Every block takes at least one slot: no more blocks than slots left are needed.
      const auto now = layout.round(round++, next, next + (c.max_slots - r.slots));
      const auto share = now.mine;
      if (share.count > 0) step->run(share.first, share.count, n0, used, delivered, undetected);
      layout.finished(share.count);
      next += now.size;
      // The round's blocks in order; the point ends exactly at the block that meets a stop rule,
      // whichever rank has it: the slots and block errors of the shares before this rank's tell
      // where this rank's share begins.
      std::array<std::int64_t, 2> mine{};  // slots, residual block errors of this rank's share
      for (std::int64_t b = 0; b < share.count; ++b) {
        mine[0] += used[std::size_t(b)];
        mine[1] += !delivered[std::size_t(b)];
      }
      const auto before = detail::round_sums(*comm, mine).before;
      std::int64_t slots = r.slots + before[0], errors = r.block_errors() + before[1];
      const auto met = [&] {
        return slots >= c.max_slots || (c.min_block_errors > 0 && errors >= c.min_block_errors);
      };
      // blocks, slots, undetected errors, delivered bits, then tx_errors of this rank's share
      std::vector<std::int64_t> part(4 + harq, 0);
      for (std::int64_t b = 0; b < share.count && !met(); ++b) {
        const auto B = std::size_t(b);
        part[0] += 1;
        part[1] += used[B];
        part[2] += undetected[B];
        part[3] += delivered[B] ? setup.tbs : 0;
        for (std::size_t i = 0; i < harq; ++i)
          part[4 + i] += !(delivered[B] && used[B] <= int(i) + 1);
        slots += used[B];
        errors += !delivered[B];
      }
      comm->allreduce_sum(part);
      r.blocks += part[0];
      r.slots += part[1];
      r.undetected_errors += part[2];
      r.delivered_bits += part[3];
      for (std::size_t i = 0; i < harq; ++i) r.tx_errors[i] += part[4 + i];
      stopped = r.slots >= c.max_slots ||
                (c.min_block_errors > 0 && r.block_errors() >= c.min_block_errors);
      r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      if (hooks.batch_done) hooks.batch_done(r);
    }
    results.push_back(r);
    if (hooks.point_done) hooks.point_done(r);
    if (c.early_stop && r.block_errors() == 0) break;
  }
  return results;
}

}  // namespace mimorx::sim

// The NR slot link on the GPU: every step of a transmission runs on the device on one stream
// (bits, chain, mapper, grid kernels, TDL channel, estimator, detector, HARQ, error counts);
// the host reads the per-block TB CRC flags and bit-error counts (5 bytes a block) after each
// transmission, and sends back the compact positions of the blocks still pending.
#include <algorithm>
#include <optional>
#include <utility>

#include "core/cuda_check.hpp"
#include "mimorx/config.hpp"
#include "mimorx/core/buffer.hpp"
#include "mimorx/core/error.hpp"
#include "mimorx/core/tensor.hpp"
#include "mimorx/ldpc/transport_batch.hpp"
#include "mimorx/modem/modem.hpp"
#include "mimorx/nr/estimate.hpp"
#include "mimorx/sim/detector.hpp"
#include "sim/frames.hpp"
#include "sim/nr_link_cuda.hpp"
#include "sim/nr_link_grid.hpp"
#include "sim/nr_link_step.hpp"

namespace mimorx::sim::detail {

#if MIMORX_HAS_CUDA
namespace {

class NrDeviceStep final : public NrLinkStep {
 public:
  NrDeviceStep(const NrLinkConfig& c, const Backend& backend, std::int64_t batch)
      : c_(c),
        backend_(backend),
        stream_(Stream::create(backend.device())),
        plan_(c.slot),
        tc_(nr_transport_config(c)),
        chain_(tc_, backend, {.max_blocks = int(batch), .check_llrs = false}),
        mapper_(tc_.mod, backend),
        detector_(make_detector(c.detector, {c.slot.layers, c.n_rx, tc_.mod}, backend,
                                {.soft = true, .check_device_values = false})),
        v_(c.slot.layers),
        m_(bits_per_symbol(tc_.mod)),
        res_(grid_res(plan_)),
        data_(plan_.data_re_count()),
        g_(chain_.g()),
        tbs_(chain_.tbs()) {
    if (c.tdl) tdl_.emplace(nr_tdl_config(c, plan_), backend);
    const auto n = std::size_t(batch);
    const int dev = backend.device();
    const auto d = Memory::device;
    const std::size_t per = std::size_t(c.n_rx) * std::size_t(v_);
    sent_ = Buffer<std::uint8_t>(n * tbs_, d, false, dev);
    tb_ = Buffer<std::uint8_t>(n * tbs_, d, false, dev);
    tb_spare_ = Buffer<std::uint8_t>(n * tbs_, d, false, dev);
    decoded_ = Buffer<std::uint8_t>(n * tbs_, d, false, dev);
    coded_ = Buffer<std::uint8_t>(n * g_, d, false, dev);
    hard_ = Buffer<std::uint8_t>(n * g_, d, false, dev);
    crc_ = Buffer<std::uint8_t>(n, d, false, dev);
    errors_ = Buffer<int>(n, d, false, dev);
    symbols_ = Buffer<cf32>(n * g_ / m_, d, false, dev);
    x_ = Buffer<cf32>(n * std::size_t(res_) * v_, d, false, dev);
    h_ = Buffer<cf32>(n * std::size_t(res_) * per, d, false, dev);
    if (c.csi != NrCsi::perfect) {
      h_est_ = Buffer<cf32>(h_.size(), d, false, dev);
      n0_est_ = Buffer<float>(n, d, false, dev);
    }
    y_ = Buffer<cf32>(n * std::size_t(res_) * c.n_rx, d, false, dev);
    h_data_ = Buffer<cf32>(n * std::size_t(data_) * per, d, false, dev);
    y_data_ = Buffer<cf32>(n * std::size_t(data_) * c.n_rx, d, false, dev);
    noise_ = Buffer<float>(n * std::size_t(data_), d, false, dev);
    llrs_ = Buffer<float>(n * g_, d, false, dev);
    cw_llrs_ = Buffer<float>(n * g_, d, false, dev);
    harq_ = Buffer<float>(n * chain_.harq_size(), d, false, dev);
    harq_spare_ = Buffer<float>(harq_.size(), d, false, dev);
    blocks_ = Buffer<std::int64_t>(n, d, false, dev);
    keep_ = Buffer<int>(n, d, false, dev);
    blocks_host_ = Buffer<std::int64_t>(n, Memory::host, true);
    keep_host_ = Buffer<int>(n, Memory::host, true);
    crc_host_ = Buffer<std::uint8_t>(n, Memory::host, true);
    errors_host_ = Buffer<int>(n, Memory::host, true);
    // The plan's tables, uploaded once.
    const std::vector<int> pos = data_re_positions(plan_);
    const DmrsTable dmrs = dmrs_table(plan_);
    data_pos_ = Buffer<int>(pos.size(), d, false, dev);
    data_pos_.copy_from_host(pos.data(), pos.size(), stream_);
    dmrs_at_ = Buffer<int>(std::max<std::size_t>(dmrs.at.size(), 1), d, false, dev);
    dmrs_at_.copy_from_host(dmrs.at.data(), dmrs.at.size(), stream_);
    dmrs_value_ = Buffer<cf32>(std::max<std::size_t>(dmrs.value.size(), 1), d, false, dev);
    dmrs_value_.copy_from_host(dmrs.value.data(), dmrs.value.size(), stream_);
    tables_.data_pos = data_pos_.data();
    tables_.dmrs_at = dmrs_at_.data();
    tables_.dmrs_value = dmrs_value_.data();
    tables_.data_res = data_;
    tables_.dmrs_count = int(dmrs.at.size());
    tables_.res = res_;
    tables_.layers = v_;
    tables_.n_rx = c.n_rx;
    // The plans above may upload their tables on other streams: all of it done before use.
    MIMORX_CUDA_CHECK(cudaDeviceSynchronize());
  }

  void run(std::int64_t first, std::int64_t count, float n0, std::vector<int>& used,
           std::vector<std::uint8_t>& delivered, std::vector<std::uint8_t>& undetected) override {
    const auto cnt = std::size_t(count);
    void* st = stream_.handle();
    MIMORX_CUDA_CHECK(cudaSetDevice(backend_.device()));  // the kernels below launch on it
    transport_bits_cuda(c_.seed, first, count, tbs_, sent_.data(), st);
    tb_.copy_from(sent_, cnt * tbs_, stream_);
    harq_.fill_bytes(0, stream_);
    used.assign(cnt, 0);
    delivered.assign(cnt, 0);
    undetected.assign(cnt, 0);
    // pending[p]: the block (0-based in the batch) whose data is in compact position p.
    std::vector<std::int64_t> pending(cnt);
    for (std::size_t b = 0; b < cnt; ++b) pending[b] = std::int64_t(b);
    for (int tx = 0; tx < c_.harq_transmissions && !pending.empty(); ++tx) {
      transmit(first, pending, tx, n0);
      const int num = int(pending.size());
      crc_host_.copy_from(crc_, std::size_t(num), stream_);
      errors_host_.copy_from(errors_, std::size_t(num), stream_);
      stream_.synchronize();
      std::vector<std::int64_t> still;
      for (int p = 0; p < num; ++p) {
        const auto b = std::size_t(pending[std::size_t(p)]);
        used[b] = tx + 1;
        if (crc_host_[std::size_t(p)]) {
          delivered[b] = errors_host_[std::size_t(p)] == 0;
          undetected[b] = errors_host_[std::size_t(p)] != 0;
          continue;  // acknowledged: no retransmission
        }
        keep_host_[still.size()] = p;
        still.push_back(pending[std::size_t(p)]);
      }
      if (!still.empty() && int(still.size()) < num && tx + 1 < c_.harq_transmissions) {
        // Move the kept blocks' bits and HARQ buffers to compact positions 0, 1, ...
        const int rows = int(still.size());
        keep_.copy_from_host(keep_host_.data(), std::size_t(rows), stream_);
        nr_gather_rows_cuda(tb_.data(), keep_.data(), rows, tbs_, tb_spare_.data(), st);
        nr_gather_rows_cuda(harq_.data(), keep_.data(), rows, std::int64_t(chain_.harq_size()),
                            harq_spare_.data(), st);
        std::swap(tb_, tb_spare_);
        std::swap(harq_, harq_spare_);
      }
      pending.swap(still);
    }
  }

 private:
  void transmit(std::int64_t first, const std::vector<std::int64_t>& pending, int tx, float n0) {
    const int num = int(pending.size());
    const int rv = kNrRvSequence[std::size_t(tx)];
    const int n_rx = c_.n_rx;
    const auto mem = Memory::device;
    void* st = stream_.handle();
    for (int p = 0; p < num; ++p) blocks_host_[std::size_t(p)] = first + pending[std::size_t(p)];
    blocks_.copy_from_host(blocks_host_.data(), std::size_t(num), stream_);
    chain_.encode(View<const std::uint8_t>(tb_.data(), std::int64_t(num) * tbs_, mem), num,
                  View<std::uint8_t>(coded_.data(), num * g_, mem), rv, stream_);
    mapper_.run(View<const std::uint8_t>(coded_.data(), num * g_, mem),
                View<cf32>(symbols_.data(), num * g_ / m_, mem), stream_);
    nr_place_cuda(tables_, num, symbols_.data(), x_.data(), st);
    if (tdl_) {
      // Pending blocks of one transmission are realisations at slot tx: one call per run of
      // consecutive block numbers.
      const std::int64_t mats = res_;
      int p = 0;
      while (p < num) {
        int q = p + 1;
        while (q < num && pending[std::size_t(q)] == pending[std::size_t(q - 1)] + 1) ++q;
        tdl_->generate(c_.seed, channel::TdlSlots{first + pending[std::size_t(p)], tx, 1},
                       MatrixBatch<cf32>(h_.data() + std::size_t(p) * mats * n_rx * v_,
                                         std::int64_t(q - p) * mats, n_rx, v_, mem),
                       stream_);
        p = q;
      }
    } else {
      nr_flat_channel_cuda(tables_, c_.seed, blocks_.data(), tx, num, h_.data(), st);
    }
    nr_receive_cuda(tables_, c_.seed, blocks_.data(), tx, num, h_.data(), x_.data(), n0, y_.data(),
                    st);
    if (c_.csi == NrCsi::perfect) {
      nr_gather_cuda(tables_, num, y_.data(), h_.data(), n0, nullptr, y_data_.data(),
                     h_data_.data(), noise_.data(), st);
    } else {
      if (!estimator_ || estimator_n0_ != n0) {
        estimator_.emplace(plan_, n_rx, nr_estimator_config(c_, n0), backend_);
        estimator_n0_ = n0;
        MIMORX_CUDA_CHECK(cudaDeviceSynchronize());  // its tables, uploaded on another stream
      }
      estimator_->estimate(
          View<const cf32>(y_.data(), std::int64_t(num) * res_ * n_rx, mem), num,
          MatrixBatch<cf32>(h_est_.data(), std::int64_t(num) * res_, n_rx, v_, mem),
          View<float>(n0_est_.data(), num, mem), stream_);
      nr_gather_cuda(tables_, num, y_.data(), h_est_.data(), n0, n0_est_.data(), y_data_.data(),
                     h_data_.data(), noise_.data(), st);
    }
    const std::int64_t vecs = std::int64_t(num) * data_;
    detect::DetectInput in;
    in.h = ConstMatrixBatch<cf32>(h_data_.data(), vecs, n_rx, v_, mem);
    in.y = ConstMatrixBatch<cf32>(y_data_.data(), vecs, n_rx, 1, mem);
    in.noise_var = View<const float>(noise_.data(), vecs, mem);
    detector_->run(in, View<std::uint8_t>(hard_.data(), num * g_, mem),
                   View<float>(llrs_.data(), num * g_, mem), stream_);
    nr_llrs_to_codeword_cuda(llrs_.data(), num, g_, v_, m_, cw_llrs_.data(), st);
    const auto hs = std::int64_t(chain_.harq_size());
    chain_.accumulate(View<const float>(cw_llrs_.data(), num * g_, mem), num,
                      View<float>(harq_.data(), num * hs, mem), rv, stream_);
    chain_.decode_harq(View<const float>(harq_.data(), num * hs, mem), num,
                       View<std::uint8_t>(decoded_.data(), std::int64_t(num) * tbs_, mem),
                       View<std::uint8_t>(crc_.data(), num, mem), {}, {}, stream_);
    block_errors_cuda(tb_.data(), decoded_.data(), num, tbs_, errors_.data(), st);
  }

  const NrLinkConfig& c_;
  Backend backend_;
  Stream stream_;
  nr::SlotPlan plan_;
  ldpc::TransportConfig tc_;
  ldpc::TransportBatchPlan chain_;
  modem::Mapper mapper_;
  std::unique_ptr<Detector> detector_;
  std::optional<channel::TdlChannel> tdl_;  // empty: flat Rayleigh
  int v_, m_;
  std::int64_t res_;
  int data_;
  std::int64_t g_;
  int tbs_;
  std::optional<nr::ChannelEstimator> estimator_;
  float estimator_n0_ = -1.f;
  NrGridTables tables_;
  Buffer<std::uint8_t> sent_, tb_, tb_spare_, decoded_, coded_, hard_, crc_, crc_host_;
  Buffer<int> errors_, errors_host_, keep_, keep_host_, data_pos_, dmrs_at_;
  Buffer<std::int64_t> blocks_, blocks_host_;
  Buffer<cf32> symbols_, x_, h_, h_est_, y_, h_data_, y_data_, dmrs_value_;
  Buffer<float> n0_est_, noise_, llrs_, cw_llrs_, harq_, harq_spare_;
};

}  // namespace

std::unique_ptr<NrLinkStep> make_nr_step_cuda(const NrLinkConfig& c, const Backend& backend,
                                              std::int64_t batch) {
  return std::make_unique<NrDeviceStep>(c, backend, batch);
}
#else
std::unique_ptr<NrLinkStep> make_nr_step_cuda(const NrLinkConfig&, const Backend&, std::int64_t) {
  throw InvalidArgument("backend: this build has no CUDA backend; use --backend cpu");
}
#endif

}  // namespace mimorx::sim::detail

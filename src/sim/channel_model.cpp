#include "sim/channel_model.hpp"

#include <cmath>
#include <string>

#include "mimorx/channel/fading.hpp"
#include "mimorx/config.hpp"
#include "mimorx/core/error.hpp"
#include "sim/channel_model_math.hpp"

namespace mimorx::sim::detail {

void channel_model_cpu(const ChannelModelArgs& a, std::uint64_t seed, std::int64_t first,
                       std::int64_t count, int nt, int nr, Modulation mod, float n0,
                       const std::uint8_t* bits, cf32* h, cf32* y) {
  const int m = bits_per_symbol(mod);
#pragma omp parallel for schedule(static)
  for (std::int64_t v = 0; v < count; ++v) {
    for (int i = 0; i < nr; ++i) {
      channel_model_row(a, seed, first + v, nt, nr, mod, n0, bits + v * nt * m, i, h + v * nr * nt,
                        y + v * nr);
    }
  }
}

ChannelModelPlan::ChannelModelPlan(const ChannelModel& model, const detect::MimoShape& shape,
                                   std::int64_t vectors_per_block, const Backend& backend)
    : shape_(shape), backend_(backend) {
  const auto rho_ok = [](double rho) { return std::isfinite(rho) && rho >= 0.0 && rho < 1.0; };
  require(rho_ok(model.corr_tx), "corr_tx",
          value_text(model.corr_tx) + "; the correlation coefficient must be in [0, 1)");
  require(rho_ok(model.corr_rx), "corr_rx",
          value_text(model.corr_rx) + "; the correlation coefficient must be in [0, 1)");
  require(model.vectors_per_channel >= 1 && model.vectors_per_channel <= kMaxVectorsPerChannel,
          "vectors_per_channel",
          std::to_string(model.vectors_per_channel) + "; allowed 1.." +
              std::to_string(kMaxVectorsPerChannel));
  active_ = !model.iid();
  if (!active_) return;
  const channel::FadingPlan roots({shape.nr, shape.nt, model.corr_tx, model.corr_rx},
                                  Backend::cpu());
  const auto upload = [&](const std::vector<float>& host, Buffer<float>& buf) -> const float* {
    if (host.empty()) return nullptr;
    buf = Buffer<float>::on(backend, host.size());
    buf.copy_from_host(host.data(), host.size());
    return buf.data();
  };
  args_.vectors_per_channel = model.vectors_per_channel;
  args_.vectors_per_block = vectors_per_block;
  args_.channels_per_block =
      vectors_per_block > 0
          ? (vectors_per_block + model.vectors_per_channel - 1) / model.vectors_per_channel
          : 0;
  args_.sqrt_rx = upload(roots.sqrt_rx(), sqrt_rx_);
  args_.sqrt_tx = upload(roots.sqrt_tx(), sqrt_tx_);
}

void ChannelModelPlan::apply(std::uint64_t seed, std::int64_t first, std::int64_t count, float n0,
                             const std::uint8_t* bits, cf32* h, cf32* y,
                             [[maybe_unused]] const Stream& stream) const {
  if (!active_) return;
  if (backend_.is_cuda()) {
#if MIMORX_HAS_CUDA
    channel_model_cuda(args_, seed, first, count, shape_.nt, shape_.nr, shape_.mod, n0, bits, h, y,
                       stream.handle());
#endif
    return;
  }
  channel_model_cpu(args_, seed, first, count, shape_.nt, shape_.nr, shape_.mod, n0, bits, h, y);
}

}  // namespace mimorx::sim::detail

// The receiver's channel state for the NR slot link: where the DM-RS channel estimator
// (nr::ChannelEstimator) plugs in as a further NrCsi value.
#include <algorithm>

#include "mimorx/core/error.hpp"
#include "sim/nr_link_grid.hpp"

namespace mimorx::sim::detail {

void receiver_csi(NrCsi csi, const nr::SlotPlan& plan, int n_rx, std::span<const cf32> y_grid,
                  std::span<const cf32> h_true, float n0_true, std::span<cf32> h_data,
                  std::span<float> noise_var) {
  (void)y_grid;  // what an estimator reads (DM-RS REs of each port)
  require(csi == NrCsi::perfect, "csi", "only perfect CSI is available");
  const int v = plan.config().layers;
  const std::size_t per = std::size_t(n_rx) * std::size_t(v);
  const int n_sc = plan.n_subcarriers();
  const auto& res = plan.data_res();
  for (std::size_t i = 0; i < res.size(); ++i) {
    const std::size_t re = std::size_t(res[i].l) * std::size_t(n_sc) + std::size_t(res[i].k);
    std::copy_n(h_true.begin() + std::ptrdiff_t(re * per), per,
                h_data.begin() + std::ptrdiff_t(i * per));
    noise_var[i] = n0_true;
  }
}

}  // namespace mimorx::sim::detail

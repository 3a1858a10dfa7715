// The receiver's channel state for the NR slot link: H and N0 at the data REs.
#include <algorithm>

#include "sim/nr_link_grid.hpp"

namespace mimorx::sim::detail {

void data_re_csi(const nr::SlotPlan& plan, int n_rx, std::span<const cf32> h_grid, float n0,
                 std::span<cf32> h_data, std::span<float> noise_var) {
  const int v = plan.config().layers;
  const std::size_t per = std::size_t(n_rx) * std::size_t(v);
  const int n_sc = plan.n_subcarriers();
  const auto& res = plan.data_res();
  for (std::size_t i = 0; i < res.size(); ++i) {
    const std::size_t re = std::size_t(res[i].l) * std::size_t(n_sc) + std::size_t(res[i].k);
    std::copy_n(h_grid.begin() + std::ptrdiff_t(re * per), per,
                h_data.begin() + std::ptrdiff_t(i * per));
    noise_var[i] = n0;
  }
}

}  // namespace mimorx::sim::detail

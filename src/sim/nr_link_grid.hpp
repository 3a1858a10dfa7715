#pragma once
// The NR slot link's grid steps on the host (CPU backend): layer mapping onto the data REs,
// DM-RS, the channel per RE, y = H x + n over the grid, the receiver's CSI and the LLRs back in
// codeword order. Layouts of one slot (n_sc subcarriers, 14 symbols, re = l n_sc + k):
//   x  transmitted grid   re x layers            (x[re * layers + j], layer j = antenna j)
//   h  channel            re matrices n_rx x layers, column-major (TdlChannel's layout)
//   y  received grid      re x n_rx              (((b 14 + l) n_sc + k) n_rx + r over slots b)
// The per-RE arithmetic is nr_link_math.hpp's, which the CUDA kernels (nr_link_cuda.hpp) share.
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "mimorx/core/complex.hpp"
#include "mimorx/nr/estimate.hpp"
#include "mimorx/nr/slot.hpp"
#include "mimorx/sim/nr_link.hpp"
#include "sim/nr_link_math.hpp"

namespace mimorx::sim::detail {

static_assert(kNrMaxHarq == kMaxHarqTransmissions);

inline std::int64_t grid_res(const nr::SlotPlan& plan) {
  return std::int64_t(nr::SlotPlan::kSymbols) * plan.n_subcarriers();
}

// Grid position (re = l n_sc + k) of each data RE, in the data REs' order.
std::vector<int> data_re_positions(const nr::SlotPlan& plan);

// The DM-RS values of every port: x[at[q]] = value[q] (at = re * layers + port).
struct DmrsTable {
  std::vector<int> at;
  std::vector<cf32> value;
};
DmrsTable dmrs_table(const nr::SlotPlan& plan);

// The link's TDL channel: the configuration's model with the slot's antennas, grid and direction.
channel::TdlConfig nr_tdl_config(const NrLinkConfig& config, const nr::SlotPlan& plan);
// The link's DM-RS estimator at noise level n0 (the LMMSE design follows the point's SNR).
nr::EstimatorConfig nr_estimator_config(const NrLinkConfig& config, float n0);

// Codeword symbols d (data_res x layers, codeword order) -> layer mapping (nr::map_to_layers)
// -> layer j's symbol i on data RE i, antenna j. x: grid_res x layers, zeroed here first.
void place_layers(const nr::SlotPlan& plan, std::span<const cf32> d, std::span<cf32> x);
// Adds port p's DM-RS values on its REs (antenna p).
void place_dmrs(const nr::SlotPlan& plan, std::span<cf32> x);

// The channel of one transmission: H per RE of the grid (grid_res matrices n_rx x layers).
class NrSlotChannel {
 public:
  NrSlotChannel(const NrLinkConfig& config, const nr::SlotPlan& plan);
  ~NrSlotChannel();
  void generate(std::uint64_t seed, std::int64_t block, int tx, std::span<cf32> h);

 private:
  int n_rx_, layers_;
  std::int64_t res_;
  std::unique_ptr<channel::TdlChannel> tdl_;  // empty: flat Rayleigh
};

// y = H x + n on every RE; n ~ CN(0, n0) per RE and receive antenna from the noise slot's
// Philox counters.
void receive_grid(std::uint64_t seed, std::uint64_t noise_slot, const nr::SlotPlan& plan, int n_rx,
                  std::span<const cf32> h, std::span<const cf32> x, float n0, std::span<cf32> y);

// The data REs' received vectors (data_res x n_rx) from the grid.
void gather_data_y(const nr::SlotPlan& plan, int n_rx, std::span<const cf32> y,
                   std::span<cf32> y_data);

// What the receiver knows for detection: H per data RE (data_res matrices n_rx x layers) and
// N0 per data RE, from a grid of channel matrices (the true one, or the estimator's output in
// the same layout) and one N0 for the slot.
void data_re_csi(const nr::SlotPlan& plan, int n_rx, std::span<const cf32> h_grid, float n0,
                 std::span<cf32> h_data, std::span<float> noise_var);

// Detector LLRs (data RE i, layer j, bit k at (i layers + j) m + k) -> codeword order
// (symbol v i + j of the codeword, the inverse of the layer mapping, bit k at (v i + j) m + k).
void llrs_to_codeword(std::span<const float> detected, int layers, int m,
                      std::span<float> codeword);

}  // namespace mimorx::sim::detail

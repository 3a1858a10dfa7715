#pragma once
// The simulator's channel model (sim/channel_model.hpp) applied to a batch: rewrites the H and
// y that the i.i.d. generator (frames.hpp) wrote, for the same bits and the same noise.
#include <cstdint>

#include "mimorx/core/backend.hpp"
#include "mimorx/core/buffer.hpp"
#include "mimorx/core/complex.hpp"
#include "mimorx/detect/common.hpp"
#include "mimorx/sim/channel_model.hpp"
#include "sim/channel_model_math.hpp"

namespace mimorx::sim::detail {

class ChannelModelPlan {
 public:
  // Validates the model (argument names corr_tx, corr_rx, vectors_per_channel).
  // vectors_per_block: the coded link's vectors per transport block, 0 for the uncoded link.
  ChannelModelPlan(const ChannelModel& model, const detect::MimoShape& shape,
                   std::int64_t vectors_per_block, const Backend& backend);
  // False for the i.i.d. channel: nothing to rewrite.
  bool active() const { return active_; }
  // Vectors [first, first + count) (global indices) carrying `bits` (count x nt x m): their H
  // (count matrices nr x nt) and y (count x nr), in the backend's memory.
  void apply(std::uint64_t seed, std::int64_t first, std::int64_t count, float n0,
             const std::uint8_t* bits, cf32* h, cf32* y, const Stream& stream) const;

 private:
  detect::MimoShape shape_;
  Backend backend_;
  bool active_ = false;
  ChannelModelArgs args_;
  Buffer<float> sqrt_rx_, sqrt_tx_;
};

}  // namespace mimorx::sim::detail

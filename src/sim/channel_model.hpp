#pragma once
// The simulator's channel model (sim/channel_model.hpp) applied to a batch: rewrites the H and
// y that the i.i.d. generator (frames.hpp) wrote, for the same bits and the same noise.
#include <cstdint>

#include "mimorx/core/backend.hpp"
#include "mimorx/core/buffer.hpp"
#include "mimorx/core/complex.hpp"
#include "mimorx/detect/common.hpp"
#include "mimorx/sim/channel_model.hpp"

namespace mimorx::sim::detail {

// What the per-row arithmetic needs (pointers in the memory of the backend that runs it).
struct ChannelModelArgs {
  std::int64_t vectors_per_channel = 1;
  std::int64_t vectors_per_block = 0;   // coded: received vectors per transport block; 0 uncoded
  std::int64_t channels_per_block = 0;  // ceil(vectors_per_block / vectors_per_channel)
  const float* sqrt_rx = nullptr;       // R_rx^{1/2}, nr x nr column-major; null: identity
  const float* sqrt_tx = nullptr;       // R_tx^{1/2}, nt x nt column-major; null: identity
};

void channel_model_cpu(const ChannelModelArgs& a, std::uint64_t seed, std::int64_t first,
                       std::int64_t count, int nt, int nr, Modulation mod, float n0,
                       const std::uint8_t* bits, cf32* h, cf32* y);
void channel_model_cuda(const ChannelModelArgs& a, std::uint64_t seed, std::int64_t first,
                        std::int64_t count, int nt, int nr, Modulation mod, float n0,
                        const std::uint8_t* bits, cf32* h, cf32* y, void* stream);

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

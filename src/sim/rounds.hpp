#pragma once
// How the ranks of a distributed simulation share a point's indices (frames, blocks), and where
// the point's stop falls (docs/sim_mpi.md). With one rank, a round is one batch and the stop is
// the single-process one.
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "mimorx/sim/distributed.hpp"

namespace mimorx::sim::detail {

// The config's communicator, or this process alone when it has none.
std::shared_ptr<Communicator> communicator_of(const std::shared_ptr<Communicator>& given);

// Round j of a point covers its indices [j T, (j + 1) T), T the sum of the ranks' batches;
// rank r takes the batch_r indices after those of ranks 0 .. r - 1. The ranks agree on it once
// (a collective), so ranks with different batches (a CPU's and a GPU's) fit together.
class RoundLayout {
 public:
  struct Share {
    std::int64_t first = 0, count = 0;
  };
  RoundLayout(Communicator& comm, std::int64_t batch);
  std::int64_t round_size() const { return total_; }
  // This rank's indices of the round that begins at `first`, none at or past `end`.
  Share share(std::int64_t first, std::int64_t end) const;

 private:
  std::int64_t offset_ = 0, batch_ = 0, total_ = 0;
};

// Sums of monotone stop counters (errors, slots) over the shares of one round: those of the
// ranks before this one (a collective; `mine` has the same length on every rank). A point stops
// at the first index, in index order, at which its counters meet a rule: with these sums every
// rank finds that index without seeing the others' items.
struct RoundSums {
  std::vector<std::int64_t> before;
};
RoundSums round_sums(Communicator& comm, std::span<const std::int64_t> mine);

}  // namespace mimorx::sim::detail

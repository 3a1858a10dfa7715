#pragma once
// How the ranks of a distributed simulation share a point's indices (frames, blocks), and where
// the point's stop falls (docs/sim_mpi.md). With one rank, a round is one batch and the stop is
// the single-process one.
#include <chrono>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "mimorx/sim/distributed.hpp"

namespace mimorx::sim::detail {

// The config's communicator, or this process alone when it has none.
std::shared_ptr<Communicator> communicator_of(const std::shared_ptr<Communicator>& given);

// The rounds of a point: round j covers the point's next indices, rank r takes the w_r of them
// after those of ranks 0 .. r - 1. w_r is at most rank r's batch (its buffers) and follows the
// ranks' measured speeds, so that every rank takes about as long for its share (dynamic
// balancing): after each round the ranks sum how many items each did and how long it worked
// (from the end of its previous round's exchange to the start of this one's, so time spent
// waiting for the others does not count), and the shares of round j + 2 follow from them. The
// lag of two rounds lets a rank queue a round while it sums the one before (CUDA's two steps in
// flight). Every rank computes the same shares from the same sums; the counts of a point do not
// depend on them (the stop is found in index order, round_sums).
class RoundLayout {
 public:
  struct Share {
    std::int64_t first = 0, count = 0;
  };
  struct Round {
    std::int64_t size = 0;  // all ranks' shares, cut at `end`
    Share mine;             // this rank's
  };
  // A collective: the ranks tell each other their batches.
  RoundLayout(Communicator& comm, std::int64_t batch);
  // A point begins: its rounds are numbered from 0.
  void begin_point();
  // Round j of the point (queued in order j = 0, 1, ...), beginning at the point's index
  // `first`, nothing at or past `end`.
  Round round(std::int64_t j, std::int64_t first, std::int64_t end) const;
  // This rank has its `items` of the point's next round (a collective, once per round, in
  // order). Round j may be queued once round j - 2 has finished.
  void finished(std::int64_t items);

 private:
  using Clock = std::chrono::steady_clock;
  std::vector<std::int64_t> widths_from_speeds() const;
  const std::vector<std::int64_t>& widths(std::int64_t j) const;

  Communicator& comm_;
  std::vector<std::int64_t> batches_;  // every rank's
  std::vector<double> speeds_;         // every rank's items per second (0: not measured yet)
  std::vector<std::int64_t> start_;    // the shares of rounds 0 and 1 of this point
  std::vector<std::vector<std::int64_t>> after_;  // after_[j]: the shares of round j + 2
  Clock::time_point last_ = Clock::now();
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

#include "sim/rounds.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace mimorx::sim::detail {

std::shared_ptr<Communicator> communicator_of(const std::shared_ptr<Communicator>& given) {
  return given ? given : single_process();
}

RoundLayout::RoundLayout(Communicator& comm, std::int64_t batch)
    : comm_(comm), batches_(std::size_t(comm.size()), 0), speeds_(std::size_t(comm.size()), 0.0) {
  batches_[std::size_t(comm.rank())] = batch;
  comm_.allreduce_sum(batches_);
  start_ = batches_;
}

void RoundLayout::begin_point() {
  if (!after_.empty()) start_ = after_.back();
  after_.clear();
}

const std::vector<std::int64_t>& RoundLayout::widths(std::int64_t j) const {
  if (comm_.size() == 1 || j < 2) return start_;
  return after_.at(std::size_t(j - 2));
}

RoundLayout::Round RoundLayout::round(std::int64_t j, std::int64_t first, std::int64_t end) const {
  const auto& w = widths(j);
  std::int64_t offset = 0, total = 0;
  for (std::size_t r = 0; r < w.size(); ++r) {
    if (int(r) < comm_.rank()) offset += w[r];
    total += w[r];
  }
  const std::int64_t begin = std::min(first + offset, end);
  const std::int64_t stop = std::min(begin + w[std::size_t(comm_.rank())], end);
  return {std::min(total, end - first), {begin, stop - begin}};
}

std::vector<std::int64_t> RoundLayout::widths_from_speeds() const {
  if (std::any_of(speeds_.begin(), speeds_.end(), [](double s) { return s <= 0; })) return batches_;
  // The longest round every rank can hold in its batch at its speed, each rank's share of it.
  double seconds = std::numeric_limits<double>::infinity();
  std::size_t limiting = 0;
  for (std::size_t r = 0; r < speeds_.size(); ++r) {
    const double s = double(batches_[r]) / speeds_[r];
    if (s < seconds) seconds = s, limiting = r;
  }
  std::vector<std::int64_t> w(batches_.size());
  for (std::size_t r = 0; r < w.size(); ++r)
    w[r] = std::clamp<std::int64_t>(std::int64_t(std::floor(speeds_[r] * seconds)), 1, batches_[r]);
  // batch / speed * speed can round below the batch: the limiting rank holds its whole batch.
  w[limiting] = batches_[limiting];
  return w;
}

void RoundLayout::finished(std::int64_t items) {
  if (comm_.size() == 1) return;  // one rank: its batch every round
  const double busy = std::chrono::duration<double>(Clock::now() - last_).count();
  // Items and busy seconds of every rank. Each element has one non-zero term, so its sum is
  // exact and the same on every rank in any reduction order: the ranks derive equal shares.
  std::vector<double> measured(2 * speeds_.size(), 0.0);
  measured[2 * std::size_t(comm_.rank())] = double(items);
  measured[2 * std::size_t(comm_.rank()) + 1] = std::max(busy, 1e-6);
  comm_.allreduce_sum(measured);
  last_ = Clock::now();
  for (std::size_t r = 0; r < speeds_.size(); ++r) {
    if (measured[2 * r] <= 0) continue;  // no share (a point's last round): nothing learnt
    const double speed = measured[2 * r] / measured[2 * r + 1];
    // Smoothed: one slow round (a point's start, a file write) moves a share halfway.
    speeds_[r] = speeds_[r] > 0 ? 0.5 * speeds_[r] + 0.5 * speed : speed;
  }
  after_.push_back(widths_from_speeds());
}

RoundSums round_sums(Communicator& comm, std::span<const std::int64_t> mine) {
  const std::size_t k = mine.size(), rank = std::size_t(comm.rank());
  std::vector<std::int64_t> all(std::size_t(comm.size()) * k, 0);
  std::copy(mine.begin(), mine.end(), all.begin() + std::ptrdiff_t(rank * k));
  comm.allreduce_sum(all);
  RoundSums s{std::vector<std::int64_t>(k, 0)};
  for (std::size_t r = 0; r < rank; ++r)
    for (std::size_t i = 0; i < k; ++i) s.before[i] += all[r * k + i];
  return s;
}

}  // namespace mimorx::sim::detail

#include "sim/rounds.hpp"

#include <algorithm>

namespace mimorx::sim::detail {

std::shared_ptr<Communicator> communicator_of(const std::shared_ptr<Communicator>& given) {
  return given ? given : single_process();
}

RoundLayout::RoundLayout(Communicator& comm, std::int64_t batch) : batch_(batch) {
  std::vector<std::int64_t> batches(std::size_t(comm.size()), 0);
  batches[std::size_t(comm.rank())] = batch;
  comm.allreduce_sum(batches);
  for (int r = 0; r < comm.size(); ++r) {
    if (r < comm.rank()) offset_ += batches[std::size_t(r)];
    total_ += batches[std::size_t(r)];
  }
}

RoundLayout::Share RoundLayout::share(std::int64_t first, std::int64_t end) const {
  const std::int64_t begin = std::min(first + offset_, end);
  return {begin, std::min(begin + batch_, end) - begin};
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

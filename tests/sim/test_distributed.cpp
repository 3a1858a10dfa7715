// The distributed simulator (sim/distributed.hpp, docs/sim_mpi.md) without MPI: N threads of
// this process, each a rank with its own share of every round, joined by a communicator of
// threads. Every rank must end with exactly the counts of one process, for ranks with equal and
// with unequal batches, with the stop rules cutting inside rounds. (The MPI communicator itself
// is tested through the CLI under mpiexec: tests/app/sim_mpi.py.)
#include <gtest/gtest.h>

#include <algorithm>
#include <barrier>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "mimorx/core/backend.hpp"
#include "mimorx/sim/coded.hpp"
#include "mimorx/sim/distributed.hpp"
#include "mimorx/sim/link.hpp"
#include "mimorx/sim/nr_link.hpp"
#include "sim/rounds.hpp"
#include "support/gpu.hpp"

namespace mimorx::sim {
namespace {

// The shared state of N thread ranks: every collective writes this rank's values into its
// slot, waits for all, reads, and waits again before the slots are reused.
class ThreadGroup {
 public:
  explicit ThreadGroup(int n)
      : n_(n), barrier_(n), ints_(std::size_t(n)), doubles_(std::size_t(n)) {}
  std::shared_ptr<Communicator> member(int rank);

  template <class T>
  void allreduce(int rank, std::vector<std::vector<T>>& slots, std::span<T> v) {
    slots[std::size_t(rank)].assign(v.begin(), v.end());
    barrier_.arrive_and_wait();
    for (std::size_t i = 0; i < v.size(); ++i) {
      T sum = 0;
      for (const auto& s : slots) sum += s.at(i);  // at(): a length mismatch fails the test
      v[i] = sum;
    }
    barrier_.arrive_and_wait();
  }
  void broadcast(int rank, std::string& text, int root) {
    if (rank == root) text_ = text;
    barrier_.arrive_and_wait();
    text = text_;
    barrier_.arrive_and_wait();
  }

  int n_;
  std::barrier<> barrier_;
  std::vector<std::vector<std::int64_t>> ints_;
  std::vector<std::vector<double>> doubles_;
  std::string text_;
};

class ThreadRank final : public Communicator {
 public:
  ThreadRank(ThreadGroup& g, int rank) : g_(g), rank_(rank) {}
  int rank() const override { return rank_; }
  int size() const override { return g_.n_; }
  int local_rank() const override { return rank_; }
  void allreduce_sum(std::span<std::int64_t> v) override { g_.allreduce(rank_, g_.ints_, v); }
  void allreduce_sum(std::span<double> v) override { g_.allreduce(rank_, g_.doubles_, v); }
  void broadcast(std::string& text, int root) override { g_.broadcast(rank_, text, root); }
  [[noreturn]] void abort(int) override { std::abort(); }

 private:
  ThreadGroup& g_;
  int rank_;
};

std::shared_ptr<Communicator> ThreadGroup::member(int rank) {
  return std::make_shared<ThreadRank>(*this, rank);
}

// Runs `rank_run(comm, rank)` on n thread ranks and returns each rank's result.
template <class R>
std::vector<R> on_ranks(int n, const std::function<R(std::shared_ptr<Communicator>, int)>& run) {
  ThreadGroup group(n);
  std::vector<R> out(static_cast<std::size_t>(n));
  std::vector<std::thread> threads;
  for (int r = 0; r < n; ++r)
    threads.emplace_back([&, r] { out[std::size_t(r)] = run(group.member(r), r); });
  for (auto& t : threads) t.join();
  return out;
}

void expect_same(const std::vector<PointResult>& a, const std::vector<PointResult>& b,
                 const std::string& what) {
  ASSERT_EQ(a.size(), b.size()) << what;
  for (std::size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].frames, b[i].frames) << what << " point " << i;
    EXPECT_EQ(a[i].bit_errors, b[i].bit_errors) << what << " point " << i;
    EXPECT_EQ(a[i].bits, b[i].bits) << what << " point " << i;
    EXPECT_EQ(a[i].symbol_errors, b[i].symbol_errors) << what << " point " << i;
    EXPECT_EQ(a[i].symbols, b[i].symbols) << what << " point " << i;
  }
}

TEST(Distributed, SingleProcessCommunicatorIsRankZeroOfOne) {
  const auto c = single_process();
  EXPECT_EQ(c->rank(), 0);
  EXPECT_EQ(c->size(), 1);
  std::vector<std::int64_t> v{3, -4};
  c->allreduce_sum(v);
  EXPECT_EQ(v, (std::vector<std::int64_t>{3, -4}));
}

// A rank that takes four times as long per item gets a smaller share of the later rounds, the
// other rank its whole batch; every rank sees the same round sizes, and the shares tile them.
TEST(Distributed, SharesFollowTheRanksSpeeds) {
  struct Seen {
    std::vector<std::int64_t> sizes, firsts, counts;
  };
  const auto seen = on_ranks<Seen>(2, [](auto comm, int rank) {
    detail::RoundLayout layout(*comm, 100);
    layout.begin_point();
    Seen s;
    std::int64_t next = 0;
    for (std::int64_t j = 0; j < 12; ++j) {
      const auto round = layout.round(j, next, 1 << 30);
      s.sizes.push_back(round.size);
      s.firsts.push_back(round.mine.first);
      s.counts.push_back(round.mine.count);
      std::this_thread::sleep_for(std::chrono::microseconds(round.mine.count * (rank ? 400 : 100)));
      layout.finished(round.mine.count);
      next += round.size;
    }
    return s;
  });
  EXPECT_EQ(seen[0].sizes, seen[1].sizes);
  std::printf("shares of the slow rank:");
  for (const auto n : seen[1].counts) std::printf(" %lld", static_cast<long long>(n));
  std::printf("\n");
  for (std::size_t j = 0; j < seen[0].sizes.size(); ++j) {
    EXPECT_EQ(seen[0].counts[j] + seen[1].counts[j], seen[0].sizes[j]) << j;
    EXPECT_EQ(seen[0].firsts[j] + seen[0].counts[j], seen[1].firsts[j]) << j;
  }
  EXPECT_EQ(seen[1].counts[0], 100);  // before any measurement: the batches
  EXPECT_EQ(seen[0].counts.back(), 100);
  EXPECT_LT(seen[1].counts.back(), 75);
  EXPECT_GE(seen[1].counts.back(), 1);
}

TEST(Distributed, UncodedRanksGetTheCountsOfOneProcess) {
  UncodedConfig c;
  c.shape = {2, 2, Modulation::qpsk};
  c.detector = "mmse";
  c.seed = test::fresh_seed();
  c.frames = 5003;
  c.min_bit_errors = 150;
  c.early_stop = true;
  const std::vector<double> snrs = {0, 6, 12, 18, 100, 100};
  c.batch = 61;
  const auto one = run_uncoded(c, Backend::cpu(), snrs);
  ASSERT_LT(one.size(), snrs.size());  // early stop at 100 dB
  EXPECT_GT(std::count_if(one.begin(), one.end(),
                          [&](const PointResult& p) { return p.bit_errors >= 150; }),
            1);
  for (int n : {2, 3}) {
    for (bool unequal : {false, true}) {
      const auto ranks = on_ranks<std::vector<PointResult>>(n, [&](auto comm, int r) {
        auto mine = c;
        mine.comm = comm;
        mine.batch = unequal ? 23 + 40 * r : 61;  // rounds of unequal shares
        return run_uncoded(mine, Backend::cpu(), snrs);
      });
      for (int r = 0; r < n; ++r)
        expect_same(one, ranks[std::size_t(r)],
                    std::to_string(n) + " ranks, rank " + std::to_string(r) +
                        (unequal ? ", unequal batches" : ""));
    }
  }
}

TEST(Distributed, CodedRanksGetTheCountsOfOneProcess) {
  CodedConfig c;
  c.shape = {2, 2, Modulation::qam16};
  c.detector = "mmse";
  c.seed = test::fresh_seed();
  c.tbs = 256;
  c.blocks = 211;
  c.batch_blocks = 5;
  c.min_block_errors = 12;
  c.early_stop = true;
  const std::vector<double> snrs = {4, 8, 10, 40, 40};
  const auto one = run_coded(c, Backend::cpu(), snrs);
  ASSERT_LT(one.size(), snrs.size());
  for (int n : {2, 3}) {
    const auto ranks = on_ranks<std::vector<CodedPointResult>>(n, [&](auto comm, int r) {
      auto mine = c;
      mine.comm = comm;
      mine.batch_blocks = 3 + 2 * r;
      return run_coded(mine, Backend::cpu(), snrs);
    });
    for (int r = 0; r < n; ++r) {
      const auto& got = ranks[std::size_t(r)];
      ASSERT_EQ(got.size(), one.size());
      for (std::size_t i = 0; i < one.size(); ++i) {
        const auto at = std::to_string(n) + " ranks, rank " + std::to_string(r) + ", point " +
                        std::to_string(i);
        EXPECT_EQ(got[i].blocks, one[i].blocks) << at;
        EXPECT_EQ(got[i].block_errors, one[i].block_errors) << at;
        EXPECT_EQ(got[i].bit_errors, one[i].bit_errors) << at;
        EXPECT_EQ(got[i].bits, one[i].bits) << at;
        EXPECT_EQ(got[i].crc_failures, one[i].crc_failures) << at;
        EXPECT_EQ(got[i].undetected_errors, one[i].undetected_errors) << at;
      }
    }
  }
}

TEST(Distributed, NrRanksGetTheCountsOfOneProcess) {
  NrLinkConfig c;
  c.slot.n_prb = 4;
  c.slot.layers = 1;
  c.n_rx = 2;
  c.mcs = 10;
  c.detector = "mmse";
  c.seed = test::fresh_seed();
  c.harq_transmissions = 2;
  c.max_slots = 53;
  c.min_block_errors = 6;
  c.batch_blocks = 4;
  c.early_stop = true;
  const std::vector<double> snrs = {0, 3, 6, 45, 45};
  const auto one = run_nr_link(c, Backend::cpu(), snrs);
  ASSERT_LT(one.size(), snrs.size());
  for (int n : {2, 3}) {
    const auto ranks = on_ranks<std::vector<NrPointResult>>(n, [&](auto comm, int r) {
      auto mine = c;
      mine.comm = comm;
      mine.batch_blocks = 2 + r;
      return run_nr_link(mine, Backend::cpu(), snrs);
    });
    for (int r = 0; r < n; ++r) {
      const auto& got = ranks[std::size_t(r)];
      ASSERT_EQ(got.size(), one.size());
      for (std::size_t i = 0; i < one.size(); ++i) {
        const auto at = std::to_string(n) + " ranks, rank " + std::to_string(r) + ", point " +
                        std::to_string(i);
        EXPECT_EQ(got[i].blocks, one[i].blocks) << at;
        EXPECT_EQ(got[i].slots, one[i].slots) << at;
        EXPECT_EQ(got[i].tx_errors, one[i].tx_errors) << at;
        EXPECT_EQ(got[i].undetected_errors, one[i].undetected_errors) << at;
        EXPECT_EQ(got[i].delivered_bits, one[i].delivered_bits) << at;
      }
    }
  }
}

// The CUDA path (two steps in flight, ranks without a share of a round, shares resized while
// rounds are queued): thread ranks on the GPUs (sharing one where there is one) get the counts
// of one process on the GPU.
TEST(DistributedGpu, RanksOnGpusGetTheCountsOfOneProcess) {
  MIMORX_REQUIRE_GPU();
  const int gpus = int(cuda_devices().size());
  UncodedConfig u;
  u.shape = {4, 4, Modulation::qam16};
  u.detector = "mmse";
  u.seed = test::fresh_seed();
  u.frames = 300007;
  u.batch = 4099;
  u.min_bit_errors = 20000;
  CodedConfig c;
  c.shape = {2, 2, Modulation::qam16};
  c.detector = "mmse";
  c.seed = u.seed;
  c.tbs = 1024;
  c.blocks = 3001;
  c.batch_blocks = 61;
  c.min_block_errors = 200;
  const std::vector<double> snrs = {4, 10, 16};
  const auto one_u = run_uncoded(u, Backend::cuda(0), snrs);
  const auto one_c = run_coded(c, Backend::cuda(0), snrs);
  for (int n : {2, 3}) {
    const auto ranks_u = on_ranks<std::vector<PointResult>>(n, [&](auto comm, int r) {
      auto mine = u;
      mine.comm = comm;
      mine.batch = 2048 + 1000 * r;
      return run_uncoded(mine, Backend::cuda(r % gpus), snrs);
    });
    for (int r = 0; r < n; ++r)
      expect_same(one_u, ranks_u[std::size_t(r)],
                  std::to_string(n) + " GPU ranks, rank " + std::to_string(r));
    const auto ranks_c = on_ranks<std::vector<CodedPointResult>>(n, [&](auto comm, int r) {
      auto mine = c;
      mine.comm = comm;
      mine.batch_blocks = 40 + 17 * r;
      return run_coded(mine, Backend::cuda(r % gpus), snrs);
    });
    for (int r = 0; r < n; ++r) {
      const auto& got = ranks_c[std::size_t(r)];
      ASSERT_EQ(got.size(), one_c.size());
      for (std::size_t i = 0; i < one_c.size(); ++i) {
        EXPECT_EQ(got[i].blocks, one_c[i].blocks)
            << n << " GPU ranks, rank " << r << " point " << i;
        EXPECT_EQ(got[i].block_errors, one_c[i].block_errors) << n << " ranks, rank " << r;
        EXPECT_EQ(got[i].bit_errors, one_c[i].bit_errors) << n << " ranks, rank " << r;
        EXPECT_EQ(got[i].crc_failures, one_c[i].crc_failures) << n << " ranks, rank " << r;
      }
    }
  }
}

}  // namespace
}  // namespace mimorx::sim

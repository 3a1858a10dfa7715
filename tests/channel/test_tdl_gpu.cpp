// TDL channels: the CUDA backend gives the CPU reference's H bit for bit (memcmp) for every
// model, correlation level, link direction, numerology and batch layout. Skips without a GPU.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "mimorx/channel/tdl.hpp"
#include "support/gpu.hpp"

namespace mimorx::channel {
namespace {

struct Case {
  std::string spec;
  int n_rx, n_tx, scs_khz, n_sc, symbols;
  TdlLink link;
  TdlSlots slots;
  std::int64_t count;
};

std::vector<cf32> run(const TdlConfig& cfg, Backend backend, std::uint64_t seed,
                      const TdlSlots& slots, std::int64_t count, std::int64_t stride) {
  TdlChannel ch(cfg, backend);
  const std::int64_t mats = count * ch.matrices_per_slot();
  const int p = cfg.n_rx * cfg.n_tx;
  auto buf = Buffer<cf32>::on(backend, std::size_t(mats * stride));
  buf.fill_bytes(0);
  ch.generate(seed, slots,
              MatrixBatch<cf32>(buf.data(), mats, cfg.n_rx, cfg.n_tx, buf.where(), stride));
  std::vector<cf32> all(buf.size()), dense(std::size_t(mats * p));
  buf.copy_to_host(all.data(), all.size());
  for (std::int64_t m = 0; m < mats; ++m) {
    std::memcpy(&dense[std::size_t(m * p)], &all[std::size_t(m * stride)], sizeof(cf32) * p);
  }
  return dense;
}

TEST(TdlGpu, BitIdenticalToCpu) {
  MIMORX_REQUIRE_GPU();
  const std::uint64_t seed = test::fresh_seed();
  const Case cases[] = {
      {"tdl-a:30:10:low", 1, 1, 15, 24, 14, TdlLink::uplink, {0, 0, 1}, 3},
      {"tdl-b:100:400:low", 2, 2, 30, 48, 14, TdlLink::uplink, {5, 2, 3}, 4},
      {"tdl-c:300:100:medium", 4, 2, 30, 36, 7, TdlLink::uplink, {1000000007, 0, 2}, 4},
      {"tdl-c:300:1200:high", 4, 4, 15, 12, 14, TdlLink::uplink, {3, 7, 1}, 2},
      {"tdl-d:30:75:high", 2, 4, 30, 60, 14, TdlLink::downlink, {0, 0, 4}, 4},
      {"tdl-e:60:300:medium", 4, 4, 30, 24, 3, TdlLink::downlink, {9, 1, 2}, 2},
      {"tdl-a:1000:10000:high", 8, 4, 30, 3276, 2, TdlLink::uplink, {2, 100000, 1}, 1},
      {"tdl-b:10:0:low", 8, 8, 15, 12, 1, TdlLink::uplink, {0, 0, 1}, 5},
      {"tdlb100-400:low", 2, 1, 15, 624, 14, TdlLink::uplink, {4, 1, 4}, 3},
      {"tdlc300-100:medium", 4, 2, 15, 624, 14, TdlLink::uplink, {0, 0, 2}, 2},
  };
  for (const Case& c : cases) {
    TdlConfig cfg = parse_tdl(c.spec);
    cfg.n_rx = c.n_rx;
    cfg.n_tx = c.n_tx;
    cfg.subcarrier_spacing_khz = c.scs_khz;
    cfg.n_subcarriers = c.n_sc;
    cfg.symbols_per_slot = c.symbols;
    cfg.link = c.link;
    const int p = c.n_rx * c.n_tx;
    const auto cpu = run(cfg, Backend::cpu(), seed, c.slots, c.count, p);
    const auto gpu = run(cfg, Backend::cuda(0), seed, c.slots, c.count, p);
    ASSERT_EQ(cpu.size(), gpu.size());
    EXPECT_EQ(std::memcmp(cpu.data(), gpu.data(), cpu.size() * sizeof(cf32)), 0) << c.spec;
    // A padded batch stride on the GPU writes the same matrices.
    const auto padded = run(cfg, Backend::cuda(0), seed, c.slots, c.count, p + 3);
    EXPECT_EQ(std::memcmp(cpu.data(), padded.data(), cpu.size() * sizeof(cf32)), 0) << c.spec;
  }
}

TEST(TdlGpu, BatchSplitMatchesOneCall) {
  MIMORX_REQUIRE_GPU();
  const std::uint64_t seed = test::fresh_seed() + 1;
  TdlConfig cfg = parse_tdl("tdl-c:300:600:high");
  cfg.n_rx = 4;
  cfg.n_tx = 2;
  cfg.n_subcarriers = 48;
  const std::size_t per = std::size_t(14 * 48 * 8);
  const auto all = run(cfg, Backend::cuda(0), seed, {20, 0, 3}, 6, 8);
  const auto tail = run(cfg, Backend::cuda(0), seed, {21, 0, 3}, 3, 8);
  EXPECT_EQ(std::memcmp(all.data() + 3 * per, tail.data(), tail.size() * sizeof(cf32)), 0);
  const auto cpu_one = run(cfg, Backend::cpu(), seed, {21, 2, 1}, 1, 8);
  EXPECT_EQ(std::memcmp(all.data() + 5 * per, cpu_one.data(), cpu_one.size() * sizeof(cf32)), 0);
}

}  // namespace
}  // namespace mimorx::channel

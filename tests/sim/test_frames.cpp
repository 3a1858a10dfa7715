// The simulator's frame generator: statistics, batch-size invariance, CPU == CUDA bit for bit.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <utility>
#include <vector>

#include "mimorx/config.hpp"
#include "mimorx/core/buffer.hpp"
#include "sim/frames.hpp"
#include "support/gpu.hpp"

namespace mimorx::sim::detail {
namespace {

struct HostFrames {
  std::vector<std::uint8_t> bits;
  std::vector<cf32> h, y;
  HostFrames(std::int64_t n, int nt, int nr, Modulation mod)
      : bits(std::size_t(n) * nt * bits_per_symbol(mod)),
        h(std::size_t(n) * nt * nr),
        y(std::size_t(n) * nr) {}
  FrameBatch batch() { return {bits.data(), h.data(), y.data()}; }
};

TEST(Frames, ChannelAndNoiseStatistics) {
  const auto seed = test::fresh_seed();
  const int nt = 2, nr = 3, n = 50000;
  const float n0 = 0.25f;
  HostFrames f(n, nt, nr, Modulation::qam16);
  make_frames_cpu(seed, 0, n, nt, nr, Modulation::qam16, n0, f.batch());
  double eh = 0, ones = 0, ey = 0;
  for (const auto& v : f.h) eh += norm2(v);
  for (auto b : f.bits) ones += b;
  for (const auto& v : f.y) ey += norm2(v);
  EXPECT_NEAR(eh / f.h.size(), 1.0, 0.02);  // E|h|^2 = 1
  EXPECT_NEAR(ones / f.bits.size(), 0.5, 0.01);
  EXPECT_NEAR(ey / f.y.size(), nt * 1.0 + n0, 0.06);  // E|y_i|^2 = nt Es + N0
}

TEST(Frames, IndependentOfBatching) {
  const auto seed = test::fresh_seed();
  const int nt = 4, nr = 4, n = 1000;
  HostFrames all(n, nt, nr, Modulation::qam64), part(n, nt, nr, Modulation::qam64);
  make_frames_cpu(seed, 0, n, nt, nr, Modulation::qam64, 0.1f, all.batch());
  for (int first = 0; first < n; first += 300) {
    const int count = std::min(300, n - first);
    FrameBatch b{part.bits.data() + first * nt * 6, part.h.data() + first * nt * nr,
                 part.y.data() + first * nr};
    make_frames_cpu(seed, first, count, nt, nr, Modulation::qam64, 0.1f, b);
  }
  EXPECT_EQ(all.bits, part.bits);
  EXPECT_EQ(0, std::memcmp(all.h.data(), part.h.data(), all.h.size() * sizeof(cf32)));
  EXPECT_EQ(0, std::memcmp(all.y.data(), part.y.data(), all.y.size() * sizeof(cf32)));
}

TEST(FramesGpu, BitIdenticalToCpu) {
  MIMORX_REQUIRE_GPU();
#if MIMORX_HAS_CUDA
  const auto seed = test::fresh_seed();
  for (Modulation mod : {Modulation::bpsk, Modulation::qam16, Modulation::qam256}) {
    const int nt = 3, nr = 4, n = 20001, m = bits_per_symbol(mod);
    HostFrames cpu(n, nt, nr, mod), back(n, nt, nr, mod);
    make_frames_cpu(seed, 7, n, nt, nr, mod, 0.3f, cpu.batch());
    auto bits = Buffer<std::uint8_t>::device(std::size_t(n) * nt * m);
    auto h = Buffer<cf32>::device(std::size_t(n) * nt * nr);
    auto y = Buffer<cf32>::device(std::size_t(n) * nr);
    make_frames_cuda(seed, 7, n, nt, nr, mod, 0.3f, {bits.data(), h.data(), y.data()}, 0, nullptr);
    bits.copy_to_host(back.bits.data(), back.bits.size());
    h.copy_to_host(back.h.data(), back.h.size());
    y.copy_to_host(back.y.data(), back.y.size());
    EXPECT_EQ(cpu.bits, back.bits);
    EXPECT_EQ(0, std::memcmp(cpu.h.data(), back.h.data(), cpu.h.size() * sizeof(cf32)));
    EXPECT_EQ(0, std::memcmp(cpu.y.data(), back.y.data(), cpu.y.size() * sizeof(cf32)));
  }
#endif
}

// The coded link's channel step: received vectors carrying given bits, CPU == CUDA.
TEST(FramesGpu, ReceivedFromBitsBitIdenticalToCpu) {
  MIMORX_REQUIRE_GPU();
#if MIMORX_HAS_CUDA
  const auto seed = test::fresh_seed();
  // nr = 4: the kernel's row pairs sharing Philox blocks; nr = 5: one row a thread.
  for (const auto& [mod, nr] :
       {std::pair{Modulation::qpsk, 5}, std::pair{Modulation::qam64, 5},
        std::pair{Modulation::qam16, 4}, std::pair{Modulation::qam256, 2}}) {
    const int nt = 4, n = 30001, m = bits_per_symbol(mod);
    std::vector<std::uint8_t> bits(std::size_t(n) * nt * m);
    for (std::size_t i = 0; i < bits.size(); ++i) bits[i] = std::uint8_t((i * 2654435761u) >> 31);
    std::vector<cf32> h(std::size_t(n) * nt * nr), y(std::size_t(n) * nr), hg(h.size()),
        yg(y.size());
    make_received_cpu(seed, 11, n, nt, nr, mod, 0.05f, bits.data(), h.data(), y.data());
    auto bd = Buffer<std::uint8_t>::device(bits.size());
    bd.copy_from_host(bits.data(), bits.size());
    auto hd = Buffer<cf32>::device(h.size());
    auto yd = Buffer<cf32>::device(y.size());
    make_received_cuda(seed, 11, n, nt, nr, mod, 0.05f, bd.data(), hd.data(), yd.data(), nullptr);
    hd.copy_to_host(hg.data(), hg.size());
    yd.copy_to_host(yg.data(), yg.size());
    EXPECT_EQ(0, std::memcmp(h.data(), hg.data(), h.size() * sizeof(cf32)));
    EXPECT_EQ(0, std::memcmp(y.data(), yg.data(), y.size() * sizeof(cf32)));
  }
#endif
}

}  // namespace
}  // namespace mimorx::sim::detail

#include <gtest/gtest.h>

#include <numeric>
#include <vector>

#include "mimorx/core/backend.hpp"
#include "mimorx/core/buffer.hpp"
#include "mimorx/core/tensor.hpp"
#include "support/gpu.hpp"

namespace mimorx {
namespace {

TEST(Buffer, HostBufferOwnsAndMoves) {
  auto a = Buffer<int>::host(1000);
  std::iota(a.span().begin(), a.span().end(), 1);
  Buffer<int> b = std::move(a);
  EXPECT_EQ(a.size(), 0u);
  EXPECT_EQ(a.data(), nullptr);
  ASSERT_EQ(b.size(), 1000u);
  EXPECT_EQ(b[999], 1000);
  auto c = Buffer<int>::host(1000);
  c.copy_from(b);
  EXPECT_EQ(c[10], 11);
  c.fill_bytes(0xFF);
  EXPECT_EQ(c[10], -1);
}

TEST(Buffer, CopyLargerThanDestinationIsRejected) {
  auto a = Buffer<float>::host(10), b = Buffer<float>::host(5);
  EXPECT_THROW(b.copy_from(a), InvalidArgument);
  std::vector<float> v(20);
  EXPECT_THROW(a.copy_from_host(v.data(), 20), InvalidArgument);
}

TEST(Backend, ParseNamesAndErrors) {
  EXPECT_TRUE(Backend::parse("cpu").is_cpu());
  EXPECT_EQ(Backend::parse("cpu").name(), "cpu");
  for (const char* bad : {"gpu", "cuda:", "cuda:x", "CPU1", ""}) {
    try {
      Backend::parse(bad);
      ADD_FAILURE() << bad;
    } catch (const InvalidArgument& e) {
      EXPECT_NE(std::string(e.what()).find("auto, cpu, cuda"), std::string::npos) << e.what();
    }
  }
  if (!cuda_available()) {
    EXPECT_THROW(Backend::parse("cuda"), Unsupported);
    EXPECT_TRUE(Backend::automatic().is_cpu());
  }
}

TEST(MatrixBatch, ColumnMajorPerMatrix) {
  auto buf = Buffer<float>::host(2 * 3 * 4);
  auto m = MatrixBatch<float>::over(buf, 2, 3, 4);
  for (int b = 0; b < 2; ++b)
    for (int j = 0; j < 4; ++j)
      for (int i = 0; i < 3; ++i) m(b, i, j) = float(100 * b + 10 * i + j);
  EXPECT_EQ(buf[0], 0.f);
  EXPECT_EQ(buf[1], 10.f);  // (0, 1, 0): next row is next element
  EXPECT_EQ(buf[3], 1.f);   // (0, 0, 1): next column after `rows` elements
  EXPECT_EQ(buf[12], 100.f);
  EXPECT_THROW(MatrixBatch<float>::over(buf, 3, 3, 4), InvalidArgument);
  EXPECT_THROW(require_shape(ConstMatrixBatch<float>(m), 2, 4, 3, "h"), InvalidArgument);
}

TEST(BufferGpu, RoundTripsThroughDeviceAndPinnedMemory) {
  MIMORX_REQUIRE_GPU();
  const int n = 1 << 16;
  auto host = Buffer<float>::pinned(n);
  for (int i = 0; i < n; ++i) host[i] = float(i) * 0.5f;
  auto dev = Buffer<float>::device(n);
  auto stream = Stream::create(0);
  dev.copy_from(host, stream);
  auto back = Buffer<float>::host(n);
  back.fill_bytes(0xFF);
  back.copy_from(dev, stream);
  stream.synchronize();
  for (int i = 0; i < n; ++i) ASSERT_EQ(back[i], float(i) * 0.5f) << i;
  EXPECT_THROW(dev.span(), InvalidArgument);
}

// A copy or fill without a stream has ended when it returns, also for work queued next on a
// non-blocking stream (plans upload their tables so, and run on such streams): a large
// pageable upload, then at once a device copy and a download on another stream.
TEST(BufferGpu, CopiesWithoutAStreamHaveEndedForOtherStreams) {
  MIMORX_REQUIRE_GPU();
  const std::size_t n = std::size_t(1) << 24;  // 64 MiB
  std::vector<float> host(n);
  auto dev = Buffer<float>::device(n);
  auto copy = Buffer<float>::device(n);
  auto back = Buffer<float>::pinned(n);
  auto stream = Stream::create(0);
  for (int round = 0; round < 8; ++round) {
    dev.fill_bytes(0);
    for (std::size_t i = 0; i < n; ++i) host[i] = float(round + 1) + float(i % 1024);
    dev.copy_from_host(host.data(), n);
    copy.copy_from(dev, stream);
    back.copy_from(copy, stream);
    stream.synchronize();
    for (std::size_t i = n; i-- > 0;)
      ASSERT_EQ(back[i], host[i]) << "round " << round << " i " << i;
  }
}

// Its own test so that scripts/device-check can leave it out of compute-sanitizer, which
// reports the failing cudaMalloc that this test provokes on purpose.
TEST(BufferGpu, OutOfMemoryIsReported) {
  MIMORX_REQUIRE_GPU();
  EXPECT_THROW(Buffer<float>::device(std::size_t(1) << 45), OutOfMemory);
}

TEST(BufferGpu, TimerMeasuresSomething) {
  MIMORX_REQUIRE_GPU();
  auto dev = Buffer<float>::device(1 << 24);
  GpuTimer t;
  t.start();
  dev.fill_bytes(0);
  t.stop();
  EXPECT_GE(t.elapsed_ms(), 0.f);
}

}  // namespace
}  // namespace mimorx

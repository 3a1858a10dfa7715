#pragma once
// GPU tests skip cleanly where no GPU exists, so CPU-only CI stays green and honest.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <random>

#include "mimorx/core/backend.hpp"

#define MIMORX_REQUIRE_GPU()                                                  \
  do {                                                                        \
    if (!::mimorx::cuda_available()) GTEST_SKIP() << "no CUDA GPU available"; \
  } while (0)

namespace mimorx::test {
// A fresh seed per run, printed so that a failure can be replayed with MIMORX_TEST_SEED=...
inline std::uint64_t fresh_seed() {
  static const std::uint64_t seed = [] {
    if (const char* s = std::getenv("MIMORX_TEST_SEED"))
      return std::uint64_t(std::strtoull(s, nullptr, 10));
    std::random_device rd;
    return (std::uint64_t(rd()) << 32) ^ rd();
  }();
  std::printf("[ seed     ] MIMORX_TEST_SEED=%llu\n", static_cast<unsigned long long>(seed));
  return seed;
}
}  // namespace mimorx::test

// Every failure message in the enclosing scope names the seed its random inputs came from, so
// that it is replayed with MIMORX_TEST_SEED=<seed> and the test's --gtest_filter.
#define MIMORX_TRACE_SEED(seed) SCOPED_TRACE(::testing::Message() << "MIMORX_TEST_SEED=" << (seed))
// std::mt19937_64 g seeded by fresh_seed(), its seed traced (MIMORX_TRACE_SEED).
#define MIMORX_SEEDED_GENERATOR(g)                             \
  const std::uint64_t g##_seed = ::mimorx::test::fresh_seed(); \
  MIMORX_TRACE_SEED(g##_seed);                                 \
  std::mt19937_64 g(g##_seed)

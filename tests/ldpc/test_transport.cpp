// The transport-block chain: TB CRC, segmentation, encoding, rate matching and back.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "mimorx/core/error.hpp"
#include "mimorx/ldpc/transport.hpp"
#include "support/gpu.hpp"

namespace mimorx::ldpc {
namespace {

std::vector<float> noiseless_llrs(const std::vector<std::uint8_t>& bits) {
  std::vector<float> l(bits.size());
  for (std::size_t i = 0; i < bits.size(); ++i) l[i] = bits[i] ? -8.f : 8.f;
  return l;
}

void round_trip(const TransportConfig& cfg, const Backend& backend, std::mt19937_64& rng) {
  TransportPlan plan(cfg, backend);
  std::vector<std::uint8_t> tb(cfg.tbs), out(cfg.tbs, 2);
  for (auto& b : tb) b = rng() & 1;
  std::vector<std::uint8_t> coded(plan.g());
  plan.encode(tb, coded);
  const auto res = plan.decode(noiseless_llrs(coded), out);
  EXPECT_TRUE(res.tb_crc_ok) << "tbs " << cfg.tbs << " R " << cfg.code_rate;
  EXPECT_EQ(res.cb_crc_ok.size(), std::size_t(plan.segmentation().c));
  for (auto ok : res.cb_crc_ok) EXPECT_EQ(ok, 1);
  EXPECT_EQ(out, tb) << "tbs " << cfg.tbs;
}

TEST(Transport, NoiselessRoundTrips) {
  std::mt19937_64 rng(test::fresh_seed());
  round_trip({.tbs = 100, .code_rate = 0.5}, Backend::cpu(), rng);   // BG2, CRC16
  round_trip({.tbs = 3824, .code_rate = 0.7}, Backend::cpu(), rng);  // BG1, one block
  round_trip({.tbs = 8448, .code_rate = 0.5, .mod = Modulation::qam16}, Backend::cpu(), rng);
  round_trip({.tbs = 8424, .code_rate = 0.9, .mod = Modulation::qam64, .layers = 2}, Backend::cpu(),
             rng);
  round_trip({.tbs = 3840, .code_rate = 0.2}, Backend::cpu(), rng);  // BG2, two blocks
  round_trip({.tbs = 25608, .code_rate = 0.6, .mod = Modulation::qam256, .rv = 2, .lbrm = true},
             Backend::cpu(), rng);
  round_trip({.tbs = 8424, .code_rate = 0.5, .rv = 3}, Backend::cpu(), rng);
}

TEST(Transport, DerivedG) {
  TransportPlan p({.tbs = 8448, .code_rate = 0.5, .mod = Modulation::qam16, .layers = 2},
                  Backend::cpu());
  // B' = 8520 -> ceil(8520 / 0.5) = 17040, a multiple of 2 x 4.
  EXPECT_EQ(p.g(), 17040);
  EXPECT_EQ(p.e().size(), 2u);
  EXPECT_EQ(p.e()[0] + p.e()[1], 17040);
  EXPECT_EQ(p.segmentation().bg, BaseGraph::bg1);
}

TEST(Transport, CorruptedBlockFailsCrc) {
  std::mt19937_64 rng(test::fresh_seed());
  TransportPlan plan({.tbs = 8448, .code_rate = 0.8}, Backend::cpu());
  std::vector<std::uint8_t> tb(8448), out(8448);
  for (auto& b : tb) b = rng() & 1;
  std::vector<std::uint8_t> coded(plan.g());
  plan.encode(tb, coded);
  auto llr = noiseless_llrs(coded);
  // Second block: pure noise.
  for (std::size_t i = plan.e()[0]; i < llr.size(); ++i) llr[i] = (rng() & 1) ? 1.f : -1.f;
  const auto res = plan.decode(llr, out);
  EXPECT_FALSE(res.tb_crc_ok);
  EXPECT_EQ(res.cb_crc_ok[0], 1);
  EXPECT_EQ(res.cb_crc_ok[1], 0);
}

TEST(Transport, HarqCombiningAcrossRvs) {
  std::mt19937_64 rng(test::fresh_seed());
  TransportPlan plan({.tbs = 2000, .code_rate = 0.9, .decoder = {.max_iters = 20}}, Backend::cpu());
  std::vector<std::uint8_t> tb(2000), out(2000);
  for (auto& b : tb) b = rng() & 1;
  std::vector<float> harq(plan.harq_size(), 0.f);
  std::normal_distribution<float> noise(0.f, 1.f);
  // QPSK at Es/N0 = 0 dB, i.e. BPSK per bit at -3 dB (capacity ~0.5): R = 0.9 fails alone; the
  // four rvs cover the whole circular buffer (Ncb = 66 x 96 = 6336, R ~0.32 after combining).
  const float sigma = std::sqrt(0.5f);
  bool first_ok = false;
  for (int rv : {0, 2, 3, 1}) {
    std::vector<std::uint8_t> coded(plan.g());
    plan.encode(tb, coded, rv);
    std::vector<float> llr(coded.size());
    for (std::size_t i = 0; i < llr.size(); ++i) {
      const float y = (coded[i] ? -1.f : 1.f) * std::sqrt(0.5f) + sigma * noise(rng);
      llr[i] = 2.f * std::sqrt(0.5f) * y / (sigma * sigma);
    }
    plan.accumulate(llr, harq, rv);
    const auto res = plan.decode_harq(harq, out);
    if (rv == 0) first_ok = res.tb_crc_ok;
  }
  const auto res = plan.decode_harq(harq, out);
  EXPECT_FALSE(first_ok);
  EXPECT_TRUE(res.tb_crc_ok);
  EXPECT_EQ(out, tb);
}

TEST(Transport, BadInput) {
  EXPECT_THROW(TransportPlan({.tbs = 0}, Backend::cpu()), InvalidArgument);
  EXPECT_THROW(TransportPlan({.tbs = 2000000}, Backend::cpu()), InvalidArgument);
  EXPECT_THROW(TransportPlan({.tbs = 8449}, Backend::cpu()), InvalidArgument);
  EXPECT_THROW(TransportPlan({.tbs = 1000, .code_rate = 0.97}, Backend::cpu()), InvalidArgument);
  EXPECT_THROW(TransportPlan({.tbs = 1000, .code_rate = 0.05}, Backend::cpu()), InvalidArgument);
  EXPECT_THROW(TransportPlan({.tbs = 1000, .rv = 4}, Backend::cpu()), InvalidArgument);
  EXPECT_THROW(TransportPlan({.tbs = 1000, .layers = 5}, Backend::cpu()), InvalidArgument);
  // The decoder settings reach the decoder (its validation names the field).
  try {
    TransportPlan({.tbs = 1000, .decoder = {.alpha_last = 1.5f}}, Backend::cpu());
    ADD_FAILURE() << "alpha_last 1.5 accepted";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("alpha_last"), std::string::npos) << e.what();
  }
  EXPECT_THROW(TransportPlan({.tbs = 1000, .mod = Modulation::qam16, .g = 1002}, Backend::cpu()),
               InvalidArgument);
  TransportPlan plan({.tbs = 1000}, Backend::cpu());
  std::vector<std::uint8_t> tb(1000), coded(plan.g());
  EXPECT_THROW(plan.encode(std::span<const std::uint8_t>(tb.data(), 999), coded), InvalidArgument);
  EXPECT_THROW(plan.encode(tb, coded, 5), InvalidArgument);
  std::vector<float> llr(plan.g(), 1.f);
  EXPECT_THROW(plan.decode(std::span<const float>(llr.data(), llr.size() - 1), tb),
               InvalidArgument);
  llr[3] = std::nanf("");
  EXPECT_THROW(plan.decode(llr, tb), InvalidArgument);
}

TEST(TransportGpu, MatchesCpu) {
  MIMORX_REQUIRE_GPU();
  std::mt19937_64 rng(test::fresh_seed());
  const TransportConfig cfg{.tbs = 25608, .code_rate = 0.6, .mod = Modulation::qam16};
  TransportPlan cpu(cfg, Backend::cpu()), gpu(cfg, Backend::cuda());
  std::vector<std::uint8_t> tb(cfg.tbs), out(cfg.tbs);
  for (auto& b : tb) b = rng() & 1;
  std::vector<std::uint8_t> a(cpu.g()), b(gpu.g());
  cpu.encode(tb, a);
  gpu.encode(tb, b);
  EXPECT_EQ(a, b);
  const auto res = gpu.decode(noiseless_llrs(b), out);
  EXPECT_TRUE(res.tb_crc_ok);
  EXPECT_EQ(out, tb);
}

}  // namespace
}  // namespace mimorx::ldpc

// Rate matching (TS 38.212 §5.4.2) and rate recovery with HARQ combining.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "mimorx/core/error.hpp"
#include "mimorx/core/rng.hpp"
#include "mimorx/ldpc/encoder.hpp"
#include "mimorx/ldpc/rate_match.hpp"
#include "support/gpu.hpp"
#if __has_include("mimorx/ldpc/decoder.hpp")
#include "mimorx/ldpc/decoder.hpp"
#define MIMORX_HAS_LDPC_DECODER 1
#else
#define MIMORX_HAS_LDPC_DECODER 0
#endif

namespace mimorx::ldpc {
namespace {

TEST(RateMatch, CircularBufferSize) {
  EXPECT_EQ(circular_buffer_size(BaseGraph::bg1, 384, 1, false, 0), 66 * 384);
  EXPECT_EQ(circular_buffer_size(BaseGraph::bg2, 384, 3, false, 0), 50 * 384);
  // LBRM: Nref = floor(10000 / (1 x 2/3)) = 15000 < N.
  EXPECT_EQ(circular_buffer_size(BaseGraph::bg1, 384, 1, true, 10000), 15000);
  // Nref = floor(10001 / (2 x 2/3)) = floor(7500.75) = 7500.
  EXPECT_EQ(circular_buffer_size(BaseGraph::bg2, 384, 2, true, 10001), 7500);
  // Nref above N: Ncb = N.
  EXPECT_EQ(circular_buffer_size(BaseGraph::bg1, 64, 1, true, 100000), 66 * 64);
}

TEST(RateMatch, StartPositionsTable5421_2) {
  const int z = 384, n1 = 66 * z, n2 = 50 * z;
  EXPECT_EQ(rv_start(BaseGraph::bg1, z, n1, 0), 0);
  EXPECT_EQ(rv_start(BaseGraph::bg1, z, n1, 1), 17 * z);
  EXPECT_EQ(rv_start(BaseGraph::bg1, z, n1, 2), 33 * z);
  EXPECT_EQ(rv_start(BaseGraph::bg1, z, n1, 3), 56 * z);
  EXPECT_EQ(rv_start(BaseGraph::bg2, z, n2, 0), 0);
  EXPECT_EQ(rv_start(BaseGraph::bg2, z, n2, 1), 13 * z);
  EXPECT_EQ(rv_start(BaseGraph::bg2, z, n2, 2), 25 * z);
  EXPECT_EQ(rv_start(BaseGraph::bg2, z, n2, 3), 43 * z);
  // LBRM, Ncb = 15000 (BG1): floor(17 x 15000 / 25344) = 10, floor(33 x ...) = 19, 56 -> 33.
  EXPECT_EQ(rv_start(BaseGraph::bg1, z, 15000, 1), 10 * z);
  EXPECT_EQ(rv_start(BaseGraph::bg1, z, 15000, 2), 19 * z);
  EXPECT_EQ(rv_start(BaseGraph::bg1, z, 15000, 3), 33 * z);
  // LBRM, Ncb = 7500 (BG2): 13 x 7500 / 19200 = 5.08, 25 -> 9.77, 43 -> 16.80.
  EXPECT_EQ(rv_start(BaseGraph::bg2, z, 7500, 1), 5 * z);
  EXPECT_EQ(rv_start(BaseGraph::bg2, z, 7500, 2), 9 * z);
  EXPECT_EQ(rv_start(BaseGraph::bg2, z, 7500, 3), 16 * z);
  EXPECT_THROW(rv_start(BaseGraph::bg1, z, n1, 4), InvalidArgument);
}

TEST(RateMatch, CodeBlockE) {
  // G = 1000, C = 3, Qm = 2: 500 symbols, 500 mod 3 = 2 -> block 0 floor, blocks 1, 2 ceil.
  EXPECT_EQ(code_block_e(1000, 3, 1, 2), (std::vector<int>{332, 334, 334}));
  EXPECT_EQ(code_block_e(1200, 3, 2, 4), (std::vector<int>{400, 400, 400}));
  // G / (Nl Qm) = 1000 / 8 = 125, mod 4 = 1 -> blocks 0..2 floor (31 x 8), block 3 ceil.
  EXPECT_EQ(code_block_e(1000, 4, 2, 4), (std::vector<int>{248, 248, 248, 256}));
  EXPECT_THROW(code_block_e(1001, 3, 1, 2), InvalidArgument);
}

// The bit selection and interleaver written straight from the text, as an oracle.
std::vector<std::uint8_t> oracle_rate_match(const RateMatchConfig& c,
                                            const std::vector<std::uint8_t>& cw) {
  const int k = (c.bg == BaseGraph::bg1 ? 22 : 10) * c.zc;
  std::vector<int> d(c.ncb);  // -1 = <NULL>
  for (int i = 0; i < c.ncb; ++i) {
    const int p = i + 2 * c.zc;
    d[i] = (p >= c.k_prime && p < k) ? -1 : cw[p];
  }
  std::vector<std::uint8_t> e;
  const int k0 = rv_start(c.bg, c.zc, c.ncb, c.rv);
  for (int j = 0; int(e.size()) < c.e; ++j) {
    const int v = d[(k0 + j) % c.ncb];
    if (v >= 0) e.push_back(std::uint8_t(v));
  }
  std::vector<std::uint8_t> f(c.e);
  for (int j = 0; j < c.e / c.qm; ++j) {
    for (int i = 0; i < c.qm; ++i) f[i + j * c.qm] = e[i * (c.e / c.qm) + j];
  }
  return f;
}

TEST(RateMatch, MatchesTextOracleEveryRvAndNcb) {
  std::mt19937_64 rng(test::fresh_seed());
  for (BaseGraph bg : {BaseGraph::bg1, BaseGraph::bg2}) {
    for (int z : {8, 36, 104}) {
      EncoderPlan enc(bg, z, Backend::cpu());
      const int k = enc.k(), n = 66 * z - (bg == BaseGraph::bg2 ? 16 * z : 0);
      for (int trial = 0; trial < 8; ++trial) {
        RateMatchConfig c{bg, z, k - int(rng() % (3 * z)), 0, 0, 0, 0};
        std::vector<std::uint8_t> info(k, 0);
        for (int i = 0; i < c.k_prime; ++i) info[i] = rng() & 1;
        std::vector<std::uint8_t> cw(enc.n());
        enc.encode(View<const std::uint8_t>(info.data(), k, Memory::host), 1,
                   View<std::uint8_t>(cw.data(), cw.size(), Memory::host));
        c.ncb = trial % 2 ? n : k - 2 * z + 1 + int(rng() % unsigned(n - k + 2 * z));
        const int qms[] = {1, 2, 4, 6, 8};
        c.qm = qms[rng() % 5];
        c.e = c.qm * (1 + int(rng() % unsigned(2 * n / c.qm)));  // up to twice Ncb: repetition
        for (int rv = 0; rv < 4; ++rv) {
          c.rv = rv;
          std::vector<std::uint8_t> out(c.e);
          rate_match(c, cw, out);
          ASSERT_EQ(out, oracle_rate_match(c, cw)) << "bg" << int(bg) << " z" << z << " rv" << rv;
        }
      }
    }
  }
}

TEST(RateMatch, RecoveryPutsLlrsBackAndCombines) {
  std::mt19937_64 rng(test::fresh_seed());
  const BaseGraph bg = BaseGraph::bg1;
  const int z = 40;
  EncoderPlan enc(bg, z, Backend::cpu());
  RateMatchConfig c{bg, z, enc.k() - 37, 66 * z, 0, 4, 0};
  c.e = 4 * 900;  // more than Ncb - F: some positions repeat
  std::vector<float> harq(enc.n(), 0.f);
  std::vector<double> want(enc.n(), 0.0);
  for (int rv : {0, 2, 3}) {
    c.rv = rv;
    const auto pos = selected_positions(c);
    std::vector<float> llr(c.e);
    for (auto& v : llr) v = float(int(rng() % 200) - 100) / 8.f;  // exact in float sums
    rate_recover(c, llr, harq);
    for (int i = 0; i < c.qm; ++i) {
      for (int j = 0; j < c.e / c.qm; ++j)
        want[2 * z + pos[i * (c.e / c.qm) + j]] += llr[i + j * c.qm];
    }
  }
  for (int p = 0; p < enc.n(); ++p) {
    if (p >= c.k_prime && p < enc.k()) {
      ASSERT_EQ(harq[p], kFillerLlr) << p;
    } else {
      ASSERT_EQ(harq[p], float(want[p])) << p;
    }
  }
  for (int p = 0; p < 2 * z; ++p) ASSERT_EQ(harq[p], 0.f);
  std::vector<float> bad(c.e, 1.f);
  bad[5] = std::nanf("");
  EXPECT_THROW(rate_recover(c, bad, harq), InvalidArgument);
  EXPECT_THROW(rate_recover(c, std::vector<float>(c.e - 1), harq), InvalidArgument);
  c.rv = 4;
  EXPECT_THROW(selected_positions(c), InvalidArgument);
}

TEST(RateMatch, HarqRv0PlusRv2DecodesWhereRv0Fails) {
#if !MIMORX_HAS_LDPC_DECODER
  GTEST_SKIP() << "mimorx/ldpc/decoder.hpp is not there yet";
#else
  const std::uint64_t seed = test::fresh_seed();
  const BaseGraph bg = BaseGraph::bg1;
  const int z = 64;
  EncoderPlan enc(bg, z, Backend::cpu());
  DecoderConfig dc{bg, z};
  dc.max_iters = 20;
  DecoderPlan dec(dc, Backend::cpu());
  // R = 1408 / 1600 = 0.88 per transmission: above the BPSK capacity at Es/N0 = 0 dB (0.72),
  // while rv0 + rv2 (3200 distinct bits, R = 0.44) is well below it.
  RateMatchConfig c{bg, z, enc.k(), 66 * z, 1600, 2, 0};
  const float n0 = float(std::pow(10.0, 0.0 / 10.0));
  const int frames = 10;
  int ok_single = 0, ok_combined = 0;
  std::mt19937_64 rng(seed);
  for (int f = 0; f < frames; ++f) {
    std::vector<std::uint8_t> info(enc.k()), cw(enc.n()), out(enc.k());
    for (auto& b : info) b = rng() & 1;
    enc.encode(View<const std::uint8_t>(info.data(), info.size(), Memory::host), 1,
               View<std::uint8_t>(cw.data(), cw.size(), Memory::host));
    std::vector<float> harq(enc.n(), 0.f);
    auto send = [&](int rv) {
      c.rv = rv;
      std::vector<std::uint8_t> bits(c.e);
      rate_match(c, cw, bits);
      std::vector<float> llr(c.e);
      for (int i = 0; i < c.e; ++i) {
        const float x = bits[i] ? -1.f : 1.f;
        const float y = x + std::sqrt(n0 / 2.f) * rng::gaussian_at(seed, f * 4 + rv, i);
        llr[i] = 4.f * y / n0;  // 2 y / sigma^2 with sigma^2 = N0 / 2 per real dimension
      }
      rate_recover(c, llr, harq);
    };
    auto decodes = [&] {
      dec.decode(View<const float>(harq.data(), harq.size(), Memory::host), 1,
                 View<std::uint8_t>(out.data(), out.size(), Memory::host));
      return out == info;
    };
    send(0);
    ok_single += decodes();
    send(2);
    ok_combined += decodes();
  }
  EXPECT_LE(ok_single, 1) << "rv0 alone should fail at this rate and SNR";
  EXPECT_GE(ok_combined, frames - 1) << "rv0 + rv2 soft-combined should decode";
#endif
}

}  // namespace
}  // namespace mimorx::ldpc

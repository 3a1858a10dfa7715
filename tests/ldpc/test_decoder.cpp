#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "ldpc/decoder_quant.hpp"
#include "mimorx/ldpc/decoder.hpp"
#include "support/gpu.hpp"
#include "test_decoder_common.hpp"

namespace mimorx::ldpc {
namespace {

using test::cview;
using test::hview;

struct Code {
  BaseGraph bg;
  int z;
  int rows;  // 0 = all
};

std::string name(const Code& c) {
  return "BG" + std::to_string(int(c.bg)) + " Z=" + std::to_string(c.z) +
         " rows=" + std::to_string(c.rows);
}

DecoderConfig make_cfg(const Code& c, DecoderAlgo algo, bool quantized, int iters = 10) {
  DecoderConfig cfg{c.bg, c.z};
  cfg.algo = algo;
  cfg.quantized = quantized;
  cfg.max_iters = iters;
  cfg.rows = c.rows;
  return cfg;
}

struct Decoded {
  std::vector<std::uint8_t> info, bits, ok;
  std::vector<int> iters;
};

Decoded run_cpu(const DecoderConfig& cfg, const std::vector<float>& llr, int num) {
  DecoderPlan plan(cfg, Backend::cpu());
  Decoded d;
  d.info.assign(std::size_t(num) * plan.k(), 0xEE);
  d.bits.assign(std::size_t(num) * plan.n(), 0xEE);
  d.iters.assign(num, -1);
  d.ok.assign(num, 0xEE);
  plan.decode(cview(llr), num, hview(d.info), hview(d.iters));
  std::vector<int> it2(num, -1);
  plan.decode_codeword(cview(llr), num, hview(d.bits), hview(it2), hview(d.ok));
  EXPECT_EQ(it2, d.iters);
  return d;
}

// Every algorithm decodes noiseless and lightly noised codewords of several codes and rates,
// small and large Z, and says so with its syndrome flag.
TEST(DecoderCpu, EncodedWordsDecodeAllAlgorithms) {
  const std::uint64_t seed = mimorx::test::fresh_seed();
  const std::vector<Code> codes = {{BaseGraph::bg1, 384, 0}, {BaseGraph::bg2, 384, 0},
                                   {BaseGraph::bg1, 2, 0},   {BaseGraph::bg2, 7, 0},
                                   {BaseGraph::bg1, 80, 6},  {BaseGraph::bg2, 52, 9},
                                   {BaseGraph::bg1, 13, 4}};
  for (const Code& c : codes) {
    const LiftedGraph g(c.bg, c.z);
    const int num = c.z >= 300 ? 3 : 8;
    const auto cw = test::random_codewords(c.bg, c.z, num, seed + c.z);
    const int rows = c.rows ? c.rows : g.base_rows();
    const int n_used = (g.info_cols() + rows) * c.z;
    const double rate = double(g.info_cols()) / (g.info_cols() + rows - 2);
    // Light noise: a word error must be rare enough never to be seen here. The tiny codes
    // (Z < 16: 100-300 bits) get 2 dB more: at 5 dB BG1 Z=2 failed once in a few hundred runs
    // (integer OMS, one word of 8).
    const double ebn0 = (rate > 0.6 ? 7.0 : 5.0) + (c.z < 16 ? 2.0 : 0.0);
    for (float sigma2 : {0.f, test::sigma2_for(ebn0, rate)}) {
      const auto llr = test::bpsk_llrs(cw, g.n(), n_used, c.z, sigma2, seed);
      for (auto algo : {DecoderAlgo::bp, DecoderAlgo::nms, DecoderAlgo::oms}) {
        for (bool q : {false, true}) {
          if (algo == DecoderAlgo::bp && q) continue;
          SCOPED_TRACE(name(c) + " sigma2=" + std::to_string(sigma2) +
                       " algo=" + std::to_string(int(algo)) + " quantized=" + std::to_string(q));
          const Decoded d = run_cpu(make_cfg(c, algo, q, 20), llr, num);
          for (int w = 0; w < num; ++w) {
            EXPECT_EQ(d.ok[w], 1) << "word " << w;
            for (int i = 0; i < n_used; ++i) {
              ASSERT_EQ(d.bits[std::size_t(w) * n_used + i], cw[std::size_t(w) * g.n() + i])
                  << "word " << w << " bit " << i;
            }
            for (int i = 0; i < g.k(); ++i) {
              ASSERT_EQ(d.info[std::size_t(w) * g.k() + i], cw[std::size_t(w) * g.n() + i]);
            }
            if (sigma2 == 0.f) {
              // Layered schedules reach the punctured columns within the first iteration;
              // flooding needs a second one (rows 0-3 touch both punctured columns).
              EXPECT_LE(d.iters[w], algo == DecoderAlgo::bp ? 2 : 1);
            }
            EXPECT_GE(d.iters[w], 1);
          }
        }
      }
    }
  }
}

// The codewords the tests decode come from the library's encoder; an encoder written from GF(2)
// linear algebra alone (test_decoder_common.hpp) must produce the same words.
TEST(DecoderCpu, LibraryEncoderAgreesWithLinearAlgebraEncoder) {
#if MIMORX_TEST_HAS_ENCODER
  const std::uint64_t seed = mimorx::test::fresh_seed();
  for (const Code c : {Code{BaseGraph::bg1, 52, 0}, Code{BaseGraph::bg2, 9, 0}}) {
    const LiftedGraph g(c.bg, c.z);
    const int num = 4;
    const auto cw = test::random_codewords(c.bg, c.z, num, seed);
    const test::ReferenceEncoder ref(c.bg, c.z);
    std::vector<std::uint8_t> mine(g.n());
    for (int w = 0; w < num; ++w) {
      ref.encode(&cw[std::size_t(w) * g.n()], mine.data());
      EXPECT_TRUE(std::equal(mine.begin(), mine.end(), cw.begin() + std::size_t(w) * g.n()));
    }
  }
#else
  GTEST_SKIP() << "no library encoder in this build";
#endif
}

// Layered NMS with full per-edge message storage, written from the textbook update without the
// compressed records, in either layer order, with a constant or an iteration-dependent alpha
// (0.5 -> 0.875 over the 8 iterations): the library must produce the same APP signs.
TEST(DecoderCpu, FloatLayeredMatchesUncompressedOracle) {
  const std::uint64_t seed = mimorx::test::fresh_seed();
  const Code c{BaseGraph::bg2, 24, 0};
  const LiftedGraph g(c.bg, c.z);
  const int num = 12;
  const auto cw = test::random_codewords(c.bg, c.z, num, seed);
  const auto llr = test::bpsk_llrs(cw, g.n(), g.n(), c.z, test::sigma2_for(1.0, 0.2), seed);
  const int rows = g.base_rows(), ext = rows - 4;
  for (auto order : {LayerOrder::extension_first, LayerOrder::natural})
    for (int variant = 0; variant < 3; ++variant) {
      const DecoderAlgo algo = variant == 1 ? DecoderAlgo::oms : DecoderAlgo::nms;
      const bool ramp = variant == 2;
      DecoderConfig cfg = make_cfg(c, algo, false, 8);
      cfg.early_termination = false;
      cfg.layer_order = order;
      if (ramp) {
        cfg.alpha = 0.5f;
        cfg.alpha_last = 0.875f;
      }
      const Decoded d = run_cpu(cfg, llr, num);
      int flips = 0;
      for (int w = 0; w < num; ++w) {
        std::vector<float> app(llr.begin() + std::size_t(w) * g.n(),
                               llr.begin() + std::size_t(w + 1) * g.n());
        std::vector<float> msg(g.edges().size() * c.z, 0.f);
        for (int it = 0; it < 8; ++it) {
          const float alpha = ramp ? float(0.5 + (0.875 - 0.5) * it / 7.0) : 0.75f;
          for (int p = 0; p < rows; ++p) {
            // extension_first: rows - 1 down to 4, then 0..3.
            const int i = order == LayerOrder::natural ? p : (p < ext ? rows - 1 - p : p - ext);
            for (int r = 0; r < c.z; ++r) {
              std::vector<float> q;
              std::vector<int> v;
              for (int e = g.row_start()[i]; e < g.row_start()[i + 1]; ++e) {
                const Edge& ed = g.edges()[e];
                v.push_back(ed.col * c.z + (r + ed.shift) % c.z);
                q.push_back(app[v.back()] - msg[e * c.z + r]);
              }
              for (std::size_t j = 0; j < q.size(); ++j) {
                float mn = std::numeric_limits<float>::max();
                bool neg = false;
                for (std::size_t o = 0; o < q.size(); ++o) {
                  if (o == j) continue;
                  mn = std::min(mn, std::abs(q[o]));
                  neg ^= q[o] < 0.f;
                }
                const float m = algo == DecoderAlgo::nms ? alpha * mn : std::max(mn - 0.5f, 0.f);
                const float rr = neg ? -m : m;
                msg[(g.row_start()[i] + j) * c.z + r] = rr;
                app[v[j]] = q[j] + rr;
              }
            }
          }
        }
        for (int i = 0; i < g.n(); ++i) {
          flips += (app[i] < 0.f) != (d.bits[std::size_t(w) * g.n() + i] == 1);
        }
      }
      EXPECT_EQ(flips, 0) << "variant " << variant << " order " << int(order);
    }
}

// The per-iteration alpha tables: a schedule from alpha to the same alpha is the constant
// decoder bit for bit (float and integer paths); a real ramp changes the decoding of noisy
// words (the first iteration's messages are scaled by 0.5 instead of 0.75).
TEST(DecoderCpu, IterationAlphaSchedule) {
  const std::uint64_t seed = mimorx::test::fresh_seed();
  const Code c{BaseGraph::bg2, 40, 0};
  const LiftedGraph g(c.bg, c.z);
  const int num = 16;
  const auto cw = test::random_codewords(c.bg, c.z, num, seed);
  const auto llr = test::bpsk_llrs(cw, g.n(), g.n(), c.z, test::sigma2_for(0.8, 0.2), seed);
  for (bool q : {false, true}) {
    DecoderConfig cfg = make_cfg(c, DecoderAlgo::nms, q, 10);
    cfg.early_termination = false;
    const Decoded constant = run_cpu(cfg, llr, num);
    cfg.alpha_last = cfg.alpha;
    const Decoded same = run_cpu(cfg, llr, num);
    EXPECT_EQ(same.bits, constant.bits) << "quantized " << q;
    // After two iterations (0.5 then 0.875 against 0.75 twice) the decisions on these noisy,
    // unconverged words differ somewhere (after ten, every word may have converged alike).
    cfg.max_iters = 2;
    cfg.alpha_last = 0.f;
    const Decoded constant2 = run_cpu(cfg, llr, num);
    cfg.alpha = 0.5f;
    cfg.alpha_last = 0.875f;
    const Decoded ramp2 = run_cpu(cfg, llr, num);
    EXPECT_NE(ramp2.bits, constant2.bits) << "quantized " << q;
  }
}

// The integer row update against values worked out by hand.
TEST(DecoderCpu, IntegerRowUpdateByHand) {
  // One row of degree 4 on Z = 1: q = L - R_old with R_old = 0.
  std::int8_t app[4] = {10, -3, 7, -120};
  detail::DecEdge e[4] = {{0, 0}, {1, 0}, {2, 0}, {3, 0}};
  detail::IntArith a;  // alpha16 = 12
  detail::IntRec rec = detail::IntArith::zero_rec();
  detail::layer_row(app, e, 4, 0, 1, rec, a);
  // min1 = 3 (idx 1), min2 = 7; scaled: (3*12)>>4 = 2, (7*12)>>4 = 5. Signs: -,- -> product +.
  // (Messages saturate at 47; none does here.)
  // R_0 = +2 (sign of others: -,+,- = +), R_1 = -5 (others +,+,- = -), R_2 = +2, R_3 = -2.
  EXPECT_EQ(app[0], 12);
  EXPECT_EQ(app[1], -8);
  EXPECT_EQ(app[2], 9);
  EXPECT_EQ(app[3], -122);
  EXPECT_EQ(detail::IntArith::message(rec, 1), -5);
  EXPECT_EQ(detail::IntArith::message(rec, 3), -2);
  // Second pass: q = L - R_old saturates at -127 before adding the new message.
  app[3] = -127;
  detail::layer_row(app, e, 4, 0, 1, rec, a);
  EXPECT_GE(app[3], -127);
  // Quantiser: round half away from zero, saturate at +-31 for 6 bits.
  EXPECT_EQ(detail::quantize_llr(1.24f, 2.f, 31), 2);
  EXPECT_EQ(detail::quantize_llr(1.25f, 2.f, 31), 3);
  EXPECT_EQ(detail::quantize_llr(-1.25f, 2.f, 31), -3);
  EXPECT_EQ(detail::quantize_llr(100.f, 2.f, 31), 31);
  EXPECT_EQ(detail::quantize_llr(-1e30f, 2.f, 31), -31);
  EXPECT_EQ(detail::quantize_llr(1.12f, 4.f, 31), 4);  // the default step 1/4
  // The message cap (47) sits above the channel limit (31): one saturated check message
  // overturns a saturated wrong channel value on a degree-1 bit. Row of degree 2, Z = 1:
  // variable 0 has channel -31 (wrong), variable 1 holds +127; alpha 1 (alpha16 16).
  std::int8_t two[2] = {-31, 127};
  detail::IntArith one;
  one.alpha16 = 16;
  detail::IntRec r2 = detail::IntArith::zero_rec();
  detail::layer_row(two, e, 2, 0, 1, r2, one);
  EXPECT_EQ(detail::IntArith::message(r2, 0), 47);
  EXPECT_EQ(two[0], 16);  // -31 + 47: decided correctly (with a cap of 31 it was 0, a tie)
}

TEST(DecoderCpu, PackedMatchesUnpacked) {
  const std::uint64_t seed = mimorx::test::fresh_seed();
  for (const Code c : {Code{BaseGraph::bg1, 2, 0}, Code{BaseGraph::bg2, 15, 0}}) {
    const LiftedGraph g(c.bg, c.z);
    const int num = 5;
    const auto cw = test::random_codewords(c.bg, c.z, num, seed);
    const auto llr = test::bpsk_llrs(cw, g.n(), g.n(), c.z, test::sigma2_for(2.0, 0.3), seed);
    DecoderPlan plan(make_cfg(c, DecoderAlgo::nms, true), Backend::cpu());
    std::vector<std::uint8_t> info(std::size_t(num) * plan.k()), packed(num * plan.packed_bytes());
    plan.decode(cview(llr), num, hview(info));
    plan.decode_packed(cview(llr), num, hview(packed));
    for (int w = 0; w < num; ++w) {
      for (int i = 0; i < plan.k(); ++i) {
        const int bit = (packed[w * plan.packed_bytes() + i / 8] >> (7 - i % 8)) & 1;
        ASSERT_EQ(bit, info[std::size_t(w) * plan.k() + i]) << "word " << w << " bit " << i;
      }
      if (plan.k() % 8) {  // the tail of the last byte is zero
        EXPECT_EQ(
            packed[w * plan.packed_bytes() + plan.packed_bytes() - 1] & (0xFF >> (plan.k() % 8)),
            0);
      }
    }
  }
}

// Early termination stops at the first iteration whose hard decision satisfies every check; on
// words that the full run also ends on a codeword, the two decisions agree.
TEST(DecoderCpu, EarlyTerminationKeepsAcceptedWords) {
  const std::uint64_t seed = mimorx::test::fresh_seed();
  const Code c{BaseGraph::bg2, 40, 0};
  const LiftedGraph g(c.bg, c.z);
  const int num = 60;
  const auto cw = test::random_codewords(c.bg, c.z, num, seed);
  const auto llr = test::bpsk_llrs(cw, g.n(), g.n(), c.z, test::sigma2_for(1.2, 0.2), seed);
  for (auto algo : {DecoderAlgo::nms, DecoderAlgo::oms, DecoderAlgo::bp}) {
    for (bool q : {false, true}) {
      if (algo == DecoderAlgo::bp && q) continue;
      DecoderConfig on = make_cfg(c, algo, q, 20), off = on;
      off.early_termination = false;
      const Decoded a = run_cpu(on, llr, num), b = run_cpu(off, llr, num);
      int compared = 0, stopped_early = 0;
      for (int w = 0; w < num; ++w) {
        EXPECT_EQ(b.iters[w], 20);
        if (a.iters[w] < 20) ++stopped_early;
        if (a.ok[w] && b.ok[w]) {
          ++compared;
          for (int i = 0; i < g.n(); ++i) {
            ASSERT_EQ(a.bits[std::size_t(w) * g.n() + i], b.bits[std::size_t(w) * g.n() + i])
                << "algo " << int(algo) << " q " << q << " word " << w;
          }
        }
      }
      EXPECT_GT(compared, num / 2);
      EXPECT_GT(stopped_early, num / 2);
    }
  }
}

TEST(DecoderCpu, BadInputIsRejected) {
  const Code c{BaseGraph::bg2, 8, 0};
  DecoderPlan plan(make_cfg(c, DecoderAlgo::nms, false), Backend::cpu());
  std::vector<float> llr(std::size_t(2) * plan.n(), 1.f);
  std::vector<std::uint8_t> info(std::size_t(2) * plan.k());
  auto expect_msg = [](auto&& f, const std::string& what) {
    try {
      f();
      ADD_FAILURE() << "no exception, expected one naming " << what;
    } catch (const InvalidArgument& e) {
      EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
    }
  };
  expect_msg([&] { plan.decode(cview(llr), 3, hview(info)); }, "llrs");
  std::vector<std::uint8_t> small(5);
  expect_msg([&] { plan.decode(cview(llr), 2, hview(small)); }, "info_bits");
  expect_msg([&] { plan.decode_packed(cview(llr), 2, hview(small)); }, "packed_info_bits");
  std::vector<int> it(3);
  expect_msg([&] { plan.decode(cview(llr), 2, hview(info), hview(it)); }, "iterations");
  llr[17] = std::numeric_limits<float>::quiet_NaN();
  expect_msg([&] { plan.decode(cview(llr), 2, hview(info)); }, "llrs");
  llr[17] = std::numeric_limits<float>::infinity();
  expect_msg([&] { plan.decode(cview(llr), 2, hview(info)); }, "llrs");
  llr[17] = 1.f;
  View<const float> wrong(llr.data(), std::int64_t(llr.size()), Memory::device);
  expect_msg([&] { plan.decode(wrong, 2, hview(info)); }, "llrs");
  expect_msg(
      [&] {
        DecoderPlan p(make_cfg({BaseGraph::bg1, 17, 0}, DecoderAlgo::nms, false), Backend::cpu());
      },
      "z");
  expect_msg(
      [&] {
        DecoderPlan p(make_cfg({BaseGraph::bg1, 0, 0}, DecoderAlgo::nms, false), Backend::cpu());
      },
      "z");
  expect_msg(
      [&] {
        DecoderPlan p(make_cfg({BaseGraph::bg1, 8, 3}, DecoderAlgo::nms, false), Backend::cpu());
      },
      "rows");
  expect_msg(
      [&] {
        DecoderPlan p(make_cfg({BaseGraph::bg2, 8, 43}, DecoderAlgo::nms, false), Backend::cpu());
      },
      "rows");
  expect_msg([&] { DecoderPlan p(make_cfg(c, DecoderAlgo::nms, false, 0), Backend::cpu()); },
             "max_iters");
  {
    DecoderConfig cfg = make_cfg(c, DecoderAlgo::nms, false);
    cfg.alpha = 1.5f;
    expect_msg([&] { DecoderPlan p(cfg, Backend::cpu()); }, "alpha");
    cfg.alpha = 0.75f;
    for (float bad : {-0.5f, 1.25f, std::numeric_limits<float>::quiet_NaN()}) {
      cfg.alpha_last = bad;
      expect_msg([&] { DecoderPlan p(cfg, Backend::cpu()); }, "alpha_last");
    }
    cfg.alpha_last = 0.f;
    cfg.llr_bits = 9;
    expect_msg([&] { DecoderPlan p(cfg, Backend::cpu()); }, "llr_bits");
    cfg.llr_bits = 6;
    cfg.codewords_per_thread = 3;
    expect_msg([&] { DecoderPlan p(cfg, Backend::cpu()); }, "codewords_per_thread");
    cfg.codewords_per_thread = 2;  // the paired kernel is integer-only
    expect_msg([&] { DecoderPlan p(cfg, Backend::cpu()); }, "codewords_per_thread");
    cfg.quantized = true;
    cfg.codewords_per_block = 3;  // and takes whole pairs
    expect_msg([&] { DecoderPlan p(cfg, Backend::cpu()); }, "codewords_per_thread");
  }
  EXPECT_THROW(DecoderPlan(make_cfg(c, DecoderAlgo::bp, true), Backend::cpu()), Unsupported);
  // Zero codewords is a valid empty batch.
  plan.decode(View<const float>(llr.data(), 0, Memory::host), 0,
              View<std::uint8_t>(info.data(), 0, Memory::host));
}

// ---------------------------------------------------------------- GPU

template <class T>
Buffer<T> to_device(const std::vector<T>& v) {
  Buffer<T> b = Buffer<T>::device(v.size());
  b.copy_from_host(v.data(), v.size());
  return b;
}
template <class T>
std::vector<T> to_host(const Buffer<T>& b) {
  std::vector<T> v(b.size());
  b.copy_to_host(v.data(), v.size());
  return v;
}

struct GpuDecoded {
  std::vector<std::uint8_t> bits, ok, packed;
  std::vector<int> iters;
};

GpuDecoded run_gpu(const DecoderConfig& cfg, const std::vector<float>& llr, int num) {
  DecoderPlan plan(cfg, Backend::cuda());
  EXPECT_GE(plan.codewords_per_block(), 1);
  auto d_llr = to_device(llr);
  Buffer<std::uint8_t> bits = Buffer<std::uint8_t>::device(std::size_t(num) * plan.n());
  Buffer<std::uint8_t> ok = Buffer<std::uint8_t>::device(num);
  Buffer<std::uint8_t> packed =
      Buffer<std::uint8_t>::device(std::size_t(num) * plan.packed_bytes());
  Buffer<int> iters = Buffer<int>::device(num);
  bits.fill_bytes(0xEE);
  packed.fill_bytes(0xEE);
  plan.decode_codeword(d_llr, num, bits, iters, ok);
  GpuDecoded g{to_host(bits), to_host(ok), {}, to_host(iters)};
  plan.decode_packed(d_llr, num, packed);
  g.packed = to_host(packed);
  return g;
}

std::vector<std::uint8_t> pack_info(const std::vector<std::uint8_t>& bits, int num, int n, int k) {
  const int bytes = (k + 7) / 8;
  std::vector<std::uint8_t> p(std::size_t(num) * bytes, 0);
  for (int w = 0; w < num; ++w) {
    for (int i = 0; i < k; ++i) {
      if (bits[std::size_t(w) * n + i]) p[std::size_t(w) * bytes + i / 8] |= 0x80 >> (i % 8);
    }
  }
  return p;
}

// The integer kernel reproduces the CPU integer decoder bit for bit: every hard decision,
// iteration count and syndrome flag, with and without early termination, NMS and OMS, codes
// where the C2V records sit in shared memory and where Np > 1.
TEST(DecoderGpu, IntegerPathBitExactWithCpu) {
  MIMORX_REQUIRE_GPU();
  const std::uint64_t seed = mimorx::test::fresh_seed();
  const std::vector<Code> codes = {{BaseGraph::bg1, 384, 0},
                                   {BaseGraph::bg1, 80, 6},
                                   {BaseGraph::bg2, 384, 0},
                                   {BaseGraph::bg2, 10, 0},
                                   {BaseGraph::bg1, 3, 0}};
  for (const Code& c : codes) {
    const LiftedGraph g(c.bg, c.z);
    const int num = c.z >= 300 ? 5 : 37;
    const auto cw = test::random_codewords(c.bg, c.z, num, seed + c.z);
    const int rows = c.rows ? c.rows : g.base_rows();
    const int n_used = (g.info_cols() + rows) * c.z;
    const double rate = double(g.info_cols()) / (g.info_cols() + rows - 2);
    // Near the waterfall, so that some words fail and iteration counts differ.
    const auto llr = test::bpsk_llrs(cw, g.n(), n_used, c.z,
                                     test::sigma2_for(rate > 0.6 ? 3.5 : 1.2, rate), seed);
    // variant 2: NMS with the iteration-dependent alpha 0.5 -> 0.875 (alpha16 8 -> 14).
    for (int variant = 0; variant < 3; ++variant) {
      const DecoderAlgo algo = variant == 1 ? DecoderAlgo::oms : DecoderAlgo::nms;
      for (bool et : {true, false}) {
        DecoderConfig cfg = make_cfg(c, algo, true, 10);
        cfg.early_termination = et;
        if (variant == 2) {
          cfg.alpha = 0.5f;
          cfg.alpha_last = 0.875f;
        }
        const Decoded cpu = run_cpu(cfg, llr, num);
        for (int per_thread : {1, 2}) {  // one codeword per thread, and the paired kernel
          SCOPED_TRACE(name(c) + " variant " + std::to_string(variant) + " et " +
                       std::to_string(et) + " codewords/thread " + std::to_string(per_thread));
          cfg.codewords_per_thread = per_thread;
          const GpuDecoded gpu = run_gpu(cfg, llr, num);
          EXPECT_EQ(gpu.iters, cpu.iters);
          EXPECT_EQ(gpu.ok, cpu.ok);
          EXPECT_EQ(gpu.bits, cpu.bits);
          EXPECT_EQ(gpu.packed, pack_info(cpu.bits, num, n_used, g.k()));
        }
      }
    }
  }
}

// The float kernel uses the CPU's operations without contraction: decisions are expected to
// agree exactly; the test allows 1 word in 20 to differ (near-ties) and prints the count.
TEST(DecoderGpu, FloatPathMatchesCpu) {
  MIMORX_REQUIRE_GPU();
  const std::uint64_t seed = mimorx::test::fresh_seed();
  const std::vector<Code> codes = {
      {BaseGraph::bg1, 384, 0}, {BaseGraph::bg1, 384, 4}, {BaseGraph::bg2, 36, 0}};
  for (const Code& c : codes) {
    const LiftedGraph g(c.bg, c.z);
    const int num = c.z >= 300 ? 4 : 40;
    const auto cw = test::random_codewords(c.bg, c.z, num, seed + c.z);
    const int rows = c.rows ? c.rows : g.base_rows();
    const int n_used = (g.info_cols() + rows) * c.z;
    const double rate = double(g.info_cols()) / (g.info_cols() + rows - 2);
    const auto llr = test::bpsk_llrs(cw, g.n(), n_used, c.z,
                                     test::sigma2_for(rate > 0.6 ? 3.5 : 1.2, rate), seed);
    for (int variant = 0; variant < 3; ++variant) {
      const DecoderAlgo algo = variant == 1 ? DecoderAlgo::oms : DecoderAlgo::nms;
      DecoderConfig cfg = make_cfg(c, algo, false, 10);
      // Single precision on both sides, whatever the automatic choice is.
      cfg.arithmetic = DecoderArithmetic::single;
      if (variant == 2) {  // iteration-dependent alpha
        cfg.alpha = 0.5f;
        cfg.alpha_last = 0.875f;
      }
      const Decoded cpu = run_cpu(cfg, llr, num);
      const GpuDecoded gpu = run_gpu(cfg, llr, num);
      int differ = 0;
      for (int w = 0; w < num; ++w) {
        bool same = gpu.iters[w] == cpu.iters[w];
        for (int i = 0; i < n_used && same; ++i) {
          same = gpu.bits[std::size_t(w) * n_used + i] == cpu.bits[std::size_t(w) * n_used + i];
        }
        differ += !same;
      }
      std::printf("[ float    ] %s variant %d: %d of %d words differ CPU vs GPU\n", name(c).c_str(),
                  variant, differ, num);
      EXPECT_LE(differ * 20, num);
    }
  }
}

TEST(DecoderGpu, NpOverrideAndBadInput) {
  MIMORX_REQUIRE_GPU();
  const std::uint64_t seed = mimorx::test::fresh_seed();
  const Code c{BaseGraph::bg1, 80, 6};
  const LiftedGraph g(c.bg, c.z);
  const int num = 29;
  const auto cw = test::random_codewords(c.bg, c.z, num, seed);
  const int n_used = 28 * 80;
  const auto llr = test::bpsk_llrs(cw, g.n(), n_used, c.z, test::sigma2_for(3.5, 22.0 / 26), seed);
  DecoderConfig cfg = make_cfg(c, DecoderAlgo::nms, true, 10);
  cfg.max_block_threads = 1024;
  const Decoded cpu = run_cpu(cfg, llr, num);
  for (int np : {1, 3, 12, 2, 8}) {  // odd: one codeword per thread, even: paired kernel
    cfg.codewords_per_block = np;
    DecoderPlan probe(cfg, Backend::cuda());
    EXPECT_EQ(probe.codewords_per_block(), np);
    EXPECT_EQ(probe.codewords_per_thread(), np % 2 ? 1 : 2);
    const GpuDecoded gpu = run_gpu(cfg, llr, num);
    EXPECT_EQ(gpu.bits, cpu.bits) << "Np " << np;
  }
  cfg.codewords_per_thread = 1;
  for (int np : {2, 12}) {
    cfg.codewords_per_block = np;
    EXPECT_EQ(run_gpu(cfg, llr, num).bits, cpu.bits) << "one per thread, Np " << np;
  }
  cfg.codewords_per_thread = 2;  // messages in the global workspace instead of shared memory
  cfg.codewords_per_block = 0;
  cfg.c2v_shared = 0;
  {
    DecoderPlan probe(cfg, Backend::cuda());
    EXPECT_FALSE(probe.c2v_in_shared());
  }
  EXPECT_EQ(run_gpu(cfg, llr, num).bits, cpu.bits) << "paired, messages in global memory";
  cfg.c2v_shared = -1;
  cfg.codewords_per_thread = 0;
  cfg.codewords_per_block = 13;  // 13 x 80 > 1024 threads
  EXPECT_THROW(DecoderPlan(cfg, Backend::cuda()), InvalidArgument);
  cfg.codewords_per_block = 26;  // paired: 13 pairs x 80 > 1024 threads
  EXPECT_THROW(DecoderPlan(cfg, Backend::cuda()), InvalidArgument);
  cfg.max_block_threads = 512;
  cfg.codewords_per_block = 6;
  EXPECT_EQ(run_gpu(cfg, llr, num).bits, cpu.bits) << "512-thread variant, Np 6";
  cfg.codewords_per_block = 7;  // 560 > 512
  EXPECT_THROW(DecoderPlan(cfg, Backend::cuda()), InvalidArgument);
  cfg.codewords_per_block = 0;
  EXPECT_THROW(DecoderPlan(make_cfg(c, DecoderAlgo::bp, false), Backend::cuda()), Unsupported);
  DecoderPlan plan(cfg, Backend::cuda());
  auto bad = llr;
  bad[1000] = std::numeric_limits<float>::quiet_NaN();
  auto d_llr = to_device(bad);
  Buffer<std::uint8_t> info = Buffer<std::uint8_t>::device(std::size_t(num) * plan.k());
  EXPECT_THROW(plan.decode(d_llr, num, info), InvalidArgument);
  std::vector<std::uint8_t> host_info(std::size_t(num) * plan.k());
  EXPECT_THROW(plan.decode(d_llr, num, hview(host_info)), InvalidArgument);  // residency
}

}  // namespace
}  // namespace mimorx::ldpc

// The half-precision pair path (decoder_half.hpp; DecoderConfig::arithmetic = half): its
// rounding against IEEE binary16 (the compiler's _Float16 where it has one), its row update
// against the float reference on values half represents exactly, whole decodes through the CPU
// model, the plan's validation, and on a GPU the f16x2 kernel bit for bit against the CPU model.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "ldpc/decoder_half.hpp"
#include "ldpc/decoder_quant.hpp"
#include "mimorx/core/buffer.hpp"
#include "mimorx/ldpc/base_graph.hpp"
#include "mimorx/ldpc/decoder.hpp"
#include "support/gpu.hpp"
#include "test_decoder_common.hpp"

namespace mimorx::ldpc {
namespace {

namespace hp = detail::hpair;
using hp::u32;
using test::cview;
using test::hview;

float lane(u32 x, int i) { return hp::half_to_float(std::uint16_t(x >> (16 * i))); }

#if defined(__FLT16_MAX__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpedantic"
// IEEE binary16 by the compiler (libgcc's conversions round to nearest even), rounded once from
// a double: the exact sum, difference or product of two halves.
std::uint16_t ref_half(double x) {
  const _Float16 h = static_cast<_Float16>(x);
  std::uint16_t b;
  std::memcpy(&b, &h, sizeof b);
  return b;
}
#pragma GCC diagnostic pop
constexpr bool kHaveFloat16 = true;
#else
std::uint16_t ref_half(double) { return 0; }
constexpr bool kHaveFloat16 = false;
#endif

TEST(DecoderHalf, FloatToHalfRoundsToNearestEven) {
  // By hand: exact values, ties to even (mantissa 10 bits), overflow, subnormals.
  EXPECT_EQ(hp::float_to_half(1.f), 0x3c00);
  EXPECT_EQ(hp::float_to_half(-2.f), 0xc000);
  EXPECT_EQ(hp::float_to_half(0.75f), 0x3a00);
  EXPECT_EQ(hp::float_to_half(1.f + 1.f / 2048), 0x3c00);          // tie -> even (down)
  EXPECT_EQ(hp::float_to_half(1.f + 3.f / 2048), 0x3c02);          // tie -> even (up)
  EXPECT_EQ(hp::float_to_half(1.f + 1.f / 2048 + 1e-6f), 0x3c01);  // above the tie
  EXPECT_EQ(hp::float_to_half(65504.f), 0x7bff);
  EXPECT_EQ(hp::float_to_half(65519.f), 0x7bff);
  EXPECT_EQ(hp::float_to_half(65520.f), 0x7c00);  // rounds to inf
  EXPECT_EQ(hp::float_to_half(16384.f), 0x7400);
  EXPECT_EQ(hp::float_to_half(-16384.f), 0xf400);
  EXPECT_EQ(hp::float_to_half(2048.f), 0x6800);
  EXPECT_EQ(hp::float_to_half(std::ldexp(1.f, -24)), 0x0001);      // least subnormal
  EXPECT_EQ(hp::float_to_half(std::ldexp(1.f, -25)), 0x0000);      // tie -> even (0)
  EXPECT_EQ(hp::float_to_half(std::ldexp(3.f, -25)), 0x0002);      // tie -> even (2)
  EXPECT_EQ(hp::float_to_half(std::ldexp(1.f, -14)), 0x0400);      // least normal
  EXPECT_EQ(hp::float_to_half(std::ldexp(1023.5f, -24)), 0x0400);  // carries into normal
  EXPECT_EQ(hp::float_to_half(-0.f), 0x8000);
  EXPECT_EQ(hp::float_to_half(std::numeric_limits<float>::denorm_min()), 0x0000);
  EXPECT_EQ(hp::float_to_half(std::numeric_limits<float>::infinity()), 0x7c00);
  // Every half converts to float and back unchanged (NaNs aside).
  for (std::uint32_t h = 0; h < 0x10000u; ++h) {
    if ((h & 0x7c00u) == 0x7c00u && (h & 0x3ffu)) continue;
    ASSERT_EQ(hp::float_to_half(hp::half_to_float(std::uint16_t(h))), h) << std::hex << h;
  }
  if (!kHaveFloat16) GTEST_SKIP() << "no _Float16 in this compiler to compare with";
  // Around every half: the value, the midpoints to its neighbours and one float ulp either side.
  for (std::uint32_t h = 0; h < 0x7c00u; ++h) {
    const float v = hp::half_to_float(std::uint16_t(h));
    const float up = hp::half_to_float(std::uint16_t(h + 1));
    const float mid = float((double(v) + double(up)) / 2);  // exact: 12 significant bits
    for (float x : {v, mid, std::nextafter(mid, 0.f), std::nextafter(mid, 1e9f)}) {
      for (float s : {x, -x}) ASSERT_EQ(hp::float_to_half(s), ref_half(s)) << s;
    }
  }
  std::mt19937 gen(mimorx::test::fresh_seed());
  for (int i = 0; i < 2000000; ++i) {
    const float x = hp::bits_float(std::uint32_t(gen()));
    if (std::isnan(x)) continue;
    ASSERT_EQ(hp::float_to_half(x), ref_half(x)) << x;
  }
}

// The host lane operations are correctly rounded half operations (the device's HADD2, HMUL2,
// HFMA2.RELU round once): against the exact result in double rounded to half once.
TEST(DecoderHalf, LaneOperationsRoundOnce) {
  if (!kHaveFloat16) GTEST_SKIP() << "no _Float16 in this compiler to compare with";
  std::mt19937 gen(mimorx::test::fresh_seed());
  auto random_half = [&] {
    // Finite halves of magnitude < 2^15, all exponents including subnormals.
    std::uint16_t h;
    do {
      h = std::uint16_t(gen());
    } while ((h & 0x7c00u) >= 0x7800u);
    return h;
  };
  for (int i = 0; i < 500000; ++i) {
    const std::uint16_t a = random_half(), b = random_half();
    const double x = hp::half_to_float(a), y = hp::half_to_float(b);
    const u32 pa = u32(a) * 0x10001u, pb = u32(b) * 0x10001u;
    ASSERT_EQ(hp::hadd(pa, pb), u32(ref_half(x + y)) * 0x10001u) << x << " + " << y;
    ASSERT_EQ(hp::hsub(pa, pb), u32(ref_half(x - y)) * 0x10001u) << x << " - " << y;
    ASSERT_EQ(hp::hmul(pa, pb), u32(ref_half(x * y)) * 0x10001u) << x << " * " << y;
    const std::uint16_t relu = x - y > 0 ? ref_half(x - y) : std::uint16_t(0);
    if (!std::signbit(x) && !std::signbit(y)) {
      ASSERT_EQ(hp::hsub_relu(pa, pb), u32(relu) * 0x10001u) << x << " relu- " << y;
    }
    const u32 mx = hp::min_xorsign_abs(pa, pb);
    EXPECT_EQ(lane(mx, 0),
              std::min(std::fabs(x), std::fabs(y)) * (std::signbit(x) != std::signbit(y) ? -1 : 1));
  }
}

// One row of degree 2..19 (fixed-degree and in-place versions) against the float layered
// update (layer_row with compressed records) on values whose every intermediate half holds
// exactly (multiples of 1/4 up to 32, alpha in {1/2, 3/4, 1}, beta a multiple of 1/4): APP and
// messages equal, for both lanes.
TEST(DecoderHalf, RowUpdateMatchesFloatReferenceOnExactValues) {
  const std::uint64_t seed = mimorx::test::fresh_seed();
  std::mt19937_64 gen(seed);
  auto uni = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(gen); };
  for (int trial = 0; trial < 20000; ++trial) {
    const int deg = uni(2, 19);
    detail::FloatArith a;
    a.offset = uni(0, 1) == 1;
    a.alpha = float(uni(2, 4)) / 4;
    a.beta = float(uni(0, 8)) / 4;
    const hp::Scale sc = hp::make_scale(a.alpha, a.beta, a.offset);
    std::vector<detail::DecEdge> e(deg);
    std::vector<hp::HalfEdge> pe(deg);
    for (int j = 0; j < deg; ++j) {
      e[j] = detail::DecEdge{j, 0};
      pe[j] = hp::half_edge(e[j], 1);
    }
    float app[2][19];
    detail::FloatRec rec[2];
    std::vector<u32> papp(deg), pmsg(deg);
    for (int c = 0; c < 2; ++c) {
      for (int j = 0; j < deg; ++j) app[c][j] = float(uni(-128, 128)) / 4;
      const int m1 = uni(0, 128), m2 = uni(m1, 128);
      rec[c] = detail::FloatArith::make_rec(float(m1) / 4, float(m2) / 4, uni(0, deg - 1),
                                            std::uint32_t(uni(0, 1)),
                                            std::uint32_t(gen()) & ((1u << deg) - 1u));
    }
    for (int j = 0; j < deg; ++j) {
      papp[j] = hp::pack_halves(app[0][j], app[1][j]);
      pmsg[j] = hp::pack_halves(detail::FloatArith::message(rec[0], j),
                                detail::FloatArith::message(rec[1], j));
    }
    for (int c = 0; c < 2; ++c) detail::layer_row(app[c], e.data(), deg, 0, 1, rec[c], a);
    if (trial % 2) {
      hp::row_update<true>(papp.data(), pmsg.data(), 1, pe.data(), deg, 0, 1, sc);
    } else {
      hp::row_update<false>(papp.data(), pmsg.data(), 1, pe.data(), deg, 0, 1, sc);
    }
    for (int c = 0; c < 2; ++c) {
      for (int j = 0; j < deg; ++j) {
        ASSERT_EQ(lane(papp[j], c), app[c][j])
            << "seed " << seed << " trial " << trial << " edge " << j << " lane " << c;
        ASSERT_EQ(lane(pmsg[j], c), detail::FloatArith::message(rec[c], j))
            << "seed " << seed << " trial " << trial << " edge " << j << " lane " << c;
      }
    }
  }
}

// The bounds: APP at +-16384 and messages at the cap stay finite and clamped; a huge channel
// value is clamped on the way in.
TEST(DecoderHalf, ClampsKeepEveryValueFinite) {
  const hp::Scale sc = hp::make_scale(1.f, 0.f, false);
  const int deg = 3;
  std::vector<hp::HalfEdge> pe(deg);
  for (int j = 0; j < deg; ++j) pe[j] = hp::half_edge(detail::DecEdge{j, 0}, 1);
  std::vector<u32> app(deg, hp::kLlrMaxBits), msg(deg, hp::kMsgMaxBits | hp::kSignBits);
  for (int rep = 0; rep < 5; ++rep) {
    hp::row_update<false>(app.data(), msg.data(), 1, pe.data(), deg, 0, 1, sc);
    for (int j = 0; j < deg; ++j) {
      EXPECT_EQ(lane(app[j], 0), 16384.f);
      EXPECT_EQ(lane(msg[j], 1), 2048.f);  // capped
    }
  }
  EXPECT_EQ(hp::clamp_channel(1e30f), 16384.f);
  EXPECT_EQ(hp::clamp_channel(-1e30f), -16384.f);
  EXPECT_EQ(hp::clamp_channel(3.5f), 3.5f);
}

struct Code {
  BaseGraph bg;
  int z;
  int rows;  // 0 = all
};

std::string name(const Code& c) {
  return "BG" + std::to_string(int(c.bg)) + " Z=" + std::to_string(c.z) +
         " rows=" + std::to_string(c.rows);
}

DecoderConfig half_cfg(const Code& c, DecoderAlgo algo, bool et = true) {
  DecoderConfig cfg{c.bg, c.z};
  cfg.algo = algo;
  cfg.rows = c.rows;
  cfg.early_termination = et;
  cfg.arithmetic = DecoderArithmetic::half;
  return cfg;
}

struct Decoded {
  std::vector<std::uint8_t> info, bits, ok, packed;
  std::vector<int> iters;
};

Decoded run_cpu(const DecoderConfig& cfg, const std::vector<float>& llr, int num) {
  DecoderPlan plan(cfg, Backend::cpu());
  EXPECT_EQ(plan.arithmetic(), DecoderArithmetic::half);
  Decoded d;
  d.info.assign(std::size_t(num) * plan.k(), 0xEE);
  d.bits.assign(std::size_t(num) * plan.n(), 0xEE);
  d.packed.assign(std::size_t(num) * plan.packed_bytes(), 0xEE);
  d.iters.assign(num, -1);
  d.ok.assign(num, 0xEE);
  plan.decode(cview(llr), num, hview(d.info));
  plan.decode_codeword(cview(llr), num, hview(d.bits), hview(d.iters), hview(d.ok));
  plan.decode_packed(cview(llr), num, hview(d.packed));
  return d;
}

// Noiseless and lightly noised codewords (BG1 and BG2, small, odd and large Z, full and partial
// rows, NMS, OMS and the alpha ramp) decode to the transmitted word with a satisfied syndrome;
// unpacked, packed and whole-codeword outputs agree.
TEST(DecoderHalf, EncodedWordsDecode) {
  const std::uint64_t seed = mimorx::test::fresh_seed();
  const std::vector<Code> codes = {{BaseGraph::bg1, 2, 0},  {BaseGraph::bg2, 7, 0},
                                   {BaseGraph::bg1, 13, 0}, {BaseGraph::bg1, 80, 6},
                                   {BaseGraph::bg2, 52, 9}, {BaseGraph::bg1, 384, 4}};
  for (const Code& c : codes) {
    const LiftedGraph g(c.bg, c.z);
    const int rows = c.rows ? c.rows : g.base_rows();
    const int n_used = (g.info_cols() + rows) * c.z;
    const int num = c.z >= 300 ? 3 : 9;
    const auto cw = test::random_codewords(c.bg, c.z, num, seed + c.z);
    const double rate = double(g.info_cols()) / (g.info_cols() + rows - 2);
    // The light noise of DecoderCpu.EncodedWordsDecodeAllAlgorithms (20 iterations).
    const double ebn0 = (rate > 0.6 ? 7.0 : 5.0) + (c.z < 16 ? 2.0 : 0.0);
    for (float sigma2 : {0.f, test::sigma2_for(ebn0, rate)}) {
      const auto llr = test::bpsk_llrs(cw, g.n(), n_used, c.z, sigma2, seed + 7);
      for (int variant = 0; variant < 3; ++variant) {
        SCOPED_TRACE(name(c) + " sigma2 " + std::to_string(sigma2) + " variant " +
                     std::to_string(variant));
        DecoderConfig cfg = half_cfg(c, variant == 1 ? DecoderAlgo::oms : DecoderAlgo::nms);
        cfg.max_iters = 20;
        if (variant == 2) {
          cfg.alpha = 0.5f;
          cfg.alpha_last = 0.875f;
        }
        const Decoded d = run_cpu(cfg, llr, num);
        for (int w = 0; w < num; ++w) {
          EXPECT_EQ(d.ok[w], 1) << "word " << w;
          EXPECT_LE(d.iters[w], sigma2 == 0.f ? 1 : 20) << "word " << w;
          for (int i = 0; i < n_used; ++i) {
            ASSERT_EQ(d.bits[std::size_t(w) * n_used + i], cw[std::size_t(w) * g.n() + i])
                << "word " << w << " bit " << i;
          }
          for (int i = 0; i < g.k(); ++i) {
            ASSERT_EQ(d.info[std::size_t(w) * g.k() + i], cw[std::size_t(w) * g.n() + i]);
            const std::uint8_t byte = d.packed[std::size_t(w) * ((g.k() + 7) / 8) + i / 8];
            ASSERT_EQ((byte >> (7 - i % 8)) & 1, cw[std::size_t(w) * g.n() + i]);
          }
        }
      }
    }
  }
}

// Early termination only stops words whose syndrome holds: with it, every word reports a
// satisfied syndrome at an iteration no later than without it, and a word that was satisfied at
// the end without it is satisfied with it.
TEST(DecoderHalf, EarlyTerminationStopsSatisfiedWords) {
  const std::uint64_t seed = mimorx::test::fresh_seed();
  const Code c{BaseGraph::bg2, 20, 0};
  const LiftedGraph g(c.bg, c.z);
  const int num = 24;
  const auto cw = test::random_codewords(c.bg, c.z, num, seed);
  const auto llr =
      test::bpsk_llrs(cw, g.n(), g.n(), c.z, test::sigma2_for(1.0, 10.0 / 50.0), seed + 1);
  const Decoded et = run_cpu(half_cfg(c, DecoderAlgo::nms, true), llr, num);
  const Decoded full = run_cpu(half_cfg(c, DecoderAlgo::nms, false), llr, num);
  int stopped = 0;
  for (int w = 0; w < num; ++w) {
    EXPECT_EQ(full.iters[w], 10);
    if (et.iters[w] < 10) {
      ++stopped;
      EXPECT_EQ(et.ok[w], 1) << "word " << w;
    }
  }
  EXPECT_GT(stopped, 0);
}

TEST(DecoderHalf, BadInputIsRejected) {
  const Code c{BaseGraph::bg2, 8, 0};
  auto expect_msg = [](auto&& f, const std::string& what) {
    try {
      f();
      ADD_FAILURE() << "no exception, expected one naming " << what;
    } catch (const InvalidArgument& e) {
      EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
    }
  };
  DecoderConfig cfg = half_cfg(c, DecoderAlgo::nms);
  cfg.quantized = true;
  expect_msg([&] { DecoderPlan p(cfg, Backend::cpu()); }, "arithmetic");
  cfg.quantized = false;
  cfg.codewords_per_thread = 1;
  expect_msg([&] { DecoderPlan p(cfg, Backend::cpu()); }, "codewords_per_thread");
  cfg.codewords_per_thread = 0;
  cfg.codewords_per_block = 3;
  expect_msg([&] { DecoderPlan p(cfg, Backend::cpu()); }, "codewords_per_block");
  cfg.codewords_per_block = 0;
  cfg.c2v_records = 2;
  expect_msg([&] { DecoderPlan p(cfg, Backend::cpu()); }, "c2v_records");
  cfg.c2v_records = 1;
  cfg.c2v_shared = 1;  // records live in the global workspace
  expect_msg([&] { DecoderPlan p(cfg, Backend::cpu()); }, "c2v_records");
  cfg.c2v_shared = -1;
  EXPECT_FALSE(DecoderPlan(cfg, Backend::cpu()).c2v_records());  // the CPU has no workspace
  DecoderConfig single_path = cfg;
  single_path.arithmetic = DecoderArithmetic::single;  // one layout: no choice to make
  expect_msg([&] { DecoderPlan p(single_path, Backend::cpu()); }, "c2v_records");
  single_path.c2v_records = 0;
  expect_msg([&] { DecoderPlan p(single_path, Backend::cpu()); }, "c2v_records");
  cfg.c2v_records = -1;
  cfg.arithmetic = DecoderArithmetic(7);
  expect_msg([&] { DecoderPlan p(cfg, Backend::cpu()); }, "arithmetic");
  EXPECT_THROW(DecoderPlan(half_cfg(c, DecoderAlgo::bp), Backend::cpu()), Unsupported);
  expect_msg([] { parse_decoder_arithmetic("quarter"); }, "arithmetic");
  EXPECT_EQ(parse_decoder_arithmetic("half"), DecoderArithmetic::half);
  EXPECT_EQ(parse_decoder_arithmetic("single"), DecoderArithmetic::single);
  EXPECT_EQ(parse_decoder_arithmetic("auto"), DecoderArithmetic::automatic);
  // The automatic choice and the explicit single keep the float path.
  DecoderConfig single = half_cfg(c, DecoderAlgo::nms);
  single.arithmetic = DecoderArithmetic::automatic;
  EXPECT_EQ(DecoderPlan(single, Backend::cpu()).arithmetic(), DecoderArithmetic::single);
  DecoderPlan plan(half_cfg(c, DecoderAlgo::nms), Backend::cpu());
  std::vector<float> llr(std::size_t(2) * plan.n(), 1.f);
  std::vector<std::uint8_t> info(std::size_t(2) * plan.k());
  llr[5] = std::numeric_limits<float>::quiet_NaN();
  expect_msg([&] { plan.decode(cview(llr), 2, hview(info)); }, "llrs");
  llr[5] = -std::numeric_limits<float>::infinity();
  expect_msg([&] { plan.decode(cview(llr), 2, hview(info)); }, "llrs");
  std::vector<std::int8_t> q(llr.size(), 1);
  expect_msg([&] { plan.decode(cview(q), 2, hview(info)); }, "llrs");  // int8: integer path only
  std::vector<std::uint8_t> small(3);
  expect_msg([&] { plan.decode(cview(llr), 2, hview(small)); }, "info_bits");
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

Decoded run_gpu(const DecoderConfig& cfg, const std::vector<float>& llr, int num) {
  DecoderPlan plan(cfg, Backend::cuda());
  EXPECT_EQ(plan.arithmetic(), DecoderArithmetic::half);
  EXPECT_EQ(plan.codewords_per_thread(), 2);
  auto d_llr = to_device(llr);
  Buffer<std::uint8_t> info = Buffer<std::uint8_t>::device(std::size_t(num) * plan.k());
  Buffer<std::uint8_t> bits = Buffer<std::uint8_t>::device(std::size_t(num) * plan.n());
  Buffer<std::uint8_t> packed =
      Buffer<std::uint8_t>::device(std::size_t(num) * plan.packed_bytes());
  Buffer<std::uint8_t> ok = Buffer<std::uint8_t>::device(num);
  Buffer<int> iters = Buffer<int>::device(num);
  info.fill_bytes(0xEE);
  bits.fill_bytes(0xEE);
  packed.fill_bytes(0xEE);
  plan.decode(d_llr, num, info);
  plan.decode_codeword(d_llr, num, bits, iters, ok);
  plan.decode_packed(d_llr, num, packed);
  return Decoded{to_host(info), to_host(bits), to_host(ok), to_host(packed), to_host(iters)};
}

// The f16x2 kernel reproduces the CPU half model bit for bit: hard decisions (unpacked, packed,
// whole codeword), iteration counts and syndrome flags, on noisy words near the waterfall, NMS,
// OMS and the alpha ramp, with and without early termination; BG1 and BG2, Z from 3 to 384 (odd
// ones too), full and partial rows (odd-degree rows in both graphs), both block sizes, the
// three message layouts (full messages in shared memory, full messages and compressed records
// in the global workspace), and odd batch sizes (a lone codeword in the last pair).
TEST(DecoderGpu, HalfPathBitExactWithCpuModel) {
  MIMORX_REQUIRE_GPU();
  const std::uint64_t seed = mimorx::test::fresh_seed();
  struct Case {
    Code c;
    int max_block_threads, c2v_shared, c2v_records;
  };
  const std::vector<Case> cases = {
      {{BaseGraph::bg1, 384, 0}, 0, -1, -1},
      {{BaseGraph::bg1, 384, 4}, 0, -1, -1},
      {{BaseGraph::bg1, 384, 13}, 1024, -1, -1},
      {{BaseGraph::bg1, 80, 6}, 0, -1, -1},
      {{BaseGraph::bg1, 80, 6}, 1024, 0, -1},
      {{BaseGraph::bg2, 384, 0}, 0, -1, -1},
      {{BaseGraph::bg2, 384, 7}, 0, -1, -1},
      {{BaseGraph::bg2, 15, 0}, 0, 1, -1},
      {{BaseGraph::bg1, 3, 0}, 512, -1, -1},
      {{BaseGraph::bg1, 13, 20}, 0, 0, -1},
      // Both global layouts forced, whatever the L2 size: degree-19 rows in both block sizes.
      {{BaseGraph::bg1, 384, 0}, 0, -1, 0},
      {{BaseGraph::bg1, 384, 4}, 0, -1, 1},
      {{BaseGraph::bg1, 80, 6}, 1024, 0, 1},
      {{BaseGraph::bg1, 13, 20}, 512, 0, 1},
      {{BaseGraph::bg2, 384, 7}, 0, 0, 0},
      {{BaseGraph::bg2, 40, 0}, 0, 0, 1}};
  for (const Case& k : cases) {
    const Code& c = k.c;
    const LiftedGraph g(c.bg, c.z);
    const int num = c.z >= 300 ? 5 : 27;
    const auto cw = test::random_codewords(c.bg, c.z, num, seed + c.z);
    const int rows = c.rows ? c.rows : g.base_rows();
    const int n_used = (g.info_cols() + rows) * c.z;
    const double rate = double(g.info_cols()) / (g.info_cols() + rows - 2);
    const auto llr = test::bpsk_llrs(cw, g.n(), n_used, c.z,
                                     test::sigma2_for(rate > 0.6 ? 3.0 : 1.0, rate), seed + 3);
    for (int variant = 0; variant < 3; ++variant) {
      for (bool et : {true, false}) {
        SCOPED_TRACE(name(c) + " block " + std::to_string(k.max_block_threads) + " c2v_shared " +
                     std::to_string(k.c2v_shared) + " c2v_records " +
                     std::to_string(k.c2v_records) + " variant " + std::to_string(variant) +
                     " et " + std::to_string(et));
        DecoderConfig cfg = half_cfg(c, variant == 1 ? DecoderAlgo::oms : DecoderAlgo::nms, et);
        if (variant == 2) {
          cfg.alpha = 0.5f;
          cfg.alpha_last = 0.875f;
        }
        cfg.max_block_threads = k.max_block_threads;
        cfg.c2v_shared = k.c2v_shared;
        cfg.c2v_records = k.c2v_records;
        if (k.c2v_records != -1) {
          const DecoderPlan probe(cfg, Backend::cuda());
          EXPECT_FALSE(probe.c2v_in_shared());
          EXPECT_EQ(probe.c2v_records(), k.c2v_records == 1);
        }
        const Decoded cpu = run_cpu(cfg, llr, num);
        const Decoded gpu = run_gpu(cfg, llr, num);
        EXPECT_EQ(gpu.iters, cpu.iters);
        EXPECT_EQ(gpu.ok, cpu.ok);
        EXPECT_EQ(gpu.bits, cpu.bits);
        EXPECT_EQ(gpu.info, cpu.info);
        EXPECT_EQ(gpu.packed, cpu.packed);
      }
    }
  }
}

TEST(DecoderGpu, HalfPathBadInput) {
  MIMORX_REQUIRE_GPU();
  const Code c{BaseGraph::bg1, 80, 6};
  DecoderPlan plan(half_cfg(c, DecoderAlgo::nms), Backend::cuda());
  const int num = 3;
  std::vector<float> llr(std::size_t(num) * plan.n(), 1.f);
  llr[100] = std::numeric_limits<float>::quiet_NaN();
  auto d_llr = to_device(llr);
  Buffer<std::uint8_t> info = Buffer<std::uint8_t>::device(std::size_t(num) * plan.k());
  EXPECT_THROW(plan.decode(d_llr, num, info), InvalidArgument);
  DecoderConfig cfg = half_cfg(c, DecoderAlgo::nms);
  cfg.codewords_per_block = 26;  // 13 pairs x 80 > 1024 threads
  EXPECT_THROW(DecoderPlan(cfg, Backend::cuda()), InvalidArgument);
  cfg.codewords_per_block = 4;
  EXPECT_EQ(DecoderPlan(cfg, Backend::cuda()).codewords_per_block(), 4);
}

}  // namespace
}  // namespace mimorx::ldpc

// Pre-quantised (int8) channel LLRs: DecoderPlan::quantize_llrs and the int8 overloads of
// decode / decode_packed / decode_codeword. The int8 input must decode exactly as the float
// LLRs it was quantised from, on the CPU and on both CUDA kernels, and saturate values beyond
// the channel range.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <limits>
#include <string>
#include <tuple>
#include <vector>

#include "ldpc/decoder_quant.hpp"
#include "mimorx/core/buffer.hpp"
#include "mimorx/ldpc/decoder.hpp"
#include "support/gpu.hpp"
#include "test_decoder_common.hpp"

namespace mimorx::ldpc {
namespace {

using test::cview;
using test::hview;

struct Words {
  DecoderConfig cfg;
  int num = 0;
  std::vector<float> llr;
};

// Words near the waterfall of a code (some fail, iteration counts differ) on the integer path.
Words noisy_words(BaseGraph bg, int z, int rows, int num, double ebn0, std::uint64_t seed) {
  Words w{DecoderConfig{bg, z}, num, {}};
  w.cfg.quantized = true;
  w.cfg.rows = rows;
  const LiftedGraph g(bg, z);
  const int used_rows = rows ? rows : g.base_rows();
  const int n_used = (g.info_cols() + used_rows) * z;
  const double rate = double(g.info_cols()) / (g.info_cols() + used_rows - 2);
  const auto cw = test::random_codewords(bg, z, num, seed);
  w.llr = test::bpsk_llrs(cw, g.n(), n_used, z, test::sigma2_for(ebn0, rate), seed + 1);
  return w;
}

struct Out {
  std::vector<std::uint8_t> info, packed, bits, ok;
  std::vector<int> iters;
  bool operator==(const Out&) const = default;
};

// All three outputs from float or int8 LLRs in host or device memory (the plan's backend).
template <class In>
Out decode_all(DecoderPlan& plan, const std::vector<In>& llr, int num) {
  Out o;
  o.info.assign(std::size_t(num) * plan.k(), 0xEE);
  o.packed.assign(std::size_t(num) * plan.packed_bytes(), 0xEE);
  o.bits.assign(std::size_t(num) * plan.n(), 0xEE);
  o.ok.assign(num, 0xEE);
  o.iters.assign(num, -1);
  if (plan.backend().is_cpu()) {
    const View<const In> in(llr.data(), std::int64_t(llr.size()), Memory::host);
    plan.decode(in, num, hview(o.info));
    plan.decode_packed(in, num, hview(o.packed));
    plan.decode_codeword(in, num, hview(o.bits), hview(o.iters), hview(o.ok));
    return o;
  }
  Buffer<In> d_llr = Buffer<In>::device(llr.size());
  d_llr.copy_from_host(llr.data(), llr.size());
  auto info = Buffer<std::uint8_t>::device(o.info.size());
  auto packed = Buffer<std::uint8_t>::device(o.packed.size());
  auto bits = Buffer<std::uint8_t>::device(o.bits.size());
  auto ok = Buffer<std::uint8_t>::device(o.ok.size());
  auto iters = Buffer<int>::device(o.iters.size());
  const View<const In> in(d_llr.data(), std::int64_t(llr.size()), Memory::device);
  plan.decode(in, num, info);
  plan.decode_packed(in, num, packed);
  plan.decode_codeword(in, num, bits, iters, ok);
  info.copy_to_host(o.info.data(), o.info.size());
  packed.copy_to_host(o.packed.data(), o.packed.size());
  bits.copy_to_host(o.bits.data(), o.bits.size());
  ok.copy_to_host(o.ok.data(), o.ok.size());
  iters.copy_to_host(o.iters.data(), o.iters.size());
  return o;
}

std::vector<std::int8_t> quantized(const DecoderPlan& plan, const std::vector<float>& llr) {
  std::vector<std::int8_t> q(llr.size());
  plan.quantize_llrs(cview(llr), View<std::int8_t>(q.data(), std::int64_t(q.size()), Memory::host));
  return q;
}

TEST(DecoderInt8Cpu, QuantizerMatchesTheIntegerPath) {
  DecoderConfig cfg{BaseGraph::bg2, 10};
  cfg.quantized = true;
  cfg.llr_bits = 5;      // limit 15
  cfg.llr_scale = 2.0f;  // step 1/2
  DecoderPlan plan(cfg, Backend::cpu());
  const std::vector<float> x = {0.f,   0.24f, 0.25f, -0.25f, 0.74f, 1.0f,
                                -3.3f, 7.4f,  7.6f,  -100.f, 1e30f};
  const std::vector<std::int8_t> want = {0, 0, 1, -1, 1, 2, -7, 15, 15, -15, 15};
  EXPECT_EQ(quantized(plan, x), want);
  for (float v : x) {
    EXPECT_EQ(detail::quantize_llr(v, 2.0f, 15), quantized(plan, {v})[0]) << v;
  }
  std::vector<std::int8_t> out(3);
  const std::vector<float> nan = {0.f, std::numeric_limits<float>::quiet_NaN(), 1.f};
  EXPECT_THROW(plan.quantize_llrs(cview(nan), View<std::int8_t>(out.data(), 3, Memory::host)),
               InvalidArgument);
  EXPECT_THROW(plan.quantize_llrs(cview(nan), View<std::int8_t>(out.data(), 2, Memory::host)),
               InvalidArgument);
}

// Every output from int8 LLRs equals the output from the float LLRs they were quantised from;
// NMS, OMS, the alpha ramp, early termination on and off, several codes and rates.
TEST(DecoderInt8Cpu, SameDecodingAsFloatLlrs) {
  const std::uint64_t seed = mimorx::test::fresh_seed();
  for (const auto& [bg, z, rows, ebn0] :
       std::vector<std::tuple<BaseGraph, int, int, double>>{{BaseGraph::bg1, 80, 6, 3.5},
                                                            {BaseGraph::bg2, 52, 0, 1.2},
                                                            {BaseGraph::bg1, 7, 0, 2.0}}) {
    Words w = noisy_words(bg, z, rows, 24, ebn0, seed + z);
    for (int variant = 0; variant < 3; ++variant) {
      for (bool et : {true, false}) {
        SCOPED_TRACE("BG" + std::to_string(int(bg)) + " Z=" + std::to_string(z) + " variant " +
                     std::to_string(variant) + " et " + std::to_string(et));
        DecoderConfig cfg = w.cfg;
        cfg.algo = variant == 1 ? DecoderAlgo::oms : DecoderAlgo::nms;
        if (variant == 2) cfg.alpha_last = 1.0f;
        cfg.early_termination = et;
        DecoderPlan plan(cfg, Backend::cpu());
        const Out from_float = decode_all(plan, w.llr, w.num);
        const Out from_int8 = decode_all(plan, quantized(plan, w.llr), w.num);
        EXPECT_TRUE(from_int8 == from_float);
        int failed = 0;
        for (auto f : from_float.ok) failed += f ? 0 : 1;
        std::printf("  BG%d Z=%d variant %d et %d: %d of %d words unsatisfied\n", int(bg), z,
                    variant, int(et), failed, w.num);
      }
    }
  }
}

// int8 values beyond the channel range saturate to it: +-127 decodes as +-limit.
TEST(DecoderInt8Cpu, OutOfRangeValuesSaturate) {
  const std::uint64_t seed = mimorx::test::fresh_seed();
  Words w = noisy_words(BaseGraph::bg1, 80, 6, 16, 3.5, seed);
  DecoderPlan plan(w.cfg, Backend::cpu());
  auto q = quantized(plan, w.llr);
  const int limit = (1 << (w.cfg.llr_bits - 1)) - 1;
  auto wide = q;
  for (auto& v : wide) v = v >= limit ? 127 : (v <= -limit ? -128 : v);
  EXPECT_TRUE(decode_all(plan, wide, w.num) == decode_all(plan, q, w.num));
}

TEST(DecoderInt8Cpu, BadInputIsRejected) {
  DecoderConfig cfg{BaseGraph::bg2, 10};
  DecoderPlan float_plan(cfg, Backend::cpu());  // not the integer path
  std::vector<std::int8_t> llr(float_plan.n(), 1);
  std::vector<std::uint8_t> info(float_plan.k());
  try {
    float_plan.decode(cview(llr), 1, hview(info));
    ADD_FAILURE() << "int8 LLRs on the float path accepted";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("quantized"), std::string::npos) << e.what();
  }
  cfg.quantized = true;
  DecoderPlan plan(cfg, Backend::cpu());
  EXPECT_THROW(plan.decode(cview(llr), 2, hview(info)), InvalidArgument);  // sizes
  std::vector<std::uint8_t> info2(2 * plan.k());
  llr.resize(2 * plan.n(), 1);
  plan.decode(cview(llr), 2, hview(info2));
  for (auto b : info2) EXPECT_EQ(b, 0);  // all-positive LLRs: the zero codeword
}

// The CUDA kernels (one codeword per thread and paired) read int8 LLRs to the same result as
// the CPU, and as their own float input.
TEST(DecoderInt8Gpu, SameAsCpuAndFloatInput) {
  MIMORX_REQUIRE_GPU();
  const std::uint64_t seed = mimorx::test::fresh_seed();
  for (const auto& [bg, z, rows, ebn0] :
       std::vector<std::tuple<BaseGraph, int, int, double>>{{BaseGraph::bg1, 80, 6, 3.5},
                                                            {BaseGraph::bg1, 384, 0, 1.2},
                                                            {BaseGraph::bg2, 9, 0, 1.5}}) {
    Words w = noisy_words(bg, z, rows, z >= 300 ? 5 : 37, ebn0, seed + z);
    for (bool et : {true, false}) {
      DecoderConfig cfg = w.cfg;
      cfg.early_termination = et;
      DecoderPlan cpu(cfg, Backend::cpu());
      const auto q = quantized(cpu, w.llr);
      const Out want = decode_all(cpu, q, w.num);
      for (int per_thread : {1, 2}) {
        SCOPED_TRACE("BG" + std::to_string(int(bg)) + " Z=" + std::to_string(z) + " et " +
                     std::to_string(et) + " codewords/thread " + std::to_string(per_thread));
        cfg.codewords_per_thread = per_thread;
        DecoderPlan gpu(cfg, Backend::cuda());
        const Out got = decode_all(gpu, q, w.num);
        EXPECT_EQ(got.iters, want.iters);
        EXPECT_EQ(got.ok, want.ok);
        EXPECT_EQ(got.bits, want.bits);
        EXPECT_EQ(got.info, want.info);
        EXPECT_EQ(got.packed, want.packed);
        EXPECT_TRUE(decode_all(gpu, w.llr, w.num) == got);
      }
    }
  }
}

}  // namespace
}  // namespace mimorx::ldpc

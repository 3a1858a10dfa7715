// The batched transport chain against the single-block chain (TransportPlan, the reference):
// coded bits, HARQ buffers (the de-rate-matched LLRs), decoded bits, CRC flags and iterations
// equal for every block, over both base graphs, C = 1 and C > 1, rv 0..3, every modulation, the
// float and the integer decoder, on the CPU and on CUDA.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "ldpc/transport_batch_math.hpp"
#include "mimorx/core/error.hpp"
#include "mimorx/ldpc/crc.hpp"
#include "mimorx/ldpc/transport_batch.hpp"
#include "support/gpu.hpp"

namespace mimorx::ldpc {
namespace {

struct Case {
  TransportConfig cfg;
  int rv;
};

std::vector<Case> cases() {
  std::vector<Case> v;
  v.push_back({{.tbs = 100, .code_rate = 0.5, .mod = Modulation::bpsk}, 0});  // BG2, CRC16
  v.push_back({{.tbs = 3824, .code_rate = 0.5, .mod = Modulation::qam16}, 1});  // BG2, C = 1
  v.push_back({{.tbs = 3840, .code_rate = 0.2, .mod = Modulation::qpsk}, 2});   // BG2, C = 2
  v.push_back({{.tbs = 8448, .code_rate = 0.5, .mod = Modulation::qam16}, 3});  // BG1, C = 2
  v.push_back({{.tbs = 8424,
                .code_rate = 0.9,
                .mod = Modulation::qam64,
                .layers = 2,
                .decoder = {.quantized = true}},
               0});
  v.push_back({{.tbs = 25608,
                .code_rate = 0.6,
                .mod = Modulation::qam256,
                .rv = 2,
                .lbrm = true,
                .decoder = {.max_iters = 4, .quantized = true}},
               -1});
  v.push_back({{.tbs = 1000, .code_rate = 0.1, .mod = Modulation::qpsk}, 3});  // repetition
  return v;
}

// Device or host copies of host vectors, as views on the plan's memory.
template <class T>
struct On {
  Buffer<T> buf;
  On(const Backend& b, const std::vector<T>& host) : buf(Buffer<T>::on(b, host.size())) {
    buf.copy_from_host(host.data(), host.size());
  }
  On(const Backend& b, std::size_t n) : buf(Buffer<T>::on(b, n)) { buf.fill_bytes(0); }
  std::vector<T> host() const {
    std::vector<T> h(buf.size());
    buf.copy_to_host(h.data(), h.size());
    return h;
  }
};

void compare_with_chain(const Case& cs, const Backend& backend, std::uint64_t seed,
                        int& crc_failures) {
  const int num = 3;
  const TransportConfig& cfg = cs.cfg;
  TransportPlan ref(cfg, Backend::cpu());
  TransportBatchPlan plan(cfg, backend, {.max_blocks = num});
  const std::string what = "tbs " + std::to_string(cfg.tbs) + " R " +
                           std::to_string(cfg.code_rate) + " rv " + std::to_string(cs.rv);
  ASSERT_EQ(plan.g(), ref.g()) << what;
  const std::int64_t g = ref.g();
  const std::size_t hs = ref.harq_size();
  std::mt19937_64 rng(seed);
  std::vector<std::uint8_t> tb(std::size_t(num) * cfg.tbs);
  for (auto& b : tb) b = std::uint8_t(rng() & 1);

  // Transmitter.
  std::vector<std::uint8_t> coded_ref(std::size_t(num * g));
  for (int b = 0; b < num; ++b) {
    ref.encode(std::span(tb).subspan(std::size_t(b) * cfg.tbs, cfg.tbs),
               std::span(coded_ref).subspan(std::size_t(b * g), std::size_t(g)), cs.rv);
  }
  On<std::uint8_t> tb_d(backend, tb), coded_d(backend, std::size_t(num * g));
  plan.encode(tb_d.buf, num, coded_d.buf, cs.rv);
  ASSERT_EQ(coded_d.host(), coded_ref) << what;

  // Channel: block 0 clean, block 1 noisy, block 2 pure noise (its CRCs fail).
  std::normal_distribution<float> noise(0.f, 1.f);
  std::vector<float> llrs(std::size_t(num * g));
  for (std::int64_t i = 0; i < num * g; ++i) {
    const int b = int(i / g);
    const float sigma = b == 0 ? 0.3f : 1.2f;
    const float sent = b == 2 ? 0.f : coded_ref[std::size_t(i)] ? -2.f : 2.f;  // block 2: noise
    llrs[std::size_t(i)] = sent + sigma * noise(rng);
  }

  // Reference receivers, block by block: one transmission (decode, the rows it reaches) and
  // the HARQ buffer (decode_harq, every row).
  const int c = plan.code_blocks();
  struct Ref {
    std::vector<std::uint8_t> tb, tb_ok, cb_ok;
    std::vector<int> it;
  };
  Ref refs[2];
  for (auto& rf : refs) {
    rf.tb.resize(tb.size());
    rf.tb_ok.resize(num);
    rf.cb_ok.resize(std::size_t(num * c));
    rf.it.resize(std::size_t(num * c));
  }
  std::vector<float> harq_ref(num * hs, 0.f);
  for (int b = 0; b < num; ++b) {
    auto h = std::span(harq_ref).subspan(b * hs, hs);
    const auto l = std::span(llrs).subspan(std::size_t(b * g), std::size_t(g));
    ref.accumulate(l, h, cs.rv);
    for (int path = 0; path < 2; ++path) {
      Ref& rf = refs[path];
      const auto out = std::span(rf.tb).subspan(std::size_t(b) * cfg.tbs, cfg.tbs);
      const auto res = path == 0 ? ref.decode(l, out, cs.rv) : ref.decode_harq(h, out);
      rf.tb_ok[std::size_t(b)] = res.tb_crc_ok;
      for (int r = 0; r < c; ++r) {
        rf.cb_ok[std::size_t(b * c + r)] = res.cb_crc_ok[std::size_t(r)];
        rf.it[std::size_t(b * c + r)] = res.iterations[std::size_t(r)];
      }
    }
  }
  EXPECT_EQ(refs[1].tb_ok[0], 1) << what;
  crc_failures += 1 - refs[1].tb_ok[2];  // noise can decode to the all-zero word, whose CRC holds

  On<float> llr_d(backend, llrs), harq_d(backend, num * hs);
  plan.accumulate(llr_d.buf, num, harq_d.buf, cs.rv);
  const auto harq = harq_d.host();
  ASSERT_EQ(0, std::memcmp(harq.data(), harq_ref.data(), harq.size() * sizeof(float))) << what;

  for (int path = 0; path < 2; ++path) {
    On<std::uint8_t> out(backend, tb.size()), tb_ok(backend, num), cb_ok(backend, num * c);
    On<int> it(backend, num * c);
    if (path == 0) {
      plan.decode(llr_d.buf, num, out.buf, tb_ok.buf, cb_ok.buf, it.buf, cs.rv);
    } else {
      plan.decode_harq(harq_d.buf, num, out.buf, tb_ok.buf, cb_ok.buf, it.buf);
    }
    const char* name = path == 0 ? " (decode)" : " (decode_harq)";
    EXPECT_EQ(out.host(), refs[path].tb) << what << name;
    EXPECT_EQ(tb_ok.host(), refs[path].tb_ok) << what << name;
    EXPECT_EQ(cb_ok.host(), refs[path].cb_ok) << what << name;
    EXPECT_EQ(it.host(), refs[path].it) << what << name;
  }
}

// The GPU computes a CRC as 32 parts, each moved to the message's end (x^n mod g) and XORed:
// the same remainder as the shift register over the whole message, for every 3GPP CRC.
TEST(TransportBatch, CrcInPartsEqualsTheRegister) {
  std::mt19937_64 rng(test::fresh_seed());
  for (CrcType t : {CrcType::crc24a, CrcType::crc24b, CrcType::crc16, CrcType::crc11,
                    CrcType::crc6}) {
    for (const int n : {1, 31, 32, 33, 100, 3840, 8448}) {
      std::vector<std::uint8_t> bits(static_cast<std::size_t>(n));
      for (auto& b : bits) b = std::uint8_t(rng() & 1);
      const std::uint32_t poly = crc_polynomial(t);
      const int l = crc_length(t);
      std::uint32_t parts = 0;
      const int chunk = (n + 31) / 32;
      for (int lane = 0; lane < 32; ++lane) {
        const int lo = std::min(n, lane * chunk), hi = std::min(n, lo + chunk);
        parts ^= detail::crc_part(detail::PlainBits{bits.data()}, lo, hi, n, poly, l);
      }
      EXPECT_EQ(parts, crc_compute(t, bits)) << crc_name(t) << " n " << n;
    }
  }
}

TEST(TransportBatch, MatchesTheSingleBlockChain) {
  const auto seed = test::fresh_seed();
  int crc_failures = 0;
  for (const auto& cs : cases()) compare_with_chain(cs, Backend::cpu(), seed, crc_failures);
  EXPECT_GE(crc_failures, 3);  // the failing paths were compared too
}

// Decoding only the rows one transmission reaches gives the bits of decoding every row (rows
// whose parity bits were not sent pass min-sum messages of 0), without early termination.
TEST(TransportBatch, DecodedRowsGiveTheBitsOfEveryRow) {
  const auto seed = test::fresh_seed();
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> noise(0.f, 1.f);
  for (const auto& cs : cases()) {
    TransportConfig cfg = cs.cfg;
    cfg.decoder.early_termination = false;
    TransportPlan ref(cfg, Backend::cpu());
    const int rows = ref.decoded_rows(cs.rv);
    EXPECT_GE(rows, 4);
    std::vector<std::uint8_t> tb(cfg.tbs), coded(std::size_t(ref.g())), a(cfg.tbs), b(cfg.tbs);
    for (auto& x : tb) x = std::uint8_t(rng() & 1);
    ref.encode(tb, coded, cs.rv);
    std::vector<float> llrs(coded.size());
    for (std::size_t i = 0; i < llrs.size(); ++i) llrs[i] = (coded[i] ? -1.f : 1.f) + noise(rng);
    std::vector<float> harq(ref.harq_size(), 0.f);
    ref.accumulate(llrs, harq, cs.rv);
    const auto ra = ref.decode(llrs, a, cs.rv);
    const auto rb = ref.decode_harq(harq, b);
    EXPECT_EQ(a, b) << cfg.tbs << " rows " << rows;
    EXPECT_EQ(ra.tb_crc_ok, rb.tb_crc_ok) << cfg.tbs;
  }
  // Rate 1/2 of BG2 with K = 3840 reaches 12 of its 42 rows.
  EXPECT_EQ(TransportPlan({.tbs = 3824, .code_rate = 0.5}, Backend::cpu()).decoded_rows(0), 12);
}

TEST(TransportBatch, HarqCombiningMatchesTheChain) {
  const auto seed = test::fresh_seed();
  const TransportConfig cfg{.tbs = 2000, .code_rate = 0.9, .decoder = {.max_iters = 20}};
  TransportPlan ref(cfg, Backend::cpu());
  TransportBatchPlan plan(cfg, Backend::cpu(), {.max_blocks = 2});
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> noise(0.f, 1.f);
  const std::int64_t g = ref.g();
  std::vector<float> harq_ref(2 * ref.harq_size(), 0.f), harq(harq_ref.size(), 0.f);
  // One buffer for both transmissions (declared in the loop, GCC 12 -O3 reports a spurious
  // -Wfree-nonheap-object on its destruction).
  std::vector<float> llrs(std::size_t(2 * g));
  for (int rv = 0; rv <= 2; rv += 2) {
    for (auto& l : llrs) l = 0.5f + 2.f * noise(rng);
    for (int b = 0; b < 2; ++b) {
      ref.accumulate(std::span(llrs).subspan(std::size_t(b * g), std::size_t(g)),
                     std::span(harq_ref).subspan(b * ref.harq_size(), ref.harq_size()), rv);
    }
    plan.accumulate(View<const float>(llrs.data(), std::int64_t(llrs.size()), Memory::host), 2,
                    View<float>(harq.data(), std::int64_t(harq.size()), Memory::host), rv);
  }
  EXPECT_EQ(0, std::memcmp(harq.data(), harq_ref.data(), harq.size() * sizeof(float)));
}

TEST(TransportBatch, BadInput) {
  TransportBatchPlan plan({.tbs = 1000}, Backend::cpu(), {.max_blocks = 2});
  std::vector<std::uint8_t> tb(3 * 1000), coded(3 * std::size_t(plan.g()));
  std::vector<float> llrs(coded.size(), 1.f);
  const View<const std::uint8_t> tbv(tb.data(), std::int64_t(tb.size()), Memory::host);
  const View<std::uint8_t> cv(coded.data(), std::int64_t(coded.size()), Memory::host);
  EXPECT_THROW(plan.encode(tbv, 3, cv), InvalidArgument);  // more than max_blocks
  EXPECT_THROW(plan.encode(tbv, 1, cv, 4), InvalidArgument);
  EXPECT_THROW(plan.encode(View<const std::uint8_t>(tb.data(), 999, Memory::host), 1, cv),
               InvalidArgument);
  EXPECT_THROW(plan.encode(View<const std::uint8_t>(tb.data(), 1000, Memory::device), 1, cv),
               InvalidArgument);
  llrs[17] = std::nanf("");
  std::vector<std::uint8_t> out(2000), ok(2);
  EXPECT_THROW(plan.decode(View<const float>(llrs.data(), std::int64_t(llrs.size()), Memory::host),
                           2, View<std::uint8_t>(out.data(), 2000, Memory::host),
                           View<std::uint8_t>(ok.data(), 2, Memory::host)),
               InvalidArgument);
  EXPECT_THROW(TransportBatchPlan({.tbs = 1000}, Backend::cpu(), {.max_blocks = 0}),
               InvalidArgument);
}

TEST(TransportBatchGpu, MatchesTheSingleBlockChain) {
  MIMORX_REQUIRE_GPU();
  const auto seed = test::fresh_seed();
  int crc_failures = 0;
  for (const auto& cs : cases()) compare_with_chain(cs, Backend::cuda(0), seed, crc_failures);
  EXPECT_GE(crc_failures, 3);
}

}  // namespace
}  // namespace mimorx::ldpc

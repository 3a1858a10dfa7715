// The single-tree-search soft sphere decoder (detect/sts.hpp) against the exhaustive max-log ML
// detector (detect/ml.hpp): LLRs and hard bits, with and without clipping, its node counts and
// node cap, and its input checks.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "detect/sphere_math.hpp"
#include "detect/sts_math.hpp"
#include "mimorx/core/buffer.hpp"
#include "mimorx/core/error.hpp"
#include "mimorx/detect/factory.hpp"
#include "mimorx/detect/ml.hpp"
#include "mimorx/detect/sts.hpp"
#include "mimorx/modem/modulation.hpp"
#include "support/gpu.hpp"

namespace mimorx::detect {
namespace {

std::size_t sz(std::int64_t v) { return static_cast<std::size_t>(v); }

struct Problem {
  MimoShape shape;
  std::int64_t channels = 0;
  int vpc = 1;
  std::vector<cf32> h, y;
  std::vector<float> n0;  // one per vector
  std::int64_t vectors() const { return channels * vpc; }
  std::int64_t bits() const { return vectors() * shape.bits_per_vector(); }
  DetectInput input() const {
    DetectInput in;
    in.h = ConstMatrixBatch<cf32>(h.data(), channels, shape.nr, shape.nt, Memory::host);
    in.y = ConstMatrixBatch<cf32>(y.data(), vectors(), shape.nr, 1, Memory::host);
    in.noise_var = View<const float>(n0.data(), std::int64_t(n0.size()), Memory::host);
    in.vectors_per_channel = vpc;
    return in;
  }
};

enum class Channel { rayleigh, collinear };

// Rayleigh channels (CN(0, 1) entries), or with `collinear` column 1 = a column 0 + 1e-2 CN(0, 1)
// (condition numbers in the hundreds); random symbols; AWGN with N0 = nt 10^(-snr/10), varied
// per vector by up to +-20 %.
Problem make_problem(MimoShape shape, std::int64_t channels, int vpc, double snr_db, Channel kind,
                     std::mt19937_64& gen) {
  Problem p;
  p.shape = shape;
  p.channels = channels;
  p.vpc = vpc;
  const int nr = shape.nr, nt = shape.nt, m = bits_per_symbol(shape.mod);
  std::normal_distribution<float> g(0.f, std::sqrt(0.5f));
  std::uniform_real_distribution<float> u(0.8f, 1.2f);
  for (std::int64_t c = 0; c < channels; ++c) {
    const std::size_t base = p.h.size();
    for (int k = 0; k < nr * nt; ++k) p.h.push_back(cf32(g(gen), g(gen)));
    if (kind == Channel::collinear && nt >= 2) {
      const cf32 a(g(gen), g(gen));
      for (int i = 0; i < nr; ++i)
        p.h[base + sz(nr + i)] = p.h[base + sz(i)] * a + cf32(1e-2f * g(gen), 1e-2f * g(gen));
    }
  }
  const float n0 = float(nt * std::pow(10.0, -snr_db / 10.0));
  for (std::int64_t v = 0; v < p.vectors(); ++v) {
    const cf32* h = &p.h[sz((v / vpc) * nr * nt)];
    std::vector<cf32> x(sz(nt));
    for (auto& s : x) {
      std::uint8_t b[8] = {};
      for (int k = 0; k < m; ++k) b[k] = std::uint8_t(gen() & 1);
      s = map_symbol(shape.mod, b);
    }
    const float nv = n0 * u(gen);
    std::normal_distribution<float> w(0.f, std::sqrt(nv / 2));
    for (int i = 0; i < nr; ++i) {
      cf32 acc(w(gen), w(gen));
      for (int t = 0; t < nt; ++t) acc += h[t * nr + i] * x[sz(t)];
      p.y.push_back(acc);
    }
    p.n0.push_back(nv);
  }
  return p;
}

// Float rounding of a metric difference: 2e-6 (1 + ||y||^2 + ||H||_F^2), the scale of the
// largest metrics compared (MlPlan's own tests allow half of it against double precision).
double llr_tolerance(const Problem& p, std::int64_t v) {
  double e = 1;
  for (int i = 0; i < p.shape.nr; ++i) e += double(norm2(p.y[sz(v * p.shape.nr + i)]));
  for (int k = 0; k < p.shape.nr * p.shape.nt; ++k)
    e += double(norm2(p.h[sz((v / p.vpc) * p.shape.nr * p.shape.nt + k)]));
  return 2e-6 * e / p.n0[sz(v)];
}

struct Result {
  std::vector<std::uint8_t> bits;
  std::vector<float> llrs;
  std::vector<SearchStats> stats;
};

Result run_ml(const Problem& p) {
  Result r;
  r.bits.assign(sz(p.bits()), 9);
  r.llrs.assign(sz(p.bits()), std::nanf(""));
  MlPlan plan({p.shape, true}, Backend::cpu());
  plan.run(p.input(), View<std::uint8_t>(r.bits.data(), p.bits(), Memory::host),
           View<float>(r.llrs.data(), p.bits(), Memory::host));
  return r;
}

Result run_sts(const Problem& p, StsConfig cfg) {
  cfg.shape = p.shape;
  Result r;
  r.bits.assign(sz(p.bits()), 9);
  r.llrs.assign(sz(p.bits()), std::nanf(""));
  r.stats.assign(sz(p.vectors()), SearchStats{-1, -1, -1, 9});
  StsPlan plan(cfg, Backend::cpu());
  plan.run(p.input(), View<std::uint8_t>(r.bits.data(), p.bits(), Memory::host),
           View<float>(r.llrs.data(), p.bits(), Memory::host),
           View<SearchStats>(r.stats.data(), p.vectors(), Memory::host));
  return r;
}

std::string name(const Problem& p, double snr) {
  return std::to_string(p.shape.nt) + "x" + std::to_string(p.shape.nr) + " " +
         to_string(p.shape.mod) + " at " + std::to_string(int(snr)) + " dB";
}

// Every LLR equals ML's within float tolerance; the hard bits are ML's (where ML's LLR is not
// within that tolerance of 0, i.e. where the ML decision is not a tie in float).
void expect_exact(const Problem& p, const Result& ml, const Result& sts, const std::string& what) {
  const int per = p.shape.bits_per_vector();
  for (std::int64_t v = 0; v < p.vectors(); ++v) {
    const double tol = llr_tolerance(p, v);
    ASSERT_EQ(sts.stats[sz(v)].capped, 0) << what;
    for (int k = 0; k < per; ++k) {
      const std::size_t i = sz(v * per + k);
      const double ref = ml.llrs[i];
      EXPECT_NEAR(sts.llrs[i], ref, 1e-4 * std::abs(ref) + tol)
          << what << " vector " << v << " bit " << k;
      ASSERT_LE(sts.bits[i], 1);
      if (std::abs(ref) > tol) {
        EXPECT_EQ(sts.bits[i], ml.bits[i]) << what << " vector " << v;
      }
    }
  }
}

struct Case {
  int nt, nr;
  Modulation mod;
  std::int64_t channels;
};
const Case kCases[] = {
    {1, 1, Modulation::bpsk, 8},   {1, 1, Modulation::qpsk, 8},   {1, 1, Modulation::qam16, 8},
    {1, 1, Modulation::qam64, 8},  {2, 2, Modulation::bpsk, 8},   {2, 2, Modulation::qpsk, 8},
    {2, 2, Modulation::qam16, 8},  {2, 2, Modulation::qam64, 8},  {2, 3, Modulation::qam16, 8},
    {3, 3, Modulation::qpsk, 6},   {3, 3, Modulation::qam16, 6},  {3, 4, Modulation::qpsk, 4},
    {4, 4, Modulation::bpsk, 6},   {4, 4, Modulation::qpsk, 6},   {4, 4, Modulation::qam16, 3},
    {1, 2, Modulation::qam256, 4}, {2, 2, Modulation::qam256, 3}, {5, 6, Modulation::qpsk, 3},
    {8, 8, Modulation::bpsk, 4},   {8, 8, Modulation::qpsk, 2}};

TEST(Sts, LlrsEqualExhaustiveMaxLog) {
  std::mt19937_64 gen(test::fresh_seed());
  for (const Case& c : kCases) {
    for (double snr : {0.0, 30.0}) {
      const Problem p =
          make_problem({c.nt, c.nr, c.mod}, c.channels, 2, snr, Channel::rayleigh, gen);
      expect_exact(p, run_ml(p), run_sts(p, {}), name(p, snr));
    }
  }
}

TEST(Sts, IllConditionedChannelsStayExact) {
  std::mt19937_64 gen(test::fresh_seed() + 1);
  for (const Case& c : {Case{2, 2, Modulation::qam16, 8}, Case{2, 2, Modulation::qam64, 4},
                        Case{3, 3, Modulation::qam16, 4}, Case{4, 4, Modulation::qpsk, 6},
                        Case{2, 3, Modulation::bpsk, 8}}) {
    for (double snr : {0.0, 30.0}) {
      const Problem p =
          make_problem({c.nt, c.nr, c.mod}, c.channels, 2, snr, Channel::collinear, gen);
      expect_exact(p, run_ml(p), run_sts(p, {}), "collinear " + name(p, snr));
    }
  }
}

// More vectors than CI runs (label slow): about 10^4 vectors against exhaustive ML.
TEST(StsSlow, ManyVectorsEqualExhaustiveMaxLog) {
  std::mt19937_64 gen(test::fresh_seed() + 9);
  for (double snr : {0.0, 10.0, 20.0, 30.0}) {
    const Problem p = make_problem({4, 4, Modulation::qam16}, 500, 4, snr, Channel::rayleigh, gen);
    expect_exact(p, run_ml(p), run_sts(p, {}), name(p, snr));
    const Problem q = make_problem({4, 4, Modulation::qam16}, 250, 2, snr, Channel::collinear, gen);
    expect_exact(q, run_ml(q), run_sts(q, {}), "collinear " + name(q, snr));
    const Problem r = make_problem({3, 3, Modulation::qam64}, 50, 2, snr, Channel::rayleigh, gen);
    expect_exact(r, run_ml(r), run_sts(r, {}), name(r, snr));
    const Problem u = make_problem({2, 2, Modulation::qam256}, 100, 2, snr, Channel::rayleigh, gen);
    expect_exact(u, run_ml(u), run_sts(u, {}), name(u, snr));
  }
}

TEST(Sts, NaturalColumnOrderIsExactToo) {
  std::mt19937_64 gen(test::fresh_seed() + 2);
  StsConfig cfg;
  cfg.sorted_qr = false;
  for (double snr : {0.0, 20.0}) {
    const Problem p = make_problem({3, 3, Modulation::qam16}, 6, 2, snr, Channel::rayleigh, gen);
    expect_exact(p, run_ml(p), run_sts(p, cfg), "unsorted " + name(p, snr));
  }
}

TEST(Sts, SixtyFourQamThreeStreamsExact) {
  std::mt19937_64 gen(test::fresh_seed() + 3);
  const Problem p = make_problem({3, 3, Modulation::qam64}, 2, 1, 15.0, Channel::rayleigh, gen);
  expect_exact(p, run_ml(p), run_sts(p, {}), name(p, 15.0));
}

// With clipping L: |LLR| <= L everywhere, the LLRs below L in magnitude are the exact ones, the
// others are exactly +-L.
TEST(Sts, ClippedLlrsAreExactBelowTheClip) {
  std::mt19937_64 gen(test::fresh_seed() + 4);
  for (const Case& c : {Case{2, 2, Modulation::qam16, 12}, Case{4, 4, Modulation::qam16, 4},
                        Case{3, 3, Modulation::qpsk, 8}}) {
    for (double snr : {5.0, 15.0}) {
      const Problem p =
          make_problem({c.nt, c.nr, c.mod}, c.channels, 2, snr, Channel::rayleigh, gen);
      const Result ml = run_ml(p);
      for (float clip : {2.f, 8.f}) {
        StsConfig cfg;
        cfg.clip = clip;
        const Result r = run_sts(p, cfg);
        const int per = p.shape.bits_per_vector();
        for (std::int64_t v = 0; v < p.vectors(); ++v) {
          const double tol = llr_tolerance(p, v);
          for (int k = 0; k < per; ++k) {
            const std::size_t i = sz(v * per + k);
            const float l = r.llrs[i], ref = ml.llrs[i];
            EXPECT_LE(std::abs(l), clip) << name(p, snr);
            const double want = std::clamp(double(ref), -double(clip), double(clip));
            EXPECT_NEAR(l, want, 1e-4 * std::abs(want) + tol)
                << name(p, snr) << " clip " << clip << " vector " << v << " bit " << k;
            if (std::abs(ref) > tol) {
              EXPECT_EQ(r.bits[i], ml.bits[i]);
            }
            if (std::abs(ref) > clip + 1e-4 * clip + tol) {
              EXPECT_EQ(std::abs(l), clip);  // clipped counter-hypotheses give exactly +-clip
            }
          }
        }
      }
    }
  }
}

// STS visits far fewer nodes than exhaustive search at high SNR (4x4 16-QAM: M^nt = 65536
// leaves, 87380 nodes of the real tree), and clipping visits fewer still.
TEST(Sts, VisitsFarFewerNodesThanExhaustive) {
  std::mt19937_64 gen(test::fresh_seed() + 5);
  const Problem p = make_problem({4, 4, Modulation::qam16}, 64, 1, 20.0, Channel::rayleigh, gen);
  auto mean_nodes = [&](const Result& r) {
    double s = 0;
    for (const auto& st : r.stats) {
      EXPECT_GE(st.nodes, 2 * p.shape.nt);  // at least one path to a leaf
      EXPECT_GE(st.leaves, 1);
      EXPECT_GE(st.radius_updates, 1);
      EXPECT_EQ(st.capped, 0);
      s += double(st.nodes);
    }
    return s / double(r.stats.size());
  };
  const double exact = mean_nodes(run_sts(p, {}));
  StsConfig cfg;
  cfg.clip = 4.f;
  const double clipped = mean_nodes(run_sts(p, cfg));
  std::printf("[ nodes    ] 4x4 16-QAM 20 dB: %.0f per vector exact, %.0f with clip 4\n", exact,
              clipped);
  EXPECT_LT(exact, 65536.0 / 20);
  EXPECT_LE(clipped, exact);
}

// A node cap stops searches early: flagged, nodes at the cap, LLRs finite with the signs of the
// decided bits; without a cap no vector is flagged.
TEST(Sts, NodeCapIsFlagged) {
  std::mt19937_64 gen(test::fresh_seed() + 6);
  const Problem p = make_problem({4, 4, Modulation::qam16}, 16, 1, 0.0, Channel::rayleigh, gen);
  for (float clip : {0.f, 6.f}) {
    StsConfig cfg;
    cfg.node_cap = 40;
    cfg.clip = clip;
    cfg.capped_llr = 20.f;
    const Result r = run_sts(p, cfg);
    int capped = 0;
    const int per = p.shape.bits_per_vector();
    for (std::int64_t v = 0; v < p.vectors(); ++v) {
      const SearchStats& st = r.stats[sz(v)];
      ASSERT_LE(st.capped, 1);
      capped += st.capped;
      if (st.capped) {
        EXPECT_EQ(st.nodes, cfg.node_cap);
      }
      EXPECT_LE(st.nodes, cfg.node_cap);
      for (int k = 0; k < per; ++k) {
        const std::size_t i = sz(v * per + k);
        ASSERT_TRUE(std::isfinite(r.llrs[i]));
        EXPECT_EQ(r.llrs[i] < 0.f, r.bits[i] == 1) << "vector " << v << " bit " << k;
        EXPECT_LE(std::abs(r.llrs[i]), clip > 0 ? clip : 1e30f);
      }
    }
    EXPECT_GT(capped, 0);  // 40 nodes cannot cover a 0 dB 4x4 16-QAM search
  }
}

TEST(Sts, HardOutputOnlyAndEmptyBatch) {
  std::mt19937_64 gen(test::fresh_seed() + 7);
  const Problem p = make_problem({2, 2, Modulation::qam16}, 8, 1, 10.0, Channel::rayleigh, gen);
  const Result soft = run_sts(p, {});
  StsPlan plan({p.shape}, Backend::cpu());
  std::vector<std::uint8_t> bits(sz(p.bits()), 9);
  plan.run(p.input(), View<std::uint8_t>(bits.data(), p.bits(), Memory::host), {});
  EXPECT_EQ(bits, soft.bits);
  Problem empty = p;
  empty.channels = 0;
  empty.y.clear();
  empty.n0 = {1.f};
  plan.run(empty.input(), View<std::uint8_t>(bits.data(), 0, Memory::host), {});
}

// The CUDA kernel's state layout (sts::InterleavedState, words of BT threads interleaved),
// run here on the CPU: BT vectors searched one after another in one shared buffer, outputs
// written after all of them, equal the plain State's (the same search; no word of one thread or
// field overlaps another), and no word beyond state_words * BT is written.
TEST(Sts, InterleavedStateMatchesPlainState) {
  MIMORX_SEEDED_GENERATOR(gen);
  constexpr int BT = 8;
  for (const MimoShape shape :
       {MimoShape{4, 4, Modulation::qam16}, MimoShape{3, 3, Modulation::qam64},
        MimoShape{8, 8, Modulation::qpsk}, MimoShape{2, 3, Modulation::bpsk}}) {
    const Problem p = make_problem(shape, BT, 1, 8.0, Channel::rayleigh, gen);
    const int n = sphere::real_dim(shape.mod, shape.nt), m = 2 * shape.nr,
              per = shape.bits_per_vector();
    sts::BitTable tab;
    sts::make_bit_table(shape.mod, shape.nt, tab);
    const int words = sts::state_words(n, per) * BT;
    std::vector<std::uint64_t> buf(sz(words / 2 + 8), 0x5a5a5a5a5a5a5a5aull);
    std::vector<float> q(sz(BT * m * n)), r(sz(BT * n * n));
    std::vector<int> perm(sz(BT * n));
    std::vector<sts::Params> params(BT);
    std::vector<sts::Outcome> plain_o(BT), inter_o(BT);
    std::vector<std::uint8_t> plain_b(sz(BT * per)), inter_b(sz(BT * per));
    std::vector<float> plain_l(sz(BT * per)), inter_l(sz(BT * per));
    for (int t = 0; t < BT; ++t) {
      float* qc = &q[sz(t * m * n)];
      sphere::real_model(shape.mod, &p.h[sz(t * shape.nr * shape.nt)], shape.nr, shape.nt, qc);
      sphere::sorted_qr(qc, m, n, &r[sz(t * n * n)], &perm[sz(t * n)]);
      sts::Params& pa = params[sz(t)];
      pa.n = n;
      pa.L = axis_levels(shape.mod);
      pa.nbits = per;
      pa.r = &r[sz(t * n * n)];
      pa.perm = &perm[sz(t * n)];
      pa.tab = &tab;
      float z[sts::kMaxReal];
      sts::InterleavedState<BT> is(buf.data(), t, n);
      for (int k = 0; k < n; ++k) {
        z[k] = sphere::project(qc, m, shape.nr, &p.y[sz(t * shape.nr)], k);
        is.zw(k) = z[k];
      }
      sts::State st;
      st.zp = z;
      plain_o[sz(t)] = sts::search(pa, st);
      sts::write_outputs(pa, plain_o[sz(t)], st, p.n0[sz(t)], 0.f, 32.f, &plain_b[sz(t * per)],
                         &plain_l[sz(t * per)]);
      inter_o[sz(t)] = sts::search(pa, is);
    }
    for (int t = 0; t < BT; ++t) {
      sts::InterleavedState<BT> is(buf.data(), t, n);
      sts::write_outputs(params[sz(t)], inter_o[sz(t)], is, p.n0[sz(t)], 0.f, 32.f,
                         &inter_b[sz(t * per)], &inter_l[sz(t * per)]);
      EXPECT_EQ(plain_o[sz(t)].nodes, inter_o[sz(t)].nodes) << to_string(shape.mod);
      EXPECT_EQ(plain_o[sz(t)].ml, inter_o[sz(t)].ml) << to_string(shape.mod);
    }
    EXPECT_EQ(plain_b, inter_b) << to_string(shape.mod);
    EXPECT_EQ(0, std::memcmp(plain_l.data(), inter_l.data(), plain_l.size() * sizeof(float)))
        << to_string(shape.mod);
    const auto* w32 = reinterpret_cast<const std::uint32_t*>(buf.data());
    for (int i = words; i < int(buf.size()) * 2; ++i)
      EXPECT_EQ(w32[i], 0x5a5a5a5au) << "word " << i;
  }
}

TEST(Sts, BadConfigsAreRefused) {
  auto refused = [](StsConfig c, const std::string& word) {
    try {
      StsPlan plan(c, Backend::cpu());
      ADD_FAILURE() << "accepted; expected an error naming " << word;
    } catch (const InvalidArgument& e) {
      EXPECT_NE(std::string(e.what()).find(word), std::string::npos) << e.what();
    }
  };
  const MimoShape ok{2, 2, Modulation::qam16};
  refused({MimoShape{0, 2, Modulation::qpsk}}, "nt");
  refused({MimoShape{9, 9, Modulation::qpsk}}, "nt");
  refused({MimoShape{3, 2, Modulation::qpsk}}, "nr");
  refused({MimoShape{2, 65, Modulation::qpsk}}, "nr");
  refused({ok, -1.f}, "clip");
  refused({ok, std::nanf("")}, "clip");
  refused({ok, INFINITY}, "clip");
  refused({ok, 0.f, -5}, "node_cap");
  refused({ok, 0.f, 0, 0.f}, "capped_llr");
  refused({ok, 0.f, 0, INFINITY}, "capped_llr");
  // A CUDA backend: refused where there is no GPU (Backend::cuda() itself, or a build without
  // CUDA), accepted with one.
  if (cuda_available()) {
    EXPECT_NO_THROW(StsPlan({ok}, Backend::cuda(0)));
  } else {
    EXPECT_THROW(StsPlan({ok}, Backend::cuda(0)), Unsupported);
  }
}

TEST(Sts, BadRunArgumentsAreRefused) {
  std::mt19937_64 gen(test::fresh_seed() + 8);
  const Problem p = make_problem({2, 2, Modulation::qpsk}, 4, 1, 10.0, Channel::rayleigh, gen);
  StsPlan plan({p.shape}, Backend::cpu());
  std::vector<std::uint8_t> bits(sz(p.bits()) + 1);
  std::vector<float> llrs(sz(p.bits()) + 1);
  std::vector<SearchStats> stats(sz(p.vectors()) + 1);
  const View<std::uint8_t> b(bits.data(), p.bits(), Memory::host);
  const View<float> l(llrs.data(), p.bits(), Memory::host);
  EXPECT_THROW(plan.run(p.input(), View<std::uint8_t>(bits.data(), p.bits() + 1, Memory::host), l),
               InvalidArgument);
  EXPECT_THROW(plan.run(p.input(), b, View<float>(llrs.data(), p.bits() - 1, Memory::host)),
               InvalidArgument);
  EXPECT_THROW(
      plan.run(p.input(), b, l, View<SearchStats>(stats.data(), p.vectors() + 1, Memory::host)),
      InvalidArgument);
  Problem bad = p;
  bad.n0[1] = 0.f;
  EXPECT_THROW(plan.run(bad.input(), b, l), InvalidArgument);
  bad = p;
  bad.y[3] = cf32(std::nanf(""), 0.f);
  EXPECT_THROW(plan.run(bad.input(), b, l), InvalidArgument);
  StsPlan other({{2, 3, Modulation::qpsk}}, Backend::cpu());
  EXPECT_THROW(other.run(p.input(), b, l), InvalidArgument);  // shape mismatch
}

// ---- CUDA backend: the same search (sts_math.hpp) in one thread per vector; CPU == GPU bit for
// bit (bits, LLRs, and every SearchStats field per vector).

// The GPU run of p: device copies of h, y and N0 (shared: N0 = p.n0[0] for every vector, given as
// one value), llrs empty when !soft.
Result run_sts_gpu(const Problem& p, StsConfig cfg, bool shared_n0, bool soft = true) {
  cfg.shape = p.shape;
  Buffer<cf32> h = Buffer<cf32>::device(p.h.size()), y = Buffer<cf32>::device(p.y.size());
  Buffer<float> n0 = Buffer<float>::device(shared_n0 ? 1 : p.n0.size());
  h.copy_from_host(p.h.data(), p.h.size());
  y.copy_from_host(p.y.data(), p.y.size());
  n0.copy_from_host(p.n0.data(), n0.size());
  Buffer<std::uint8_t> bits = Buffer<std::uint8_t>::device(sz(p.bits()));
  Buffer<float> llrs = Buffer<float>::device(soft ? sz(p.bits()) : 0);
  Buffer<SearchStats> stats = Buffer<SearchStats>::device(sz(p.vectors()));
  DetectInput in;
  in.h = ConstMatrixBatch<cf32>(h.data(), p.channels, p.shape.nr, p.shape.nt, Memory::device);
  in.y = ConstMatrixBatch<cf32>(y.data(), p.vectors(), p.shape.nr, 1, Memory::device);
  in.noise_var = View<const float>(n0.data(), std::int64_t(n0.size()), Memory::device);
  in.vectors_per_channel = p.vpc;
  bits.fill_bytes(0xFF);  // poisoned: an output the kernel does not write fails the comparison
  if (soft) llrs.fill_bytes(0xFF);
  stats.fill_bytes(0xFF);
  StsPlan plan(cfg, Backend::cuda(0));
  Stream stream = Stream::create(0);
  // Twice on one plan: the second call reuses the workspace and must give the same result.
  for (int call = 0; call < 2; ++call)
    plan.run(in, View<std::uint8_t>(bits), View<float>(llrs), View<SearchStats>(stats), stream);
  stream.synchronize();
  Result r;
  r.bits.resize(sz(p.bits()));
  r.llrs.resize(soft ? sz(p.bits()) : 0);
  r.stats.resize(sz(p.vectors()));
  bits.copy_to_host(r.bits.data(), r.bits.size());
  if (soft) llrs.copy_to_host(r.llrs.data(), r.llrs.size());
  stats.copy_to_host(r.stats.data(), r.stats.size());
  return r;
}

// Problem with every N0 equal to p.n0[0] (what run_sts_gpu passes as one shared value).
Problem with_shared_n0(Problem p) {
  for (auto& v : p.n0) v = p.n0[0];
  return p;
}

// CPU and GPU of one problem and config; returns the number of capped vectors.
std::int64_t expect_cpu_equals_gpu(const Problem& p, const StsConfig& cfg, bool shared_n0,
                                   const std::string& what) {
  const Problem q = shared_n0 ? with_shared_n0(p) : p;
  const Result cpu = run_sts(q, cfg);
  const Result gpu = run_sts_gpu(q, cfg, shared_n0);
  const std::string tag = what + (shared_n0 ? ", shared N0" : ", N0 per vector") + ", vpc " +
                          std::to_string(p.vpc) + ", clip " + std::to_string(cfg.clip) + ", cap " +
                          std::to_string(cfg.node_cap);
  EXPECT_EQ(0, std::memcmp(cpu.bits.data(), gpu.bits.data(), cpu.bits.size())) << tag;
  EXPECT_EQ(0, std::memcmp(cpu.llrs.data(), gpu.llrs.data(), cpu.llrs.size() * sizeof(float)))
      << tag;
  std::int64_t capped = 0, shown = 0;
  for (std::int64_t v = 0; v < p.vectors(); ++v) {
    const SearchStats& a = cpu.stats[sz(v)];
    const SearchStats& b = gpu.stats[sz(v)];
    const bool same = a.nodes == b.nodes && a.leaves == b.leaves &&
                      a.radius_updates == b.radius_updates && a.capped == b.capped;
    if (!same && shown++ < 5) {
      ADD_FAILURE() << tag << ": vector " << v << " CPU nodes/leaves/updates/capped " << a.nodes
                    << "/" << a.leaves << "/" << a.radius_updates << "/" << int(a.capped)
                    << ", GPU " << b.nodes << "/" << b.leaves << "/" << b.radius_updates << "/"
                    << int(b.capped);
    }
    capped += a.capped;
  }
  for (std::size_t i = 0; i < cpu.llrs.size() && shown < 10; ++i) {
    if (std::memcmp(&cpu.llrs[i], &gpu.llrs[i], sizeof(float)) != 0 || cpu.bits[i] != gpu.bits[i]) {
      ADD_FAILURE() << tag << ": output " << i << " (vector "
                    << std::int64_t(i) / p.shape.bits_per_vector() << ") CPU bit/LLR "
                    << int(cpu.bits[i]) << "/" << cpu.llrs[i] << ", GPU " << int(gpu.bits[i]) << "/"
                    << gpu.llrs[i];
      ++shown;
    }
  }
  return capped;
}

struct GpuCase {
  int nt, nr;
  Modulation mod;
  std::int64_t channels;
  double low_db, high_db;
  std::int64_t cap;  // node cap (0: none)
};

// 1x1 .. 8x8, BPSK .. 256-QAM, nr = nt and nr > nt; low and high SNR; vectors per channel 1 and
// 3; N0 per vector and shared; exact and clipped. The largest systems run under a node cap so
// that the CPU reference stays fast (an exact 8x8 256-QAM search can take 10^7 nodes); those runs
// also check the outputs of capped searches.
TEST(StsGpu, MatchesCpuBitForBit) {
  MIMORX_REQUIRE_GPU();
  MIMORX_SEEDED_GENERATOR(gen);
  const GpuCase cases[] = {
      {1, 1, Modulation::bpsk, 300, 0, 20, 0},      {1, 1, Modulation::qpsk, 300, 0, 20, 0},
      {1, 1, Modulation::qam16, 300, 0, 25, 0},     {1, 1, Modulation::qam64, 300, 0, 30, 0},
      {1, 1, Modulation::qam256, 300, 0, 35, 0},    {2, 2, Modulation::bpsk, 300, 0, 20, 0},
      {2, 2, Modulation::qpsk, 300, 0, 20, 0},      {2, 2, Modulation::qam16, 200, 0, 25, 0},
      {2, 2, Modulation::qam64, 100, 5, 30, 0},     {2, 2, Modulation::qam256, 50, 10, 35, 20000},
      {2, 4, Modulation::qpsk, 200, 0, 20, 0},      {3, 3, Modulation::qpsk, 200, 0, 20, 0},
      {3, 3, Modulation::qam16, 100, 5, 25, 0},     {3, 3, Modulation::qam64, 40, 10, 30, 20000},
      {4, 4, Modulation::bpsk, 200, 0, 20, 0},      {4, 4, Modulation::qpsk, 200, 0, 20, 0},
      {4, 4, Modulation::qam16, 100, 5, 25, 0},     {4, 8, Modulation::qam16, 100, 5, 25, 0},
      {4, 4, Modulation::qam64, 30, 10, 30, 20000}, {4, 4, Modulation::qam256, 10, 15, 40, 20000},
      {5, 5, Modulation::qam16, 40, 5, 25, 20000},  {6, 6, Modulation::qpsk, 60, 0, 20, 20000},
      {7, 7, Modulation::qpsk, 40, 0, 20, 20000},   {8, 8, Modulation::bpsk, 60, 0, 20, 0},
      {8, 8, Modulation::qpsk, 30, 5, 20, 20000},   {8, 8, Modulation::qam16, 10, 10, 30, 20000},
      {8, 8, Modulation::qam64, 6, 20, 35, 20000},  {8, 8, Modulation::qam256, 4, 25, 40, 20000},
  };
  for (const GpuCase& c : cases) {
    const MimoShape shape{c.nt, c.nr, c.mod};
    for (const double snr : {c.low_db, c.high_db}) {
      for (const int vpc : {1, 3}) {
        const std::int64_t channels = std::max<std::int64_t>(1, c.channels / vpc);
        const Problem p = make_problem(shape, channels, vpc, snr, Channel::rayleigh, gen);
        for (const float clip : {0.f, 4.f}) {
          StsConfig cfg;
          cfg.clip = clip;
          cfg.node_cap = c.cap;
          for (const bool shared : {false, true})
            expect_cpu_equals_gpu(p, cfg, shared, name(p, snr));
        }
      }
    }
  }
}

// Ill-conditioned channels (the SQRD's near-tie rule and the re-orthogonalisation matter there)
// and the natural column order.
TEST(StsGpu, IllConditionedAndUnsortedMatchCpu) {
  MIMORX_REQUIRE_GPU();
  MIMORX_SEEDED_GENERATOR(gen);
  for (const Modulation mod : {Modulation::qpsk, Modulation::qam16, Modulation::qam64}) {
    const double snr = mod == Modulation::qam64 ? 25 : 15;
    const Problem p = make_problem({4, 4, mod}, 60, 1, snr, Channel::collinear, gen);
    StsConfig cfg;
    cfg.node_cap = 100000;
    expect_cpu_equals_gpu(p, cfg, false, name(p, snr) + " collinear");
    cfg.sorted_qr = false;
    expect_cpu_equals_gpu(p, cfg, false, name(p, snr) + " collinear, unsorted QR");
  }
}

// A node cap that stops many searches: the capped flags, node counts and the bounds written in
// place of unreached counter-hypotheses (capped_llr, or clip) are the CPU's.
TEST(StsGpu, NodeCapTriggersAndMatchesCpu) {
  MIMORX_REQUIRE_GPU();
  MIMORX_SEEDED_GENERATOR(gen);
  const Problem p = make_problem({4, 4, Modulation::qam64}, 400, 1, 5.0, Channel::rayleigh, gen);
  StsConfig cfg;
  cfg.node_cap = 60;
  cfg.capped_llr = 7.f;
  const std::int64_t capped = expect_cpu_equals_gpu(p, cfg, false, name(p, 5));
  EXPECT_GT(capped, p.vectors() / 2) << "the cap of 60 nodes should stop most searches";
  cfg.clip = 3.f;
  EXPECT_GT(expect_cpu_equals_gpu(p, cfg, true, name(p, 5)), 0);
  cfg.schedule = StsSchedule::refill;
  EXPECT_GT(expect_cpu_equals_gpu(p, cfg, true, name(p, 5) + " refill"), 0);
}

// A batch of many blocks and channels (the channel sort orders them hardest first), hard output
// only beside soft.
TEST(StsGpu, LargeBatchAndHardOutputMatchCpu) {
  MIMORX_REQUIRE_GPU();
  MIMORX_SEEDED_GENERATOR(gen);
  const Problem p =
      make_problem({4, 4, Modulation::qam16}, 1 << 14, 1, 15.0, Channel::rayleigh, gen);
  expect_cpu_equals_gpu(p, StsConfig{}, false, name(p, 15));
  for (const StsSchedule schedule : {StsSchedule::refill, StsSchedule::one_per_vector}) {
    for (const float clip : {0.f, 4.f}) {
      StsConfig cfg;  // both kernels give the same, exact and clipped
      cfg.schedule = schedule;
      cfg.clip = clip;
      expect_cpu_equals_gpu(p, cfg, false,
                            name(p, 15) + " schedule " + std::to_string(int(schedule)));
    }
  }
  const Result cpu = run_sts(p, StsConfig{});
  const Result hard = run_sts_gpu(p, StsConfig{}, false, false);
  EXPECT_EQ(0, std::memcmp(cpu.bits.data(), hard.bits.data(), cpu.bits.size()));
}

// The factory's sts on CUDA: LLRs equal the CPU detector's, and the node-cap count comes back
// where the calls check device values (synchronous), as for psd.
TEST(StsGpu, FactoryCountsCappedVectors) {
  MIMORX_REQUIRE_GPU();
  MIMORX_SEEDED_GENERATOR(gen);
  const Problem p = make_problem({4, 4, Modulation::qam64}, 200, 1, 5.0, Channel::rayleigh, gen);
  DetectorOptions o;
  o.soft = true;
  o.psd_node_cap = 60;
  auto cpu = make_detector("sts:6", p.shape, Backend::cpu(), o);
  auto gpu = make_detector("sts:6", p.shape, Backend::cuda(0), o);
  std::vector<std::uint8_t> bits(sz(p.bits()));
  std::vector<float> llrs(sz(p.bits())), got(sz(p.bits()));
  cpu->run(p.input(), View<std::uint8_t>(bits.data(), p.bits(), Memory::host),
           View<float>(llrs.data(), p.bits(), Memory::host));
  Buffer<cf32> h = Buffer<cf32>::device(p.h.size()), y = Buffer<cf32>::device(p.y.size());
  Buffer<float> n0 = Buffer<float>::device(p.n0.size());
  h.copy_from_host(p.h.data(), p.h.size());
  y.copy_from_host(p.y.data(), p.y.size());
  n0.copy_from_host(p.n0.data(), p.n0.size());
  Buffer<std::uint8_t> db = Buffer<std::uint8_t>::device(sz(p.bits()));
  Buffer<float> dl = Buffer<float>::device(sz(p.bits()));
  DetectInput in;
  in.h = ConstMatrixBatch<cf32>(h.data(), p.channels, p.shape.nr, p.shape.nt, Memory::device);
  in.y = ConstMatrixBatch<cf32>(y.data(), p.vectors(), p.shape.nr, 1, Memory::device);
  in.noise_var = View<const float>(n0.data(), p.vectors(), Memory::device);
  gpu->run(in, View<std::uint8_t>(db), View<float>(dl));
  dl.copy_to_host(got.data(), got.size());
  EXPECT_EQ(0, std::memcmp(llrs.data(), got.data(), llrs.size() * sizeof(float)));
  EXPECT_GT(cpu->capped_vectors(), 0);
  EXPECT_EQ(cpu->capped_vectors(), gpu->capped_vectors());
}

// Bad inputs on CUDA: non-finite device values, N0 <= 0, host buffers, wrong sizes, a shape
// mismatch; every one an InvalidArgument before any kernel runs.
TEST(StsGpu, BadInputsAreRefused) {
  MIMORX_REQUIRE_GPU();
  MIMORX_SEEDED_GENERATOR(gen);
  const Problem p = make_problem({2, 2, Modulation::qam16}, 8, 1, 10.0, Channel::rayleigh, gen);
  Buffer<cf32> h = Buffer<cf32>::device(p.h.size()), y = Buffer<cf32>::device(p.y.size());
  Buffer<float> n0 = Buffer<float>::device(p.n0.size());
  h.copy_from_host(p.h.data(), p.h.size());
  y.copy_from_host(p.y.data(), p.y.size());
  n0.copy_from_host(p.n0.data(), p.n0.size());
  Buffer<std::uint8_t> bits = Buffer<std::uint8_t>::device(sz(p.bits()));
  Buffer<float> llrs = Buffer<float>::device(sz(p.bits()));
  DetectInput in;
  in.h = ConstMatrixBatch<cf32>(h.data(), p.channels, p.shape.nr, p.shape.nt, Memory::device);
  in.y = ConstMatrixBatch<cf32>(y.data(), p.vectors(), p.shape.nr, 1, Memory::device);
  in.noise_var = View<const float>(n0.data(), p.vectors(), Memory::device);
  StsPlan plan({p.shape}, Backend::cuda(0));
  const View<std::uint8_t> b(bits);
  const View<float> l(llrs);
  EXPECT_NO_THROW(plan.run(in, b, l));
  // Host outputs for a CUDA plan.
  std::vector<std::uint8_t> hb(sz(p.bits()));
  EXPECT_THROW(plan.run(in, View<std::uint8_t>(hb.data(), p.bits(), Memory::host), l),
               InvalidArgument);
  EXPECT_THROW(plan.run(p.input(), b, l), InvalidArgument);  // host inputs
  EXPECT_THROW(plan.run(in, View<std::uint8_t>(bits.data(), p.bits() - 1, Memory::device), l),
               InvalidArgument);
  EXPECT_THROW(plan.run(in, b, View<float>(llrs.data(), p.bits() - 1, Memory::device)),
               InvalidArgument);
  // A NaN in y, then a zero N0, on the device.
  const cf32 nan(std::nanf(""), 0.f);
  Buffer<cf32> y_bad = Buffer<cf32>::device(p.y.size());
  std::vector<cf32> yb = p.y;
  yb[3] = nan;
  y_bad.copy_from_host(yb.data(), yb.size());
  DetectInput bad = in;
  bad.y = ConstMatrixBatch<cf32>(y_bad.data(), p.vectors(), p.shape.nr, 1, Memory::device);
  EXPECT_THROW(plan.run(bad, b, l), InvalidArgument);
  std::vector<float> nb = p.n0;
  nb[2] = 0.f;
  Buffer<float> n0_bad = Buffer<float>::device(nb.size());
  n0_bad.copy_from_host(nb.data(), nb.size());
  bad = in;
  bad.noise_var = View<const float>(n0_bad.data(), p.vectors(), Memory::device);
  EXPECT_THROW(plan.run(bad, b, l), InvalidArgument);
  StsPlan other({{2, 3, Modulation::qam16}}, Backend::cuda(0));
  EXPECT_THROW(other.run(in, b, l), InvalidArgument);  // shape mismatch
}

}  // namespace
}  // namespace mimorx::detect

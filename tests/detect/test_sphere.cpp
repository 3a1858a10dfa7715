// Sphere decoders: the Schnorr-Euchner CPU reference, the CPU emulation of the PSD search and
// the CUDA PSD, each checked against a double-precision brute-force ML search.
#include <gtest/gtest.h>

#include <Eigen/Dense>
#include <cmath>
#include <complex>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "detect/sphere_internal.hpp"
#include "mimorx/detect/sphere.hpp"
#include "support/gpu.hpp"

#if __has_include("mimorx/detect/ml.hpp")
#include "mimorx/detect/ml.hpp"
#define MIMORX_TEST_HAS_ML 1
#endif

namespace mimorx::detect {
namespace {

using cd = std::complex<double>;

std::size_t sz(std::int64_t v) { return static_cast<std::size_t>(v); }

struct Problem {
  MimoShape shape;
  std::int64_t channels = 0;
  int vpc = 1;
  std::vector<cf32> h, y;
  std::vector<float> n0;
  std::int64_t vectors() const { return channels * vpc; }
  DetectInput input() const {
    DetectInput in;
    in.h = ConstMatrixBatch<cf32>(h.data(), channels, shape.nr, shape.nt, Memory::host);
    in.y = ConstMatrixBatch<cf32>(y.data(), vectors(), shape.nr, 1, Memory::host);
    in.noise_var = View<const float>(n0.data(), std::int64_t(n0.size()), Memory::host);
    in.vectors_per_channel = vpc;
    return in;
  }
};

cf32 random_symbol(Modulation mod, std::mt19937_64& rng) {
  std::uint8_t b[8] = {};
  for (int k = 0; k < bits_per_symbol(mod); ++k) b[k] = std::uint8_t(rng() & 1);
  return map_symbol(mod, b);
}

// i.i.d. Rayleigh channels (or, with cond > 0, H = U diag(s) V^H with singular values spread
// log-uniformly over [1/cond, 1]), random symbols, AWGN at `snr_db` per receive antenna.
Problem make_problem(MimoShape shape, std::int64_t channels, int vpc, double snr_db,
                     std::mt19937_64& rng, double cond = 0) {
  Problem p;
  p.shape = shape;
  p.channels = channels;
  p.vpc = vpc;
  const int nr = shape.nr, nt = shape.nt;
  std::normal_distribution<double> g(0.0, std::sqrt(0.5));
  for (std::int64_t c = 0; c < channels; ++c) {
    Eigen::MatrixXcd H(nr, nt);
    for (int i = 0; i < nr; ++i)
      for (int t = 0; t < nt; ++t) H(i, t) = cd(g(rng), g(rng));
    if (cond > 0) {
      Eigen::MatrixXcd A(nr, nr), B(nt, nt);
      for (int i = 0; i < nr * nr; ++i) A.data()[i] = cd(g(rng), g(rng));
      for (int i = 0; i < nt * nt; ++i) B.data()[i] = cd(g(rng), g(rng));
      Eigen::MatrixXcd U = Eigen::HouseholderQR<Eigen::MatrixXcd>(A).householderQ();
      Eigen::MatrixXcd V = Eigen::HouseholderQR<Eigen::MatrixXcd>(B).householderQ();
      Eigen::MatrixXcd S = Eigen::MatrixXcd::Zero(nr, nt);
      for (int t = 0; t < nt; ++t) S(t, t) = std::pow(cond, -double(t) / std::max(1, nt - 1));
      H = U * S * V.adjoint();
    }
    for (int t = 0; t < nt; ++t)
      for (int i = 0; i < nr; ++i)
        p.h.push_back(cf32(float(H(i, t).real()), float(H(i, t).imag())));
  }
  const double n0 = std::pow(10.0, -snr_db / 10.0) * nt;
  std::normal_distribution<double> w(0.0, std::sqrt(n0 / 2));
  for (std::int64_t v = 0; v < p.vectors(); ++v) {
    const cf32* h = &p.h[sz((v / vpc) * nr * nt)];
    std::vector<cf32> x(sz(nt));
    for (auto& s : x) s = random_symbol(shape.mod, rng);
    for (int i = 0; i < nr; ++i) {
      cf32 acc(float(w(rng)), float(w(rng)));
      for (int t = 0; t < nt; ++t) acc += h[t * nr + i] * x[sz(t)];
      p.y.push_back(acc);
    }
  }
  p.n0 = {float(n0)};
  return p;
}

double metric_of(const Problem& p, std::int64_t v, const cf32* x) {
  const int nr = p.shape.nr, nt = p.shape.nt;
  const cf32* h = &p.h[sz((v / p.vpc) * nr * nt)];
  const cf32* y = &p.y[sz(v * nr)];
  double acc = 0;
  for (int i = 0; i < nr; ++i) {
    cd e(y[i].re, y[i].im);
    for (int t = 0; t < nt; ++t) e -= cd(h[t * nr + i].re, h[t * nr + i].im) * cd(x[t].re, x[t].im);
    acc += std::norm(e);
  }
  return acc;
}

// The oracle: every one of the M^nt candidate vectors, in double precision, with the residual
// updated incrementally stream by stream.
double brute_force_ml(const Problem& p, std::int64_t v) {
  const int nr = p.shape.nr, nt = p.shape.nt, M = constellation_size(p.shape.mod);
  const cf32* h = &p.h[sz((v / p.vpc) * nr * nt)];
  const cf32* y = &p.y[sz(v * nr)];
  std::vector<cd> pts(sz(M));
  for (int s = 0; s < M; ++s) {
    std::uint8_t b[8] = {};
    for (int k = 0; k < bits_per_symbol(p.shape.mod); ++k)
      b[k] = std::uint8_t((s >> (bits_per_symbol(p.shape.mod) - 1 - k)) & 1);
    const cf32 c = map_symbol(p.shape.mod, b);
    pts[sz(s)] = cd(c.re, c.im);
  }
  std::vector<cd> res(sz((nt + 1) * nr));
  for (int i = 0; i < nr; ++i) res[sz(i)] = cd(y[i].re, y[i].im);
  double best = 1e300;
  std::vector<int> idx(sz(nt), -1);
  int t = 0;
  while (t >= 0) {
    if (++idx[sz(t)] == M) {
      idx[sz(t)] = -1;
      --t;
      continue;
    }
    const cd x = pts[sz(idx[sz(t)])];
    cd* in = &res[sz(t * nr)];
    cd* out = &res[sz((t + 1) * nr)];
    for (int i = 0; i < nr; ++i) out[i] = in[i] - cd(h[t * nr + i].re, h[t * nr + i].im) * x;
    if (t == nt - 1) {
      double m = 0;
      for (int i = 0; i < nr; ++i) m += std::norm(out[i]);
      best = std::min(best, m);
    } else {
      ++t;
    }
  }
  return best;
}

double tolerance(const Problem& p, std::int64_t v) {
  double yy = 0;
  for (int i = 0; i < p.shape.nr; ++i) yy += norm2(p.y[sz(v * p.shape.nr + i)]);
  return 2e-5 * (1.0 + yy);
}

struct Output {
  std::vector<std::uint8_t> bits;
  std::vector<float> metrics;
  std::vector<SearchStats> stats;
  std::vector<cf32> symbols;
};

Output run_cpu(const Problem& p, SphereConfig cfg) {
  cfg.shape = p.shape;
  SpherePlan plan(cfg, Backend::cpu());
  Output o;
  const auto V = p.vectors();
  o.bits.assign(sz(V * p.shape.bits_per_vector()), 7);
  o.metrics.assign(sz(V), -1.f);
  o.stats.resize(sz(V));
  o.symbols.resize(sz(V * p.shape.nt));
  plan.run(p.input(), View<std::uint8_t>(o.bits.data(), std::int64_t(o.bits.size()), Memory::host),
           View<float>(o.metrics.data(), V, Memory::host),
           View<SearchStats>(o.stats.data(), V, Memory::host),
           View<cf32>(o.symbols.data(), V * p.shape.nt, Memory::host));
  return o;
}

// Symbols from the returned bits, checked against the returned symbols.
std::vector<cf32> symbols_from_bits(const Problem& p, const Output& o, std::int64_t v) {
  const int nt = p.shape.nt, mb = bits_per_symbol(p.shape.mod);
  std::vector<cf32> x(sz(nt));
  for (int t = 0; t < nt; ++t) {
    x[sz(t)] = map_symbol(p.shape.mod, &o.bits[sz((v * nt + t) * mb)]);
    EXPECT_EQ(x[sz(t)], o.symbols[sz(v * nt + t)]) << "vector " << v;
  }
  return x;
}

// Every uncapped vector's decision has the ML metric; the reported metric is its metric.
void expect_exact(const Problem& p, const Output& o, const std::string& what, bool babai = false) {
  for (std::int64_t v = 0; v < p.vectors(); ++v) {
    const auto x = symbols_from_bits(p, o, v);
    const double got = metric_of(p, v, x.data());
    const double ml = brute_force_ml(p, v);
    const double tol = tolerance(p, v);
    ASSERT_EQ(o.stats[sz(v)].capped, 0) << what << " vector " << v;
    ASSERT_LE(got, ml + tol) << what << " vector " << v << " is not the ML decision";
    ASSERT_NEAR(o.metrics[sz(v)], got, tol) << what << " vector " << v;
    // From an infinite radius the first descent always ends in a leaf; from the Babai radius
    // none may beat the Babai point, and the search may stop at the first level: when the
    // Babai point is the ML point and its last levels add less than an ulp to the metric, its
    // first-level prefix already has metric >= d^2 in float (seen with 2x2 BPSK at 10 dB).
    ASSERT_GE(o.stats[sz(v)].nodes, babai ? 1 : p.shape.nt) << what;
    if (!babai) {
      ASSERT_GE(o.stats[sz(v)].leaves, 1) << what;
    }
  }
}

struct Case {
  int nt, nr;
  Modulation mod;
  int vectors;
};

const Case kCases[] = {
    {2, 2, Modulation::bpsk, 40},  {2, 2, Modulation::qpsk, 40},  {2, 2, Modulation::qam16, 40},
    {2, 2, Modulation::qam64, 20}, {4, 4, Modulation::qpsk, 20},  {4, 4, Modulation::qam16, 12},
    {8, 8, Modulation::qpsk, 6},   {2, 4, Modulation::qam16, 20}, {3, 5, Modulation::qpsk, 20},
    {1, 1, Modulation::bpsk, 10},  {3, 3, Modulation::bpsk, 20}};

std::string name(const Case& c, double snr) {
  return std::to_string(c.nt) + "x" + std::to_string(c.nr) + " " + to_string(c.mod) + " " +
         std::to_string(int(snr)) + " dB";
}

// The reduced problem of vector v (QR of its channel, z = Q^T y) that the host PSD emulation
// searches.
struct Reduced {
  std::vector<float> q, r, z;
  std::vector<int> ip;
};
Reduced reduce_vector(const Problem& p, const Case& c, int n, std::int64_t v) {
  Reduced d{std::vector<float>(sz(2 * c.nr * n)), std::vector<float>(sz(n * n)),
            std::vector<float>(sz(n)), std::vector<int>(sz(n))};
  sphere::qr_channel(c.mod, &p.h[sz(v * c.nr * c.nt)], c.nr, c.nt, d.q.data(), d.r.data(),
                     d.ip.data());
  for (int k = 0; k < n; ++k)
    d.z[sz(k)] = sphere::project(d.q.data(), 2 * c.nr, c.nr, &p.y[sz(v * c.nr)], k);
  return d;
}

TEST(SphereCpu, SchnorrEuchnerIsExactMl) {
  std::mt19937_64 rng(test::fresh_seed());
  for (const Case& c : kCases) {
    for (double snr : {0.0, 10.0, 20.0, 30.0}) {
      const Problem p = make_problem({c.nt, c.nr, c.mod}, c.vectors / 2, 2, snr, rng);
      expect_exact(p, run_cpu(p, {}), name(c, snr));
      SphereConfig babai;
      babai.babai_initial_radius = true;
      expect_exact(p, run_cpu(p, babai), name(c, snr) + " babai", true);
    }
  }
}

TEST(SphereCpu, IllConditionedChannelsTerminateWithTheMlDecision) {
  std::mt19937_64 rng(test::fresh_seed() + 1);
  for (const Case& c : {Case{4, 4, Modulation::qam16, 12}, Case{2, 2, Modulation::qam64, 20},
                        Case{4, 6, Modulation::qpsk, 12}}) {
    for (double snr : {10.0, 30.0}) {
      const Problem p = make_problem({c.nt, c.nr, c.mod}, c.vectors, 1, snr, rng, 1e3);
      // The construction really is ill-conditioned.
      Eigen::MatrixXcd H(c.nr, c.nt);
      for (int t = 0; t < c.nt; ++t)
        for (int i = 0; i < c.nr; ++i)
          H(i, t) = cd(p.h[sz(t * c.nr + i)].re, p.h[sz(t * c.nr + i)].im);
      const auto sv = Eigen::JacobiSVD<Eigen::MatrixXcd>(H).singularValues();
      ASSERT_GE(sv(0) / sv(c.nt - 1), 0.9e3);
      expect_exact(p, run_cpu(p, {}), "ill-conditioned " + name(c, snr));
    }
  }
}

// The PSD search emulated on the CPU (the kernel's control flow) is exact for the automatic
// and for explicit parameters, with and without the Babai radius.
TEST(PsdHost, ExactForAutomaticAndExplicitLevels) {
  std::mt19937_64 rng(test::fresh_seed() + 2);
  struct P {
    Case c;
    std::optional<PsdLevels> lv;
  };
  const P cases[] = {
      {{4, 4, Modulation::qam16, 16}, std::nullopt},
      {{4, 4, Modulation::qam16, 16}, PsdLevels{{8, 6, 3, 1}, {1, 3, 2, 1}}},
      {{4, 4, Modulation::qam16, 16}, PsdLevels{{1}, {1}}},
      {{4, 4, Modulation::qpsk, 16}, std::nullopt},
      {{4, 4, Modulation::qpsk, 16}, PsdLevels{{7, 6, 5, 4, 3, 2, 1}, {1, 1, 1, 1, 1, 1, 1}}},
      {{2, 2, Modulation::qam64, 16}, std::nullopt},
      {{2, 2, Modulation::bpsk, 16}, std::nullopt},
      {{3, 4, Modulation::bpsk, 16}, PsdLevels{{2, 1}, {3, 1}}},
      {{8, 8, Modulation::qpsk, 6}, std::nullopt},
      {{2, 2, Modulation::qam256, 6}, std::nullopt},
  };
  for (const P& pc : cases) {
    const Case& c = pc.c;
    const int n = sphere::real_dim(c.mod, c.nt), L = axis_levels(c.mod);
    const PsdLevels lv = pc.lv ? *pc.lv : choose_psd_levels({c.nt, c.nr, c.mod}, 48 * 1024);
    validate_psd_levels(lv, n, L, 48 * 1024);
    const auto sched = sphere::make_schedule(lv, n, L);
    for (double snr : {0.0, 10.0, 20.0, 30.0}) {
      const Problem p = make_problem({c.nt, c.nr, c.mod}, c.vectors, 1, snr, rng);
      for (std::int64_t v = 0; v < p.vectors(); ++v) {
        const Reduced red = reduce_vector(p, c, n, v);
        const std::vector<float>&r = red.r, &z = red.z;
        const std::vector<int>& ip = red.ip;
        for (int mode = 0; mode < 4; ++mode) {
          const bool babai = mode & 1, lazy = mode & 2;
          float d2 = sphere::inf_metric();
          std::uint64_t best = 0;
          if (babai) best = sphere::babai_point(r.data(), z.data(), n, L, &d2);
          const auto o = sphere::psd_search_host(sched, r.data(), z.data(), d2, best, 0, lazy);
          std::vector<cf32> x(sz(c.nt));
          for (int t = 0; t < c.nt; ++t)
            sphere::write_stream(c.mod, c.nt, t, o.best, ip.data(), nullptr, &x[sz(t)]);
          const double ml = brute_force_ml(p, v);
          ASSERT_LE(metric_of(p, v, x.data()), ml + tolerance(p, v))
              << name(c, snr) << " vector " << v << " babai " << babai << " lazy " << lazy;
          ASSERT_EQ(o.capped, 0);
          const auto se = sphere::se_search(r.data(), z.data(), n, L, sphere::inf_metric(), 0, 0);
          ASSERT_NEAR(o.d2, se.d2, 1e-5 * (1 + se.d2));
        }
      }
    }
  }
}

TEST(SphereCpu, NodeCapFlagsTheVectorsItStops) {
  std::mt19937_64 rng(test::fresh_seed() + 3);
  const Problem p = make_problem({4, 4, Modulation::qam16}, 64, 1, 0.0, rng);
  SphereConfig cfg;
  cfg.node_cap = 20;
  const Output o = run_cpu(p, cfg);
  int capped = 0;
  for (std::int64_t v = 0; v < p.vectors(); ++v) {
    const auto& s = o.stats[sz(v)];
    const auto x = symbols_from_bits(p, o, v);
    const double got = metric_of(p, v, x.data()), ml = brute_force_ml(p, v);
    ASSERT_GE(got, ml - tolerance(p, v));
    if (s.capped) {
      ++capped;
      EXPECT_GE(s.nodes, cfg.node_cap);
    } else {
      EXPECT_LE(got, ml + tolerance(p, v)) << "an uncapped vector must be exact";
      EXPECT_LT(s.nodes, cfg.node_cap);
    }
  }
  EXPECT_GT(capped, 0) << "at 0 dB a 4x4 16-QAM search needs more than 20 nodes";
}

TEST(SphereParams, InvalidLevelsAreRejectedNamingTheValue) {
  auto expect_msg = [](const PsdLevels& lv, const std::string& needle) {
    SphereConfig cfg;
    cfg.shape = {4, 4, Modulation::qam16};
    cfg.levels = lv;
    try {
      SpherePlan plan(cfg, Backend::cpu());
      ADD_FAILURE() << "accepted; expected an error containing '" << needle << "'";
    } catch (const InvalidArgument& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  expect_msg({{7, 7, 1}, {1, 1, 1}}, "levels.lvl[1]: 7 is not below");
  expect_msg({{7, 5, 2}, {1, 1, 1}}, "levels.lvl[2]: 2; the last expansion level must be 1");
  expect_msg({{9, 5, 1}, {1, 1, 1}}, "levels.lvl[0]: 9");
  expect_msg({{7, 5, 1}, {1, 0, 1}}, "levels.paths[1]: 0");
  expect_msg({{7, 5, 1}, {1, 1}}, "levels.paths: has 2 entries");
  expect_msg({{}, {}}, "levels.lvl: has 0 entries");
  expect_msg({{4, 1}, {64, 1}}, "levels.lvl[0]: gives exp = 1024");  // 4^5 > 512
  expect_msg({{5, 1}, {300, 1}}, "levels.paths[0]: 300 exceeds");
  SphereConfig bad;
  bad.shape = {9, 9, Modulation::qpsk};
  EXPECT_THROW(SpherePlan(bad, Backend::cpu()), InvalidArgument);
  bad.shape = {4, 3, Modulation::qpsk};
  try {
    SpherePlan plan(bad, Backend::cpu());
    ADD_FAILURE();
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("nr: 3"), std::string::npos) << e.what();
  }
  bad.shape = {4, 4, Modulation::qpsk};
  bad.node_cap = -1;
  EXPECT_THROW(SpherePlan(bad, Backend::cpu()), InvalidArgument);
  // Lanes per vector: only 0, 1, 8, 16, 32, and 1 only without explicit levels.
  bad.node_cap = 0;
  for (int lanes : {-1, 2, 4, 64}) {
    bad.lanes = lanes;
    try {
      SpherePlan plan(bad, Backend::cpu());
      ADD_FAILURE() << "lanes " << lanes << " accepted";
    } catch (const InvalidArgument& e) {
      EXPECT_NE(std::string(e.what()).find("lanes: " + std::to_string(lanes)), std::string::npos)
          << e.what();
    }
  }
  bad.lanes = 1;
  bad.levels = PsdLevels{{7, 5, 3, 1}, {2, 2, 2, 1}};
  try {
    SpherePlan plan(bad, Backend::cpu());
    ADD_FAILURE() << "lanes 1 with explicit levels accepted";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("explicit PSD levels"), std::string::npos) << e.what();
  }
  // The automatic choice: one lane, unless explicit levels ask for the team kernel.
  bad.lanes = 0;
  EXPECT_EQ(SpherePlan(bad, Backend::cpu()).lanes(), 0);
  bad.levels.reset();
  EXPECT_EQ(SpherePlan(bad, Backend::cpu()).lanes(), 1);
  bad.lanes = 16;
  EXPECT_EQ(SpherePlan(bad, Backend::cpu()).lanes(), 16);
  bad.lanes = 0;
  bad.shape = {4, 4, Modulation::qam64};
  EXPECT_EQ(SpherePlan(bad, Backend::cpu()).lanes(), 0);
  bad.shape = {2, 2, Modulation::qam64};
  EXPECT_EQ(SpherePlan(bad, Backend::cpu()).lanes(), 1);
  bad.shape = {4, 4, Modulation::qpsk};
  // Shared memory: a limit smaller than one team's buffers.
  EXPECT_THROW(validate_psd_levels({{7, 5, 3, 1}, {2, 2, 2, 1}}, 8, 4, 256), InvalidArgument);
}

// The kernel's work queue hands out every vector exactly once, whatever the chunk length and
// however the teams interleave.
TEST(PsdQueue, StridedChunksCoverEveryVectorOnce) {
  std::mt19937_64 rng(test::fresh_seed() + 7);
  for (std::int64_t V : {1, 2, 31, 32, 33, 1000, 4097}) {
    for (int len : {1, 2, 3, 7, 32}) {
      std::vector<int> seen(sz(V), 0);
      std::vector<sphere::QueueCursor> teams(5, sphere::QueueCursor(V, len));
      std::vector<bool> done(teams.size(), false);
      std::int64_t counter = 0;
      std::size_t live = teams.size();
      while (live > 0) {
        const std::size_t t = rng() % teams.size();
        if (done[t]) continue;
        auto& q = teams[t];
        if (q.exhausted() && !q.start(counter++)) {
          done[t] = true;
          --live;
          continue;
        }
        const std::int64_t v = q.pop();
        ASSERT_GE(v, 0);
        ASSERT_LT(v, V);
        ++seen[sz(v)];
      }
      for (std::int64_t v = 0; v < V; ++v) ASSERT_EQ(seen[sz(v)], 1) << "V " << V << " len " << len;
    }
  }
}

TEST(SphereParams, AutomaticChoiceIsValidForEveryShape) {
  for (int nt = 1; nt <= 8; ++nt) {
    for (Modulation mod : {Modulation::bpsk, Modulation::qpsk, Modulation::qam16, Modulation::qam64,
                           Modulation::qam256}) {
      const PsdLevels lv = choose_psd_levels({nt, nt, mod}, 48 * 1024);
      EXPECT_NO_THROW(
          validate_psd_levels(lv, sphere::real_dim(mod, nt), axis_levels(mod), 48 * 1024))
          << nt << " " << to_string(mod);
    }
  }
}

TEST(SphereCpu, RejectsBadInputs) {
  std::mt19937_64 rng(test::fresh_seed() + 4);
  Problem p = make_problem({2, 2, Modulation::qpsk}, 2, 1, 10.0, rng);
  SphereConfig cfg;
  cfg.shape = p.shape;
  SpherePlan plan(cfg, Backend::cpu());
  std::vector<std::uint8_t> bits(3);
  EXPECT_THROW(plan.run(p.input(), View<std::uint8_t>(bits.data(), 3, Memory::host)),
               InvalidArgument);
  p.n0[0] = -1.f;
  std::vector<std::uint8_t> ok(sz(p.vectors() * 4));
  EXPECT_THROW(
      plan.run(p.input(), View<std::uint8_t>(ok.data(), std::int64_t(ok.size()), Memory::host)),
      InvalidArgument);
}

#ifdef MIMORX_TEST_HAS_ML
TEST(SphereCpu, AgreesWithExhaustiveMlPlan) {
  std::mt19937_64 rng(test::fresh_seed() + 5);
  for (const Case& c : {Case{2, 2, Modulation::qam16, 40}, Case{4, 4, Modulation::qpsk, 20}}) {
    const Problem p = make_problem({c.nt, c.nr, c.mod}, c.vectors, 1, 10.0, rng);
    const Output o = run_cpu(p, {});
    MlConfig mc;
    mc.shape = p.shape;
    MlPlan ml(mc, Backend::cpu());
    std::vector<std::uint8_t> bits(o.bits.size());
    ml.run(p.input(), View<std::uint8_t>(bits.data(), std::int64_t(bits.size()), Memory::host),
           View<float>{});
    const int nt = c.nt, mb = bits_per_symbol(c.mod);
    for (std::int64_t v = 0; v < p.vectors(); ++v) {
      std::vector<cf32> x(sz(nt));
      for (int t = 0; t < nt; ++t) x[sz(t)] = map_symbol(c.mod, &bits[sz((v * nt + t) * mb)]);
      EXPECT_NEAR(metric_of(p, v, x.data()), o.metrics[sz(v)], tolerance(p, v));
    }
  }
}
#endif

TEST(SphereCpuSlow, SchnorrEuchnerIsExactMl4x4Qam64) {
  std::mt19937_64 rng(test::fresh_seed() + 6);
  for (double snr : {0.0, 10.0, 20.0, 30.0}) {
    const Problem p = make_problem({4, 4, Modulation::qam64}, 3, 1, snr, rng);
    expect_exact(p, run_cpu(p, {}), "4x4 64qam " + std::to_string(int(snr)) + " dB");
  }
}

// ---------------------------------------------------------------- CUDA
#if MIMORX_HAS_CUDA
struct DeviceRun {
  Output o;
};

Output run_gpu(const Problem& p, SphereConfig cfg, int team = 0, int order = 0) {
  cfg.shape = p.shape;
  SpherePlan plan(cfg, Backend::cuda(0));
  const auto V = p.vectors();
  const int nt = p.shape.nt;
  Buffer<cf32> h = Buffer<cf32>::device(p.h.size()), y = Buffer<cf32>::device(p.y.size());
  Buffer<float> n0 = Buffer<float>::device(p.n0.size());
  h.copy_from_host(p.h.data(), p.h.size());
  y.copy_from_host(p.y.data(), p.y.size());
  n0.copy_from_host(p.n0.data(), p.n0.size());
  DetectInput in;
  in.h = ConstMatrixBatch<cf32>(h.data(), p.channels, p.shape.nr, nt, Memory::device);
  in.y = ConstMatrixBatch<cf32>(y.data(), V, p.shape.nr, 1, Memory::device);
  in.noise_var = View<const float>(n0.data(), 1, Memory::device);
  in.vectors_per_channel = p.vpc;
  Buffer<std::uint8_t> bits = Buffer<std::uint8_t>::device(sz(V * p.shape.bits_per_vector()));
  Buffer<float> metrics = Buffer<float>::device(sz(V));
  Buffer<SearchStats> stats = Buffer<SearchStats>::device(sz(V));
  Buffer<cf32> sym = Buffer<cf32>::device(sz(V * nt));
  bits.fill_bytes(0xFF);
  metrics.fill_bytes(0xFF);
  sphere::set_team_override(team);
  sphere::set_order_override(order);
  plan.run(in, View<std::uint8_t>(bits), View<float>(metrics), View<SearchStats>(stats),
           View<cf32>(sym));
  sphere::set_team_override(0);
  sphere::set_order_override(0);
  Output o;
  o.bits.resize(bits.size());
  o.metrics.resize(metrics.size());
  o.stats.resize(stats.size());
  o.symbols.resize(sym.size());
  bits.copy_to_host(o.bits.data(), o.bits.size());
  metrics.copy_to_host(o.metrics.data(), o.metrics.size());
  stats.copy_to_host(o.stats.data(), o.stats.size());
  sym.copy_to_host(o.symbols.data(), o.symbols.size());
  return o;
}
#endif

TEST(SphereGpu, PsdIsExactMl) {
  MIMORX_REQUIRE_GPU();
#if MIMORX_HAS_CUDA
  std::mt19937_64 rng(test::fresh_seed() + 10);
  for (const Case& c : kCases) {
    for (double snr : {0.0, 10.0, 20.0, 30.0}) {
      const Problem p = make_problem({c.nt, c.nr, c.mod}, c.vectors / 2, 2, snr, rng);
      // The automatic choice: one lane per vector, channels hardest first; and in their own
      // order.
      expect_exact(p, run_gpu(p, {}), name(c, snr));
      sphere::set_lane_order_override(1);
      expect_exact(p, run_gpu(p, {}), name(c, snr) + " lanes, channels in their order");
      sphere::set_lane_order_override(0);
      // Every team width on the shapes where the automatic choice could use either.
      if (c.nt == 4 || c.nt == 8) {
        for (int team : {8, 16, 32}) {
          for (int order : {1, 2}) {
            expect_exact(
                p, run_gpu(p, {}, team, order),
                name(c, snr) + " team " + std::to_string(team) + " order " + std::to_string(order));
          }
        }
      }
      SphereConfig babai;
      babai.babai_initial_radius = true;
      expect_exact(p, run_gpu(p, babai), name(c, snr) + " babai", true);
      babai.lanes = 8;
      expect_exact(p, run_gpu(p, babai), name(c, snr) + " babai, team kernel", true);
    }
  }
#endif
}

TEST(SphereGpu, ExplicitLevelsAndIllConditionedChannels) {
  MIMORX_REQUIRE_GPU();
#if MIMORX_HAS_CUDA
  std::mt19937_64 rng(test::fresh_seed() + 11);
  for (const PsdLevels& lv : {PsdLevels{{8, 6, 3, 1}, {1, 3, 2, 1}}, PsdLevels{{1}, {1}},
                              PsdLevels{{7, 5, 3, 1}, {8, 8, 8, 1}}, PsdLevels{{6, 1}, {16, 1}}}) {
    for (double snr : {0.0, 20.0}) {
      for (double cond : {0.0, 1e3}) {
        const Problem p = make_problem({4, 4, Modulation::qam16}, 24, 1, snr, rng, cond);
        SphereConfig cfg;
        cfg.levels = lv;
        for (int order : {1, 2}) {
          expect_exact(p, run_gpu(p, cfg, 0, order),
                       "4x4 16qam explicit levels cond " + std::to_string(cond) + " order " +
                           std::to_string(order));
        }
      }
    }
  }
  for (double snr : {0.0, 10.0, 20.0, 30.0}) {
    const Problem p = make_problem({4, 4, Modulation::qam64}, 3, 1, snr, rng);
    expect_exact(p, run_gpu(p, {}), "4x4 64qam " + std::to_string(int(snr)) + " dB");
  }
#endif
}

TEST(SphereGpu, AgreesWithCpuOn8x8Qam16AndLargeBatches) {
  MIMORX_REQUIRE_GPU();
#if MIMORX_HAS_CUDA
  std::mt19937_64 rng(test::fresh_seed() + 12);
  for (auto [shape, channels, vpc] : {std::tuple{MimoShape{8, 8, Modulation::qam16}, 16, 4},
                                      std::tuple{MimoShape{4, 4, Modulation::qam16}, 200, 50},
                                      std::tuple{MimoShape{2, 2, Modulation::qam256}, 50, 20}}) {
    for (double snr : {5.0, 15.0, 25.0}) {
      const Problem p = make_problem(shape, channels, vpc, snr, rng);
      const Output cpu = run_cpu(p, {});
      // The lane kernel (automatic) and the team kernel.
      for (int team : {0, 32}) {
        const Output gpu = run_gpu(p, {}, team, snr < 10 ? 2 : 1);
        std::int64_t differ = 0;
        for (std::int64_t v = 0; v < p.vectors(); ++v) {
          const auto xc = symbols_from_bits(p, cpu, v), xg = symbols_from_bits(p, gpu, v);
          const double mc = metric_of(p, v, xc.data()), mg = metric_of(p, v, xg.data());
          ASSERT_NEAR(mc, mg, tolerance(p, v)) << "vector " << v << " team " << team;
          ASSERT_EQ(gpu.stats[sz(v)].capped, 0);
          differ += xc != xg ? 1 : 0;
        }
        // Different decisions only where two candidates tie to float precision.
        EXPECT_LE(differ, p.vectors() / 100 + 1) << "team " << team;
      }
    }
  }
#endif
}

// Vectors (one channel each) whose GPU node, leaf and radius-update counts equal those of the
// CPU search `ref` run on the CPU's reduction of the vector.
template <class Ref>
std::int64_t counters_agreeing(const Problem& p, const Case& c, const Output& gpu, Ref ref) {
  const int n = sphere::real_dim(c.mod, c.nt);
  std::int64_t same = 0;
  for (std::int64_t v = 0; v < p.vectors(); ++v) {
    const sphere::PsdOutcome o = ref(reduce_vector(p, c, n, v));
    const auto& g = gpu.stats[sz(v)];
    same += (g.nodes == o.nodes && g.leaves == o.leaves && g.radius_updates == o.updates) ? 1 : 0;
  }
  return same;
}

// The kernel runs the algorithm of the CPU emulation (same targets, child metrics, order and
// radius updates), so the per-vector counters mostly agree: float rounding (FMA contraction on
// the device) reorders nearly equal metrics or flips a comparison with the radius and changes a
// vector's path, which at 10 dB 16-QAM (300 nodes per vector) can affect up to 1 vector in 5.
// A wrong order, count or radius update would change almost every vector.
TEST(SphereGpu, CountersMatchTheHostEmulation) {
  MIMORX_REQUIRE_GPU();
#if MIMORX_HAS_CUDA
  std::mt19937_64 rng(test::fresh_seed() + 14);
  for (const Case& c : {Case{4, 4, Modulation::qpsk, 300}, Case{4, 4, Modulation::qam16, 300},
                        Case{2, 2, Modulation::qam64, 300}}) {
    for (double snr : {10.0, 20.0}) {
      for (int order : {1, 2}) {
        for (int team : {8, 16}) {
          const Problem p = make_problem({c.nt, c.nr, c.mod}, c.vectors, 1, snr, rng);
          const Output gpu = run_gpu(p, {}, team, order);
          const int n = sphere::real_dim(c.mod, c.nt), L = axis_levels(c.mod);
          SphereConfig cfg;
          cfg.shape = p.shape;
          const auto sched =
              sphere::make_schedule(SpherePlan(cfg, Backend::cuda(0)).levels(), n, L);
          const std::int64_t same = counters_agreeing(p, c, gpu, [&](const Reduced& red) {
            return sphere::psd_search_host(sched, red.r.data(), red.z.data(), sphere::inf_metric(),
                                           0, 0, order == 2);
          });
          EXPECT_GE(same, p.vectors() * 2 / 3)
              << name(c, snr) << " order " << order << " team " << team;
        }
      }
    }
  }
#endif
}

// The lane kernel runs schnorr_euchner (sphere_math.hpp), as the CPU reference does: node,
// leaf and radius-update counts agree vector by vector except where float rounding (FMA
// contraction on the device, a QR computed on each side) flips a comparison of nearly equal
// distances (before the sorted QR broke near-ties of column norms by index, a whole pair of
// equal-norm columns could swap, and only half of the 8x8 QPSK vectors agreed).
TEST(SphereGpu, LaneCountersMatchTheCpuSearch) {
  MIMORX_REQUIRE_GPU();
#if MIMORX_HAS_CUDA
  std::mt19937_64 rng(test::fresh_seed() + 15);
  for (const Case& c : {Case{4, 4, Modulation::qpsk, 300}, Case{4, 4, Modulation::qam16, 300},
                        Case{2, 2, Modulation::qam64, 300}, Case{8, 8, Modulation::qpsk, 100}}) {
    for (double snr : {0.0, 10.0, 20.0}) {
      const Problem p = make_problem({c.nt, c.nr, c.mod}, c.vectors, 1, snr, rng);
      const Output gpu = run_gpu(p, {}, 1);
      const int n = sphere::real_dim(c.mod, c.nt), L = axis_levels(c.mod);
      const std::int64_t same = counters_agreeing(p, c, gpu, [&](const Reduced& red) {
        return sphere::se_search(red.r.data(), red.z.data(), n, L, sphere::inf_metric(), 0, 0);
      });
      std::printf("[ counters ] %s: %lld of %lld vectors agree\n", name(c, snr).c_str(),
                  static_cast<long long>(same), static_cast<long long>(p.vectors()));
      EXPECT_GE(same, p.vectors() * 3 / 4) << name(c, snr);
    }
  }
#endif
}

TEST(SphereGpu, NodeCapFlagsTheVectorsItStops) {
  MIMORX_REQUIRE_GPU();
#if MIMORX_HAS_CUDA
  std::mt19937_64 rng(test::fresh_seed() + 13);
  const Problem p = make_problem({4, 4, Modulation::qam16}, 64, 1, 0.0, rng);
  SphereConfig cfg;
  cfg.node_cap = 40;
  for (int lanes : {1, 8}) {
    cfg.lanes = lanes;
    const Output o = run_gpu(p, cfg);
    int capped = 0;
    for (std::int64_t v = 0; v < p.vectors(); ++v) {
      const auto x = symbols_from_bits(p, o, v);
      const double got = metric_of(p, v, x.data()), ml = brute_force_ml(p, v);
      if (o.stats[sz(v)].capped) {
        ++capped;
        EXPECT_GE(o.stats[sz(v)].nodes, cfg.node_cap);
      } else {
        EXPECT_LE(got, ml + tolerance(p, v)) << "lanes " << lanes;
      }
    }
    EXPECT_GT(capped, 0) << "lanes " << lanes;
  }
#endif
}

}  // namespace
}  // namespace mimorx::detect

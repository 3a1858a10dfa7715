#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "mimorx/config.hpp"
#include "mimorx/detect/ml.hpp"
#include "support/gpu.hpp"

namespace mimorx::detect {
namespace {

using cd = std::complex<double>;
std::size_t sz(std::int64_t i) { return static_cast<std::size_t>(i); }

struct Problem {
  MimoShape shape;
  int vpc = 1;
  std::vector<cf32> h, y;
  std::vector<float> n0;
  std::int64_t vectors() const { return std::int64_t(y.size()) / shape.nr; }
  DetectInput input() const {
    DetectInput in;
    in.h = ConstMatrixBatch<cf32>(h.data(), vectors() / vpc, shape.nr, shape.nt, Memory::host);
    in.y = ConstMatrixBatch<cf32>(y.data(), vectors(), shape.nr, 1, Memory::host);
    in.noise_var = View<const float>(n0.data(), std::int64_t(n0.size()), Memory::host);
    in.vectors_per_channel = vpc;
    return in;
  }
  float noise(std::int64_t v) const { return n0[n0.size() == 1 ? 0 : sz(v)]; }
};

void fill_y(Problem& p, std::mt19937_64& gen);

Problem make_problem(MimoShape s, std::int64_t channels, int vpc, bool per_vector_n0,
                     std::mt19937_64& gen) {
  Problem p;
  p.shape = s;
  p.vpc = vpc;
  const std::int64_t V = channels * vpc;
  std::normal_distribution<float> g(0.f, std::sqrt(0.5f));
  std::uniform_real_distribution<float> u(0.005f, 1.5f);
  p.h.resize(sz(channels * s.nr * s.nt));
  for (auto& e : p.h) e = {g(gen), g(gen)};
  p.n0.resize(per_vector_n0 ? sz(V) : 1);
  for (auto& e : p.n0) e = u(gen);
  fill_y(p, gen);
  return p;
}

// y = H x + n for random symbols x, with the problem's channels and noise variances.
void fill_y(Problem& p, std::mt19937_64& gen) {
  const MimoShape& s = p.shape;
  const int vpc = p.vpc;
  const std::int64_t V = std::int64_t(p.h.size()) / (s.nr * s.nt) * vpc;
  const int m = bits_per_symbol(s.mod);
  std::normal_distribution<float> g(0.f, std::sqrt(0.5f));
  p.y.resize(sz(V * s.nr));
  for (std::int64_t v = 0; v < V; ++v) {
    std::vector<cf32> x(sz(s.nt));
    for (auto& xt : x) {
      std::uint8_t b[8] = {};
      for (int k = 0; k < m; ++k) b[k] = std::uint8_t(gen() & 1);
      xt = map_symbol(s.mod, b);
    }
    const float sd = std::sqrt(p.noise(v));
    for (int i = 0; i < s.nr; ++i) {
      cf32 acc{0.f, 0.f};
      for (int j = 0; j < s.nt; ++j)
        acc += p.h[sz((v / vpc) * s.nr * s.nt + j * s.nr + i)] * x[sz(j)];
      p.y[sz(v * s.nr + i)] = acc + cf32{sd * g(gen), sd * g(gen)};
    }
  }
}

// ||y - H x||^2 in double for the symbols of the given bits (nt*m).
double metric_of_bits(const Problem& p, std::int64_t v, const std::uint8_t* bits) {
  const MimoShape& s = p.shape;
  const int m = bits_per_symbol(s.mod);
  double d = 0;
  for (int i = 0; i < s.nr; ++i) {
    cd r(p.y[sz(v * s.nr + i)].re, p.y[sz(v * s.nr + i)].im);
    for (int j = 0; j < s.nt; ++j) {
      const cf32 x = map_symbol(s.mod, bits + j * m);
      const cf32 hij = p.h[sz((v / p.vpc) * s.nr * s.nt + j * s.nr + i)];
      r -= cd(hij.re, hij.im) * cd(x.re, x.im);
    }
    d += std::norm(r);
  }
  return d;
}

// Brute force in double: the minimum metric and the per-bit minima [bit][value].
struct Brute {
  double best;
  std::vector<double> mins;  // (t*m + k)*2 + value
};
Brute brute_force(const Problem& p, std::int64_t v) {
  const MimoShape& s = p.shape;
  const int m = bits_per_symbol(s.mod), nbits = s.nt * m;
  Brute b{std::numeric_limits<double>::infinity(),
          std::vector<double>(sz(2 * nbits), std::numeric_limits<double>::infinity())};
  std::vector<std::uint8_t> bits(sz(nbits));
  for (std::uint64_t hyp = 0; hyp < (std::uint64_t(1) << nbits); ++hyp) {
    for (int k = 0; k < nbits; ++k) bits[sz(k)] = (hyp >> k) & 1;
    const double d = metric_of_bits(p, v, bits.data());
    b.best = std::min(b.best, d);
    for (int k = 0; k < nbits; ++k) {
      double& t = b.mins[sz(2 * k + bits[sz(k)])];
      t = std::min(t, d);
    }
  }
  return b;
}

// Float metrics carry an absolute error of a few ulp of the energies involved.
double metric_tolerance(const Problem& p, std::int64_t v) {
  double e = 1;
  for (int i = 0; i < p.shape.nr; ++i) e += double(norm2(p.y[sz(v * p.shape.nr + i)]));
  for (int k = 0; k < p.shape.nr * p.shape.nt; ++k)
    e += double(norm2(p.h[sz((v / p.vpc) * p.shape.nr * p.shape.nt + k)]));
  return 1e-6 * e;
}

struct Case {
  int nt, nr;
  Modulation mod;
  std::int64_t channels;
};
const Case kCases[] = {
    {1, 1, Modulation::bpsk, 60},  {1, 2, Modulation::qam16, 40}, {2, 2, Modulation::qpsk, 40},
    {2, 3, Modulation::qam16, 30}, {3, 2, Modulation::qpsk, 30},  {2, 2, Modulation::bpsk, 30},
    {3, 3, Modulation::qam16, 6},  {4, 4, Modulation::qpsk, 10},  {2, 2, Modulation::qam64, 6},
    {5, 4, Modulation::qpsk, 4},   {8, 8, Modulation::bpsk, 4},   {2, 1, Modulation::qam256, 1},
    {1, 8, Modulation::qam256, 10}};

std::string name(const Case& c) {
  return std::to_string(c.nt) + "x" + std::to_string(c.nr) + " " + to_string(c.mod);
}

void run(const Problem& p, bool soft, const Backend& backend, std::vector<std::uint8_t>& bits,
         std::vector<float>& llrs);

void run_cpu(const Problem& p, bool soft, std::vector<std::uint8_t>& bits,
             std::vector<float>& llrs) {
  run(p, soft, Backend::cpu(), bits, llrs);
}

void run(const Problem& p, bool soft, const Backend& backend, std::vector<std::uint8_t>& bits,
         std::vector<float>& llrs) {
  const std::int64_t n = p.vectors() * p.shape.bits_per_vector();
  bits.assign(sz(n), 9);
  llrs.assign(soft ? sz(n) : 0, std::nanf(""));
  MlPlan plan({p.shape, soft}, backend);
  if (backend.is_cpu()) {
    plan.run(p.input(), View<std::uint8_t>(bits.data(), n, Memory::host),
             View<float>(llrs.data(), std::int64_t(llrs.size()), Memory::host));
    return;
  }
#if MIMORX_HAS_CUDA
  Buffer<cf32> h = Buffer<cf32>::device(p.h.size()), y = Buffer<cf32>::device(p.y.size());
  Buffer<float> n0 = Buffer<float>::device(p.n0.size()), l = Buffer<float>::device(llrs.size());
  Buffer<std::uint8_t> b = Buffer<std::uint8_t>::device(bits.size());
  h.copy_from_host(p.h.data(), p.h.size());
  y.copy_from_host(p.y.data(), p.y.size());
  n0.copy_from_host(p.n0.data(), p.n0.size());
  DetectInput in = p.input();
  in.h.data = h.data();
  in.h.where = Memory::device;
  in.y.data = y.data();
  in.y.where = Memory::device;
  in.noise_var = View<const float>(n0.data(), std::int64_t(p.n0.size()), Memory::device);
  plan.run(in, View<std::uint8_t>(b), soft ? View<float>(l) : View<float>{});
  b.copy_to_host(bits.data(), bits.size());
  if (soft) l.copy_to_host(llrs.data(), llrs.size());
#endif
}

void expect_hard_exact(const Problem& p, const std::vector<std::uint8_t>& bits,
                       const std::string& what) {
  const int per = p.shape.bits_per_vector();
  for (std::int64_t v = 0; v < p.vectors(); ++v) {
    for (int k = 0; k < per; ++k) ASSERT_LE(bits[sz(v * per + k)], 1) << what;
    const Brute b = brute_force(p, v);
    EXPECT_NEAR(metric_of_bits(p, v, &bits[sz(v * per)]), b.best, metric_tolerance(p, v))
        << what << " vector " << v;
  }
}

void expect_soft_exact(const Problem& p, const std::vector<float>& llrs,
                       const std::vector<std::uint8_t>& bits, const std::string& what) {
  const int per = p.shape.bits_per_vector();
  for (std::int64_t v = 0; v < p.vectors(); ++v) {
    const Brute b = brute_force(p, v);
    const double n0 = p.noise(v);
    for (int k = 0; k < per; ++k) {
      const double ref = (b.mins[sz(2 * k + 1)] - b.mins[sz(2 * k)]) / n0;
      const float l = llrs[sz(v * per + k)];
      EXPECT_NEAR(l, ref, 1e-3 * std::abs(ref) + metric_tolerance(p, v) / n0)
          << what << " vector " << v << " bit " << k;
      EXPECT_EQ(bits[sz(v * per + k)], l < 0.f ? 1 : 0);
    }
  }
}

// Channels on which the column-0 / last-column split of ml_math.hpp degenerates (kind % 5): a
// zero last column (g = 0), a zero column 0 (s0 = 0), column 0 equal to the last (w = 0 up to
// rounding), column 0 nearly parallel to the last (tiny s0, large u0), and, for nt >= 3, a middle
// column equal to column 0. y is drawn for the modified channels.
Problem make_degenerate_problem(MimoShape s, std::int64_t channels, std::mt19937_64& gen) {
  Problem p = make_problem(s, channels, 1, true, gen);
  std::normal_distribution<float> g(0.f, 1.f);
  for (std::int64_t c = 0; c < channels; ++c) {
    cf32* h = &p.h[sz(c * s.nr * s.nt)];
    cf32* last = h + (s.nt - 1) * s.nr;
    for (int i = 0; i < s.nr; ++i) {
      switch (c % 5) {
        case 0:
          last[i] = {0.f, 0.f};
          break;
        case 1:
          h[i] = {0.f, 0.f};
          break;
        case 2:
          h[i] = last[i];
          break;
        case 3:
          h[i] = last[i] * cf32{0.3f, -0.7f} + cf32{1e-4f * g(gen), 1e-4f * g(gen)};
          break;
        default:
          if (s.nt >= 3) h[s.nr + i] = h[i];
          break;
      }
    }
  }
  fill_y(p, gen);
  return p;
}

const Case kDegenerateCases[] = {{2, 2, Modulation::qam16, 10}, {3, 2, Modulation::qpsk, 10},
                                 {3, 3, Modulation::qam16, 5},  {2, 3, Modulation::bpsk, 10},
                                 {2, 2, Modulation::qam64, 5},  {2, 1, Modulation::qam256, 5}};

TEST(Ml, DegenerateChannelsStayExact) {
  std::mt19937_64 gen(test::fresh_seed() + 6);
  for (const Case& c : kDegenerateCases) {
    const Problem p = make_degenerate_problem({c.nt, c.nr, c.mod}, c.channels, gen);
    std::vector<std::uint8_t> bits;
    std::vector<float> llrs;
    run_cpu(p, false, bits, llrs);
    expect_hard_exact(p, bits, "degenerate " + name(c));
    run_cpu(p, true, bits, llrs);
    expect_soft_exact(p, llrs, bits, "degenerate " + name(c));
  }
}

TEST(Ml, HardDecisionsAreExactMl) {
  std::mt19937_64 gen(test::fresh_seed());
  for (const Case& c : kCases) {
    for (int vpc : {1, 3}) {
      const Problem p = make_problem({c.nt, c.nr, c.mod}, c.channels, vpc, vpc == 3, gen);
      std::vector<std::uint8_t> bits;
      std::vector<float> llrs;
      run_cpu(p, false, bits, llrs);
      expect_hard_exact(p, bits, name(c));
    }
  }
}

TEST(Ml, SoftOutputsAreExactMaxLog) {
  std::mt19937_64 gen(test::fresh_seed() + 1);
  for (const Case& c : kCases) {
    const Problem p = make_problem({c.nt, c.nr, c.mod}, c.channels, 2, true, gen);
    std::vector<std::uint8_t> bits;
    std::vector<float> llrs;
    run_cpu(p, true, bits, llrs);
    expect_soft_exact(p, llrs, bits, name(c));
  }
}

TEST(Ml, NoiselessRecoversTransmittedBits) {
  std::mt19937_64 gen(test::fresh_seed() + 2);
  const MimoShape s{4, 4, Modulation::qam16};
  const int per = s.bits_per_vector();
  const std::int64_t V = 50;
  std::vector<std::uint8_t> tx(sz(V * per));
  for (auto& b : tx) b = std::uint8_t(gen() & 1);
  Problem p = make_problem(s, V, 1, false, gen);
  p.n0 = {1e-6f};
  for (std::int64_t v = 0; v < V; ++v) {
    for (int i = 0; i < 4; ++i) {
      cf32 acc{0.f, 0.f};
      for (int j = 0; j < 4; ++j)
        acc += p.h[sz(v * 16 + j * 4 + i)] * map_symbol(s.mod, &tx[sz(v * per + j * 4)]);
      p.y[sz(v * 4 + i)] = acc;
    }
  }
  std::vector<std::uint8_t> bits;
  std::vector<float> llrs;
  run_cpu(p, false, bits, llrs);
  EXPECT_EQ(bits, tx);
  run_cpu(p, true, bits, llrs);
  EXPECT_EQ(bits, tx);
}

TEST(Ml, BadInputThrows) {
  std::mt19937_64 gen(test::fresh_seed() + 3);
  EXPECT_THROW(MlPlan({{9, 4, Modulation::bpsk}, false}, Backend::cpu()), InvalidArgument);
  EXPECT_THROW(MlPlan({{2, 0, Modulation::bpsk}, false}, Backend::cpu()), InvalidArgument);
  try {
    MlPlan({{5, 5, Modulation::qam64}, false}, Backend::cpu());
    ADD_FAILURE() << "5x5 64qam (2^30 hypotheses) must be refused";
  } catch (const Unsupported& e) {
    EXPECT_NE(std::string(e.what()).find("16777216"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("64^5"), std::string::npos) << e.what();
  }
  EXPECT_THROW(MlPlan({{4, 4, Modulation::qam256}, false}, Backend::cpu()), Unsupported);
  EXPECT_NO_THROW(MlPlan({{3, 4, Modulation::qam256}, false}, Backend::cpu()));
  EXPECT_NO_THROW(MlPlan({{4, 4, Modulation::qam64}, false}, Backend::cpu()));

  Problem p = make_problem({2, 2, Modulation::qpsk}, 3, 1, false, gen);
  MlPlan plan({p.shape, false}, Backend::cpu());
  std::vector<std::uint8_t> bits(sz(p.vectors() * 4));
  auto out = [&] {
    return View<std::uint8_t>(bits.data(), std::int64_t(bits.size()), Memory::host);
  };
  EXPECT_NO_THROW(plan.run(p.input(), out(), {}));
  EXPECT_THROW(plan.run(p.input(), View<std::uint8_t>(bits.data(), 5, Memory::host), {}),
               InvalidArgument);
  p.n0[0] = 0.f;
  EXPECT_THROW(plan.run(p.input(), out(), {}), InvalidArgument);
  p.n0[0] = -1.f;
  EXPECT_THROW(plan.run(p.input(), out(), {}), InvalidArgument);
  p.n0[0] = 0.5f;
  p.y[1].im = std::numeric_limits<float>::quiet_NaN();
  EXPECT_THROW(plan.run(p.input(), out(), {}), InvalidArgument);
  p.y[1].im = 0.f;
  p.h[2].re = std::numeric_limits<float>::infinity();
  EXPECT_THROW(plan.run(p.input(), out(), {}), InvalidArgument);
  p.h[2].re = 0.f;
  MlPlan soft({p.shape, true}, Backend::cpu());
  EXPECT_THROW(soft.run(p.input(), {}, {}), InvalidArgument);  // soft needs llrs
  MlPlan other({{2, 3, Modulation::qpsk}, false}, Backend::cpu());
  EXPECT_THROW(other.run(p.input(), out(), {}), InvalidArgument);  // nr mismatch
}

#if MIMORX_HAS_CUDA
TEST(MlGpu, MatchesCpuAndBruteForce) {
  MIMORX_REQUIRE_GPU();
  std::mt19937_64 gen(test::fresh_seed() + 4);
  for (const Case& c : kCases) {
    for (bool soft : {false, true}) {
      const Problem p = make_problem({c.nt, c.nr, c.mod}, c.channels, 2, soft, gen);
      std::vector<std::uint8_t> cb, gb;
      std::vector<float> cl, gl;
      run_cpu(p, soft, cb, cl);
      run(p, soft, Backend::cuda(), gb, gl);
      if (soft) {
        expect_soft_exact(p, gl, gb, "gpu " + name(c));
        const double rel = 1e-4;
        for (std::size_t i = 0; i < cl.size(); ++i) {
          const std::int64_t v = std::int64_t(i) / p.shape.bits_per_vector();
          EXPECT_NEAR(gl[i], cl[i], rel * std::abs(cl[i]) + metric_tolerance(p, v) / p.noise(v));
        }
      } else {
        expect_hard_exact(p, gb, "gpu " + name(c));
        std::size_t differ = 0;
        for (std::size_t i = 0; i < cb.size(); ++i) differ += cb[i] != gb[i];
        // Equal up to near-ties decided by float rounding (FMA contraction on the device).
        EXPECT_LE(differ, cb.size() / 100) << name(c);
      }
    }
  }
}

TEST(MlGpu, DegenerateChannelsStayExact) {
  MIMORX_REQUIRE_GPU();
  std::mt19937_64 gen(test::fresh_seed() + 7);
  for (const Case& c : kDegenerateCases) {
    const Problem p = make_degenerate_problem({c.nt, c.nr, c.mod}, c.channels, gen);
    std::vector<std::uint8_t> bits;
    std::vector<float> llrs;
    run(p, false, Backend::cuda(), bits, llrs);
    expect_hard_exact(p, bits, "gpu degenerate " + name(c));
    run(p, true, Backend::cuda(), bits, llrs);
    expect_soft_exact(p, llrs, bits, "gpu degenerate " + name(c));
  }
}

TEST(MlGpu, LargeBatchMatchesCpu) {
  MIMORX_REQUIRE_GPU();
  std::mt19937_64 gen(test::fresh_seed() + 5);
  // 16384 vectors x 256 chunks: enough threads for the kernel to give each thread 4 chunks.
  const Problem p = make_problem({4, 4, Modulation::qam16}, 16384, 1, false, gen);
  std::vector<std::uint8_t> cb, gb;
  std::vector<float> cl, gl;
  run_cpu(p, false, cb, cl);
  run(p, false, Backend::cuda(), gb, gl);
  const int per = p.shape.bits_per_vector();
  for (std::int64_t v = 0; v < p.vectors(); ++v) {
    EXPECT_NEAR(metric_of_bits(p, v, &gb[sz(v * per)]), metric_of_bits(p, v, &cb[sz(v * per)]),
                metric_tolerance(p, v));
  }
}
#endif

}  // namespace
}  // namespace mimorx::detect

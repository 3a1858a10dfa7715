#include <gtest/gtest.h>

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <complex>
#include <limits>
#include <vector>

#include "mimorx/core/rng.hpp"
#include "mimorx/detect/linear.hpp"
#include "mimorx/modem/demap.hpp"
#include "support/gpu.hpp"

namespace mimorx::detect {
namespace {

using Cd = std::complex<double>;
using MatC = Eigen::Matrix<Cd, Eigen::Dynamic, Eigen::Dynamic>;

// A batch y = H x + n with CN(0,1) channels, uniform random bits, per-vector N0.
struct Batch {
  MimoShape shape;
  std::int64_t C = 0, V = 0;
  int vpc = 1;
  Buffer<cf32> h, y;
  Buffer<float> n0;
  Buffer<std::uint8_t> bits;
};

Batch make_batch(std::uint64_t seed, MimoShape s, std::int64_t C, int vpc,
                 const std::vector<float>& n0_values, bool per_vector) {
  Batch b;
  b.shape = s;
  b.C = C;
  b.vpc = vpc;
  b.V = C * vpc;
  const int m = bits_per_symbol(s.mod);
  b.h = Buffer<cf32>::host(C * s.nr * s.nt);
  b.y = Buffer<cf32>::host(b.V * s.nr);
  b.bits = Buffer<std::uint8_t>::host(b.V * s.nt * m);
  b.n0 = Buffer<float>::host(per_vector ? b.V : 1);
  const float r2 = std::sqrt(0.5f);
  for (std::int64_t i = 0; i < C * s.nr * s.nt; ++i)
    b.h[i] = cf32(r2 * rng::gaussian_at(seed, 1, 2 * i), r2 * rng::gaussian_at(seed, 1, 2 * i + 1));
  for (std::int64_t i = 0; i < b.V * s.nt * m; ++i)
    b.bits[i] = rng::uniform_at(seed, 2, i) < 0.5f ? 0 : 1;
  for (std::int64_t v = 0; v < std::int64_t(b.n0.size()); ++v)
    b.n0[v] = n0_values[std::size_t(rng::uniform_at(seed, 3, v) * float(n0_values.size())) %
                        n0_values.size()];
  for (std::int64_t v = 0; v < b.V; ++v) {
    const cf32* h = b.h.data() + (v / vpc) * s.nr * s.nt;
    const float n0 = b.n0[per_vector ? v : 0];
    const float sn = std::sqrt(n0 / 2);
    for (int i = 0; i < s.nr; ++i) {
      cf32 acc(sn * rng::gaussian_at(seed, 4, 2 * (v * s.nr + i)),
               sn * rng::gaussian_at(seed, 4, 2 * (v * s.nr + i) + 1));
      for (int j = 0; j < s.nt; ++j)
        acc += h[j * s.nr + i] * map_symbol(s.mod, b.bits.data() + (v * s.nt + j) * m);
      b.y[v * s.nr + i] = acc;
    }
  }
  return b;
}

struct Out {
  Buffer<std::uint8_t> bits;
  Buffer<float> llrs;
  std::vector<double> kappa;  // oracle only: 2-norm condition number of each vector's H
};

Out run_plan(const LinearConfig& cfg, const Backend& be, const Batch& b) {
  const Memory mem = be.is_cuda() ? Memory::device : Memory::host;
  Buffer<cf32> h(b.h.size(), mem), y(b.y.size(), mem);
  Buffer<float> n0(b.n0.size(), mem);
  h.copy_from(b.h);
  y.copy_from(b.y);
  n0.copy_from(b.n0);
  const std::int64_t nb = b.V * cfg.shape.bits_per_vector();
  Buffer<std::uint8_t> bits(nb, mem);
  Buffer<float> llrs(cfg.soft ? nb : 0, mem);
  bits.fill_bytes(0xFF);
  llrs.fill_bytes(0xFF);
  DetectInput in{MatrixBatch<const cf32>(h.data(), b.C, b.shape.nr, b.shape.nt, mem),
                 MatrixBatch<const cf32>(y.data(), b.V, b.shape.nr, 1, mem), View<const float>(n0),
                 b.vpc};
  LinearPlan plan(cfg, be);
  plan.run(in, View<std::uint8_t>(bits), View<float>(llrs));
  Out o{Buffer<std::uint8_t>::host(nb), Buffer<float>::host(cfg.soft ? nb : 0), {}};
  o.bits.copy_from(bits);
  if (cfg.soft) o.llrs.copy_from(llrs);
  return o;
}

// Independent oracle in double precision: the textbook formulas with Eigen's LU inverse.
Out oracle(LinearKind kind, const Batch& b) {
  const MimoShape s = b.shape;
  const int m = bits_per_symbol(s.mod);
  const std::int64_t nb = b.V * s.nt * m;
  Out o{Buffer<std::uint8_t>::host(nb), Buffer<float>::host(nb), {}};
  for (std::int64_t v = 0; v < b.V; ++v) {
    const cf32* hp = b.h.data() + (v / b.vpc) * s.nr * s.nt;
    MatC H(s.nr, s.nt), y(s.nr, 1);
    for (int j = 0; j < s.nt; ++j)
      for (int i = 0; i < s.nr; ++i) H(i, j) = Cd(hp[j * s.nr + i].re, hp[j * s.nr + i].im);
    for (int i = 0; i < s.nr; ++i) y(i, 0) = Cd(b.y[v * s.nr + i].re, b.y[v * s.nr + i].im);
    const double n0 = b.n0[b.n0.size() == 1 ? 0 : v];
    const Eigen::VectorXd sv = Eigen::JacobiSVD<MatC>(H).singularValues();
    o.kappa.push_back(sv(0) / sv(sv.size() - 1));
    MatC G = H.adjoint() * H;
    if (kind == LinearKind::mmse) G += n0 * MatC::Identity(s.nt, s.nt);
    const MatC Gi = G.inverse();
    const MatC W = Gi * H.adjoint();
    const MatC xh = W * y;
    const MatC WH = W * H;
    for (int k = 0; k < s.nt; ++k) {
      Cd x = xh(k, 0);
      double var;
      if (kind == LinearKind::mmse) {
        const double mu = WH(k, k).real();
        x /= mu;
        var = (1 - mu) / mu;
      } else {
        var = n0 * Gi(k, k).real();
      }
      // The detector clips estimates to +-64 (far outside every constellation) so deep fades
      // cannot overflow the LLRs; the oracle does the same.
      const auto clip = [](double t) { return float(std::clamp(t, -64.0, 64.0)); };
      const cf32 xf(clip(x.real()), clip(x.imag()));
      hard_bits(s.mod, xf, o.bits.data() + (v * s.nt + k) * m);
      maxlog_llrs(s.mod, xf, float(var), o.llrs.data() + (v * s.nt + k) * m);
    }
  }
  return o;
}

const MimoShape kShapes[] = {{2, 2, Modulation::qam16}, {4, 4, Modulation::qam16},
                             {4, 8, Modulation::qpsk},  {4, 4, Modulation::qam64},
                             {3, 4, Modulation::bpsk},  {8, 8, Modulation::qam256},
                             {1, 1, Modulation::qam16}, {2, 4, Modulation::qam16}};

TEST(Linear, MatchesDoublePrecisionOracle) {
  const auto seed = test::fresh_seed();
  for (const MimoShape s : kShapes) {
    for (LinearKind kind : {LinearKind::zf, LinearKind::mmse}) {
      SCOPED_TRACE(testing::Message() << s.nt << "x" << s.nr << " m=" << bits_per_symbol(s.mod)
                                      << (kind == LinearKind::zf ? " zf" : " mmse"));
      const Batch b = make_batch(seed + s.nt * 100 + s.nr, s, 300, 3, {0.05f, 0.3f, 1.0f}, true);
      const Out got = run_plan(LinearConfig{s, kind, true}, Backend::cpu(), b);
      const Out ref = oracle(kind, b);
      std::int64_t bit_diff = 0, llr_out = 0;
      const std::int64_t nb = std::int64_t(got.bits.size());
      for (std::int64_t i = 0; i < nb; ++i) {
        bit_diff += got.bits[i] != ref.bits[i];
        ASSERT_TRUE(std::isfinite(got.llrs[i]));
        // Float equalisation error grows like kappa(H)^2 * eps (Gram matrix), so the LLR
        // tolerance does too; a rare near-singular channel must not fail the comparison.
        const double kappa = ref.kappa[std::size_t(i / s.bits_per_vector())];
        const double tol = (1e-3 + 1e-6 * kappa * kappa) * (1.0 + std::abs(ref.llrs[i]));
        llr_out += std::abs(got.llrs[i] - ref.llrs[i]) > tol;
        // Hard decisions agree with the LLR signs (positive = bit 0).
        if (got.llrs[i] != 0.f) {
          ASSERT_EQ(got.bits[i], got.llrs[i] > 0.f ? 0 : 1) << i << " llr " << got.llrs[i];
        }
      }
      // Float vs double may flip decisions of estimates on a decision boundary only.
      EXPECT_LE(bit_diff, nb / 1000 + 1);
      EXPECT_LE(llr_out, nb / 1000 + 1);
    }
  }
}

TEST(Linear, HardOnlyMatchesSoftDecisions) {
  const auto seed = test::fresh_seed();
  const MimoShape s{4, 4, Modulation::qam16};
  const Batch b = make_batch(seed, s, 200, 2, {0.1f}, false);
  for (LinearKind kind : {LinearKind::zf, LinearKind::mmse}) {
    const Out hard = run_plan(LinearConfig{s, kind, false}, Backend::cpu(), b);
    const Out soft = run_plan(LinearConfig{s, kind, true}, Backend::cpu(), b);
    for (std::size_t i = 0; i < hard.bits.size(); ++i) ASSERT_EQ(hard.bits[i], soft.bits[i]);
  }
}

TEST(Linear, NoiselessIsExact) {
  const auto seed = test::fresh_seed();
  for (Modulation mod : {Modulation::qpsk, Modulation::qam16, Modulation::qam256}) {
    const MimoShape s{4, 8, mod};
    const Batch b = make_batch(seed, s, 500, 1, {1e-7f}, false);
    for (LinearKind kind : {LinearKind::zf, LinearKind::mmse}) {
      const Out o = run_plan(LinearConfig{s, kind, false}, Backend::cpu(), b);
      std::int64_t errors = 0;
      for (std::size_t i = 0; i < o.bits.size(); ++i) errors += o.bits[i] != b.bits[i];
      EXPECT_EQ(errors, 0) << "mod " << int(mod);
    }
  }
}

// 2x2 16-QAM at 10 dB (N0 = 0.1 per receive antenna, unit-energy symbols): MMSE beats ZF.
TEST(Linear, MmseBeatsZfAt10dB) {
  const auto seed = test::fresh_seed();
  const MimoShape s{2, 2, Modulation::qam16};
  const Batch b = make_batch(seed, s, 40000, 1, {0.1f}, false);
  double ber[2];
  for (LinearKind kind : {LinearKind::zf, LinearKind::mmse}) {
    const Out o = run_plan(LinearConfig{s, kind, false}, Backend::cpu(), b);
    std::int64_t errors = 0;
    for (std::size_t i = 0; i < o.bits.size(); ++i) errors += o.bits[i] != b.bits[i];
    ber[int(kind)] = double(errors) / double(o.bits.size());
  }
  const double nbits = double(b.V * s.bits_per_vector());
  const double sigma = std::sqrt(ber[0] * (1 - ber[0]) / nbits);
  std::printf("BER zf %.5f mmse %.5f (sigma %.5f, %g bits)\n", ber[0], ber[1], sigma, nbits);
  // Both errors are counted on the same noise; MMSE must be better by > 4 standard errors.
  EXPECT_LT(ber[1], ber[0] - 4 * sigma);
  EXPECT_GT(ber[1], 0.0);
}

TEST(Linear, BadInputAndSingularChannels) {
  const MimoShape wide{4, 2, Modulation::qpsk};
  try {
    LinearPlan(LinearConfig{wide, LinearKind::zf, false}, Backend::cpu());
    FAIL() << "ZF with nt > nr accepted";
  } catch (const InvalidArgument& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("nt=4"), std::string::npos) << msg;
    EXPECT_NE(msg.find("nr=2"), std::string::npos) << msg;
  }
  EXPECT_NO_THROW(LinearPlan(LinearConfig{wide, LinearKind::mmse, false}, Backend::cpu()));

  const auto seed = test::fresh_seed();
  const MimoShape s{4, 4, Modulation::qam16};
  Batch b = make_batch(seed, s, 20, 2, {0.1f}, false);
  LinearPlan plan(LinearConfig{s, LinearKind::mmse, true}, Backend::cpu());
  const std::int64_t nb = b.V * s.bits_per_vector();
  Buffer<std::uint8_t> bits = Buffer<std::uint8_t>::host(nb);
  Buffer<float> llrs = Buffer<float>::host(nb);
  DetectInput in{MatrixBatch<const cf32>(b.h.data(), b.C, 4, 4, Memory::host),
                 MatrixBatch<const cf32>(b.y.data(), b.V, 4, 1, Memory::host),
                 View<const float>(b.n0), b.vpc};
  EXPECT_NO_THROW(plan.run(in, View<std::uint8_t>(bits), View<float>(llrs)));
  EXPECT_THROW(
      plan.run(in, View<std::uint8_t>(bits), View<float>(llrs.data(), nb - 1, Memory::host)),
      InvalidArgument);
  // Soft output with no hard-bit view.
  EXPECT_NO_THROW(plan.run(in, View<std::uint8_t>{}, View<float>(llrs)));
  LinearPlan hard(LinearConfig{s, LinearKind::mmse, false}, Backend::cpu());
  EXPECT_THROW(hard.run(in, View<std::uint8_t>{}, View<float>{}), InvalidArgument);
  b.n0[0] = 0.f;
  EXPECT_THROW(plan.run(in, View<std::uint8_t>(bits), View<float>(llrs)), InvalidArgument);
  b.n0[0] = 0.1f;
  const float saved = b.h[5].re;
  b.h[5].re = std::numeric_limits<float>::quiet_NaN();
  EXPECT_THROW(plan.run(in, View<std::uint8_t>(bits), View<float>(llrs)), InvalidArgument);
  b.h[5].re = saved;

  // Singular channels: a repeated column, an all-zero column, and N0 -> 0 for MMSE.
  for (int i = 0; i < 4; ++i) b.h[1 * 16 + 8 + i] = b.h[1 * 16 + i];
  for (int i = 0; i < 4; ++i) b.h[2 * 16 + 4 + i] = cf32(0.f, 0.f);
  for (LinearKind kind : {LinearKind::zf, LinearKind::mmse}) {
    for (float n0 : {0.1f, 1e-30f}) {
      b.n0[0] = n0;
      LinearPlan p(LinearConfig{s, kind, true}, Backend::cpu());
      p.run(in, View<std::uint8_t>(bits), View<float>(llrs));
      for (std::int64_t i = 0; i < nb; ++i) {
        ASSERT_TRUE(std::isfinite(llrs[i])) << i << " kind " << int(kind) << " n0 " << n0;
        ASSERT_LE(bits[i], 1);
      }
      // The healthy channel 0 still decodes at N0 = 1e-30 (no noise was added at that level,
      // but y was made with N0 = 0.1, so only check the streams are finite there).
    }
  }
}

// CPU and CUDA: identical hard decisions and LLRs within float rounding of the demapper.
TEST(LinearGpu, MatchesCpu) {
  MIMORX_REQUIRE_GPU();
  const auto seed = test::fresh_seed();
  for (const MimoShape s : kShapes) {
    for (LinearKind kind : {LinearKind::zf, LinearKind::mmse}) {
      for (int vpc : {1, 7}) {
        for (bool per_vector : {false, true}) {
          SCOPED_TRACE(testing::Message() << s.nt << "x" << s.nr << " m=" << bits_per_symbol(s.mod)
                                          << (kind == LinearKind::zf ? " zf" : " mmse") << " vpc "
                                          << vpc << " per_vector " << per_vector);
          Batch b = make_batch(seed + vpc, s, 301, vpc, {0.02f, 0.2f, 2.f}, per_vector);
          // One singular channel.
          for (int i = 0; i < s.nr; ++i) b.h[2 * s.nr * s.nt + i] = cf32(0.f, 0.f);
          for (bool soft : {false, true}) {
            const Out a = run_plan(LinearConfig{s, kind, soft}, Backend::cpu(), b);
            const Out g = run_plan(LinearConfig{s, kind, soft}, Backend::cuda(), b);
            for (std::size_t i = 0; i < a.bits.size(); ++i) ASSERT_EQ(a.bits[i], g.bits[i]) << i;
            for (std::size_t i = 0; i < a.llrs.size(); ++i)
              ASSERT_NEAR(a.llrs[i], g.llrs[i], 1e-4f * std::abs(a.llrs[i]) + 1e-4f) << i;
          }
        }
      }
    }
  }
}

TEST(LinearGpu, RejectsHostMemoryAndNaN) {
  MIMORX_REQUIRE_GPU();
  const auto seed = test::fresh_seed();
  const MimoShape s{4, 4, Modulation::qam16};
  Batch b = make_batch(seed, s, 10, 1, {0.1f}, false);
  LinearPlan plan(LinearConfig{s, LinearKind::mmse, true}, Backend::cuda());
  const std::int64_t nb = b.V * s.bits_per_vector();
  Buffer<std::uint8_t> bits = Buffer<std::uint8_t>::device(nb);
  Buffer<float> llrs = Buffer<float>::device(nb);
  DetectInput in{MatrixBatch<const cf32>(b.h.data(), b.C, 4, 4, Memory::host),
                 MatrixBatch<const cf32>(b.y.data(), b.V, 4, 1, Memory::host),
                 View<const float>(b.n0), 1};
  EXPECT_THROW(plan.run(in, View<std::uint8_t>(bits), View<float>(llrs)), InvalidArgument);
  b.h[3].im = std::numeric_limits<float>::infinity();
  Buffer<cf32> h = Buffer<cf32>::device(b.h.size()), y = Buffer<cf32>::device(b.y.size());
  Buffer<float> n0 = Buffer<float>::device(1);
  h.copy_from(b.h);
  y.copy_from(b.y);
  n0.copy_from(b.n0);
  DetectInput din{MatrixBatch<const cf32>(h.data(), b.C, 4, 4, Memory::device),
                  MatrixBatch<const cf32>(y.data(), b.V, 4, 1, Memory::device),
                  View<const float>(n0), 1};
  EXPECT_THROW(plan.run(din, View<std::uint8_t>(bits), View<float>(llrs)), InvalidArgument);
}

}  // namespace
}  // namespace mimorx::detect

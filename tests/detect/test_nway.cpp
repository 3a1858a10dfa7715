#include <gtest/gtest.h>

#include <Eigen/Dense>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "detect/nway_math.hpp"
#include "mimorx/detect/nway.hpp"
#include "support/gpu.hpp"
#include "support/list_detect.hpp"

namespace mimorx::detect {
namespace {

using test::DeviceProblem;
using test::make_problem;
using test::Out;
using test::Problem;
using test::to_host;

Out run_cpu(const Problem& p, int n_ways, float clip = 8.f) {
  NwayPlan plan(NwayConfig{p.shape, n_ways, clip}, Backend::cpu());
  return test::run_plan(plan, p);
}

TEST(NwayMath, LevelBitsInvertTheStandardMapping) {
  for (int k = 1; k <= 4; ++k) {
    for (int c = 0; c < (1 << k); ++c) {
      std::uint8_t b[4] = {};
      for (int j = 0; j < k; ++j) b[j] = std::uint8_t((c >> j) & 1);
      const int a = pam_amplitude(k, b);
      const int level = (a + (1 << k) - 1) / 2;
      EXPECT_EQ(nway::level_amplitude(1 << k, level), a);
      EXPECT_EQ(nway::level_axis_bits(k, level), unsigned(c)) << "k=" << k << " c=" << c;
    }
  }
  // Symbol bits from the two levels map back to the same point.
  for (Modulation mod :
       {Modulation::qpsk, Modulation::qam16, Modulation::qam64, Modulation::qam256}) {
    const int m = bits_per_symbol(mod), L = axis_levels(mod);
    for (int ir = 0; ir < L; ++ir) {
      for (int ii = 0; ii < L; ++ii) {
        const unsigned w = nway::symbol_bits_of_levels(m / 2, ir, ii);
        std::uint8_t b[8] = {};
        for (int j = 0; j < m; ++j) b[j] = std::uint8_t((w >> j) & 1);
        const cf32 x = map_symbol(mod, b);
        unsigned fast = 0;
        switch (m / 2) {
          case 1:
            fast = nway::symbol_bits_fast<1>(ir, ii);
            break;
          case 2:
            fast = nway::symbol_bits_fast<2>(ir, ii);
            break;
          case 3:
            fast = nway::symbol_bits_fast<3>(ir, ii);
            break;
          case 4:
            fast = nway::symbol_bits_fast<4>(ir, ii);
            break;
        }
        EXPECT_EQ(fast, w);
        EXPECT_FLOAT_EQ(x.re, float(2 * ir - (L - 1)) * qam_scale(mod));
        EXPECT_FLOAT_EQ(x.im, float(2 * ii - (L - 1)) * qam_scale(mod));
      }
    }
  }
}

TEST(NwayMath, SliceIsNearestLevelWithClipping) {
  for (int L : {2, 4, 8, 16}) {
    for (float a = -20.f; a <= 20.f; a += 0.37f) {
      int best = 0;
      for (int i = 1; i < L; ++i) {
        if (std::abs(a - float(2 * i - (L - 1))) < std::abs(a - float(2 * best - (L - 1))))
          best = i;
      }
      int level = -1;
      const float amp = nway::slice_amplitude(a, 0.5f, L, &level);
      EXPECT_EQ(level, best) << "L=" << L << " a=" << a;
      EXPECT_EQ(amp, float(2 * best - (L - 1)));
    }
  }
}

// Algorithm 1 against Eigen's complex QR: MRVD gives R~ with 2x2 blocks equal to the real
// form of the complex R (up to a unit phase per row), and Q^T y preserves ||P_H y||.
TEST(NwayQr, MatchesComplexQrOfTheRotatedChannel) {
  const auto seed = test::fresh_seed();
  for (int nt : {2, 4, 8}) {
    const MimoShape s{nt, nt + 1, Modulation::qam16};
    const Problem p = make_problem(s, 6, 1, 10.0, seed + nt);
    const nway::Layout lay(nt);
    const float sc = qam_scale(s.mod);
    std::vector<float> v(std::size_t(2 * s.nr) * (2 * nt + 1)), e(lay.es);
    for (std::int64_t vec = 0; vec < p.vectors; ++vec) {
      for (int n = 0; n < nt; ++n) {
        nway::qr_problem(&p.h[vec * s.nr * nt], &p.y[vec * s.nr], s.nr, nt, n, sc, v.data(),
                         e.data());
        Eigen::MatrixXcd H(s.nr, nt);
        for (int i = 0; i < s.nr; ++i) {
          for (int c = 0; c < nt; ++c) {
            const cf32 x = p.h[vec * s.nr * nt + ((c + n) % nt) * s.nr + i];
            H(i, c) = {x.re, x.im};
          }
        }
        Eigen::HouseholderQR<Eigen::MatrixXcd> qr(H);
        const Eigen::MatrixXcd R = qr.matrixQR();
        for (int a = 0; a < nt; ++a) {
          const double ra = std::abs(R(a, a));
          EXPECT_NEAR(e[lay.r(2 * a, 2 * a)] / sc, ra, 1e-4 * ra);
          EXPECT_NEAR(e[lay.r(2 * a + 1, 2 * a + 1)] / sc, ra, 1e-4 * ra);
          EXPECT_NEAR(e[lay.r(2 * a, 2 * a + 1)] / sc, 0.0, 1e-5);  // MRVD structure
          EXPECT_NEAR(e[lay.inv(2 * a)] * e[lay.r(2 * a, 2 * a)], 0.5, 1e-6);
          for (int b = a + 1; b < nt; ++b) {
            // |R_ab| is phase-invariant: compare the norm of the 2x2 block's first column.
            const double blk = std::hypot(e[lay.r(2 * a, 2 * b)], e[lay.r(2 * a + 1, 2 * b)]) / sc;
            EXPECT_NEAR(blk, std::abs(R(a, b)), 1e-4 * (1 + std::abs(R(a, b))));
          }
        }
        double zn = 0, yn = 0;
        for (int l = 0; l < 2 * nt; ++l) zn += double(e[lay.yhat(l)]) * e[lay.yhat(l)];
        Eigen::VectorXcd y(s.nr);
        for (int i = 0; i < s.nr; ++i) y(i) = {p.y[vec * s.nr + i].re, p.y[vec * s.nr + i].im};
        yn = (qr.householderQ().adjoint() * y).head(nt).squaredNorm();
        EXPECT_NEAR(zn, yn, 1e-4 * (1 + yn));
      }
    }
  }
}

// Every candidate's distance is ||y - H x||^2 minus the same constant (the energy of y outside
// the span of H), the first symbol of pass n takes all M values, and pass n's list holds the
// candidate whose other symbols are the greedy completion.
TEST(NwayCandidates, DistancesAreTrueDistancesAndFirstSymbolIsEnumerated) {
  const auto seed = test::fresh_seed();
  for (Modulation mod : {Modulation::qpsk, Modulation::qam16, Modulation::qam64}) {
    const MimoShape s{4, 6, mod};
    const Problem p = make_problem(s, 5, 1, 12.0, seed + int(mod));
    const int nw = 4;
    NwayPlan plan(NwayConfig{s, nw, 8.f}, Backend::cpu());
    const int M = plan.candidates_per_pass(), m = bits_per_symbol(mod);
    ASSERT_EQ(M, 1 << m);
    std::vector<float> d(std::size_t(p.vectors) * nw * M);
    std::vector<std::uint8_t> sym(d.size() * s.nt);
    plan.qr(p.input());
    plan.candidates(p.input(), View<float>(d.data(), std::int64_t(d.size()), Memory::host),
                    View<std::uint8_t>(sym.data(), std::int64_t(sym.size()), Memory::host));
    for (std::int64_t v = 0; v < p.vectors; ++v) {
      double offset = 0;
      bool first = true;
      for (int n = 0; n < nw; ++n) {
        std::vector<int> seen(M, 0);
        for (int k = 0; k < M; ++k) {
          const std::size_t c = (v * nw + n) * M + k;
          double true_d = 0;
          for (int i = 0; i < s.nr; ++i) {
            std::complex<double> acc(p.y[v * s.nr + i].re, p.y[v * s.nr + i].im);
            for (int t = 0; t < s.nt; ++t) {
              std::uint8_t b[8] = {};
              for (int j = 0; j < m; ++j)
                b[j] = std::uint8_t((sym[c * s.nt + t] >> (m - 1 - j)) & 1);
              const cf32 x = map_symbol(mod, b);
              const cf32 hh = p.h[v * s.nr * s.nt + t * s.nr + i];
              acc -= std::complex<double>(hh.re, hh.im) * std::complex<double>(x.re, x.im);
            }
            true_d += std::norm(acc);
          }
          if (first) {
            offset = true_d - d[c];
            first = false;
          }
          EXPECT_NEAR(true_d - d[c], offset, 1e-4 * (1 + true_d)) << "v=" << v << " n=" << n;
          // Pass n enumerates stream (nt - 1 + n) mod nt.
          seen[sym[c * s.nt + (s.nt - 1 + n) % s.nt]]++;
        }
        for (int i = 0; i < M; ++i) EXPECT_EQ(seen[i], 1) << "pass " << n << " point " << i;
      }
    }
  }
}

// With N = nt = 2 every symbol is fully enumerated once and the other one is sliced exactly
// (MRVD), so the list holds the max-log minimisers: the LLRs are exact max-log ML.
TEST(Nway, TwoByTwoWithTwoWaysIsExactMaxLog) {
  const auto seed = test::fresh_seed();
  for (Modulation mod : {Modulation::qpsk, Modulation::qam16, Modulation::qam64}) {
    for (int nr : {2, 3}) {
      const MimoShape s{2, nr, mod};
      const Problem p = make_problem(s, 300, 1, 8.0 + 3 * int(mod), seed + int(mod) + nr, true);
      const float clip = 30.f;
      std::vector<float> ref;
      std::vector<std::uint8_t> hard;
      test::naive_maxlog(p, clip, ref, hard);
      const Out o = run_cpu(p, 2, clip);
      int mismatched_bits = 0;
      for (std::size_t i = 0; i < ref.size(); ++i) {
        ASSERT_NEAR(o.llrs[i], ref[i], 2e-3f * std::max(1.f, std::abs(ref[i])))
            << "mod " << to_string(mod) << " nr " << nr << " index " << i;
        if (std::abs(ref[i]) > 1e-3f) mismatched_bits += o.bits[i] != hard[i];
      }
      EXPECT_EQ(mismatched_bits, 0);
    }
  }
}

TEST(Nway, FastOracleAgreesWithNaiveOracle) {
  const auto seed = test::fresh_seed();
  const Problem p = make_problem(MimoShape{3, 4, Modulation::qam16}, 12, 1, 14.0, seed);
  std::vector<float> a, b;
  std::vector<std::uint8_t> ha, hb;
  test::naive_maxlog(p, 100.f, a, ha);
  test::fast_maxlog(p, 100.f, b, hb);
  // Both work in double but start from differently rounded constellation points (the naive
  // oracle from map_symbol's float points, the fast one from the double scale), so an LLR, a
  // difference of two distances over N0 of up to ~100-200 here, carries an absolute error of
  // ~1e-5 even when it is small (a fresh seed once gave 1.3e-6 at |LLR| = 0.17, over the former
  // 1e-6 (1 + |LLR|)). A wrong oracle differs by O(0.1) or more.
  for (std::size_t i = 0; i < a.size(); ++i) EXPECT_NEAR(a[i], b[i], 1e-4 + 1e-6 * std::abs(a[i]));
}

TEST(Nway, ClippingAndSignsAndCoherenceBlocks) {
  const auto seed = test::fresh_seed();
  const MimoShape s{4, 4, Modulation::qam16};
  // Noise tiny: every LLR saturates, sign = transmitted bit.
  const Problem p = make_problem(s, 64, 4, 60.0, seed);
  for (int nw = 1; nw <= 4; ++nw) {
    const Out o = run_cpu(p, nw, 5.f);
    for (std::size_t i = 0; i < o.llrs.size(); ++i) {
      ASSERT_EQ(o.bits[i], p.tx_bits[i]);
      ASSERT_EQ(o.llrs[i], p.tx_bits[i] ? -5.f : 5.f);
    }
  }
  // N = 1 and N = 4 agree with the oracle's hard decisions at high SNR; N's LLR magnitudes
  // never exceed the clip.
  const Problem q = make_problem(s, 200, 2, 25.0, seed + 1);
  const Out o1 = run_cpu(q, 1, 3.f);
  for (float l : o1.llrs) ASSERT_LE(std::abs(l), 3.f);
}

// H = 0: every candidate has the same distance, and every LLR is 0, also where the passes
// leave a stream unenumerated (N < nt: its bits have one value in the whole list). Covers the
// fixed-shape QR (nr <= 8) and the MGS QR (nt = 8, nr = 9).
TEST(Nway, ZeroChannelGivesZeroLlrs) {
  const auto seed = test::fresh_seed();
  for (int nt : {2, 4, 8}) {
    for (int nr : {nt, 9}) {
      for (Modulation mod :
           {Modulation::qpsk, Modulation::qam16, Modulation::qam64, Modulation::qam256}) {
        for (int nw : {1, nt / 2, nt}) {
          const Problem p = test::with_zero_channels(
              make_problem(MimoShape{nt, nr, mod}, 4, 2, 10.0, seed + nt + nr + int(mod)), 1);
          const Out o = run_cpu(p, nw);
          for (std::size_t i = 0; i < o.llrs.size(); ++i) {
            ASSERT_EQ(o.llrs[i], 0.f)
                << "nt " << nt << " nr " << nr << " " << to_string(mod) << " N " << nw;
            ASSERT_LE(o.bits[i], 1);
          }
        }
      }
    }
  }
}

// Random inputs (every fifth channel zero), against the candidates and the exhaustive ML
// detector: a bit with both values among the candidates gets max-log over them; a bit with one
// value (its stream never enumerated: N < nt) gets the metric of the best candidate's
// single-coordinate flip as its counter-hypothesis (test::check_list_llrs recomputes it in the
// H domain), never farther from the exact max-log LLR than the clip rule where the best
// candidate is the ML solution. Covers the fixed-shape QR (nr <= 8) and the MGS QR (nt = 8).
TEST(Nway, MissingCounterHypothesisIsTheBestCandidatesFlip) {
  const auto seed = test::fresh_seed();
  struct Case {
    int nt, nr;
    Modulation mod;
    int nw;
    double snr;
    float clip;
  };
  const Case cases[] = {
      {4, 4, Modulation::qam16, 1, 4.0, 8.f},  {4, 4, Modulation::qam16, 2, 12.0, 40.f},
      {4, 5, Modulation::qam16, 3, 10.0, 8.f}, {2, 2, Modulation::qpsk, 1, 0.0, 8.f},
      {8, 8, Modulation::qpsk, 3, 2.0, 40.f},  {4, 8, Modulation::qam16, 2, 6.0, 8.f},
      {2, 3, Modulation::qam64, 1, 14.0, 8.f}, {2, 2, Modulation::qam256, 1, 20.0, 40.f}};
  test::ListLlrCheck total;
  int n = 0;
  for (const Case& c : cases) {
    const MimoShape s{c.nt, c.nr, c.mod};
    const Problem p =
        test::with_zero_channels(make_problem(s, 40, 2, c.snr, seed + 31 * n++, true), 5);
    NwayPlan plan(NwayConfig{s, c.nw, c.clip}, Backend::cpu());
    const int nc = c.nw * plan.candidates_per_pass();
    std::vector<float> d(std::size_t(p.vectors) * nc);
    std::vector<std::uint8_t> sym(d.size() * c.nt);
    plan.qr(p.input());
    plan.candidates(p.input(), View<float>(d.data(), std::int64_t(d.size()), Memory::host),
                    View<std::uint8_t>(sym.data(), std::int64_t(sym.size()), Memory::host));
    const Out o = run_cpu(p, c.nw, c.clip);
    const auto r = test::check_list_llrs(p, nc, d, sym, o.llrs, test::ml_llrs(p), c.clip);
    const std::string what = std::to_string(c.nt) + "x" + std::to_string(c.nr) + " " +
                             to_string(c.mod) + " N " + std::to_string(c.nw) + ", " + r.first;
    ASSERT_EQ(r.mismatches, 0) << what;
    ASSERT_EQ(r.farther, 0) << what;
    total.both += r.both;
    total.missing += r.missing;
    total.missing_inside += r.missing_inside;
    total.closer += r.closer;
    total.not_ml += r.not_ml;
  }
  // Both kinds of bit occur, flips inside the clip and strictly closer to exact max-log than
  // the clip rule too (the checks are not vacuous).
  EXPECT_GT(total.both, 0);
  EXPECT_GT(total.missing, 0);
  EXPECT_GT(total.missing_inside, 0);
  EXPECT_GT(total.closer, 0);
  std::printf(
      "[ bits     ] %lld with both values, %lld with one (%lld inside the clip, %lld "
      "closer to max-log than the clip rule, %lld of vectors whose best is not ML)\n",
      static_cast<long long>(total.both), static_cast<long long>(total.missing),
      static_cast<long long>(total.missing_inside), static_cast<long long>(total.closer),
      static_cast<long long>(total.not_ml));
}

TEST(Nway, HardOutputOnlyMatchesSoftRun) {
  const auto seed = test::fresh_seed();
  const Problem p = make_problem(MimoShape{4, 4, Modulation::qam64}, 50, 1, 20.0, seed);
  const Out o = run_cpu(p, 3);
  NwayPlan plan(NwayConfig{p.shape, 3, 8.f}, Backend::cpu());
  std::vector<std::uint8_t> bits(o.bits.size());
  plan.run(p.input(), View<std::uint8_t>(bits.data(), std::int64_t(bits.size()), Memory::host),
           View<float>());
  EXPECT_EQ(bits, o.bits);
}

TEST(Nway, RejectsBadConfigurationsAndInputs) {
  const MimoShape s{4, 4, Modulation::qam16};
  EXPECT_THROW(NwayPlan(NwayConfig{s, 0, 8.f}, Backend::cpu()), InvalidArgument);
  EXPECT_THROW(NwayPlan(NwayConfig{s, 5, 8.f}, Backend::cpu()), InvalidArgument);
  EXPECT_THROW(NwayPlan(NwayConfig{s, 1, 0.f}, Backend::cpu()), InvalidArgument);
  EXPECT_THROW(NwayPlan(NwayConfig{s, 1, std::nanf("")}, Backend::cpu()), InvalidArgument);
  EXPECT_THROW(NwayPlan(NwayConfig{MimoShape{4, 4, Modulation::bpsk}, 1, 8.f}, Backend::cpu()),
               Unsupported);
  EXPECT_THROW(NwayPlan(NwayConfig{MimoShape{3, 4, Modulation::qpsk}, 1, 8.f}, Backend::cpu()),
               Unsupported);
  EXPECT_THROW(NwayPlan(NwayConfig{MimoShape{4, 2, Modulation::qpsk}, 1, 8.f}, Backend::cpu()),
               InvalidArgument);
  try {
    NwayPlan(NwayConfig{s, 7, 8.f}, Backend::cpu());
    FAIL();
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("n_ways"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("7"), std::string::npos) << e.what();
  }
  const auto seed = test::fresh_seed();
  Problem p = make_problem(s, 4, 1, 10.0, seed);
  NwayPlan plan(NwayConfig{s, 2, 8.f}, Backend::cpu());
  std::vector<std::uint8_t> bits(std::size_t(p.vectors) * p.nbits());
  std::vector<float> llrs(bits.size());
  auto bv = View<std::uint8_t>(bits.data(), std::int64_t(bits.size()), Memory::host);
  auto lv = View<float>(llrs.data(), std::int64_t(llrs.size()), Memory::host);
  EXPECT_THROW(plan.run(p.input(), View<std::uint8_t>(bits.data(), 3, Memory::host), lv),
               InvalidArgument);
  EXPECT_THROW(plan.run(p.input(), bv, View<float>(llrs.data(), 5, Memory::host)), InvalidArgument);
  p.y[3].re = std::nanf("");
  EXPECT_THROW(plan.run(p.input(), bv, lv), InvalidArgument);
  p.y[3].re = 0.5f;
  p.n0[0] = -1.f;
  EXPECT_THROW(plan.run(p.input(), bv, lv), InvalidArgument);
  p.n0[0] = 0.1f;
  EXPECT_NO_THROW(plan.run(p.input(), bv, lv));
  EXPECT_THROW(plan.search(make_problem(s, 8, 1, 10.0, seed).input(), bv, lv), InvalidArgument);
}

// ---- CPU == CUDA ------------------------------------------------------------------------
TEST(NwayGpu, CandidateListsAndLlrsMatchCpu) {
  MIMORX_REQUIRE_GPU();
  const auto seed = test::fresh_seed();
  int cases = 0;
  for (int nt : {2, 4, 8}) {
    for (Modulation mod :
         {Modulation::qpsk, Modulation::qam16, Modulation::qam64, Modulation::qam256}) {
      const int M = 1 << bits_per_symbol(mod);
      for (int nw = 1; nw <= nt; ++nw) {
        if (nt == 8 && nw % 3 != 1 && nw != 8) continue;  // 1, 4, 7, 8
        const std::int64_t V = (nt == 8 && M == 256) ? 24 : 4 * 37;
        const int vpc = (nw % 2) ? 1 : 4;
        const MimoShape s{nt, nt + (nw % 2), mod};
        const Problem p =
            make_problem(s, V, vpc, 6.0 + 2 * bits_per_symbol(mod), seed + 131 * cases, nw == 2);
        ++cases;
        NwayPlan cpu(NwayConfig{s, nw, 6.f}, Backend::cpu());
        NwayPlan gpu(NwayConfig{s, nw, 6.f}, Backend::cuda());
        // Candidate lists: identical (same arithmetic, explicit roundings).
        const std::size_t nc = std::size_t(V) * nw * M;
        std::vector<float> cd(nc);
        std::vector<std::uint8_t> cs(nc * nt);
        cpu.qr(p.input());
        cpu.candidates(p.input(), View<float>(cd.data(), std::int64_t(nc), Memory::host),
                       View<std::uint8_t>(cs.data(), std::int64_t(cs.size()), Memory::host));
        DeviceProblem dp(p);
        Buffer<float> gd = Buffer<float>::device(nc);
        Buffer<std::uint8_t> gs = Buffer<std::uint8_t>::device(nc * nt);
        gpu.qr(dp.in);
        gpu.candidates(dp.in, View<float>(gd), View<std::uint8_t>(gs));
        const auto hd = to_host(gd);
        const auto hs = to_host(gs);
        const std::string what =
            "nt " + std::to_string(nt) + " " + to_string(mod) + " N " + std::to_string(nw);
        ASSERT_EQ(hs, cs) << what;
        for (std::size_t i = 0; i < nc; ++i) {
          ASSERT_NEAR(hd[i], cd[i], 1e-4f * std::max(1.f, std::abs(cd[i]))) << what << " " << i;
        }
        // LLRs and hard bits.
        const Out o = run_cpu(p, nw, 6.f);
        Buffer<std::uint8_t> gb = Buffer<std::uint8_t>::device(o.bits.size());
        Buffer<float> gl = Buffer<float>::device(o.llrs.size());
        gb.fill_bytes(0xEE);
        gl.fill_bytes(0xFF);
        gpu.run(dp.in, View<std::uint8_t>(gb), View<float>(gl));
        const auto hb = to_host(gb);
        const auto hl = to_host(gl);
        ASSERT_EQ(hb, o.bits) << what;
        for (std::size_t i = 0; i < hl.size(); ++i) {
          ASSERT_NEAR(hl[i], o.llrs[i], 1e-4f * std::max(1.f, std::abs(o.llrs[i])))
              << what << " " << i;
        }
        // Hard output only.
        gb.fill_bytes(0xEE);
        gpu.run(dp.in, View<std::uint8_t>(gb), View<float>());
        ASSERT_EQ(to_host(gb), o.bits) << what;
      }
    }
  }
  std::printf("[ cases    ] %d configurations compared\n", cases);
}

// The fixed-shape path (nt = 2 or 4, nr <= 8: register QR and search, nway_fast_cuda.cu) on
// batches large enough for its 16-candidates-per-thread variant, with tails and several
// vectors per channel: bits and LLRs bit-identical to the CPU reference.
TEST(NwayGpu, FixedShapePathIsBitIdenticalToCpu) {
  MIMORX_REQUIRE_GPU();
  const auto seed = test::fresh_seed();
  struct Case {
    int nt, nr;
    Modulation mod;
    int nw, vpc;
    std::int64_t vectors;
  };
  const Case cases[] = {
      {4, 4, Modulation::qam16, 1, 1, 140001}, {4, 4, Modulation::qam16, 4, 1, 40003},
      {4, 4, Modulation::qam64, 4, 1, 9001},   {4, 4, Modulation::qam64, 3, 3, 12003},
      {4, 4, Modulation::qpsk, 2, 12, 60000},  {2, 2, Modulation::qam16, 2, 1, 70001},
      {2, 3, Modulation::qam64, 1, 5, 30000},  {2, 4, Modulation::qpsk, 1, 1, 1001},
      {4, 8, Modulation::qam16, 4, 1, 20001},  {4, 6, Modulation::qam64, 1, 4, 40000},
      {2, 8, Modulation::qam16, 2, 2, 30002}};
  int k = 0;
  for (const Case& c : cases) {
    const MimoShape s{c.nt, c.nr, c.mod};
    const Problem p = make_problem(s, c.vectors, c.vpc, 4.0 + 2.5 * bits_per_symbol(c.mod),
                                   seed + 977 * k++, (c.nw & 1) == 0);
    const Out o = run_cpu(p, c.nw, 7.f);
    NwayPlan gpu(NwayConfig{s, c.nw, 7.f}, Backend::cuda());
    DeviceProblem dp(p);
    Buffer<std::uint8_t> gb = Buffer<std::uint8_t>::device(o.bits.size());
    Buffer<float> gl = Buffer<float>::device(o.llrs.size());
    gb.fill_bytes(0xEE);
    gl.fill_bytes(0xFF);
    gpu.run(dp.in, View<std::uint8_t>(gb), View<float>(gl));
    const std::string what = std::to_string(c.nt) + "x" + std::to_string(c.nr) + " " +
                             to_string(c.mod) + " N " + std::to_string(c.nw) + " vpc " +
                             std::to_string(c.vpc);
    ASSERT_EQ(to_host(gb), o.bits) << what;
    const auto hl = to_host(gl);
    ASSERT_EQ(std::memcmp(hl.data(), o.llrs.data(), hl.size() * sizeof(float)), 0) << what;
  }
}

// Zero channels (every third) and passes that leave streams unenumerated (N < nt): bits and
// LLRs bit-identical to the CPU's, flip metrics of missing counter-hypotheses included, on the
// fixed-shape kernel (both candidates-per-thread variants) and the shared-memory kernel (vectors
// whose threads straddle warps: 12 and 48 threads; 256 threads for 256-QAM).
TEST(NwayGpu, FlipCompletedLlrsAreBitIdenticalToCpu) {
  MIMORX_REQUIRE_GPU();
  const auto seed = test::fresh_seed();
  struct Case {
    int nt, nr;
    Modulation mod;
    int nw, vpc;
    std::int64_t vectors;
  };
  const Case cases[] = {
      {4, 4, Modulation::qam16, 1, 1, 140001}, {4, 4, Modulation::qam16, 3, 1, 3001},
      {2, 2, Modulation::qpsk, 1, 2, 4002},    {4, 6, Modulation::qam64, 2, 3, 3003},
      {8, 8, Modulation::qpsk, 3, 1, 1001},    {8, 9, Modulation::qam16, 3, 2, 602},
      {4, 9, Modulation::qam16, 3, 1, 999},    {4, 4, Modulation::qam256, 2, 1, 301},
      {8, 8, Modulation::qam64, 5, 1, 101}};
  int k = 0;
  for (const Case& c : cases) {
    const MimoShape s{c.nt, c.nr, c.mod};
    const Problem p =
        test::with_zero_channels(make_problem(s, c.vectors, c.vpc, 2.0 + 2 * bits_per_symbol(c.mod),
                                              seed + 977 * k++, (c.nw & 1) == 0),
                                 3);
    const Out o = run_cpu(p, c.nw, 7.f);
    NwayPlan gpu(NwayConfig{s, c.nw, 7.f}, Backend::cuda());
    DeviceProblem dp(p);
    Buffer<std::uint8_t> gb = Buffer<std::uint8_t>::device(o.bits.size());
    Buffer<float> gl = Buffer<float>::device(o.llrs.size());
    gb.fill_bytes(0xEE);
    gl.fill_bytes(0xFF);
    gpu.run(dp.in, View<std::uint8_t>(gb), View<float>(gl));
    const std::string what = std::to_string(c.nt) + "x" + std::to_string(c.nr) + " " +
                             to_string(c.mod) + " N " + std::to_string(c.nw);
    ASSERT_EQ(to_host(gb), o.bits) << what;
    const auto hl = to_host(gl);
    ASSERT_EQ(std::memcmp(hl.data(), o.llrs.data(), hl.size() * sizeof(float)), 0) << what;
    // Channel 0 is zero: its vectors' LLRs are 0 on the GPU too.
    for (int i = 0; i < c.vpc * p.nbits(); ++i) ASSERT_EQ(hl[std::size_t(i)], 0.f) << what;
  }
}

TEST(NwayGpu, RejectsHostMemoryAndLargeBatchesWork) {
  MIMORX_REQUIRE_GPU();
  const auto seed = test::fresh_seed();
  const MimoShape s{4, 4, Modulation::qam16};
  const Problem p = make_problem(s, 20000, 10, 15.0, seed);
  NwayPlan gpu(NwayConfig{s, 4, 8.f}, Backend::cuda());
  Buffer<std::uint8_t> gb = Buffer<std::uint8_t>::device(std::size_t(p.vectors) * p.nbits());
  Buffer<float> gl = Buffer<float>::device(gb.size());
  EXPECT_THROW(gpu.run(p.input(), View<std::uint8_t>(gb), View<float>(gl)), InvalidArgument);
  DeviceProblem dp(p);
  gpu.run(dp.in, View<std::uint8_t>(gb), View<float>(gl));
  const Out o = run_cpu(p, 4, 8.f);
  EXPECT_EQ(to_host(gb), o.bits);
  const auto hl = to_host(gl);
  double maxerr = 0;
  for (std::size_t i = 0; i < hl.size(); ++i)
    maxerr = std::max(maxerr, double(std::abs(hl[i] - o.llrs[i])));
  EXPECT_LE(maxerr, 1e-4 * 8);
  std::vector<std::uint8_t> hb(gb.size());
  EXPECT_THROW(gpu.run(dp.in, View<std::uint8_t>(hb.data(), std::int64_t(hb.size()), Memory::host),
                       View<float>(gl)),
               InvalidArgument);
}

// Statistics at 4x4 16-QAM, 15 dB: BER of N = 4 hard decisions vs exact ML, and the mean
// absolute LLR error vs exact max-log for N = 1..4 (printed for docs/nway.md).
TEST(NwaySlow, FourByFourSixteenQamAgainstMaxLogMl) {
  const auto seed = test::fresh_seed();
  const MimoShape s{4, 4, Modulation::qam16};
  const Problem p = make_problem(s, 20000, 1, 15.0, seed);
  const float clip = 8.f;
  std::vector<float> ref;
  std::vector<std::uint8_t> ml_hard;
  test::fast_maxlog(p, clip, ref, ml_hard);
  auto errors = [&](const std::vector<std::uint8_t>& b) {
    std::int64_t e = 0;
    for (std::size_t i = 0; i < b.size(); ++i) e += b[i] != p.tx_bits[i];
    return e;
  };
  const std::int64_t ml_err = errors(ml_hard);
  const double nbits = double(ml_hard.size());
  std::printf("[ figures  ] 4x4 16-QAM 15 dB, %lld vectors: ML BER %.3e (%lld errors)\n",
              static_cast<long long>(p.vectors), ml_err / nbits, static_cast<long long>(ml_err));
  double prev = 1e30;
  for (int nw = 1; nw <= 4; ++nw) {
    const Out o = run_cpu(p, nw, clip);
    double mae = 0;
    for (std::size_t i = 0; i < ref.size(); ++i) mae += std::abs(o.llrs[i] - ref[i]);
    mae /= double(ref.size());
    const std::int64_t e = errors(o.bits);
    std::printf(
        "[ figures  ] N=%d: BER %.3e (%lld errors, %.3f x ML), mean |LLR - maxlog ML| %.4f\n", nw,
        e / nbits, static_cast<long long>(e), double(e) / double(ml_err), mae);
    EXPECT_LT(mae, prev) << "N=" << nw;
    prev = mae;
    if (nw == 4) {
      ASSERT_GT(ml_err, 100) << "too few ML errors for a 20% comparison";
      EXPECT_LE(double(e), 1.2 * double(ml_err));
    }
  }
}

}  // namespace
}  // namespace mimorx::detect

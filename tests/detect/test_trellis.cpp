#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdio>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "detect/nway_math.hpp"
#include "mimorx/detect/kbest.hpp"
#include "mimorx/detect/ml.hpp"
#include "mimorx/detect/nway.hpp"
#include "mimorx/detect/trellis.hpp"
#include "support/gpu.hpp"
#include "support/list_detect.hpp"

namespace mimorx::detect {
namespace {

using test::DeviceProblem;
using test::make_problem;
using test::Out;
using test::Problem;
using test::run_plan;
using test::to_host;

constexpr Modulation kMods[] = {Modulation::qpsk, Modulation::qam16, Modulation::qam64,
                                Modulation::qam256};

Out run_cpu(const Problem& p, float clip = 8.f) {
  TrellisPlan plan(TrellisConfig{p.shape, clip}, Backend::cpu());
  return run_plan(plan, p);
}

struct Lists {
  std::vector<float> d;
  std::vector<std::uint8_t> sym;
};

Lists cpu_lists(const Problem& p) {
  TrellisPlan plan(TrellisConfig{p.shape}, Backend::cpu());
  const std::size_t n = std::size_t(p.vectors) * p.shape.nt * plan.vertices();
  Lists l{std::vector<float>(n), std::vector<std::uint8_t>(n * p.shape.nt)};
  plan.qr(p.input());
  plan.candidates(p.input(), View<float>(l.d.data(), std::int64_t(n), Memory::host),
                  View<std::uint8_t>(l.sym.data(), std::int64_t(l.sym.size()), Memory::host));
  return l;
}

std::complex<double> point(Modulation mod, int index) {
  const int m = bits_per_symbol(mod);
  std::uint8_t b[8] = {};
  for (int j = 0; j < m; ++j) b[j] = std::uint8_t((index >> (m - 1 - j)) & 1);
  const cf32 x = map_symbol(mod, b);
  return {x.re, x.im};
}

// ||y - H x||^2 in double for the symbol indices sym[0..nt).
double true_distance(const Problem& p, std::int64_t v, const std::uint8_t* sym) {
  const auto& s = p.shape;
  const cf32* hm = &p.h[std::size_t(v / p.vpc) * s.nr * s.nt];
  double d = 0;
  for (int i = 0; i < s.nr; ++i) {
    std::complex<double> acc(p.y[v * s.nr + i].re, p.y[v * s.nr + i].im);
    for (int t = 0; t < s.nt; ++t) {
      const cf32 hh = hm[t * s.nr + i];
      acc -= std::complex<double>(hh.re, hh.im) * point(s.mod, sym[t]);
    }
    d += std::norm(acc);
  }
  return d;
}

// Channels with nearly collinear columns (condition numbers ~1e2..1e3), y re-drawn from the
// problem's transmitted bits.
void make_ill_conditioned(Problem& p, std::uint64_t seed) {
  const auto& s = p.shape;
  std::mt19937_64 g(seed);
  std::normal_distribution<float> nd(0.f, 1.f);
  const int m = bits_per_symbol(s.mod);
  for (std::size_t c = 0; c < p.h.size() / (s.nr * s.nt); ++c) {
    cf32* hm = &p.h[c * s.nr * s.nt];
    for (int t = 1; t < s.nt; ++t) {
      for (int i = 0; i < s.nr; ++i) {
        hm[t * s.nr + i] = hm[i] + cf32(0.03f * nd(g), 0.03f * nd(g));
      }
    }
  }
  for (std::int64_t v = 0; v < p.vectors; ++v) {
    const cf32* hm = &p.h[std::size_t(v / p.vpc) * s.nr * s.nt];
    const float ns = std::sqrt(p.n0[p.n0.size() == 1 ? 0 : v] / 2);
    for (int i = 0; i < s.nr; ++i) {
      cf32 acc(nd(g) * ns, nd(g) * ns);
      for (int t = 0; t < s.nt; ++t)
        acc += hm[t * s.nr + i] * map_symbol(s.mod, &p.tx_bits[std::size_t(v * s.nt + t) * m]);
      p.y[std::size_t(v) * s.nr + i] = acc;
    }
  }
}

// Path q of list L_t passes through point q of stream t, and every list distance is the true
// distance ||y - H x||^2 minus the same constant (the energy of y outside the span of H).
TEST(TrellisCandidates, EveryPathPassesThroughItsVertexWithItsTrueDistance) {
  const auto seed = test::fresh_seed();
  int cases = 0;
  for (int nt : {2, 4, 8}) {
    for (Modulation mod : kMods) {
      const MimoShape s{nt, nt + (cases % 2), mod};
      const std::int64_t V = (nt == 8 && mod == Modulation::qam256) ? 2 : 6;
      Problem p = make_problem(s, V, V / 2, 8.0 + 2 * bits_per_symbol(mod), seed + 17 * cases);
      if (cases % 3 == 2) make_ill_conditioned(p, seed + 1000 + cases);
      ++cases;
      const int Q = constellation_size(mod);
      const Lists l = cpu_lists(p);
      for (std::int64_t v = 0; v < V; ++v) {
        const double offset = true_distance(p, v, &l.sym[std::size_t(v * nt) * Q * nt]) -
                              l.d[std::size_t(v * nt) * Q];
        for (int t = 0; t < nt; ++t) {
          for (int q = 0; q < Q; ++q) {
            const std::size_t c = std::size_t((v * nt + t) * Q + q);
            ASSERT_EQ(l.sym[c * nt + t], q) << "nt " << nt << " " << to_string(mod);
            const double td = true_distance(p, v, &l.sym[c * nt]);
            ASSERT_NEAR(td - l.d[c], offset, 1e-4 * (1 + td))
                << "nt " << nt << " " << to_string(mod) << " v " << v << " t " << t << " q " << q;
          }
        }
      }
    }
  }
}

// nt = 2: every list is exhaustive (L_1 enumerates stream 1 and slices stream 0 exactly, L_0
// reduces over all Q paths into every point of stream 0), so path q of L_t is the shortest path
// through point q of stream t.
TEST(TrellisCandidates, TwoStreamListsHoldTheShortestPathThroughEveryVertex) {
  const auto seed = test::fresh_seed();
  int k = 0;
  for (Modulation mod : kMods) {
    for (int nr : {2, 4}) {
      const MimoShape s{2, nr, mod};
      Problem p =
          make_problem(s, mod == Modulation::qam256 ? 3 : 10, 1, 6.0 + 2 * int(mod), seed + 31 * k);
      if (k++ % 2) make_ill_conditioned(p, seed + 77 * k);
      const int Q = constellation_size(mod);
      const Lists l = cpu_lists(p);
      for (std::int64_t v = 0; v < p.vectors; ++v) {
        const double offset =
            true_distance(p, v, &l.sym[std::size_t(v * 2) * Q * 2]) - l.d[std::size_t(v * 2) * Q];
        for (int t = 0; t < 2; ++t) {
          for (int q = 0; q < Q; ++q) {
            double best = 1e300;
            for (int o = 0; o < Q; ++o) {
              std::uint8_t x[2];
              x[t] = std::uint8_t(q);
              x[1 - t] = std::uint8_t(o);
              best = std::min(best, true_distance(p, v, x));
            }
            const std::size_t c = std::size_t((v * 2 + t) * Q + q);
            EXPECT_NEAR(l.d[c] + offset, best, 1e-4 * (1 + best))
                << to_string(mod) << " nr " << nr << " v " << v << " t " << t << " q " << q;
          }
        }
      }
    }
  }
}

// nt = 2: the union of the lists holds every max-log minimiser, so the LLRs are the ML
// detector's exact max-log LLRs (clipped alike) for every bit and modulation.
TEST(Trellis, TwoStreamsGiveExactMaxLogLlrs) {
  const auto seed = test::fresh_seed();
  int k = 0;
  for (Modulation mod : kMods) {
    for (int nr : {2, 3}) {
      const MimoShape s{2, nr, mod};
      const Problem p = make_problem(s, mod == Modulation::qam256 ? 60 : 200, 1, 6.0 + 3 * int(mod),
                                     seed + 7 * k++, true);
      const float clip = 30.f;
      MlPlan ml(MlConfig{s, true}, Backend::cpu());
      std::vector<float> ref(std::size_t(p.vectors) * p.nbits());
      ml.run(p.input(), View<std::uint8_t>(),
             View<float>(ref.data(), std::int64_t(ref.size()), Memory::host));
      const Out o = run_cpu(p, clip);
      int mismatched = 0;
      for (std::size_t i = 0; i < ref.size(); ++i) {
        const float r = std::clamp(ref[i], -clip, clip);
        ASSERT_NEAR(o.llrs[i], r, 2e-3f * std::max(1.f, std::abs(r)))
            << to_string(mod) << " nr " << nr << " index " << i;
        if (std::abs(r) > 1e-2f) mismatched += o.bits[i] != (r < 0 ? 1 : 0);
      }
      EXPECT_EQ(mismatched, 0) << to_string(mod);
    }
  }
}

TEST(Trellis, ClippingSignsAndCoherenceBlocks) {
  const auto seed = test::fresh_seed();
  for (Modulation mod : {Modulation::qpsk, Modulation::qam16, Modulation::qam64}) {
    const MimoShape s{4, 4, mod};
    // Noise tiny: every LLR saturates, sign = transmitted bit.
    const Problem p = make_problem(s, 64, 4, 70.0, seed + int(mod));
    const Out o = run_cpu(p, 5.f);
    for (std::size_t i = 0; i < o.llrs.size(); ++i) {
      ASSERT_EQ(o.bits[i], p.tx_bits[i]) << to_string(mod) << " " << i;
      ASSERT_EQ(o.llrs[i], p.tx_bits[i] ? -5.f : 5.f) << to_string(mod) << " " << i;
    }
  }
  const Problem q = make_problem(MimoShape{8, 8, Modulation::qam16}, 40, 2, 12.0, seed + 1, true);
  const Out o = run_cpu(q, 3.f);
  for (std::size_t i = 0; i < o.llrs.size(); ++i) {
    ASSERT_LE(std::abs(o.llrs[i]), 3.f);
    ASSERT_EQ(o.bits[i], o.llrs[i] < 0 ? 1 : 0) << i;
  }
}

// The GPU kernel's merge: the best list path (NaN-aware minimum, any order) gives min over its
// own bit values, and only the counter-hypothesis is scanned. The LLRs and bits must equal the
// CPU's two-minima scan bit for bit (the kernel relies on it; the GPU test compares with memcmp).
TEST(Trellis, BestPathMergeEqualsTwoMinimaScan) {
  const auto seed = test::fresh_seed();
  int k = 0;
  for (int nt : {2, 4, 8}) {
    for (Modulation mod : kMods) {
      const MimoShape s{nt, nt, mod};
      const std::int64_t V = mod == Modulation::qam256 ? 4 : 24;
      const Problem p = make_problem(s, V, 1, 4.0 + 2 * bits_per_symbol(mod), seed + 17 * k++);
      const Lists l = cpu_lists(p);
      const Out o = run_cpu(p, 6.f);
      const int Q = constellation_size(mod), m = bits_per_symbol(mod), nb = nt * m;
      for (std::int64_t v = 0; v < V; ++v) {
        const int nc = nt * Q;
        auto word = [&](int c) {
          std::uint64_t w = 0;
          for (int t = 0; t < nt; ++t) {
            const int sym = l.sym[(std::size_t(v) * nc + c) * nt + t];
            for (int b = 0; b < m; ++b) w |= std::uint64_t((sym >> (m - 1 - b)) & 1) << (t * m + b);
          }
          return w;
        };
        // Best path, scanned from the last list path down (the kernel's order differs).
        float bd = std::nanf("");
        std::uint64_t bw = 0;
        for (int c = nc - 1; c >= 0; --c) {
          const float d = l.d[std::size_t(v) * nc + c];
          if (d < bd || bd != bd) {
            bd = d;
            bw = word(c);
          }
        }
        const float inv_n0 = rounding::fdiv(1.f, p.n0[0]);
        for (int j = 0; j < nb; ++j) {
          float cm = std::numeric_limits<float>::infinity();
          for (int c = 0; c < nc; ++c)
            if (((word(c) ^ bw) >> j) & 1u)
              cm = rounding::fmin_num(cm, l.d[std::size_t(v) * nc + c]);
          const bool one = (bw >> j) & 1u;
          const float m0 = one ? cm : bd, m1 = one ? bd : cm;
          const std::size_t o_idx = std::size_t(v) * nb + j;
          ASSERT_EQ(nway::hard_of_minima(m0, m1), o.bits[o_idx]) << to_string(mod) << " nt " << nt;
          const float llr = nway::llr_of_minima(m0, m1, inv_n0, 6.f);
          ASSERT_EQ(std::memcmp(&llr, &o.llrs[o_idx], sizeof(float)), 0)
              << to_string(mod) << " nt " << nt << " v " << v << " bit " << j << ": " << llr
              << " vs " << o.llrs[o_idx];
        }
      }
    }
  }
}

// List L_t holds a path through every point of stream t, so every bit of every stream has both
// values in the union of the lists: no counter-hypothesis is ever missing (hence no flip
// completion, unlike N-way and K-best). Checked on the candidate lists, zero channels included.
TEST(Trellis, EveryBitHasBothValuesInTheLists) {
  const auto seed = test::fresh_seed();
  int k = 0;
  for (int nt : {2, 4, 8}) {
    for (Modulation mod : kMods) {
      const MimoShape s{nt, nt, mod};
      const std::int64_t V = mod == Modulation::qam256 ? 4 : 12;
      const Problem p = test::with_zero_channels(
          make_problem(s, V, 1, 2.0 + 2 * bits_per_symbol(mod), seed + 13 * k++), 3);
      const Lists l = cpu_lists(p);
      const int Q = constellation_size(mod), m = bits_per_symbol(mod), nc = nt * Q;
      for (std::int64_t v = 0; v < V; ++v) {
        for (int t = 0; t < nt; ++t) {
          for (int b = 0; b < m; ++b) {
            bool seen[2] = {false, false};
            for (int c = 0; c < nc; ++c) {
              const int sym = l.sym[(std::size_t(v) * nc + c) * nt + t];
              seen[(sym >> (m - 1 - b)) & 1] = true;
            }
            ASSERT_TRUE(seen[0] && seen[1])
                << to_string(mod) << " nt " << nt << " v " << v << " stream " << t << " bit " << b;
          }
        }
      }
    }
  }
}

// H = 0: every path has the same distance and every LLR is 0.
TEST(Trellis, ZeroChannelGivesZeroLlrs) {
  const auto seed = test::fresh_seed();
  for (int nt : {2, 4, 8}) {
    for (int nr : {nt, 9}) {
      for (Modulation mod : kMods) {
        const Problem p = test::with_zero_channels(
            make_problem(MimoShape{nt, nr, mod}, 4, 2, 10.0, seed + nt + nr + int(mod)), 1);
        const Out o = run_cpu(p);
        for (std::size_t i = 0; i < o.llrs.size(); ++i) {
          ASSERT_EQ(o.llrs[i], 0.f) << "nt " << nt << " nr " << nr << " " << to_string(mod);
          ASSERT_LE(o.bits[i], 1);
        }
      }
    }
  }
}

TEST(Trellis, HardOutputOnlyMatchesSoftRun) {
  const auto seed = test::fresh_seed();
  const Problem p = make_problem(MimoShape{4, 5, Modulation::qam64}, 40, 1, 20.0, seed);
  const Out o = run_cpu(p);
  TrellisPlan plan(TrellisConfig{p.shape}, Backend::cpu());
  std::vector<std::uint8_t> bits(o.bits.size());
  plan.run(p.input(), View<std::uint8_t>(bits.data(), std::int64_t(bits.size()), Memory::host),
           View<float>());
  EXPECT_EQ(bits, o.bits);
}

// Lists near the ML solution: at 4x4 16-QAM the trellis decisions are close to exact ML.
TEST(Trellis, HardDecisionsCloseToMl) {
  const auto seed = test::fresh_seed();
  const MimoShape s{4, 4, Modulation::qam16};
  const Problem p = make_problem(s, 2000, 1, 16.0, seed);
  std::vector<float> ref;
  std::vector<std::uint8_t> hard;
  test::fast_maxlog(p, 8.f, ref, hard);
  const Out o = run_cpu(p);
  int diff = 0;
  for (std::size_t i = 0; i < hard.size(); ++i) diff += o.bits[i] != hard[i];
  std::printf("trellis vs max-log ML hard decisions: %d of %zu bits differ\n", diff, hard.size());
  // About 0.5 % differ (measured over seeds: 112-198 of 32000); 1 % leaves five standard errors.
  EXPECT_LE(diff, int(hard.size() / 100)) << diff << " of " << hard.size();
}

TEST(Trellis, RejectsBadConfigurationsAndInputs) {
  const MimoShape s{4, 4, Modulation::qam16};
  auto what_of = [](auto&& f) {
    try {
      f();
    } catch (const std::exception& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_THROW(TrellisPlan(TrellisConfig{s, 0.f}, Backend::cpu()), InvalidArgument);
  EXPECT_THROW(TrellisPlan(TrellisConfig{s, std::nanf("")}, Backend::cpu()), InvalidArgument);
  EXPECT_THROW(TrellisPlan(TrellisConfig{MimoShape{4, 4, Modulation::bpsk}}, Backend::cpu()),
               Unsupported);
  EXPECT_THROW(TrellisPlan(TrellisConfig{MimoShape{3, 4, Modulation::qpsk}}, Backend::cpu()),
               Unsupported);
  EXPECT_THROW(TrellisPlan(TrellisConfig{MimoShape{4, 2, Modulation::qpsk}}, Backend::cpu()),
               InvalidArgument);
  EXPECT_THROW(TrellisPlan(TrellisConfig{MimoShape{4, 65, Modulation::qpsk}}, Backend::cpu()),
               InvalidArgument);
  const std::string nr_msg = what_of([] {
    TrellisPlan(TrellisConfig{MimoShape{4, 3, Modulation::qpsk}}, Backend::cpu());
  });
  EXPECT_NE(nr_msg.find("nr"), std::string::npos) << nr_msg;
  EXPECT_NE(nr_msg.find("3"), std::string::npos) << nr_msg;
  const std::string nt_msg = what_of([] {
    TrellisPlan(TrellisConfig{MimoShape{5, 6, Modulation::qpsk}}, Backend::cpu());
  });
  EXPECT_NE(nt_msg.find("nt"), std::string::npos) << nt_msg;
  EXPECT_NE(nt_msg.find("2, 4 or 8"), std::string::npos) << nt_msg;

  const auto seed = test::fresh_seed();
  Problem p = make_problem(s, 4, 1, 10.0, seed);
  TrellisPlan plan(TrellisConfig{s}, Backend::cpu());
  std::vector<std::uint8_t> bits(std::size_t(p.vectors) * p.nbits());
  std::vector<float> llrs(bits.size());
  auto bv = View<std::uint8_t>(bits.data(), std::int64_t(bits.size()), Memory::host);
  auto lv = View<float>(llrs.data(), std::int64_t(llrs.size()), Memory::host);
  EXPECT_THROW(plan.run(p.input(), View<std::uint8_t>(bits.data(), 3, Memory::host), lv),
               InvalidArgument);
  EXPECT_THROW(plan.run(p.input(), bv, View<float>(llrs.data(), 5, Memory::host)), InvalidArgument);
  // Residency: device views given to a CPU plan.
  EXPECT_THROW(plan.run(p.input(), View<std::uint8_t>(bits.data(), bv.size, Memory::device), lv),
               InvalidArgument);
  {
    DetectInput in = p.input();
    in.y = ConstMatrixBatch<cf32>(p.y.data(), p.vectors, s.nr, 1, Memory::device);
    EXPECT_THROW(plan.run(in, bv, lv), InvalidArgument);
  }
  p.y[3].re = std::nanf("");
  const std::string y_msg = what_of([&] { plan.run(p.input(), bv, lv); });
  EXPECT_NE(y_msg.find("y"), std::string::npos) << y_msg;
  EXPECT_THROW(plan.run(p.input(), bv, lv), InvalidArgument);
  p.y[3].re = 0.5f;
  p.h[2].im = INFINITY;
  EXPECT_THROW(plan.run(p.input(), bv, lv), InvalidArgument);
  p.h[2].im = 0.25f;
  p.n0[0] = 0.f;
  EXPECT_THROW(plan.run(p.input(), bv, lv), InvalidArgument);
  p.n0[0] = -1.f;
  EXPECT_THROW(plan.run(p.input(), bv, lv), InvalidArgument);
  p.n0[0] = 0.1f;
  EXPECT_NO_THROW(plan.run(p.input(), bv, lv));
  EXPECT_THROW(plan.search(make_problem(s, 8, 1, 10.0, seed).input(), bv, lv), InvalidArgument);
}

// ---- CPU == CUDA ------------------------------------------------------------------------
TEST(TrellisGpu, CandidateListsAndLlrsMatchCpu) {
  MIMORX_REQUIRE_GPU();
  const auto seed = test::fresh_seed();
  int cases = 0;
  for (int nt : {2, 4, 8}) {
    for (Modulation mod : kMods) {
      for (int variant = 0; variant < 2; ++variant) {  // random, ill-conditioned
        const int Q = constellation_size(mod);
        // Odd counts leave partial blocks (G = 128 / Q vectors per block).
        const std::int64_t V = Q >= 256 ? (nt == 8 ? 6 : 30) : 4 * 37;
        const int vpc = variant ? 2 : 1;
        const MimoShape s{nt, variant ? 8 : nt, mod};
        Problem p = make_problem(s, V, vpc, 6.0 + 2 * bits_per_symbol(mod), seed + 131 * cases,
                                 variant == 0);
        if (variant) make_ill_conditioned(p, seed + 7 * cases);
        ++cases;
        const std::string what = "nt " + std::to_string(nt) + " nr " + std::to_string(s.nr) + " " +
                                 to_string(mod) + (variant ? " ill-conditioned" : "");
        const Lists l = cpu_lists(p);
        TrellisPlan gpu(TrellisConfig{s, 6.f}, Backend::cuda());
        DeviceProblem dp(p);
        Buffer<float> gd = Buffer<float>::device(l.d.size());
        Buffer<std::uint8_t> gs = Buffer<std::uint8_t>::device(l.sym.size());
        gpu.qr(dp.in);
        gpu.candidates(dp.in, View<float>(gd), View<std::uint8_t>(gs));
        ASSERT_EQ(to_host(gs), l.sym) << what;
        const auto hd = to_host(gd);
        ASSERT_EQ(std::memcmp(hd.data(), l.d.data(), hd.size() * sizeof(float)), 0) << what;
        // Bits and LLRs.
        const Out o = run_cpu(p, 6.f);
        Buffer<std::uint8_t> gb = Buffer<std::uint8_t>::device(o.bits.size());
        Buffer<float> gl = Buffer<float>::device(o.llrs.size());
        gb.fill_bytes(0xEE);
        gl.fill_bytes(0xFF);
        gpu.run(dp.in, View<std::uint8_t>(gb), View<float>(gl));
        ASSERT_EQ(to_host(gb), o.bits) << what;
        // LLRs bit-identical (the kernel's best-path merge gives the CPU's two minima exactly).
        const auto hl = to_host(gl);
        for (std::size_t i = 0; i < hl.size(); ++i) {
          ASSERT_EQ(std::memcmp(&hl[i], &o.llrs[i], sizeof(float)), 0)
              << what << " " << i << ": " << hl[i] << " vs " << o.llrs[i];
        }
        // Hard output only, without the device-value scan.
        TrellisPlan quiet(TrellisConfig{s, 6.f, false}, Backend::cuda());
        gb.fill_bytes(0xEE);
        quiet.run(dp.in, View<std::uint8_t>(gb), View<float>());
        ASSERT_EQ(to_host(gb), o.bits) << what;
      }
    }
  }
  std::printf("[ cases    ] %d configurations compared\n", cases);
}

// Zero channels (every third): bits and LLRs bit-identical to the CPU's, LLR 0 on the zero
// channels.
TEST(TrellisGpu, ZeroChannelsAreBitIdenticalToCpu) {
  MIMORX_REQUIRE_GPU();
  const auto seed = test::fresh_seed();
  int k = 0;
  for (int nt : {2, 4, 8}) {
    for (Modulation mod : kMods) {
      const MimoShape s{nt, nt + 1, mod};
      const int vpc = 2;
      const std::int64_t V = constellation_size(mod) >= 256 ? 2 * 15 : 2 * 61;
      const Problem p = test::with_zero_channels(
          make_problem(s, V, vpc, 4.0 + 2 * bits_per_symbol(mod), seed + 101 * k++), 3);
      const Out o = run_cpu(p, 6.f);
      TrellisPlan gpu(TrellisConfig{s, 6.f}, Backend::cuda());
      DeviceProblem dp(p);
      Buffer<std::uint8_t> gb = Buffer<std::uint8_t>::device(o.bits.size());
      Buffer<float> gl = Buffer<float>::device(o.llrs.size());
      gb.fill_bytes(0xEE);
      gl.fill_bytes(0xFF);
      gpu.run(dp.in, View<std::uint8_t>(gb), View<float>(gl));
      const std::string what = "nt " + std::to_string(nt) + " " + to_string(mod);
      ASSERT_EQ(to_host(gb), o.bits) << what;
      const auto hl = to_host(gl);
      ASSERT_EQ(std::memcmp(hl.data(), o.llrs.data(), hl.size() * sizeof(float)), 0) << what;
      for (int i = 0; i < vpc * p.nbits(); ++i) ASSERT_EQ(hl[std::size_t(i)], 0.f) << what;
    }
  }
}

TEST(TrellisGpu, RejectsBadDeviceInputsAndLargeBatchesWork) {
  MIMORX_REQUIRE_GPU();
  const auto seed = test::fresh_seed();
  const MimoShape s{4, 4, Modulation::qam16};
  Problem p = make_problem(s, 20000, 10, 15.0, seed);
  TrellisPlan gpu(TrellisConfig{s}, Backend::cuda());
  Buffer<std::uint8_t> gb = Buffer<std::uint8_t>::device(std::size_t(p.vectors) * p.nbits());
  Buffer<float> gl = Buffer<float>::device(gb.size());
  // Host inputs to a CUDA plan.
  EXPECT_THROW(gpu.run(p.input(), View<std::uint8_t>(gb), View<float>(gl)), InvalidArgument);
  {
    DeviceProblem dp(p);
    gpu.run(dp.in, View<std::uint8_t>(gb), View<float>(gl));
    const Out o = run_cpu(p);
    EXPECT_EQ(to_host(gb), o.bits);
    const auto hl = to_host(gl);
    EXPECT_EQ(std::memcmp(hl.data(), o.llrs.data(), hl.size() * sizeof(float)), 0);
    // Host outputs.
    std::vector<std::uint8_t> hb(gb.size());
    EXPECT_THROW(
        gpu.run(dp.in, View<std::uint8_t>(hb.data(), std::int64_t(hb.size()), Memory::host),
                View<float>(gl)),
        InvalidArgument);
  }
  // Non-finite device inputs and a bad noise variance are caught by the scan.
  p.y[5].im = std::nanf("");
  {
    DeviceProblem dp(p);
    EXPECT_THROW(gpu.run(dp.in, View<std::uint8_t>(gb), View<float>(gl)), InvalidArgument);
  }
  p.y[5].im = 0.f;
  p.n0[0] = -2.f;
  {
    DeviceProblem dp(p);
    EXPECT_THROW(gpu.run(dp.in, View<std::uint8_t>(gb), View<float>(gl)), InvalidArgument);
  }
}

// ---- Quality (docs/trellis.md) ----------------------------------------------------------
// 4x4 16-QAM at 10 and 20 dB: mean |LLR - exact max-log| (both clipped at 8) and hard BER of
// the trellis detector (LLRs from the union of the lists, and from each stream's own list
// only), N-way (N = 1, 4) and K-best (K = 16, 64), beside exact ML.
TEST(TrellisSlow, FourByFourSixteenQamAgainstMaxLogMl) {
  const auto seed = test::fresh_seed();
  const MimoShape s{4, 4, Modulation::qam16};
  const float clip = 8.f;
  const int m = bits_per_symbol(s.mod), Q = 16, nb = s.nt * m;
  for (double snr : {10.0, 20.0}) {
    const Problem p = make_problem(s, snr < 15 ? 20000 : 40000, 1, snr, seed + int(snr));
    std::vector<float> ref;
    std::vector<std::uint8_t> ml_hard;
    test::fast_maxlog(p, clip, ref, ml_hard);
    auto errors = [&](const std::vector<std::uint8_t>& b) {
      std::int64_t e = 0;
      for (std::size_t i = 0; i < b.size(); ++i) e += b[i] != p.tx_bits[i];
      return e;
    };
    auto report = [&](const char* name, const Out& o) {
      double mae = 0;
      for (std::size_t i = 0; i < ref.size(); ++i) mae += std::abs(o.llrs[i] - ref[i]);
      mae /= double(ref.size());
      const std::int64_t e = errors(o.bits);
      std::printf("[ figures  ] | %.0f dB | %-22s | %.3e | %8lld | %.4f |\n", snr, name,
                  double(e) / double(ref.size()), static_cast<long long>(e), mae);
      return mae;
    };
    const std::int64_t ml_err = errors(ml_hard);
    std::printf("[ figures  ] 4x4 16-QAM %.0f dB, %lld vectors, clip %.0f\n", snr,
                static_cast<long long>(p.vectors), clip);
    std::printf("[ figures  ] | SNR | detector | BER | bit errors | mean abs LLR error |\n");
    std::printf("[ figures  ] | %.0f dB | %-22s | %.3e | %8lld | 0 |\n", snr, "ML (exact max-log)",
                double(ml_err) / double(ref.size()), static_cast<long long>(ml_err));
    const Out tu = run_cpu(p, clip);
    const double mae_union = report("trellis (union)", tu);
    // Per-stream lists: the bits of stream t from list L_t only.
    {
      const Lists l = cpu_lists(p);
      Out o;
      o.bits.resize(ref.size());
      o.llrs.resize(ref.size());
      for (std::int64_t v = 0; v < p.vectors; ++v) {
        const float inv_n0 = 1.f / p.n0[0];
        for (int t = 0; t < s.nt; ++t) {
          for (int k = 0; k < m; ++k) {
            float m0 = INFINITY, m1 = INFINITY;
            for (int q = 0; q < Q; ++q) {
              const std::size_t c = std::size_t((v * s.nt + t) * Q + q);
              const int bit = (l.sym[c * s.nt + t] >> (m - 1 - k)) & 1;
              (bit ? m1 : m0) = std::min(bit ? m1 : m0, l.d[c]);
            }
            const std::size_t j = std::size_t(v * nb + t * m + k);
            o.bits[j] = m1 < m0 ? 1 : 0;
            o.llrs[j] = std::clamp((m1 - m0) * inv_n0, -clip, clip);
          }
        }
      }
      const double mae_own = report("trellis (own list)", o);
      EXPECT_LE(mae_union, mae_own);
    }
    for (int n : {1, 4}) {
      NwayPlan plan(NwayConfig{s, n, clip}, Backend::cpu());
      report(n == 1 ? "nway N=1" : "nway N=4", run_plan(plan, p));
    }
    for (int k : {16, 64}) {
      KbestPlan plan(KbestConfig{s, k, clip}, Backend::cpu());
      report(k == 16 ? "kbest K=16" : "kbest K=64", run_plan(plan, p));
    }
    ASSERT_GT(ml_err, 0);
  }
}

}  // namespace
}  // namespace mimorx::detect

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdio>
#include <cstring>
#include <limits>
#include <set>
#include <string>
#include <vector>

#include "detect/kbest_math.hpp"
#include "detect/nway_math.hpp"
#include "mimorx/detect/kbest.hpp"
#include "support/gpu.hpp"
#include "support/list_detect.hpp"

namespace mimorx::detect {
namespace {

using test::make_problem;
using test::Out;
using test::Problem;

Out run_cpu(const Problem& p, int k, float clip = 8.f) {
  KbestPlan plan(KbestConfig{p.shape, k, clip}, Backend::cpu());
  return test::run_plan(plan, p);
}

struct List {
  std::vector<float> d;
  std::vector<std::uint8_t> sym;
};
List cpu_list(const Problem& p, int k) {
  KbestPlan plan(KbestConfig{p.shape, k, 8.f}, Backend::cpu());
  List l{std::vector<float>(std::size_t(p.vectors) * k), {}};
  l.sym.resize(l.d.size() * p.shape.nt);
  plan.qr(p.input());
  plan.candidates(p.input(), View<float>(l.d.data(), std::int64_t(l.d.size()), Memory::host),
                  View<std::uint8_t>(l.sym.data(), std::int64_t(l.sym.size()), Memory::host));
  return l;
}

double true_distance(const Problem& p, std::int64_t v, const std::uint8_t* sym) {
  const auto& s = p.shape;
  const int m = bits_per_symbol(s.mod);
  double d = 0;
  for (int i = 0; i < s.nr; ++i) {
    std::complex<double> acc(p.y[v * s.nr + i].re, p.y[v * s.nr + i].im);
    for (int t = 0; t < s.nt; ++t) {
      std::uint8_t b[8] = {};
      for (int j = 0; j < m; ++j) b[j] = std::uint8_t((sym[t] >> (m - 1 - j)) & 1);
      const cf32 x = map_symbol(s.mod, b);
      const cf32 hh = p.h[(v / p.vpc) * s.nr * s.nt + t * s.nr + i];
      acc -= std::complex<double>(hh.re, hh.im) * std::complex<double>(x.re, x.im);
    }
    d += std::norm(acc);
  }
  return d;
}

// With k = M^nt nothing is ever pruned: the final list is every leaf, sorted, and the LLRs are
// exact max-log.
TEST(Kbest, KeepingEveryLeafIsExactMaxLog) {
  const auto seed = test::fresh_seed();
  for (auto [nt, mod] : {std::pair{2, Modulation::qpsk}, std::pair{2, Modulation::qam16},
                         std::pair{4, Modulation::qpsk}}) {
    const MimoShape s{nt, nt + 1, mod};
    const int leaves = int(std::pow(1 << bits_per_symbol(mod), nt));
    const Problem p = make_problem(s, 60, 2, 10.0, seed + nt + int(mod), true);
    std::vector<float> ref;
    std::vector<std::uint8_t> hard;
    test::naive_maxlog(p, 20.f, ref, hard);
    const Out o = run_cpu(p, leaves, 20.f);
    for (std::size_t i = 0; i < ref.size(); ++i) {
      ASSERT_NEAR(o.llrs[i], ref[i], 2e-3f * std::max(1.f, std::abs(ref[i]))) << i;
    }
  }
}

TEST(Kbest, ListIsSortedDistinctAndHoldsTrueDistances) {
  const auto seed = test::fresh_seed();
  for (Modulation mod : {Modulation::qpsk, Modulation::qam16, Modulation::qam64}) {
    const MimoShape s{4, 5, mod};
    const Problem p = make_problem(s, 8, 1, 15.0, seed + int(mod));
    const int k = 24;
    KbestPlan plan(KbestConfig{s, k, 8.f}, Backend::cpu());
    std::vector<float> d(std::size_t(p.vectors) * k);
    std::vector<std::uint8_t> sym(d.size() * s.nt);
    plan.qr(p.input());
    plan.candidates(p.input(), View<float>(d.data(), std::int64_t(d.size()), Memory::host),
                    View<std::uint8_t>(sym.data(), std::int64_t(sym.size()), Memory::host));
    for (std::int64_t v = 0; v < p.vectors; ++v) {
      std::set<std::vector<std::uint8_t>> seen;
      const double off = true_distance(p, v, &sym[v * k * s.nt]) - d[v * k];
      for (int r = 0; r < k; ++r) {
        const std::size_t c = v * k + r;
        if (r > 0) {
          EXPECT_LE(d[c - 1], d[c]);
        }
        EXPECT_NEAR(true_distance(p, v, &sym[c * s.nt]) - d[c], off, 1e-4 * (1 + d[c]));
        seen.insert(std::vector<std::uint8_t>(&sym[c * s.nt], &sym[c * s.nt] + s.nt));
      }
      EXPECT_EQ(int(seen.size()), k);
    }
  }
  // Fewer leaves than k: the tail is padded with +inf.
  const Problem q = make_problem(MimoShape{2, 2, Modulation::qpsk}, 3, 1, 10.0, seed);
  KbestPlan plan(KbestConfig{q.shape, 20, 8.f}, Backend::cpu());
  std::vector<float> d(3 * 20);
  std::vector<std::uint8_t> sym(d.size() * 2);
  plan.qr(q.input());
  plan.candidates(q.input(), View<float>(d.data(), 60, Memory::host),
                  View<std::uint8_t>(sym.data(), 120, Memory::host));
  for (int v = 0; v < 3; ++v) {
    EXPECT_TRUE(std::isfinite(d[v * 20 + 15]));
    for (int r = 16; r < 20; ++r) EXPECT_TRUE(std::isinf(d[v * 20 + r]));
  }
}

// The textbook breadth-first search, every level sorted (stable, by distance), on the same
// triangular problem and arithmetic: the final list's distances of vector v.
std::vector<float> sorted_every_level(const Problem& p, std::int64_t v, int k) {
  const MimoShape& s = p.shape;
  const nway::Layout lay(s.nt);
  const int d = lay.d, L = axis_levels(s.mod);
  std::vector<float> e(std::size_t(lay.es)), work(std::size_t(2 * s.nr) * (d + 1));
  nway::qr_problem(&p.h[std::size_t((v / p.vpc) * s.nr * s.nt)], &p.y[std::size_t(v * s.nr)], s.nr,
                   s.nt, 0, qam_scale(s.mod), work.data(), e.data());
  std::vector<std::vector<std::uint8_t>> paths{std::vector<std::uint8_t>(std::size_t(d), 0)};
  std::vector<float> dist{0.f};
  for (int l = d - 1; l >= 0; --l) {
    std::vector<std::pair<std::uint32_t, int>> children;
    for (std::size_t q = 0; q < paths.size(); ++q) {
      const float z = kbest::parent_z(e.data(), lay, l, L, paths[q].data());
      for (int i = 0; i < L; ++i) {
        children.emplace_back(
            kbest::key_of(kbest::child_distance(e.data(), lay, l, L, z, i, dist[q])),
            int(q) * L + i);
      }
    }
    std::stable_sort(children.begin(), children.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    std::vector<std::vector<std::uint8_t>> next;
    std::vector<float> next_dist;
    for (int r = 0; r < std::min(k, int(children.size())); ++r) {
      next.push_back(paths[std::size_t(children[r].second / L)]);
      next.back()[std::size_t(l)] = std::uint8_t(children[r].second % L);
      next_dist.push_back(kbest::distance_of_key(children[r].first));
    }
    paths = std::move(next);
    dist = std::move(next_dist);
  }
  dist.resize(std::size_t(k), std::numeric_limits<float>::infinity());
  return dist;
}

// Above the last level a list that keeps every child keeps child order instead of sorting
// (docs/kbest.md): the next level's selection does not depend on that order but for exact ties,
// so on inputs without ties the final lists are those of the search that sorts every level.
TEST(Kbest, FinalListsEqualTheSearchThatSortsEveryLevel) {
  const auto seed = test::fresh_seed();
  for (Modulation mod : {Modulation::qpsk, Modulation::qam16, Modulation::qam64}) {
    for (int k : {4, 16, 24, 64}) {
      const MimoShape s{4, 4, mod};
      const Problem p = make_problem(s, 12, 2, 12.0, seed + int(mod) * 131 + k);
      const List got = cpu_list(p, k);
      for (std::int64_t v = 0; v < p.vectors; ++v) {
        const std::vector<float> want = sorted_every_level(p, v, k);
        for (int r = 0; r < k; ++r) {
          ASSERT_EQ(got.d[std::size_t(v * k + r)], want[std::size_t(r)])
              << to_string(mod) << " k " << k << " vector " << v << " rank " << r;
        }
      }
    }
  }
}

// H = 0: R = 0 and Q^T y = 0, every path has distance 0, and every LLR is 0 (the flip of the
// best path that supplies a missing counter-hypothesis has the best path's distance).
TEST(Kbest, ZeroChannelGivesZeroLlrs) {
  const auto seed = test::fresh_seed();
  for (int nt : {2, 4, 8}) {
    for (Modulation mod :
         {Modulation::qpsk, Modulation::qam16, Modulation::qam64, Modulation::qam256}) {
      for (int k : {1, 4, 16}) {
        const Problem p = test::with_zero_channels(
            make_problem(MimoShape{nt, nt + 1, mod}, 6, 2, 10.0, seed + nt + int(mod)), 1);
        const Out o = run_cpu(p, k);
        for (std::size_t i = 0; i < o.llrs.size(); ++i) {
          ASSERT_EQ(o.llrs[i], 0.f) << "nt " << nt << " " << to_string(mod) << " k " << k;
          ASSERT_LE(o.bits[i], 1);
        }
      }
    }
  }
}

// Random inputs (every fifth channel zero), against the list and the exhaustive ML detector: a
// bit with both values in the final list gets max-log over the list; a bit with one value gets
// the metric of the best path's single-coordinate flip as its counter-hypothesis
// (test::check_list_llrs recomputes it in the H domain), never farther from the exact max-log
// LLR than the clip rule where the best path is the ML solution.
TEST(Kbest, MissingCounterHypothesisIsTheBestPathsFlip) {
  const auto seed = test::fresh_seed();
  struct Case {
    int nt, nr;
    Modulation mod;
    int k;
    double snr;
    float clip;
  };
  const Case cases[] = {
      {4, 5, Modulation::qam16, 2, 4.0, 8.f},  {4, 5, Modulation::qam16, 4, 12.0, 8.f},
      {4, 4, Modulation::qam16, 8, 8.0, 40.f}, {2, 3, Modulation::qam64, 3, 10.0, 8.f},
      {8, 8, Modulation::qpsk, 4, 2.0, 8.f},   {2, 2, Modulation::qam256, 16, 20.0, 40.f},
      {4, 4, Modulation::qam16, 1, 10.0, 8.f}};
  test::ListLlrCheck total;
  int n = 0;
  for (const Case& c : cases) {
    const Problem p = test::with_zero_channels(
        make_problem(MimoShape{c.nt, c.nr, c.mod}, 40, 2, c.snr, seed + 31 * n++, true), 5);
    const List l = cpu_list(p, c.k);
    const Out o = run_cpu(p, c.k, c.clip);
    const auto r = test::check_list_llrs(p, c.k, l.d, l.sym, o.llrs, test::ml_llrs(p), c.clip);
    const std::string what = "nt " + std::to_string(c.nt) + " " + to_string(c.mod) + " k " +
                             std::to_string(c.k) + ", " + r.first;
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

TEST(Kbest, RejectsBadConfigurations) {
  const MimoShape s{4, 4, Modulation::qam64};
  EXPECT_THROW(KbestPlan(KbestConfig{s, 0, 8.f}, Backend::cpu()), InvalidArgument);
  EXPECT_THROW(KbestPlan(KbestConfig{s, KbestPlan::max_k(s) + 1, 8.f}, Backend::cpu()),
               InvalidArgument);
  EXPECT_NO_THROW(KbestPlan(KbestConfig{s, KbestPlan::max_k(s), 8.f}, Backend::cpu()));
  EXPECT_THROW(KbestPlan(KbestConfig{s, 16, -1.f}, Backend::cpu()), InvalidArgument);
  EXPECT_THROW(KbestPlan(KbestConfig{MimoShape{4, 4, Modulation::bpsk}, 16, 8.f}, Backend::cpu()),
               Unsupported);
  EXPECT_THROW(KbestPlan(KbestConfig{MimoShape{5, 5, Modulation::qpsk}, 16, 8.f}, Backend::cpu()),
               Unsupported);
  try {
    KbestPlan(KbestConfig{s, 100000, 8.f}, Backend::cpu());
    FAIL();
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("100000"), std::string::npos) << e.what();
  }
}

// The GPU's final lists (candidates()), hard bits and LLRs (run()) against the CPU plan's, bit
// for bit; an empty string when they agree.
std::string gpu_differs_from_cpu(const Problem& p, int k, float clip) {
  const MimoShape& s = p.shape;
  const std::int64_t V = p.vectors;
  KbestPlan cpu(KbestConfig{s, k, clip}, Backend::cpu());
  KbestPlan gpu(KbestConfig{s, k, clip}, Backend::cuda());
  const test::DeviceProblem dev(p);
  std::vector<float> cd(std::size_t(V) * k);
  std::vector<std::uint8_t> cs(cd.size() * s.nt);
  cpu.qr(p.input());
  cpu.candidates(p.input(), View<float>(cd.data(), std::int64_t(cd.size()), Memory::host),
                 View<std::uint8_t>(cs.data(), std::int64_t(cs.size()), Memory::host));
  Buffer<float> gd = Buffer<float>::device(cd.size());
  Buffer<std::uint8_t> gs = Buffer<std::uint8_t>::device(cs.size());
  gd.fill_bytes(0xFF);
  gs.fill_bytes(0xEE);
  gpu.qr(dev.in);
  gpu.candidates(dev.in, View<float>(gd), View<std::uint8_t>(gs));
  const std::vector<float> hd = test::to_host(gd);
  if (test::to_host(gs) != cs) return "list symbols";
  if (std::memcmp(hd.data(), cd.data(), cd.size() * sizeof(float)) != 0) return "list distances";
  const Out o = run_cpu(p, k, clip);
  Buffer<std::uint8_t> gb = Buffer<std::uint8_t>::device(o.bits.size());
  Buffer<float> gl = Buffer<float>::device(o.llrs.size());
  gb.fill_bytes(0xEE);
  gl.fill_bytes(0xFF);
  gpu.run(dev.in, View<std::uint8_t>(gb), View<float>(gl));
  const std::vector<float> hl = test::to_host(gl);
  if (test::to_host(gb) != o.bits) return "hard bits";
  if (std::memcmp(hl.data(), o.llrs.data(), hl.size() * sizeof(float)) != 0) return "LLRs";
  return "";
}

// Every shape and k the GPU dispatches: the warp kernel (k rounded up to 8, 16, 32 or 64,
// k * sqrt(M) <= 256 children, 2nt log2(sqrt(M)) <= 32 path bits: e.g. QPSK k <= 64, 16-QAM
// k <= 64, 64-QAM k <= 32, 256-QAM k <= 16 with nt <= 4) and the block kernel (the rest:
// k = 256, max_k, 64-QAM and 256-QAM with nt = 8).
TEST(KbestGpu, ListsAndLlrsMatchCpu) {
  MIMORX_REQUIRE_GPU();
  const auto seed = test::fresh_seed();
  int cases = 0;
  for (int nt : {2, 4, 8}) {
    for (Modulation mod :
         {Modulation::qpsk, Modulation::qam16, Modulation::qam64, Modulation::qam256}) {
      MimoShape s{nt, nt + 1, mod};
      for (int k : {1, 5, 8, 9, 16, 17, 32, 33, 64, 256, KbestPlan::max_k(s)}) {
        if (k > KbestPlan::max_k(s)) continue;
        const std::int64_t V = k >= 256 ? 12 : 40;
        const Problem p =
            make_problem(s, V, 2, 5.0 + 2 * bits_per_symbol(mod), seed + cases, k == 5);
        ++cases;
        const std::string d = gpu_differs_from_cpu(p, k, 7.f);
        ASSERT_EQ(d, "") << "nt " << nt << " " << to_string(mod) << " k " << k;
      }
    }
  }
  std::printf("[ cases    ] %d configurations compared\n", cases);
}

// Exact ties between children, where the order is the child index's: identity channels with
// y = 0 (every level's observation lies midway between two PAM levels), channels with two
// equal columns, channels with zero rows (rank below nt), zero channels. The warp kernel's
// 32-bit selection keys cannot order these and take the 64-bit path.
TEST(KbestGpu, TiedDistancesMatchCpu) {
  MIMORX_REQUIRE_GPU();
  const auto seed = test::fresh_seed();
  int cases = 0;
  for (int nt : {2, 4, 8}) {
    for (Modulation mod :
         {Modulation::qpsk, Modulation::qam16, Modulation::qam64, Modulation::qam256}) {
      const MimoShape s{nt, nt + 1, mod};
      for (int k : {3, 16, 64}) {
        if (k > KbestPlan::max_k(s)) continue;
        const int per = s.nr * nt;
        Problem p = make_problem(s, 16, 2, 5.0 + 2 * bits_per_symbol(mod), seed + 7 * cases++);
        for (std::int64_t c = 0; c < 8; ++c) {
          cf32* h = &p.h[std::size_t(c * per)];
          switch (c % 4) {
            case 0:  // identity (first nt rows), y = 0
              std::fill(h, h + per, cf32(0.f, 0.f));
              for (int t = 0; t < nt; ++t) h[t * s.nr + t] = cf32(1.f, 0.f);
              std::fill(&p.y[std::size_t(2 * c * s.nr)], &p.y[std::size_t(2 * c * s.nr)] + 2 * s.nr,
                        cf32(0.f, 0.f));
              break;
            case 1:  // column 1 = column 0
              std::copy(h, h + s.nr, h + s.nr);
              break;
            case 2:  // rows 0 and 1 zero
              for (int t = 0; t < nt; ++t) h[t * s.nr] = h[t * s.nr + 1] = cf32(0.f, 0.f);
              break;
            default:  // zero
              std::fill(h, h + per, cf32(0.f, 0.f));
          }
        }
        const std::string d = gpu_differs_from_cpu(p, k, 7.f);
        ASSERT_EQ(d, "") << "nt " << nt << " " << to_string(mod) << " k " << k;
      }
    }
  }
  std::printf("[ cases    ] %d configurations compared\n", cases);
}

// Near-ties: one column per channel scaled by 1e-3 .. 1e-6, so that the children of a level
// differ only in the low bits of their distances. The warp kernel's 32-bit keys then tie
// although the distances differ, its network may misorder a parent's children, and its check
// must send such levels to the 64-bit selection.
TEST(KbestGpu, NearTiedDistancesMatchCpu) {
  MIMORX_REQUIRE_GPU();
  const auto seed = test::fresh_seed();
  int cases = 0;
  for (int nt : {2, 4, 8}) {
    for (Modulation mod :
         {Modulation::qpsk, Modulation::qam16, Modulation::qam64, Modulation::qam256}) {
      const MimoShape s{nt, nt + 1, mod};
      for (int k : {5, 16, 64}) {
        if (k > KbestPlan::max_k(s)) continue;
        const int per = s.nr * nt;
        Problem p = make_problem(s, 24, 2, 5.0 + 2 * bits_per_symbol(mod), seed + 5 * cases++);
        const float scales[] = {1e-3f, 3e-5f, 1e-6f};
        for (std::int64_t c = 0; c < 12; ++c) {
          cf32* col = &p.h[std::size_t(c * per + (c % nt) * s.nr)];
          for (int i = 0; i < s.nr; ++i) col[i] = col[i] * scales[c % 3];
        }
        const std::string d = gpu_differs_from_cpu(p, k, 7.f);
        ASSERT_EQ(d, "") << "nt " << nt << " " << to_string(mod) << " k " << k;
      }
    }
  }
  std::printf("[ cases    ] %d configurations compared\n", cases);
}

// Bits and LLRs of the kernel equal the CPU's bit for bit on inputs with zero channels and
// missing counter-hypotheses (small k: k = 1 misses every one), the flip metrics included.
TEST(KbestGpu, FlipCompletedLlrsAreBitIdenticalToCpu) {
  MIMORX_REQUIRE_GPU();
  const auto seed = test::fresh_seed();
  int cases = 0;
  for (int nt : {2, 4, 8}) {
    for (Modulation mod :
         {Modulation::qpsk, Modulation::qam16, Modulation::qam64, Modulation::qam256}) {
      for (int k : {1, 3, 16}) {
        const MimoShape s{nt, nt + 1, mod};
        const std::int64_t V = 2 * 41;
        const Problem p = test::with_zero_channels(
            make_problem(s, V, 2, 2.0 + 2 * bits_per_symbol(mod), seed + 17 * cases, true), 3);
        ++cases;
        const Out o = run_cpu(p, k, 7.f);
        Buffer<cf32> h = Buffer<cf32>::device(p.h.size()), y = Buffer<cf32>::device(p.y.size());
        Buffer<float> n0 = Buffer<float>::device(p.n0.size());
        h.copy_from_host(p.h.data(), p.h.size());
        y.copy_from_host(p.y.data(), p.y.size());
        n0.copy_from_host(p.n0.data(), p.n0.size());
        DetectInput in;
        in.h = ConstMatrixBatch<cf32>(h.data(), V / 2, s.nr, nt, Memory::device);
        in.y = ConstMatrixBatch<cf32>(y.data(), V, s.nr, 1, Memory::device);
        in.noise_var = View<const float>(n0.data(), std::int64_t(p.n0.size()), Memory::device);
        in.vectors_per_channel = 2;
        KbestPlan gpu(KbestConfig{s, k, 7.f}, Backend::cuda());
        Buffer<std::uint8_t> gb = Buffer<std::uint8_t>::device(o.bits.size());
        Buffer<float> gl = Buffer<float>::device(o.llrs.size());
        gb.fill_bytes(0xEE);
        gl.fill_bytes(0xFF);
        gpu.run(in, View<std::uint8_t>(gb), View<float>(gl));
        std::vector<std::uint8_t> hb(o.bits.size());
        std::vector<float> hl(o.llrs.size());
        gb.copy_to_host(hb.data(), hb.size());
        gl.copy_to_host(hl.data(), hl.size());
        const std::string what =
            "nt " + std::to_string(nt) + " " + to_string(mod) + " k " + std::to_string(k);
        ASSERT_EQ(hb, o.bits) << what;
        ASSERT_EQ(std::memcmp(hl.data(), o.llrs.data(), hl.size() * sizeof(float)), 0) << what;
        // Channel 0 (vectors 0 and 1) is zero: LLR 0 on the GPU too.
        for (int i = 0; i < 2 * p.nbits(); ++i) ASSERT_EQ(hl[std::size_t(i)], 0.f) << what;
      }
    }
  }
  std::printf("[ cases    ] %d configurations compared\n", cases);
}

// 4x4 16-QAM at 15 dB (same set-up as the N-way statistics): BER and LLR error vs exact
// max-log ML for growing k, printed for docs/kbest.md.
// The clip rule's LLRs from the plan's list: max-log over the list, +-clip for a bit whose
// counter-hypothesis is missing (the comparison for the flip rule).
std::vector<float> clip_rule_llrs(const Problem& p, int k, float clip) {
  const List l = cpu_list(p, k);
  const int nt = p.shape.nt, m = bits_per_symbol(p.shape.mod), nb = p.nbits();
  std::vector<float> out(std::size_t(p.vectors) * nb);
  for (std::int64_t v = 0; v < p.vectors; ++v) {
    std::vector<float> min0(nb, INFINITY), min1(nb, INFINITY);
    for (int r = 0; r < k; ++r) {
      const float d = l.d[std::size_t(v) * k + r];
      if (std::isinf(d)) continue;
      for (int t = 0; t < nt; ++t) {
        const int sy = l.sym[(std::size_t(v) * k + r) * nt + t];
        for (int b = 0; b < m; ++b) {
          float& mm = ((sy >> (m - 1 - b)) & 1) ? min1[t * m + b] : min0[t * m + b];
          mm = std::min(mm, d);
        }
      }
    }
    const float inv_n0 = 1.f / p.n0[p.n0.size() == 1 ? 0 : std::size_t(v)];
    for (int j = 0; j < nb; ++j) {
      out[std::size_t(v) * nb + j] = std::clamp((min1[j] - min0[j]) * inv_n0, -clip, clip);
    }
  }
  return out;
}

TEST(KbestSlow, FourByFourSixteenQamAgainstMaxLogMl) {
  const auto seed = test::fresh_seed();
  const MimoShape s{4, 4, Modulation::qam16};
  for (double snr : {10.0, 15.0}) {
    const Problem p = make_problem(s, 6000, 1, snr, seed);
    std::vector<float> ref;
    std::vector<std::uint8_t> ml_hard;
    test::fast_maxlog(p, 8.f, ref, ml_hard);
    std::int64_t ml_err = 0;
    for (std::size_t i = 0; i < ml_hard.size(); ++i) ml_err += ml_hard[i] != p.tx_bits[i];
    const double nb = double(ml_hard.size());
    std::printf("[ figures  ] 4x4 16-QAM %.0f dB, %lld vectors: ML BER %.3e\n", snr,
                static_cast<long long>(p.vectors), ml_err / nb);
    double prev = 1e30;
    for (int k : {4, 16, 64, 256}) {
      const Out o = run_cpu(p, k);
      const std::vector<float> clip_rule = clip_rule_llrs(p, k, 8.f);
      double mae = 0, mae_clip = 0;
      std::int64_t e = 0;
      for (std::size_t i = 0; i < ref.size(); ++i) {
        mae += std::abs(o.llrs[i] - ref[i]);
        mae_clip += std::abs(clip_rule[i] - ref[i]);
        e += o.bits[i] != p.tx_bits[i];
      }
      mae /= double(ref.size());
      mae_clip /= double(ref.size());
      std::printf(
          "[ figures  ] K=%d: BER %.3e (%.3f x ML), mean |LLR - maxlog ML| %.4f, clip "
          "rule %.4f\n",
          k, e / nb, double(e) / double(ml_err), mae, mae_clip);
      EXPECT_LT(mae, prev) << "k=" << k;
      EXPECT_LE(mae, mae_clip) << "k=" << k;
      prev = mae;
    }
  }
}

}  // namespace
}  // namespace mimorx::detect

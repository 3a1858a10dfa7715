// The fixed-shape path of the N-way detector on the CPU (nt = 2 or 4, nr <= 8): the per-pass
// register QR (nway_qr_fixed.hpp) against the shared-memory MGS reference, and the arithmetic of
// the fast GPU search (nway_fast_math.hpp) against the reference search_path: bit-identical
// distances, Gray words that are the standard's bits, and the counter-hypothesis merge (emulated
// here as the kernel does it) giving exactly the reference LLRs.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "detect/nway_fast_math.hpp"
#include "detect/nway_math.hpp"
#include "detect/nway_qr_fixed.hpp"
#include "mimorx/detect/nway.hpp"
#include "support/gpu.hpp"
#include "support/list_detect.hpp"

namespace mimorx::detect {
namespace {

using test::make_problem;
using test::Problem;

bool same_bits(float a, float b) { return std::memcmp(&a, &b, sizeof a) == 0; }

// E of every (vector, pass) through the fixed path, as NwayPlan's CPU qr() lays it out.
template <int NR, int NT>
std::vector<float> fixed_e(const Problem& p, int nw) {
  const nway::Layout lay(NT);
  std::vector<float> e(std::size_t(p.vectors) * nw * lay.es);
  const float sc = qam_scale(p.shape.mod);
  for (std::int64_t v = 0; v < p.vectors; ++v) {
    const cf32* hm = &p.h[std::size_t(v / p.vpc) * NR * NT];
    for (int n = 0; n < nw; ++n) {
      nway::PassQr<NR, NT> s;
      nway::fixed_pass_qr<NR, NT>([hm](int i) { return hm[i]; }, n, s);
      nway::fixed_pass_store<NR, NT>(s, &p.y[std::size_t(v) * NR], sc,
                                     e.data() + (v * nw + n) * lay.es);
    }
  }
  return e;
}

template <int NR, int NT>
void check_fixed_qr(std::uint64_t seed) {
  const MimoShape s{NT, NR, Modulation::qam16};
  const Problem p = make_problem(s, 40, 1, 12.0, seed);
  const nway::Layout lay(NT);
  const auto e = fixed_e<NR, NT>(p, NT);
  std::vector<float> v(std::size_t(2 * NR) * (2 * NT + 1)), ref(lay.es);
  for (std::int64_t vec = 0; vec < p.vectors; ++vec) {
    for (int n = 0; n < NT; ++n) {
      const float* got = e.data() + (vec * NT + n) * lay.es;
      nway::qr_problem(&p.h[vec * NR * NT], &p.y[vec * NR], NR, NT, n, qam_scale(s.mod), v.data(),
                       ref.data());
      for (int i = 0; i < lay.es; ++i) {
        ASSERT_NEAR(got[i], ref[i], 2e-4f * (1.f + std::abs(ref[i])))
            << NR << "x" << NT << " vector " << vec << " pass " << n << " entry " << i;
      }
      // Exact MRVD structure: +0 beside each diagonal entry, equal diagonal pairs.
      for (int a = 0; a < NT; ++a) {
        EXPECT_TRUE(same_bits(got[lay.r(2 * a, 2 * a + 1)], 0.f));
        EXPECT_TRUE(same_bits(got[lay.r(2 * a, 2 * a)], got[lay.r(2 * a + 1, 2 * a + 1)]));
      }
    }
  }
}

TEST(NwayFastQr, MatchesTheMgsReferenceWithExactMrvdStructure) {
  const auto seed = test::fresh_seed();
  check_fixed_qr<2, 2>(seed);
  check_fixed_qr<3, 2>(seed + 1);
  check_fixed_qr<4, 2>(seed + 2);
  check_fixed_qr<4, 4>(seed + 3);
  check_fixed_qr<8, 2>(seed + 4);
  check_fixed_qr<5, 4>(seed + 5);
  check_fixed_qr<8, 4>(seed + 6);
}

// Gray word positions and rotation: the fast word of any level vector, read through
// FastShape::position, is the complement of the reference path_bits word.
template <int NT, int L>
void check_words(std::mt19937_64& g) {
  using S = nway::FastShape<NT, L>;
  for (int trial = 0; trial < 200; ++trial) {
    int lev[S::D];
    unsigned lw = 0;
    for (int l = 0; l < S::D; ++l) {
      lev[l] = int(g() % L);
      lw |= unsigned(lev[l]) << (S::KA * l);
    }
    for (int n = 0; n < NT; ++n) {
      const std::uint64_t ref = nway::path_bits<NT, S::KA>(lev, n);
      const unsigned fast = nway::fast_stream_word<NT, L>(lw, n);
      for (int j = 0; j < S::NB; ++j) {
        ASSERT_EQ(unsigned(ref >> j) & 1u, 1u - ((fast >> S::position(j)) & 1u))
            << "nt " << NT << " L " << L << " pass " << n << " bit " << j;
      }
    }
  }
}

TEST(NwayFast, GrayWordsAreTheStandardBits) {
  std::mt19937_64 g(test::fresh_seed());
  check_words<2, 2>(g);
  check_words<2, 4>(g);
  check_words<2, 8>(g);
  check_words<4, 2>(g);
  check_words<4, 4>(g);
  check_words<4, 8>(g);
}

// The kernel's per-vector computation, sequentially: every candidate of every pass through
// fast_path, the best by candidate_key, counter-hypothesis minima per Gray position, the
// minima pair of each LLR and a missing minimum completed from the best's level word.
template <int NR, int NT, int L>
void check_paths_and_merge(Modulation mod, int nw, std::uint64_t seed) {
  using S = nway::FastShape<NT, L>;
  const MimoShape s{NT, NR, mod};
  const Problem p = make_problem(s, 150, 1, 4.0 + 2.5 * bits_per_symbol(mod), seed, true);
  const auto e = fixed_e<NR, NT>(p, nw);
  // Reference: the plan's CPU run (its QR is the same fixed path).
  NwayPlan plan(NwayConfig{s, nw, 7.f}, Backend::cpu());
  std::vector<std::uint8_t> ref_bits(std::size_t(p.vectors) * S::NB);
  std::vector<float> ref_llr(ref_bits.size());
  plan.run(p.input(),
           View<std::uint8_t>(ref_bits.data(), std::int64_t(ref_bits.size()), Memory::host),
           View<float>(ref_llr.data(), std::int64_t(ref_llr.size()), Memory::host));
  const std::string what = std::to_string(NR) + "x" + std::to_string(NT) + " " + to_string(mod) +
                           " N " + std::to_string(nw);
  for (std::int64_t v = 0; v < p.vectors; ++v) {
    std::vector<float> d;
    std::vector<unsigned> w, lws;
    for (int n = 0; n < nw; ++n) {
      float ep[S::ES];
      std::memcpy(ep, e.data() + (v * nw + n) * S::ES, sizeof ep);
      for (int k = 0; k < S::M; ++k) {
        float dist = 0;
        const unsigned lw = nway::fast_path<NT, L>(ep, k, &dist);
        int lev[S::D];
        const float ref = nway::search_path<S::D, L>(ep, k, lev);
        ASSERT_TRUE(same_bits(dist, ref)) << what << " v " << v << " k " << k;
        unsigned packed = 0;
        for (int l = 0; l < S::D; ++l) packed |= unsigned(lev[l]) << (S::KA * l);
        ASSERT_EQ(lw, packed) << what;
        d.push_back(dist);
        w.push_back(nway::fast_stream_word<NT, L>(lw, n));
        lws.push_back(lw);
      }
    }
    std::uint64_t bk = ~std::uint64_t(0);
    std::size_t bi = 0;
    for (std::size_t i = 0; i < d.size(); ++i) {
      const std::uint64_t key = nway::candidate_key(d[i], unsigned(i));  // i = n M + k
      if (key < bk) {
        bk = key;
        bi = i;
      }
    }
    const float bd = d[bi];
    const unsigned bw = w[bi];
    const int bn = int(bi) / S::M;
    int blev[S::D];
    for (int l = 0; l < S::D; ++l) blev[l] = int(lws[bi] >> (S::KA * l)) & (L - 1);
    float cm[S::NB];
    for (float& x : cm) x = std::numeric_limits<float>::infinity();
    for (std::size_t i = 0; i < d.size(); ++i) {
      for (int b = 0; b < S::NB; ++b)
        if (((w[i] ^ bw) >> b) & 1u) cm[b] = rounding::fmin_num(cm[b], d[i]);
    }
    const float inv_n0 = rounding::fdiv(1.f, p.n0[std::size_t(v)]);
    nway::PathErrors pe;
    for (int j = 0; j < S::NB; ++j) {
      const int pos = S::position(j);
      const bool best_one = ((bw >> pos) & 1u) == 0;
      float m0 = best_one ? cm[pos] : bd, m1 = best_one ? bd : cm[pos];
      if (std::isinf(cm[pos])) {
        nway::complete_minima(e.data() + (v * nw + bn) * S::ES, nway::Layout(NT), S::KA, NT, bn,
                              blev, j, &m0, &m1, pe);
      }
      const std::size_t o = std::size_t(v) * S::NB + j;
      ASSERT_EQ(nway::hard_of_minima(m0, m1), ref_bits[o]) << what << " v " << v << " j " << j;
      ASSERT_TRUE(same_bits(nway::llr_of_minima(m0, m1, inv_n0, 7.f), ref_llr[o]))
          << what << " v " << v << " j " << j;
    }
  }
}

TEST(NwayFast, PathsAndCounterHypothesisMergeEqualTheReference) {
  const auto seed = test::fresh_seed();
  check_paths_and_merge<2, 2, 2>(Modulation::qpsk, 2, seed);
  check_paths_and_merge<3, 2, 4>(Modulation::qam16, 1, seed + 1);
  check_paths_and_merge<4, 2, 8>(Modulation::qam64, 2, seed + 2);
  check_paths_and_merge<7, 2, 4>(Modulation::qam16, 2, seed + 3);
  check_paths_and_merge<8, 4, 4>(Modulation::qam16, 3, seed + 4);
  check_paths_and_merge<6, 4, 8>(Modulation::qam64, 4, seed + 5);
  for (int nw = 1; nw <= 4; ++nw) {
    check_paths_and_merge<4, 4, 2>(Modulation::qpsk, nw, seed + 10 + nw);
    check_paths_and_merge<4, 4, 4>(Modulation::qam16, nw, seed + 20 + nw);
    check_paths_and_merge<4, 4, 8>(Modulation::qam64, nw, seed + 30 + nw);
  }
}

}  // namespace
}  // namespace mimorx::detect

// The one-string detector factory (detect/factory.hpp): its names, its errors, and that a
// detector made by name gives what its plan gives.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "mimorx/core/error.hpp"
#include "mimorx/core/rng.hpp"
#include "mimorx/detect/factory.hpp"
#include "mimorx/detect/kbest.hpp"
#include "mimorx/detect/linear.hpp"
#include "mimorx/detect/sts.hpp"
#include "mimorx/sim/detector.hpp"

namespace mimorx::detect {
namespace {

TEST(DetectorFactory, OffersEveryDetectorByName) {
  const auto names = detector_names();
  for (const char* n : {"zf", "mmse", "ml", "psd", "sts[:CLIP]", "nway:N", "kbest:K", "trellis",
                        "lr-zf", "lr-mmse", "lr-mmse-sic"})
    EXPECT_NE(std::find(names.begin(), names.end(), n), names.end()) << n;
  EXPECT_EQ(sim::detector_names(), names);  // the simulator's names are the same factory
}

TEST(DetectorFactory, BadSpecsAreClearErrors) {
  const MimoShape s{2, 2, Modulation::qpsk};
  struct Case {
    std::string spec, expect;
    bool soft;
  };
  for (const auto& c : std::vector<Case>{{"nope", "this build offers", false},
                                         {"mmse:4", "takes no parameter", false},
                                         {"nway:", "nothing after ':'", false},
                                         {"kbest:0", "positive integer", false},
                                         {"kbest:x", "positive integer", false},
                                         {"psd", "hard decisions only", true},
                                         {"sts:0", "positive number", true},
                                         {"sts:-2", "positive number", true},
                                         {"sts:x", "positive number", true},
                                         {"sts:4x", "positive number", true},
                                         {"sts:inf", "positive number", true},
                                         {"sts:nan", "positive number", true},
                                         {"lr-zf", "hard decisions only", true}}) {
    try {
      make_detector(c.spec, s, Backend::cpu(), DetectorOptions{.soft = c.soft});
      ADD_FAILURE() << c.spec << " accepted";
    } catch (const InvalidArgument& e) {
      EXPECT_NE(std::string(e.what()).find(c.expect), std::string::npos)
          << c.spec << ": " << e.what();
    }
  }
}

// Random 4x4 16-QAM observations; a detector made by name writes the bits and LLRs of the plan
// configured by hand.
TEST(DetectorFactory, SameOutputAsThePlan) {
  const MimoShape s{4, 4, Modulation::qam16};
  const std::int64_t v = 64;
  auto g = Buffer<float>::host(std::size_t(v) * (32 + 8));
  rng::fill_gaussian(Backend::cpu(), 7, 0, View<float>(g));
  auto h = Buffer<cf32>::host(std::size_t(v) * 16), y = Buffer<cf32>::host(std::size_t(v) * 4);
  for (std::int64_t k = 0; k < v * 16; ++k) h[k] = cf32(g[2 * k], g[2 * k + 1]);
  for (std::int64_t k = 0; k < v * 4; ++k) y[k] = cf32(g[v * 32 + 2 * k], g[v * 32 + 2 * k + 1]);
  const float n0[1] = {0.1f};
  DetectInput in;
  in.h = MatrixBatch<const cf32>(h.data(), v, 4, 4, Memory::host);
  in.y = MatrixBatch<const cf32>(y.data(), v, 4, 1, Memory::host);
  in.noise_var = View<const float>(n0, 1, Memory::host);
  const std::size_t nbits = std::size_t(v) * s.bits_per_vector();
  auto run_both = [&](const std::string& spec, auto&& plan) {
    auto b0 = Buffer<std::uint8_t>::host(nbits), b1 = Buffer<std::uint8_t>::host(nbits);
    auto l0 = Buffer<float>::host(nbits), l1 = Buffer<float>::host(nbits);
    const auto det = make_detector(spec, s, Backend::cpu(), DetectorOptions{.soft = true});
    EXPECT_TRUE(det->soft());
    EXPECT_EQ(det->name(), spec);
    det->run(in, View<std::uint8_t>(b0), View<float>(l0));
    plan.run(in, View<std::uint8_t>(b1), View<float>(l1));
    EXPECT_TRUE(std::equal(b0.data(), b0.data() + nbits, b1.data())) << spec;
    EXPECT_TRUE(std::equal(l0.data(), l0.data() + nbits, l1.data())) << spec;
  };
  LinearConfig lc;
  lc.shape = s;
  lc.kind = LinearKind::mmse;
  lc.soft = true;
  run_both("mmse", LinearPlan(lc, Backend::cpu()));
  KbestConfig kc;
  kc.shape = s;
  kc.k = 8;
  run_both("kbest:8", KbestPlan(kc, Backend::cpu()));
  StsConfig sc;
  sc.shape = s;
  sc.node_cap = kPsdNodeCap;
  run_both("sts", StsPlan(sc, Backend::cpu()));
  sc.clip = 2.5f;
  run_both("sts:2.5", StsPlan(sc, Backend::cpu()));
}

}  // namespace
}  // namespace mimorx::detect

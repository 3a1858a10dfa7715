// Layer mapping of TS 38.211 §6.3.1.3 / §7.3.1.3: codeword symbol v i + j goes to layer j.
#include <gtest/gtest.h>

#include <vector>

#include "mimorx/core/error.hpp"
#include "mimorx/nr/layer_map.hpp"

namespace mimorx::nr {
namespace {

std::vector<cf32> ramp(int n) {
  std::vector<cf32> d;
  for (int i = 0; i < n; ++i) d.push_back(cf32(float(i), float(-i)));
  return d;
}

TEST(LayerMap, ThreeLayersByHand) {
  // d = 0..11, v = 3: layer 0 = 0 3 6 9, layer 1 = 1 4 7 10, layer 2 = 2 5 8 11.
  const std::vector<cf32> x = map_to_layers(ramp(12), 3);
  const float expected[12] = {0, 3, 6, 9, 1, 4, 7, 10, 2, 5, 8, 11};
  ASSERT_EQ(x.size(), 12u);
  for (int i = 0; i < 12; ++i) {
    EXPECT_EQ(x[std::size_t(i)].re, expected[i]) << i;
    EXPECT_EQ(x[std::size_t(i)].im, -expected[i]) << i;
  }
}

TEST(LayerMap, OneLayerIsIdentityAndDemapInverts) {
  EXPECT_EQ(map_to_layers(ramp(7), 1), ramp(7));
  for (int v = 1; v <= 4; ++v) {
    const auto d = ramp(24);
    EXPECT_EQ(demap_layers(map_to_layers(d, v), v), d) << v;
  }
}

TEST(LayerMap, RejectsBadShapes) {
  EXPECT_THROW(map_to_layers(ramp(10), 3), InvalidArgument);
  EXPECT_THROW(map_to_layers(ramp(10), 5), InvalidArgument);
  EXPECT_THROW(demap_layers(ramp(10), 0), InvalidArgument);
}

}  // namespace
}  // namespace mimorx::nr

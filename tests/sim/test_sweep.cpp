#include <gtest/gtest.h>

#include "mimorx/core/error.hpp"
#include "mimorx/sim/sweep.hpp"

namespace mimorx::sim {
namespace {

TEST(Sweep, ListsRangesAndMixes) {
  EXPECT_EQ(parse_snr_list("8,14"), (std::vector<double>{8, 14}));
  EXPECT_EQ(parse_snr_list("0:2:6"), (std::vector<double>{0, 2, 4, 6}));
  EXPECT_EQ(parse_snr_list("10:-5:0,3"), (std::vector<double>{10, 5, 0, 3}));
  const auto r = parse_snr_list("0:0.1:1");
  ASSERT_EQ(r.size(), 11u);
  EXPECT_NEAR(r.back(), 1.0, 1e-12);
}

TEST(Sweep, BadInputNamesTheProblem) {
  for (const char* bad : {"", "x", "1:2", "0:0:5", "0:1:-1", "1,,2", "1:2:3:4", "nan"}) {
    try {
      parse_snr_list(bad);
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const InvalidArgument& e) {
      EXPECT_NE(std::string(e.what()).find("snr"), std::string::npos) << e.what();
    }
  }
}

TEST(Sweep, MimoParsing) {
  EXPECT_EQ(parse_mimo("4x4").nt, 4);
  EXPECT_EQ(parse_mimo("2x4").nt, 2);
  EXPECT_EQ(parse_mimo("2x4").nr, 4);
  for (const char* bad : {"4", "x4", "4x", "0x2", "4x4x4", "-1x2", "ax2"}) {
    EXPECT_THROW(parse_mimo(bad), InvalidArgument) << bad;
  }
}

}  // namespace
}  // namespace mimorx::sim

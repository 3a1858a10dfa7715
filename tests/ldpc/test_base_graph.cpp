// Base graphs of TS 38.212 Tables 5.3.2-1/2/3 as lifted by LiftedGraph.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <set>
#include <vector>

#include "mimorx/core/error.hpp"
#include "mimorx/ldpc/base_graph.hpp"
#include "support/gpu.hpp"

namespace mimorx::ldpc {
namespace {

TEST(BaseGraph, LiftingSizesAndSetIndices) {
  const auto& z = lifting_sizes();
  ASSERT_EQ(z.size(), 51u);
  // Table 5.3.2-1: Z = a 2^j <= 384, set index by a = 2, 3, 5, 7, 9, 11, 13, 15.
  const int a[8] = {2, 3, 5, 7, 9, 11, 13, 15};
  std::set<int> want;
  for (int i = 0; i < 8; ++i) {
    for (int v = a[i]; v <= 384; v *= 2) {
      want.insert(v);
      EXPECT_EQ(set_index(v), i) << v;
    }
  }
  EXPECT_EQ(std::set<int>(z.begin(), z.end()), want);
  EXPECT_TRUE(is_lifting_size(384));
  EXPECT_FALSE(is_lifting_size(17));
  EXPECT_THROW(set_index(17), InvalidArgument);
  EXPECT_THROW(LiftedGraph(BaseGraph::bg1, 400), InvalidArgument);
}

TEST(BaseGraph, ShapeAndStructure) {
  for (BaseGraph bg : {BaseGraph::bg1, BaseGraph::bg2}) {
    for (int z : lifting_sizes()) {
      LiftedGraph g(bg, z);
      EXPECT_EQ(int(g.edges().size()), bg == BaseGraph::bg1 ? 316 : 197);
      EXPECT_EQ(g.n(), (bg == BaseGraph::bg1 ? 68 : 52) * z);
      ASSERT_EQ(int(g.row_start().size()), g.base_rows() + 1);
      EXPECT_EQ(g.row_start().back(), int(g.edges().size()));
      std::vector<int> col_degree(g.base_cols(), 0);
      for (int i = 0; i < g.base_rows(); ++i) {
        for (int e = g.row_start()[i]; e < g.row_start()[i + 1]; ++e) {
          const Edge& ed = g.edges()[e];
          ASSERT_EQ(ed.row, i);
          ASSERT_GE(ed.shift, 0);
          ASSERT_LT(ed.shift, z);
          ++col_degree[ed.col];
        }
      }
      // Every column is checked; extension parity columns have degree 1 (§5.3.2 structure).
      for (int c = 0; c < g.base_cols(); ++c) EXPECT_GE(col_degree[c], 1) << c;
      for (int c = g.info_cols() + 4; c < g.base_cols(); ++c) EXPECT_EQ(col_degree[c], 1) << c;
    }
  }
}

TEST(BaseGraph, KnownEntries) {
  // Table 5.3.2-2, row 0: V(0,0) = 250 (iLS 0), 307 (iLS 1); column 22 of row 1 at iLS 6: 105.
  LiftedGraph g(BaseGraph::bg1, 384);  // iLS 1
  EXPECT_EQ(g.edges()[0].col, 0);
  EXPECT_EQ(g.edges()[0].shift, 307 % 384);
  LiftedGraph g2(BaseGraph::bg1, 2);  // iLS 0
  EXPECT_EQ(g2.edges()[0].shift, 250 % 2);
  LiftedGraph g6(BaseGraph::bg1, 208);  // iLS 6
  bool found = false;
  for (int e = g6.row_start()[1]; e < g6.row_start()[2]; ++e) {
    if (g6.edges()[e].col == 22) {
      EXPECT_EQ(g6.edges()[e].shift, 105);
      found = true;
    }
  }
  EXPECT_TRUE(found);
}

TEST(BaseGraph, IsCodewordRejectsRandomWords) {
  std::mt19937_64 rng(test::fresh_seed());
  LiftedGraph g(BaseGraph::bg2, 20);
  std::vector<std::uint8_t> c(g.n());
  int accepted = 0;
  for (int t = 0; t < 50; ++t) {
    for (auto& b : c) b = rng() & 1;
    accepted += g.is_codeword(c.data());
  }
  EXPECT_EQ(accepted, 0);  // 2^-840 per draw
  std::fill(c.begin(), c.end(), 0);
  EXPECT_TRUE(g.is_codeword(c.data()));
}

}  // namespace
}  // namespace mimorx::ldpc

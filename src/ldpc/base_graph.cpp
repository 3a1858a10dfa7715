#include "mimorx/ldpc/base_graph.hpp"

#include <algorithm>
#include <string>

#include "mimorx/core/error.hpp"

namespace mimorx::ldpc {
namespace {
struct BaseEntry {
  int row, col;
  int v[8];
};
struct LiftingSize {
  int z, ils;
};
#include "ldpc/base_graph_tables.inc"
}  // namespace

const std::vector<int>& lifting_sizes() {
  static const std::vector<int> sizes = [] {
    std::vector<int> s;
    for (const auto& l : kLiftingSizes) s.push_back(l.z);
    std::sort(s.begin(), s.end());
    return s;
  }();
  return sizes;
}

bool is_lifting_size(int z) {
  const auto& s = lifting_sizes();
  return std::binary_search(s.begin(), s.end(), z);
}

int set_index(int z) {
  for (const auto& l : kLiftingSizes) {
    if (l.z == z) return l.ils;
  }
  throw InvalidArgument("z: " + std::to_string(z) +
                        " is not a 5G NR lifting size (TS 38.212 Table 5.3.2-1: a*2^j <= 384, "
                        "a in {2,3,5,7,9,11,13,15})");
}

LiftedGraph::LiftedGraph(BaseGraph bg, int z) : bg_(bg), z_(z), ils_(set_index(z)) {
  require(bg == BaseGraph::bg1 || bg == BaseGraph::bg2, "bg", "must be 1 or 2");
  auto add = [&](const auto& table) {
    for (const auto& e : table) edges_.push_back({e.row, e.col, e.v[ils_] % z_});
  };
  if (bg == BaseGraph::bg1) {
    add(kBG1);
  } else {
    add(kBG2);
  }
  std::sort(edges_.begin(), edges_.end(), [](const Edge& a, const Edge& b) {
    return a.row != b.row ? a.row < b.row : a.col < b.col;
  });
  row_start_.assign(base_rows() + 1, 0);
  for (const auto& e : edges_) ++row_start_[e.row + 1];
  for (int i = 0; i < base_rows(); ++i) row_start_[i + 1] += row_start_[i];
}

bool LiftedGraph::is_codeword(const std::uint8_t* c) const {
  for (int i = 0; i < base_rows(); ++i) {
    for (int r = 0; r < z_; ++r) {
      int parity = 0;
      for (int e = row_start_[i]; e < row_start_[i + 1]; ++e) {
        const Edge& ed = edges_[e];
        parity ^= c[ed.col * z_ + (r + ed.shift) % z_] & 1;
      }
      if (parity) return false;
    }
  }
  return true;
}

}  // namespace mimorx::ldpc

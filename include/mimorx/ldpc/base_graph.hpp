#pragma once
// 5G NR LDPC base graphs (3GPP TS 38.212 §5.3.2, Tables 5.3.2-1/2/3) lifted to a size Z.
//
// BG1: 46 x 68 base matrix, 22 systematic columns; BG2: 42 x 52, 10 systematic columns.
// The parity-check matrix H is the base matrix with each entry (i, j) replaced by the Z x Z
// identity cyclically shifted right by P(i,j) = V(i,j) mod Z (absent entries: zero blocks).
// Row r of block row i has a one in column j*Z + (r + P(i,j)) mod Z.
#include <cstdint>
#include <vector>

namespace mimorx::ldpc {

enum class BaseGraph : int { bg1 = 1, bg2 = 2 };

struct Edge {
  int row;    // base-graph row i
  int col;    // base-graph column j
  int shift;  // P(i,j) = V(i,j) mod Z, in [0, Z)
};

// All 51 lifting sizes of Table 5.3.2-1, ascending.
const std::vector<int>& lifting_sizes();
bool is_lifting_size(int z);
// Set index iLS of lifting size z (throws InvalidArgument for a z that is not a lifting size).
int set_index(int z);

class LiftedGraph {
 public:
  // Throws InvalidArgument when z is not one of the 51 lifting sizes.
  LiftedGraph(BaseGraph bg, int z);

  BaseGraph bg() const { return bg_; }
  int z() const { return z_; }
  int ils() const { return ils_; }
  int base_rows() const { return bg_ == BaseGraph::bg1 ? 46 : 42; }
  int base_cols() const { return bg_ == BaseGraph::bg1 ? 68 : 52; }
  int info_cols() const { return bg_ == BaseGraph::bg1 ? 22 : 10; }  // K_b max
  int n() const { return base_cols() * z_; }  // codeword length incl. punctured 2Z columns
  int k() const { return info_cols() * z_; }
  int m() const { return base_rows() * z_; }

  // Non-zero entries, sorted by row then column.
  const std::vector<Edge>& edges() const { return edges_; }
  // CSR: edges of base row i are edges()[row_start()[i] .. row_start()[i+1]).
  const std::vector<int>& row_start() const { return row_start_; }

  // Syndrome H c over GF(2) for an unpacked codeword of n() bits (0/1): true when all zero.
  bool is_codeword(const std::uint8_t* c) const;

 private:
  BaseGraph bg_;
  int z_;
  int ils_;
  std::vector<Edge> edges_;
  std::vector<int> row_start_;
};

}  // namespace mimorx::ldpc

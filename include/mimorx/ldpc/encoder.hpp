#pragma once
// 5G NR LDPC encoder (TS 38.212 §5.3.2) on the CPU and on CUDA, batched over code blocks.
//
// No generator matrix: the parity-check matrix H = [H_info | H_core | 0; H_ext1 | H_ext2 | I]
// is solved directly.
//   1. Core parity (4Z bits, columns kb..kb+3). Adding the first four block rows cancels the
//      double-diagonal columns kb+1..kb+3 (each appears twice with equal shifts), leaving
//      P^x p_kb = sum_i lambda_i, where lambda_i is the info part of block row i and x is the one
//      shift of column kb that occurs an odd number of times (0 for BG1 except iLS 6: 105 mod Z;
//      1 or 0 for BG2). Then each remaining core column is the only unknown of one of rows 0..3.
//   2. Extension parity: block row i >= 4 has the degree-1 column kb + i with shift 0, so every
//      extension bit is the parity of its row's known bits; all rows are independent.
// The solve order and the special shift are derived from the tables (and checked) when the plan
// is built, not hard-coded.
#include <cstdint>
#include <vector>

#include "mimorx/core/backend.hpp"
#include "mimorx/core/buffer.hpp"
#include "mimorx/core/tensor.hpp"
#include "mimorx/ldpc/base_graph.hpp"

namespace mimorx::ldpc {

class EncoderPlan {
 public:
  // Throws InvalidArgument when z is not a lifting size; Unsupported for CUDA without a GPU.
  EncoderPlan(BaseGraph bg, int z, Backend backend);

  BaseGraph bg() const { return graph_.bg(); }
  int z() const { return graph_.z(); }
  int k() const { return graph_.k(); }  // 22Z (BG1) or 10Z (BG2) information bits
  int n() const { return graph_.n(); }  // 68Z or 52Z, incl. the 2Z punctured systematic columns
  const LiftedGraph& graph() const { return graph_; }
  const Backend& backend() const { return backend_; }

  // info: num x k() unpacked bits (only the lowest bit of each byte is used; filler bits are
  // passed as 0). codewords: num x n() unpacked 0/1, the first k() equal to the info bits.
  // Both on the plan's backend memory. Asynchronous on `stream` for CUDA.
  void encode(View<const std::uint8_t> info, int num, View<std::uint8_t> codewords,
              const Stream& stream = {}) const;

  // The tables the encoder runs from (public for the CUDA entry and for tests).
  struct Tables {
    int z = 0, kb = 0, rows = 0, cols = 0;
    int p0_col = 0, p0_shift = 0;  // the core column solved from the sum of rows 0..3
    int core_row[3] = {}, core_col[3] = {}, core_shift[3] = {};  // then these, in this order
    std::vector<int> edge_col, edge_shift, row_start;            // CSR of the base graph
    std::vector<int> target_shift;  // per row i >= 4: shift of its degree-1 column kb + i
  };
  const Tables& tables() const { return tables_; }

 private:
  LiftedGraph graph_;
  Backend backend_;
  Tables tables_;
  // Device copy of the tables for CUDA: edge_col | edge_shift | row_start | target_shift.
  Buffer<int> device_tables_;
};

}  // namespace mimorx::ldpc

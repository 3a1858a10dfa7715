#include <algorithm>
#include <string>
#include <vector>

#include "ldpc/encoder_math.hpp"
#include "mimorx/config.hpp"
#include "mimorx/core/error.hpp"
#include "mimorx/ldpc/encoder.hpp"
#if MIMORX_HAS_CUDA
#include "ldpc/encoder_cuda.hpp"
#endif

namespace mimorx::ldpc {

namespace {

// Derives the solve schedule of §5.3.2's double-diagonal structure from the lifted tables and
// checks every structural assumption the encoder relies on (a wrong table fails here, loudly).
EncoderPlan::Tables build_tables(const LiftedGraph& g) {
  EncoderPlan::Tables t;
  t.z = g.z();
  t.kb = g.info_cols();
  t.rows = g.base_rows();
  t.cols = g.base_cols();
  for (const Edge& e : g.edges()) {
    t.edge_col.push_back(e.col);
    t.edge_shift.push_back(e.shift);
  }
  t.row_start = g.row_start();
  const auto fail = [&](const std::string& what) {
    throw NumericalError("LDPC encoder: base graph " + std::to_string(int(g.bg())) +
                         ", Z=" + std::to_string(g.z()) + ": " + what);
  };
  const int kb = t.kb;
  // Shift of column c in row i, or -1.
  const auto shift_of = [&](int i, int c) {
    for (int e = t.row_start[i]; e < t.row_start[i + 1]; ++e) {
      if (t.edge_col[e] == c) return t.edge_shift[e];
    }
    return -1;
  };
  for (int i = 0; i < 4; ++i) {
    for (int e = t.row_start[i]; e < t.row_start[i + 1]; ++e) {
      if (t.edge_col[e] >= kb + 4) fail("core row " + std::to_string(i) + " leaves the core");
    }
  }
  // Sum of rows 0..3: per core column, the shifts that occur an odd number of times.
  int special = -1;
  for (int c = kb; c < kb + 4; ++c) {
    std::vector<int> odd;
    for (int i = 0; i < 4; ++i) {
      const int s = shift_of(i, c);
      if (s < 0) continue;
      auto it = std::find(odd.begin(), odd.end(), s);
      if (it == odd.end()) {
        odd.push_back(s);
      } else {
        odd.erase(it);
      }
    }
    if (odd.empty()) continue;
    if (odd.size() != 1 || special >= 0) fail("rows 0..3 do not sum to a single permutation");
    special = c;
    t.p0_col = c;
    t.p0_shift = odd[0];
  }
  if (special < 0) fail("no core column survives the sum of rows 0..3");
  std::vector<bool> known(t.cols, false);
  for (int c = 0; c < kb; ++c) known[c] = true;
  known[special] = true;
  for (int step = 0; step < 3; ++step) {
    bool found = false;
    for (int i = 0; i < 4 && !found; ++i) {
      int unknown = -1, count = 0;
      for (int e = t.row_start[i]; e < t.row_start[i + 1]; ++e) {
        if (!known[t.edge_col[e]]) {
          unknown = e;
          ++count;
        }
      }
      if (count != 1) continue;
      t.core_row[step] = i;
      t.core_col[step] = t.edge_col[unknown];
      t.core_shift[step] = t.edge_shift[unknown];
      known[t.edge_col[unknown]] = true;
      found = true;
    }
    if (!found) fail("no core row with a single unknown parity column");
  }
  for (int i = 4; i < t.rows; ++i) {
    int target = -1;
    for (int e = t.row_start[i]; e < t.row_start[i + 1]; ++e) {
      const int c = t.edge_col[e];
      if (c == kb + i) {
        target = t.edge_shift[e];
      } else if (c >= kb + 4) {
        fail("extension row " + std::to_string(i) + " touches another extension column");
      }
    }
    if (target < 0) fail("extension row " + std::to_string(i) + " lacks its parity column");
    t.target_shift.push_back(target);
  }
  return t;
}

}  // namespace

EncoderPlan::EncoderPlan(BaseGraph bg, int z, Backend backend)
    : graph_(bg, z), backend_(backend), tables_(build_tables(graph_)) {
  if (backend_.is_cuda()) {
#if MIMORX_HAS_CUDA
    std::vector<int> flat;
    flat.insert(flat.end(), tables_.edge_col.begin(), tables_.edge_col.end());
    flat.insert(flat.end(), tables_.edge_shift.begin(), tables_.edge_shift.end());
    flat.insert(flat.end(), tables_.row_start.begin(), tables_.row_start.end());
    flat.insert(flat.end(), tables_.target_shift.begin(), tables_.target_shift.end());
    device_tables_ = Buffer<int>::device(flat.size(), backend_.device());
    device_tables_.copy_from_host(flat.data(), flat.size());
#else
    throw Unsupported("backend: this build of mimorx has no CUDA; use the cpu backend");
#endif
  }
}

void EncoderPlan::encode(View<const std::uint8_t> info, int num, View<std::uint8_t> codewords,
                         const Stream& stream) const {
  require(num >= 0, "num", std::to_string(num) + " code blocks; must be >= 0");
  require(info.size >= std::int64_t(num) * k(), "info",
          "has " + std::to_string(info.size) + " bits, expected num x k = " + std::to_string(num) +
              " x " + std::to_string(k()));
  require(codewords.size >= std::int64_t(num) * n(), "codewords",
          "has " + std::to_string(codewords.size) +
              " bits, expected num x n = " + std::to_string(num) + " x " + std::to_string(n()));
  const Memory mem = memory_of(backend_);
  require_memory(info.where, mem, "info");
  require_memory(codewords.where, mem, "codewords");
  if (num == 0) return;
  if (backend_.is_cuda()) {
#if MIMORX_HAS_CUDA
    detail::encode_cuda(tables_, device_tables_.data(), info.data, num, codewords.data,
                        stream.handle());
    return;
#else
    throw Unsupported("backend: this build of mimorx has no CUDA; use the cpu backend");
#endif
  }
  (void)stream;
  const Tables& t = tables_;
  const int z = t.z, kb = t.kb, kk = k(), nn = n();
  const int* ec = t.edge_col.data();
  const int* es = t.edge_shift.data();
  const int* rs = t.row_start.data();
#pragma omp parallel for schedule(static)
  for (int w = 0; w < num; ++w) {
    const std::uint8_t* in = info.data + std::int64_t(w) * kk;
    std::uint8_t* cw = codewords.data + std::int64_t(w) * nn;
    for (int j = 0; j < kk; ++j) cw[j] = in[j] & 1;
    for (int r = 0; r < z; ++r) {
      int v = 0;
      for (int i = 0; i < 4; ++i)
        v ^= detail::row_parity(cw, ec, es, rs[i], rs[i + 1], kb, -1, r, z);
      cw[t.p0_col * z + detail::landing(r, t.p0_shift, z)] = std::uint8_t(v);
    }
    for (int s = 0; s < 3; ++s) {
      const int i = t.core_row[s], c = t.core_col[s];
      for (int r = 0; r < z; ++r) {
        const int v = detail::row_parity(cw, ec, es, rs[i], rs[i + 1], t.cols, c, r, z);
        cw[c * z + detail::landing(r, t.core_shift[s], z)] = std::uint8_t(v);
      }
    }
    for (int i = 4; i < t.rows; ++i) {
      const int c = kb + i;
      for (int r = 0; r < z; ++r) {
        const int v = detail::row_parity(cw, ec, es, rs[i], rs[i + 1], t.cols, c, r, z);
        cw[c * z + detail::landing(r, t.target_shift[i - 4], z)] = std::uint8_t(v);
      }
    }
  }
}

}  // namespace mimorx::ldpc

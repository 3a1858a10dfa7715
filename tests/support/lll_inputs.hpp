#pragma once
// The LLL benchmarks' bases, also test inputs (docs/lll.md):
//   gaussian  i.i.d. N(0, 1) entries, n x n (the paper's random bases).
//   toeplitz  banded block-lower-triangular block-Toeplitz: 2 x 2 blocks, block (i, j) = A_{i-j}
//             for 0 <= i-j < 4 and 0 otherwise, A_0..A_3 i.i.d. N(0, 1) 2 x 2 (the real form of
//             an ISI channel convolution matrix); nonsingular when A_0 is (redrawn otherwise).
// Both drawn with std::mt19937_64 from a fixed seed, so every run sees the same inputs.
#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

namespace mimorx::test {

inline std::vector<double> lll_input(const std::string& kind, int n, int count,
                                     std::uint64_t seed = 2014) {
  std::mt19937_64 g(seed + std::uint64_t(n) * 7919);
  std::normal_distribution<double> d;
  std::vector<double> out(std::size_t(n) * n * count, 0.0);
  for (int c = 0; c < count; ++c) {
    double* b = out.data() + std::size_t(c) * n * n;
    if (kind == "gaussian") {
      for (int i = 0; i < n * n; ++i) b[i] = d(g);
      continue;
    }
    double a[4][4];
    do {
      for (auto& blk : a)
        for (double& x : blk) x = d(g);
    } while (std::abs(a[0][0] * a[0][3] - a[0][1] * a[0][2]) < 0.1);
    const int nb = n / 2;
    for (int bi = 0; bi < nb; ++bi)
      for (int bj = std::max(0, bi - 3); bj <= bi; ++bj)
        for (int r = 0; r < 2; ++r)
          for (int s = 0; s < 2; ++s)
            b[std::size_t(2 * bj + s) * n + 2 * bi + r] = a[bi - bj][s * 2 + r];
  }
  return out;
}

}  // namespace mimorx::test

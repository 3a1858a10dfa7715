#pragma once
// Exact integer checks of `mimorx lll`'s results (GMP): the reducers work in float32 / float64,
// so every output is checked in exact arithmetic before it is printed. Conventions as in
// lattice/lll.hpp: columns are basis vectors, column-major storage; B' = B T.
#include <cstdint>
#include <string>
#include <vector>

namespace mimorx::cli {

// "" when every entry of B' (n x m) is an integer, B' = B T exactly and det T = +-1, i.e. B' is a
// basis of the lattice of B; otherwise the first violation in words. b holds integers.
std::string lattice_violation(int n, int m, const std::vector<double>& b,
                              const std::vector<double>& b_reduced,
                              const std::vector<std::int64_t>& t);

// True when the m integer columns of b (n x m) are linearly independent (exact Gram-Schmidt).
bool independent(int n, int m, const std::vector<double>& b);

// "" when the integer basis b (n x m) is (delta, eta)-LLL-reduced in exact arithmetic:
// |mu_ij| <= eta and delta |b*_{k-1}|^2 <= |b*_k|^2 + mu_{k,k-1}^2 |b*_{k-1}|^2 for every k;
// otherwise the first violation in words.
std::string lll_violation(int n, int m, const std::vector<double>& b, double delta, double eta);

}  // namespace mimorx::cli

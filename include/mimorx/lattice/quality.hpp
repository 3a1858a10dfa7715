#pragma once
// Verification of LLL output, in the spirit of fplll's is_LLL_reduced: every basis returned by
// mimorx can be passed through check_lll, which recomputes the Gram-Schmidt data from B' in
// long double (never reusing the reducer's own numbers) and reports the quality figures.
//
// Conventions as in lattice/lll.hpp: columns are basis vectors, column-major storage.
#include <complex>
#include <cstdint>
#include <string>

namespace mimorx::lattice {

struct QualityReport {
  bool finite = true;
  bool size_reduced = false;  // max |mu_ij| <= eta
  bool lovasz = false;        // delta_check r_{k-1}^2 <= r_{k-1,k}^2 + r_k^2 for all k
  bool reduced() const { return finite && size_reduced && lovasz; }
  double max_mu = 0;                // max |mu_ij| (complex: max over real and imaginary parts)
  int worst_lovasz_index = -1;      // k of the largest Lovasz violation (or of the tightest pair)
  double lovasz_ratio = 0;          // min_k (r_{k-1,k}^2 + r_k^2) / r_{k-1}^2; reduced iff >= delta
  double log_volume = 0;            // log det(B^T B)^(1/2)
  double orthogonality_defect = 0;  // prod ||b_i|| / vol (>= 1; 1 = orthogonal)
  double hermite_factor = 0;        // ||b_0|| / vol^(1/m)
  double condition_number = 0;      // sigma_max / sigma_min of B (2-norm)
  std::string message;              // first violation, in words
};

// Tolerances: eta = 0.5 + eps_mu, Lovasz checked with delta - eps_delta. The defaults suit
// float64 reductions; for float32 outputs use eps_mu = 0.01 and eps_delta = 1e-3 (docs/lll.md).
struct CheckOptions {
  double delta = 0.75;
  double eps_mu = 1e-6;
  double eps_delta = 1e-9;
  bool condition_number = true;  // SVD, O(m^3): skip for very large bases
};

QualityReport check_lll(int n, int m, const double* b, const CheckOptions& opt = {});
QualityReport check_lll(int n, int m, const float* b, const CheckOptions& opt = {});
QualityReport check_clll(int n, int m, const std::complex<double>* b, const CheckOptions& opt = {});

// Checks of a transform T (m x m) against the input B and output B' (n x m):
//   integer:    every entry of T is an integer (trivially true for int64 storage)
//   unimodular: |det T| = 1. Exact for m <= 24 by fraction-free Bareiss elimination in
//               __int128 with overflow detection; when an intermediate would overflow (or m > 24)
//               det T is computed by LU with partial pivoting in long double and accepted when
//               | |det T| - 1 | <= 1e-6 (exact_det tells which was used).
//   consistent: max |B T - B'| <= tol * max(1, max |B| * max |T| * m), tol = 1e-9 (f64) / 1e-4
//               (f32).
struct TransformReport {
  bool integer = false;
  bool unimodular = false;
  bool consistent = false;
  bool exact_det = false;
  double det = 0;       // det T (exact value when exact_det)
  double residual = 0;  // max |B T - B'| / scale
  bool ok() const { return integer && unimodular && consistent; }
  std::string message;
};
TransformReport check_transform(int n, int m, const double* b, const double* b_reduced,
                                const std::int64_t* t, double tol = 1e-9);
TransformReport check_ctransform(int n, int m, const std::complex<double>* b,
                                 const std::complex<double>* b_reduced,
                                 const std::complex<double>* t, double tol = 1e-9);

// Exact determinant of an integer matrix (m x m, column-major) by Bareiss elimination in
// 128-bit integers; returns false when an intermediate overflows. *det is the exact value
// when it fits a double's 53-bit mantissa (always the case for |det| = 1).
bool exact_det(int m, const std::int64_t* a, double* det);

}  // namespace mimorx::lattice

// LllConfig::presort on the host: a basis put in order of increasing vector length before the
// reduction (a permutation, folded into T afterwards). The reductions end in markedly shorter
// bases from the sorted order (docs/lll.md, "Presort").
#include <algorithm>
#include <complex>
#include <numeric>
#include <vector>

#include "lattice/lll_internal.hpp"
#include "lattice/lll_math.hpp"

namespace mimorx::lattice::detail {

namespace {
// Complex vectors (the LR-aided detectors' channels, sorted on the host only): |z|^2 summed in
// order.
double key_of(const std::complex<double>* col, int n) {
  double s = 0;
  for (int i = 0; i < n; ++i) s += col[i].real() * col[i].real() + col[i].imag() * col[i].imag();
  return s == s ? s : HUGE_VAL;
}
template <class F>
double key_of(const F* col, int n) {
  return presort_key(col, n);
}
}  // namespace

template <class F>
void presort_columns(int n, int m, F* b, std::int32_t* rank) {
  std::vector<double> key(m);
  for (int j = 0; j < m; ++j) key[j] = key_of(b + std::size_t(j) * n, n);
  std::vector<int> order(m);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int c) { return key[a] < key[c]; });
  for (int p = 0; p < m; ++p) rank[order[p]] = p;
  const std::vector<F> in(b, b + std::size_t(n) * m);
  for (int j = 0; j < m; ++j)
    std::copy_n(in.data() + std::size_t(j) * n, n, b + std::size_t(rank[j]) * n);
}

template <class T>
void unsort_transform(int m, T* t, const std::int32_t* rank) {
  // B' = (B P) T_s with P(j, rank[j]) = 1, so T = P T_s: T(j, c) = T_s(rank[j], c).
  std::vector<T> col(m);
  for (int c = 0; c < m; ++c) {
    T* tc = t + std::size_t(c) * m;
    std::copy_n(tc, m, col.data());
    for (int j = 0; j < m; ++j) tc[j] = col[rank[j]];
  }
}

template void presort_columns<float>(int, int, float*, std::int32_t*);
template void presort_columns<double>(int, int, double*, std::int32_t*);
template void presort_columns<std::complex<double>>(int, int, std::complex<double>*, std::int32_t*);
template void unsort_transform<std::int64_t>(int, std::int64_t*, const std::int32_t*);
template void unsort_transform<std::complex<double>>(int, std::complex<double>*,
                                                     const std::int32_t*);

}  // namespace mimorx::lattice::detail

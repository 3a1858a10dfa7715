// Times libfplll's LLL (one core) and mimorx's CPU reductions on the same bases, and compares
// the orthogonality defects. Not part of the CMake build (it needs libfplll-dev); build with
//   g++ -std=c++20 -O2 -fopenmp -Iinclude -Ibuild/lll/include -Isrc -Itests \
//     bench/lattice/fplll_compare.cpp build/lll/libmimorx_lattice.a build/lll/libmimorx_core.a \
//     /usr/local/cuda/lib64/libcudart_static.a -lfplll -lmpfr -lgmp -ldl -lrt -lpthread
// and run with OMP_NUM_THREADS=1 taskset -c 0. Inputs: the Gaussian bases of
// tests/support/lll_inputs.hpp scaled by 1e4 and rounded (fplll reduces integer lattices); delta
// 0.75 (fplll eta 0.51).
#include <fplll.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <vector>

#include "lattice/lll_internal.hpp"
#include "mimorx/lattice/quality.hpp"
#include "support/lll_inputs.hpp"

using namespace mimorx;

int main() {
  std::printf(
      "| n | bases | fplll us/basis | mimorx sequential f64 us/basis | mimorx all-swap f32 "
      "us/basis | orth. defect mimorx/fplll (geo. mean) |\n|---|---|---|---|---|---|\n");
  for (int n : {8, 16, 32, 64, 128}) {
    const int count = n <= 16 ? 200 : n == 32 ? 50 : n == 64 ? 20 : 4;
    auto in = test::lll_input("gaussian", n, count);
    for (auto& x : in) x = std::round(x * 1e4);
    double tf = 0, ts = 0, ta = 0, logratio = 0;
    for (int k = 0; k < count; ++k) {
      const double* b = in.data() + std::size_t(k) * n * n;
      fplll::ZZ_mat<mpz_t> A(n, n);  // rows = vectors
      for (int j = 0; j < n; ++j)
        for (int i = 0; i < n; ++i) A[j][i] = long(b[j * n + i]);
      auto t0 = std::chrono::steady_clock::now();
      fplll::lll_reduction(A, 0.75, 0.51);
      auto t1 = std::chrono::steady_clock::now();
      tf += std::chrono::duration<double, std::micro>(t1 - t0).count();
      std::vector<double> fb(std::size_t(n) * n);
      for (int j = 0; j < n; ++j)
        for (int i = 0; i < n; ++i) fb[j * n + i] = A[j][i].get_d();
      std::vector<double> sb(b, b + std::size_t(n) * n);
      t0 = std::chrono::steady_clock::now();
      lattice::detail::se_lll_double(n, n, sb.data(), nullptr, 0.75);
      t1 = std::chrono::steady_clock::now();
      ts += std::chrono::duration<double, std::micro>(t1 - t0).count();
      std::vector<float> ab(b, b + std::size_t(n) * n);
      t0 = std::chrono::steady_clock::now();
      lattice::detail::all_swap_cpu<float>(n, n, ab.data(), nullptr, 0.75,
                                           lattice::detail::default_max_iter(n), 1);
      t1 = std::chrono::steady_clock::now();
      ta += std::chrono::duration<double, std::micro>(t1 - t0).count();
      const auto qf = lattice::check_lll(n, n, fb.data(), {0.75, 0.01, 1e-9, false});
      const auto qs = lattice::check_lll(n, n, sb.data(), {0.75, 1e-6, 1e-9, false});
      logratio += std::log(qs.orthogonality_defect / qf.orthogonality_defect);
    }
    std::printf("| %d | %d | %.1f | %.1f | %.1f | %.4f |\n", n, count, tf / count, ts / count,
                ta / count, std::exp(logratio / count));
  }
}

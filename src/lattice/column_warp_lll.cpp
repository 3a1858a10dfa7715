// The host model of column_warp_lll_cuda.cu (see column_warp_lll.hpp): the same operations in
// the same order, each rounded once (the project builds host code with -ffp-contract=off), with
// the kernel's snapshots as copies. Lane i of warp k is X[k][i].
#include "lattice/column_warp_lll.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdlib>

#include "lattice/lll_math.hpp"
#include "mimorx/core/error.hpp"

namespace mimorx::lattice::detail {
namespace {

constexpr int kMax = kColumnWarpMaxBlock;
using Column = std::array<double, kMax>;
using UColumn = std::array<long long, kMax>;

struct State {
  int sz;
  std::array<Column, kMax> x{};
  std::array<UColumn, kMax> u{};
  int bad = 0;
  void raise(LllStatus s) { bad = std::max(bad, int(s)); }

  void full_reduce() {
    const auto sx = x;
    const auto su = u;
    std::array<double, kMax> inv{};
    for (int j = 0; j < sz; ++j) inv[j] = 1.0 / sx[j][j];
    for (int k = 0; k < sz; ++k) {
      bool stopped = false;
      for (int j = k - 1; j >= 0; --j) {
        const double q = round_nearest(x[k][j] * inv[j]);
        if (q == 0.0) continue;
        if (!(std::fabs(q) <= kColumnWarpMaxMultiplier)) {
          raise(LllStatus::precision_loss);
          stopped = true;
          break;
        }
        for (int i = 0; i < kMax; ++i) {
          x[k][i] = std::fma(-q, sx[j][i], x[k][i]);
          u[k][i] -= static_cast<long long>(q) * su[j][i];
        }
      }
      if (stopped) continue;
      for (int i = 0; i < kMax; ++i)
        if (column_warp_u_too_big(u[k][i])) raise(LllStatus::precision_loss);
    }
  }

  // One swap phase of parity par; returns the number of swaps.
  int swap_phase(int par, double delta) {
    auto sx = x;
    auto su = u;
    std::array<bool, kMax> swap{};
    std::array<double, kMax> cs{}, sn{}, rho{};
    int swaps = 0;
    for (int k = 1; k < sz; ++k) {
      if ((k & 1) != par) continue;
      const double a = sx[k - 1][k - 1], b = x[k][k - 1], c = x[k][k];
      const double q = round_nearest(b * (1.0 / a));
      double b2 = b;
      if (q != 0.0) {
        if (!(std::fabs(q) <= kColumnWarpMaxMultiplier)) {
          raise(LllStatus::precision_loss);
        } else {
          for (int i = 0; i < kMax; ++i) {
            x[k][i] = std::fma(-q, sx[k - 1][i], x[k][i]);
            u[k][i] -= static_cast<long long>(q) * su[k - 1][i];
            if (column_warp_u_too_big(u[k][i])) raise(LllStatus::precision_loss);
          }
          b2 = std::fma(-q, a, b);
        }
      }
      const double lhs = (delta * a) * a;
      const double rhs = b2 * b2 + c * c;
      swap[k] = lhs > rhs;
      if (!swap[k]) continue;
      ++swaps;
      const double rh = std::sqrt(rhs);
      if (!(rh > 0.0 && std::isfinite(rh))) raise(LllStatus::singular);
      sx[k] = x[k];
      su[k] = u[k];
      cs[k] = b2 / rh;
      sn[k] = c / rh;
      rho[k] = rh;
    }
    if (bad || swaps == 0) return swaps;
    for (int w = 0; w < sz; ++w) {
      if (w >= 1 && (w & 1) == par && swap[w]) {
        x[w] = sx[w - 1];
        u[w] = su[w - 1];
      } else if (w + 1 < sz && ((w + 1) & 1) == par && swap[w + 1]) {
        x[w] = sx[w + 1];
        u[w] = su[w + 1];
      }
      const Column before = x[w];
      for (int i = 0; i < kMax; ++i) {
        const bool low = (i & 1) == par;
        const int pk = low ? i : i + 1;
        if (pk < 1 || pk >= sz || !swap[pk]) continue;
        const double other = before[low ? i - 1 : i + 1];
        if (w == pk - 1) {
          x[w][i] = low ? 0.0 : rho[pk];
        } else if (low) {
          x[w][i] = std::fma(sn[pk], other, -(cs[pk] * before[i]));
        } else {
          x[w][i] = std::fma(cs[pk], before[i], sn[pk] * other);
        }
      }
    }
    return swaps;
  }
};

}  // namespace

LllStatus column_warp_lll_host(int sz, const double* r, int ld, double delta, long max_phases,
                               std::int64_t* u_out) {
  if (sz < 2 || sz > kMax) throw InvalidArgument("sz: column_warp_lll takes 2..32 columns");
  State st;
  st.sz = sz;
  for (int k = 0; k < sz; ++k)
    for (int i = 0; i <= k; ++i) st.x[k][i] = r[std::size_t(k) * ld + i];
  for (int k = 0; k < sz; ++k) st.u[k][k] = 1;
  LllStatus result = LllStatus::not_converged;
  int quiet = 0, since_full = 0;
  for (long phase = 0; phase < max_phases; ++phase) {
    const int par = (phase & 1) ? 0 : 1;
    const int swaps = st.swap_phase(par, delta);
    if (st.bad) break;
    ++since_full;
    quiet = swaps ? 0 : quiet + 1;
    const bool last = quiet >= 2;
    if (last || since_full >= kColumnWarpFullEvery) {
      st.full_reduce();
      since_full = 0;
      if (st.bad) break;
      if (last) {
        result = LllStatus::reduced;
        break;
      }
    }
  }
  if (st.bad) result = LllStatus(st.bad);
  for (int k = 0; k < sz; ++k)
    for (int i = 0; i < sz; ++i) u_out[std::size_t(k) * sz + i] = st.u[k][i];
  return result;
}

}  // namespace mimorx::lattice::detail

// MIMO correlation of the TDL channels: TS 38.104 Annex G.2.3.1 (uplink; gNB = receiver) and
// TS 38.101-4 Annex B.2.3.1 (downlink; gNB = transmitter), uniform linear arrays.
//   single end, n = 1, 2, 4, 8 antennas: [R]_ij = c^((i-j)^2 / (n-1)^2), c = alpha at the gNB,
//   beta at the UE (Tables G.2.3.1.1-1/-2: 1; [1 c; c 1]; c^(1/9), c^(4/9), c; c^(1/49) ...);
//   levels (Table G.2.3.1.2-1, uplink): low alpha = beta = 0; medium alpha = 0.9, beta = 0.3;
//   high alpha = beta = 0.9. Downlink (Table B.2.3.1.2-1): medium alpha = 0.3, beta = 0.9;
//   R_spat = R_UE kron R_gNB (uplink), R_gNB kron R_UE (downlink): R_tx kron R_rx either way;
//   the spec's tabulated matrices are rounded to 4 digits and loaded as
//   (R_spat + a I) / (1 + a) where that rounding would leave them indefinite.
#include <cmath>
#include <string>

#include "mimorx/channel/tdl.hpp"
#include "mimorx/core/error.hpp"

namespace mimorx::channel {

std::vector<double> tdl_end_correlation(int n, double coefficient) {
  require(n == 1 || n == 2 || n == 4 || n == 8, "antennas",
          std::to_string(n) + "; the correlation matrices are defined for 1, 2, 4, 8 antennas");
  require(std::isfinite(coefficient) && coefficient >= 0.0 && coefficient <= 1.0, "coefficient",
          std::to_string(coefficient) + "; must be in [0, 1]");
  std::vector<double> r(std::size_t(n) * n, 0.0);
  const double span2 = n > 1 ? double(n - 1) * (n - 1) : 1.0;
  for (int j = 0; j < n; ++j) {
    for (int i = 0; i < n; ++i) {
      const double d2 = double(i - j) * (i - j);
      // 0^0 = 1 on the diagonal; coefficient 0 gives the identity.
      r[std::size_t(j) * n + i] = i == j ? 1.0 : std::pow(coefficient, d2 / span2);
    }
  }
  return r;
}

TdlAlphaBeta tdl_alpha_beta(TdlCorrelation level, TdlLink link) {
  switch (level) {
    case TdlCorrelation::low:
      return {0.0, 0.0};
    case TdlCorrelation::medium:
      return link == TdlLink::uplink ? TdlAlphaBeta{0.9, 0.3} : TdlAlphaBeta{0.3, 0.9};
    case TdlCorrelation::high:
      return {0.9, 0.9};
  }
  throw InvalidArgument("correlation: unknown level " + std::to_string(int(level)));
}

double tdl_loading(const TdlConfig& c) {
  // Cases n_tx x n_rx named as in the spec's text ("2x4" = 2 UE x 4 gNB antennas uplink).
  const int nt = c.n_tx, nr = c.n_rx;
  const bool high = c.correlation == TdlCorrelation::high;
  const bool medium = c.correlation == TdlCorrelation::medium;
  if (c.link == TdlLink::uplink) {  // TS 38.104 G.2.3.1.2
    if (high && nt == 2 && nr == 4) return 0.00010;
    if ((high || medium) && nt == 4 && nr == 4) return 0.00012;
    return 0.0;
  }
  // TS 38.101-4 B.2.3.1.2
  if (high && nt == 4 && nr == 2) return 0.00010;
  if (medium && nt == 2 && nr == 4) return 0.00010;
  if ((high || medium) && nt == 4 && nr == 4) return 0.00012;
  return 0.0;
}

std::vector<double> tdl_spatial_correlation(const TdlConfig& c) {
  validate(c);
  const TdlAlphaBeta ab = tdl_alpha_beta(c.correlation, c.link);
  const bool uplink = c.link == TdlLink::uplink;
  const std::vector<double> rx = tdl_end_correlation(c.n_rx, uplink ? ab.alpha : ab.beta);
  const std::vector<double> tx = tdl_end_correlation(c.n_tx, uplink ? ab.beta : ab.alpha);
  const int nr = c.n_rx, nt = c.n_tx, p = nr * nt;
  const double a = tdl_loading(c);
  std::vector<double> r(std::size_t(p) * p);
  // vec(H) index e = j * nr + i; (R_tx kron R_rx)(e, f) = R_tx(j, l) R_rx(i, k).
  for (int l = 0; l < nt; ++l) {
    for (int k = 0; k < nr; ++k) {
      const int f = l * nr + k;
      for (int j = 0; j < nt; ++j) {
        for (int i = 0; i < nr; ++i) {
          const int e = j * nr + i;
          const double v = tx[std::size_t(l) * nt + j] * rx[std::size_t(k) * nr + i];
          r[std::size_t(f) * p + e] = (v + (e == f ? a : 0.0)) / (1.0 + a);
        }
      }
    }
  }
  return r;
}

}  // namespace mimorx::channel

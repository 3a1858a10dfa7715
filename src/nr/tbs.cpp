// TS 38.214 V17.x §5.1.3.2, steps 1 to 4, and Table 5.1.3.2-1.
#include "mimorx/nr/tbs.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <string>

#include "mimorx/core/error.hpp"

namespace mimorx::nr {
namespace {

constexpr std::array<int, 93> kSmallTbs = {
    24,   32,   40,   48,   56,   64,   72,   80,   88,   96,   104,  112,  120,  128,  136,  144,
    152,  160,  168,  176,  184,  192,  208,  224,  240,  256,  272,  288,  304,  320,  336,  352,
    368,  384,  408,  432,  456,  480,  504,  528,  552,  576,  608,  640,  672,  704,  736,  768,
    808,  848,  888,  928,  984,  1032, 1064, 1128, 1160, 1192, 1224, 1256, 1288, 1320, 1352, 1416,
    1480, 1544, 1608, 1672, 1736, 1800, 1864, 1928, 2024, 2088, 2152, 2216, 2280, 2408, 2472, 2536,
    2600, 2664, 2728, 2792, 2856, 2976, 3104, 3240, 3368, 3496, 3624, 3752, 3824};

// floor(log2(x)) for x >= 1, exact (no rounding of a logarithm).
int floor_log2(double x) { return std::ilogb(x); }

std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

void validate(const TbsInput& in) {
  require(in.qm == 2 || in.qm == 4 || in.qm == 6 || in.qm == 8, "qm",
          std::to_string(in.qm) + "; allowed 2, 4, 6 or 8");
  require(std::isfinite(in.code_rate) && in.code_rate > 0.0 && in.code_rate < 1.0, "code_rate",
          std::to_string(in.code_rate) + "; must be in (0, 1)");
  require(in.layers >= 1 && in.layers <= 4, "layers",
          std::to_string(in.layers) + "; allowed 1..4 (one codeword)");
  require(in.n_prb >= 1 && in.n_prb <= 273, "n_prb", std::to_string(in.n_prb) + "; allowed 1..273");
  require(in.n_symb_sh >= 1 && in.n_symb_sh <= 14, "n_symb_sh",
          std::to_string(in.n_symb_sh) + "; allowed 1..14");
  require(in.n_dmrs_prb >= 0, "n_dmrs_prb", std::to_string(in.n_dmrs_prb) + "; must be >= 0");
  require(in.n_oh_prb == 0 || in.n_oh_prb == 6 || in.n_oh_prb == 12 || in.n_oh_prb == 18,
          "n_oh_prb", std::to_string(in.n_oh_prb) + "; allowed 0, 6, 12 or 18 (xOverhead)");
  require(in.scaling == 1.0 || in.scaling == 0.5 || in.scaling == 0.25, "scaling",
          std::to_string(in.scaling) + "; allowed 1, 0.5 or 0.25 (Table 5.1.3.2-2)");
}

}  // namespace

std::span<const int> small_tbs_table() { return kSmallTbs; }

TbsSteps tbs_steps(const TbsInput& in) {
  validate(in);
  TbsSteps s;
  // Step 1.
  s.n_re_prime = 12 * in.n_symb_sh - in.n_dmrs_prb - in.n_oh_prb;
  require(s.n_re_prime > 0, "n_dmrs_prb",
          "12 N_symb^sh - N_DMRS^PRB - N_oh^PRB = " + std::to_string(s.n_re_prime) +
              " REs per PRB; must leave data REs");
  s.n_re = std::min(156, s.n_re_prime) * in.n_prb;
  // Step 2. Exact for the tables' rates (multiples of 1/2048): every factor and product is a
  // dyadic rational far below 2^53.
  s.n_info = in.scaling * s.n_re * in.code_rate * in.qm * in.layers;
  if (s.n_info <= 3824.0) {
    // Step 3.
    s.n = std::max(3, floor_log2(s.n_info) - 6);
    const double step = std::ldexp(1.0, s.n);
    s.n_info_prime = std::max<std::int64_t>(24, std::int64_t(step * std::floor(s.n_info / step)));
    s.c = 1;
    const auto it = std::lower_bound(kSmallTbs.begin(), kSmallTbs.end(), s.n_info_prime);
    s.tbs = *it;  // N'_info <= 3824, the table's last entry
    return s;
  }
  // Step 4. round() with ties towards the next larger integer: floor(x + 1/2).
  s.n = floor_log2(s.n_info - 24.0) - 5;
  const double step = std::ldexp(1.0, s.n);
  s.n_info_prime =
      std::max<std::int64_t>(3840, std::int64_t(step * std::floor((s.n_info - 24.0) / step + 0.5)));
  const std::int64_t b = s.n_info_prime + 24;
  std::int64_t tbs = 0;
  if (in.code_rate <= 0.25) {
    s.c = int(ceil_div(b, 3816));
    tbs = 8 * s.c * ceil_div(b, 8 * std::int64_t(s.c)) - 24;
  } else if (s.n_info_prime > 8424) {
    s.c = int(ceil_div(b, 8424));
    tbs = 8 * s.c * ceil_div(b, 8 * std::int64_t(s.c)) - 24;
  } else {
    s.c = 1;
    tbs = 8 * ceil_div(b, 8) - 24;
  }
  s.tbs = int(tbs);
  return s;
}

TbsInput tbs_input(McsTable table, int mcs, int layers, int n_prb, int n_symb_sh, int n_dmrs_prb,
                   int n_oh_prb) {
  const McsEntry e = mcs_entry(table, mcs);
  require(!e.reserved, "mcs",
          std::to_string(mcs) + " is reserved in MCS table " + std::to_string(int(table)) +
              " (retransmissions only); allowed 0.." + std::to_string(max_mcs(table)));
  TbsInput in;
  in.qm = e.qm;
  in.code_rate = e.code_rate();
  in.layers = layers;
  in.n_prb = n_prb;
  in.n_symb_sh = n_symb_sh;
  in.n_dmrs_prb = n_dmrs_prb;
  in.n_oh_prb = n_oh_prb;
  return in;
}

}  // namespace mimorx::nr

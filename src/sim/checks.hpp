#pragma once
// Argument checks shared by the uncoded and the coded simulator.
#include <cmath>
#include <string>
#include <vector>

#include "mimorx/core/error.hpp"
#include "mimorx/detect/common.hpp"
#include "mimorx/sim/sweep.hpp"

namespace mimorx::sim::detail {

// Antenna counts the simulator supports and finite SNR points in a sane range.
inline void check_shape_and_snr(const detect::MimoShape& s, const std::vector<double>& snr_db) {
  require(s.nt >= 1 && s.nt <= 8 && s.nr >= 1 && s.nr <= 8, "mimo",
          std::to_string(s.nt) + "x" + std::to_string(s.nr) +
              " is not supported by the simulator; use 1..8 antennas on each side");
  for (double v : snr_db) check_snr_db(v);
}

}  // namespace mimorx::sim::detail

#pragma once
// SNR sweeps as users type them: a list "8,14,20" or a range "start:step:stop" (inclusive,
// like MATLAB's colon), or a mix "0:2:10,15".
#include <cstddef>
#include <string>
#include <vector>

namespace mimorx::sim {

// The SNR points a sweep may have: each in kMinSnrDb..kMaxSnrDb, at most kMaxSnrPoints of them.
inline constexpr double kMinSnrDb = -50, kMaxSnrDb = 100;
inline constexpr std::size_t kMaxSnrPoints = 10000;

// Throws InvalidArgument naming the bad token and the accepted forms, a point out of range or
// a list of more than kMaxSnrPoints points.
std::vector<double> parse_snr_list(const std::string& text);
// Throws InvalidArgument when snr_db is not finite or outside kMinSnrDb..kMaxSnrDb.
void check_snr_db(double snr_db);

// "<nt>x<nr>" as the papers write "4x4":
// for non-square systems "2x4" means nt = 2 transmit and nr = 4 receive antennas.
struct AntennaConfig {
  int nt = 0;
  int nr = 0;
};
AntennaConfig parse_mimo(const std::string& text);

}  // namespace mimorx::sim

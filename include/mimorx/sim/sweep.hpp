#pragma once
// SNR sweeps as users type them: a list "8,14,20" or a range "start:step:stop" (inclusive,
// like MATLAB's colon), or a mix "0:2:10,15".
#include <string>
#include <vector>

namespace mimorx::sim {

// Throws InvalidArgument naming the bad token and the accepted forms.
std::vector<double> parse_snr_list(const std::string& text);

// "<nt>x<nr>" as the papers write "4x4":
// for non-square systems "2x4" means nt = 2 transmit and nr = 4 receive antennas.
struct AntennaConfig {
  int nt = 0;
  int nr = 0;
};
AntennaConfig parse_mimo(const std::string& text);

}  // namespace mimorx::sim

#pragma once
// SNR conventions (the same as Sionna's ebnodb2no):
//   Es = 1: every transmit antenna sends unit-energy symbols (modulation.hpp normalises them).
//   N0 = complex noise variance per receive antenna, n ~ CN(0, N0): E|n|^2 = N0.
//   Es/N0 [dB] = snr_db, so N0 = 10^(-snr_db/10). With i.i.d. CN(0,1) channel entries each
//   receive antenna collects nt * Es of signal on average; the SNR here is per transmit symbol.
//   Eb/N0 = Es/N0 / (bits_per_symbol * code_rate): the energy of one information bit.
#include <cmath>

namespace mimorx::channel {

// N0 for a given Es/N0 in dB (Es = 1).
inline float noise_variance_from_esn0_db(double snr_db) {
  return float(std::pow(10.0, -snr_db / 10.0));
}

// Es/N0 [dB] = Eb/N0 [dB] + 10 log10(bits_per_symbol * code_rate).
inline double esn0_db_from_ebn0_db(double ebn0_db, int bits_per_symbol, double code_rate) {
  return ebn0_db + 10.0 * std::log10(double(bits_per_symbol) * code_rate);
}

// N0 for a given Eb/N0 in dB.
inline float noise_variance_from_ebn0_db(double ebn0_db, int bits_per_symbol, double code_rate) {
  return noise_variance_from_esn0_db(esn0_db_from_ebn0_db(ebn0_db, bits_per_symbol, code_rate));
}

}  // namespace mimorx::channel

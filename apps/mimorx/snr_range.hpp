#pragma once
// The default SNR sweeps of the coded curves (`sim --ldpc`, `ldpc ber` without --snr/--ebn0):
// picked from the code rate, the modulation and the antennas so that the sweep starts where
// every block is in error and runs past the waterfall.
#include <string>

#include "mimorx/sim/channel_model.hpp"

namespace mimorx::cli {

// Es/N0 in dB at which the capacity of the channel equals the information bits sent:
// AWGN, one antenna: log2(1 + Es/N0) = bits per symbol;
// MIMO Rayleigh (the simulator's channel, correlation included): E[log2 det(I + H H^H / N0)]
// = bits per received vector (Monte-Carlo over a fixed set of channels, Es = 1 per antenna).
double awgn_capacity_snr_db(double info_bits_per_symbol);
double mimo_capacity_snr_db(int nt, int nr, double info_bits_per_vector,
                            const sim::ChannelModel& channel);

// "start:step:stop" from a capacity threshold: from the threshold rounded down to the step,
// `span` dB further.
std::string sweep_from_threshold(double threshold_db, double step, double span);

}  // namespace mimorx::cli

#pragma once
// The default SNR sweeps of the coded curves (`sim --ldpc`, `ldpc ber` without --snr/--ebn0):
// picked from the code rate, the modulation and the antennas so that the sweep starts where
// every block is in error and runs past the waterfall.
#include <string>

#include "mimorx/sim/channel_model.hpp"

namespace mimorx::cli {

// What a detector's LLRs can carry at best: the channel's capacity (tree searches, ML), or the
// sum over streams of log2(1 + SINR) after a linear MMSE or ZF filter.
enum class Receiver { optimal, mmse, zf };
// zf -> zf; mmse and the lattice-reduction-aided ones -> mmse; every other detector -> optimal.
Receiver receiver_of(const std::string& detector);

// Es/N0 in dB at which the achievable rate equals the information bits sent:
// AWGN, one antenna: log2(1 + Es/N0) = bits per symbol;
// MIMO (the simulator's channel, correlation included; Monte-Carlo over a fixed set of
// channels, Es = 1 per antenna): optimal E[log2 det(I + H H^H / N0)], mmse / zf
// E[sum_k log2(1 + SINR_k)], = bits per received vector.
double awgn_capacity_snr_db(double info_bits_per_symbol);
double mimo_capacity_snr_db(int nt, int nr, double info_bits_per_vector,
                            const sim::ChannelModel& channel, Receiver receiver);

// "start:step:stop" from the thresholds of the curves of one run (lowest, highest): from the
// lowest rounded down to the step to at least `span` dB further and `beyond` dB past the
// highest.
std::string sweep_from_thresholds(double lowest_db, double highest_db, double step, double span,
                                  double beyond);

}  // namespace mimorx::cli

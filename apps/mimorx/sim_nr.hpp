#pragma once
// `mimorx sim --nr`: NR slots (sim/nr_link.hpp) through the curve runner of `mimorx sim`:
// throughput, BLER after each HARQ transmission and residual BLER per SNR point.
#include <CLI/CLI.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "curve_run.hpp"
#include "mimorx/ldpc/decoder.hpp"

namespace mimorx::cli {

struct NrOptions {
  bool enabled = false;
  int mcs = 16;
  std::string mcs_table = "1";
  int prb = 24;
  int layers = 1;
  int scs = 30;
  int dmrs_type = 1;
  int dmrs_add_pos = 1;
  int harq = 1;
  std::string channel = "iid";
  int nrx = 2;
  std::int64_t slots = 1000;
  std::string csi = "perfect";
  std::vector<CLI::Option*> options;  // the options that only --nr takes
};

// What `mimorx sim` shares with the NR mode.
struct NrCommon {
  std::vector<std::string> detectors;
  std::string snr, ebn0, backend;
  std::uint64_t seed = 1;
  std::int64_t min_errors = 0, batch = 0;
  bool early_stop = false;
  ldpc::DecoderSettings decoder;
  ojson decoder_config;  // decoder, alpha, ... as `sim --ldpc` writes them
  std::string decoder_params;
  CurveFiles files;
  std::shared_ptr<sim::Communicator> comm;  // the ranks (docs/sim_mpi.md); null: alone
};

void add_nr_options(CLI::App& cmd, NrOptions& options);
// Throws InvalidArgument when an option of --nr is given without it.
void check_nr_options_unused(const NrOptions& options);
// The curves of --nr for run_curves: the mode and the SNR points.
struct NrCurves {
  CurveMode mode;
  std::vector<double> snrs;
};
NrCurves nr_curves(const NrOptions& options, const NrCommon& common);

}  // namespace mimorx::cli

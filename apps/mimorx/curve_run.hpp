#pragma once
// The error-rate curves of `mimorx sim`, `mimorx sim --ldpc` and `mimorx ldpc ber`: one
// dialect for all of them. A command describes its simulation as a CurveMode (the config it
// writes, the fields of a point, the table columns, how to run one detector over SNR points);
// run_curves() does the rest the same way for every command: validation before output, the
// stdout table, the description line, the progress line, the stop rules as the document
// records them, the --json/--csv files rewritten after every point with their provenance
// block, and --resume.
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "mimorx/sim/coded.hpp"
#include "mimorx/sim/distributed.hpp"
#include "sim_files.hpp"
#include "sim_progress.hpp"

namespace mimorx::cli {

// What a mode reports to the sweep while it runs one detector.
struct SweepHooks {
  std::function<void()> ready;                      // validated, first point next
  std::function<void(const PointProgress&)> batch;  // the point so far
  std::function<void(ojson)> point;                 // a finished point
};

// A column of the stdout table: the JSON field it shows and how.
struct Column {
  std::string key;
  char format;  // 'f' fixed (2 decimals), 'e' scientific, 'd' integer
  int width;
};

// Everything in which the commands (and the uncoded and coded sweeps) differ.
struct CurveMode {
  const char* units = "blocks";  // what --max-blocks / --max-frames counts
  std::string error_key;         // what --min-errors and --early-stop count
  StopRule rule;
  bool early_stop = false;
  ojson config;                       // the document's "config" ("detectors" filled later)
  std::vector<std::string> identity;  // config fields a --resume file must share
  std::vector<std::string> fields;    // the fields of a point (and the CSV columns)
  std::vector<Column> table;          // after the detector column
  // Validates a detector with everything else (no simulation); returns config fields it derives.
  std::function<ojson(const std::string& detector)> validate;
  std::function<void(const std::string& detector, const std::vector<double>& snrs,
                     const SweepHooks& hooks)>
      run;
  std::function<std::string(const ojson& config)> describe;  // the run in one line
  std::function<void(const ojson& point)> after_point;       // optional: warnings
  // The ranks that run the curves together (docs/sim_mpi.md): rank 0 writes the table, files
  // and progress; null: this process alone.
  std::shared_ptr<sim::Communicator> comm;
};

struct CurveFiles {
  std::string json, csv;
  bool resume = false;
};

// Checks the output options (--resume needs --json, --csv differs from --json).
void check_curve_files(const CurveFiles& files);

// Runs every detector over the SNR points (Es/N0, dB), skipping those a --resume file has.
void run_curves(const CurveFiles& files, const CurveMode& mode,
                const std::vector<std::string>& detectors, const std::vector<double>& snrs);

// The provenance block: {"version", "commit", "command"}.
ojson provenance();

// The config fields every command writes, in the document's order ("detectors" empty, filled
// by run_curves). `units_key` is "max_blocks" or "max_frames".
ojson curve_config(const std::string& coding, int nt, int nr, const std::string& mod,
                   const std::string& backend, std::uint64_t seed, const std::string& channel,
                   const std::vector<double>& snrs, std::int64_t min_errors,
                   const std::string& units_key, std::int64_t max_units, bool early_stop);
extern const char* const kSnrDefinition;

// A coded point (sim --ldpc, ldpc ber) is sim::coded_point_json (src/sim/point_json.hpp); without
// a CRC (ldpc ber's single code block) crc_failures and undetected_errors are null.
const std::vector<Column>& coded_table();
// The field names of a coded point, in order.
std::vector<std::string> coded_fields();

// "" for a non-empty --snr / --ebn0 text, else why it is refused (an empty text would
// otherwise stand for the default sweep).
std::string check_snr_text(const std::string& text);

// The SNR points as Es/N0 in dB from --snr (Es/N0) or --ebn0 (Eb/N0 per information bit,
// converted by channel/snr.hpp: Es/N0 = Eb/N0 + 10 log10(m R), m bits per symbol, R the code
// rate (1 uncoded): the information bits one transmitted symbol of one stream carries).
// `fallback` is used when both texts are empty.
std::vector<double> esn0_points(const std::string& snr, const std::string& ebn0,
                                int bits_per_symbol, double code_rate, const std::string& fallback);

}  // namespace mimorx::cli

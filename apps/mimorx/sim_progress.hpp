#pragma once
// The live progress line of `mimorx sim`: on stderr, only when stderr is a terminal, rewritten
// in place ('\r') at most every 0.2 s while a point runs and erased when the point ends, so that
// the table rows on stdout and the result files are exactly what they are without it.
#include <chrono>
#include <cstdint>
#include <string>

namespace mimorx::cli {

// What a point has done so far, in the units of its stop rules.
struct PointProgress {
  std::int64_t units = 0;   // blocks (--ldpc) or frames (received vectors)
  std::int64_t errors = 0;  // block errors (--ldpc) or bit errors: what --min-errors counts
  std::int64_t bits = 0;    // information bits simulated
};

// The point's stop rules: at most max_units, or until min_errors (0: no such rule).
struct StopRule {
  std::int64_t max_units = 0;
  std::int64_t min_errors = 0;
};

// Seconds left for a point that has run `elapsed` seconds: from the rate so far to whichever
// rule stops it first (the error rule extrapolated from the errors so far); negative when
// nothing can be estimated yet.
double seconds_left(const PointProgress& p, const StopRule& rule, double elapsed);

// "12s", "3m05s", "2h07m".
std::string format_duration(double seconds);

// The text of the line (without '\r'), e.g.
// "nway:4 6.50 dB: 1200/4000 blocks, 57/100 errors, 12.3 Mbit/s, 7s left".
std::string progress_text(const std::string& detector, double snr_db, const char* units,
                          const PointProgress& p, const StopRule& rule, double elapsed);

bool stderr_is_terminal();

class ProgressLine {
 public:
  // `enabled` false: every call does nothing.
  ProgressLine(bool enabled, const char* units, StopRule rule);
  void start(const std::string& detector, double snr_db);  // a point begins now
  void update(const PointProgress& p);                     // after a batch
  void clear();                                            // the point ended

 private:
  using Clock = std::chrono::steady_clock;
  bool enabled_;
  const char* units_;
  StopRule rule_;
  std::string detector_;
  double snr_db_ = 0;
  Clock::time_point start_{}, last_shown_{};
  bool shown_ = false;
};

}  // namespace mimorx::cli

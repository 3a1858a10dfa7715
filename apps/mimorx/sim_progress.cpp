#include "sim_progress.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <csignal>
#include <cstdio>

namespace mimorx::cli {

double seconds_left(const PointProgress& p, const StopRule& rule, double elapsed) {
  if (p.units <= 0 || elapsed <= 0) return -1;
  double left = double(std::max<std::int64_t>(rule.max_units - p.units, 0));
  if (rule.min_errors > 0 && p.errors > 0) {
    const double per_error = double(p.units) / double(p.errors);
    left =
        std::min(left, double(std::max<std::int64_t>(rule.min_errors - p.errors, 0)) * per_error);
  }
  return left * elapsed / double(p.units);
}

std::string format_duration(double seconds) {
  const auto s = std::int64_t(std::ceil(std::max(seconds, 0.0)));
  if (s < 60) return fmt::format("{}s", s);
  if (s < 3600) return fmt::format("{}m{:02d}s", s / 60, s % 60);
  return fmt::format("{}h{:02d}m", s / 3600, (s % 3600) / 60);
}

std::string progress_text(const std::string& detector, double snr_db, const char* units,
                          const PointProgress& p, const StopRule& rule, double elapsed) {
  std::string text = fmt::format("{} {:.2f} dB: {}/{} {}, {}", detector, snr_db, p.units,
                                 rule.max_units, units, p.errors);
  if (rule.min_errors > 0) text += fmt::format("/{}", rule.min_errors);
  text += " errors";
  if (elapsed > 0) text += fmt::format(", {:.1f} Mbit/s", double(p.bits) / elapsed / 1e6);
  const double left = seconds_left(p, rule, elapsed);
  if (left >= 0) text += ", " + format_duration(left) + " left";
  return text;
}

bool stderr_is_terminal() { return ::isatty(STDERR_FILENO) == 1; }

namespace {
// Ctrl-C while a progress line shows: erase it, then end as SIGINT would have.
void erase_line_and_stop(int sig) {
  static const char erase[] = "\r\033[K";
  [[maybe_unused]] const auto n = ::write(STDERR_FILENO, erase, sizeof erase - 1);
  std::signal(sig, SIG_DFL);
  std::raise(sig);
}
}  // namespace

ProgressLine::ProgressLine(bool enabled, const char* units, StopRule rule)
    : enabled_(enabled), units_(units), rule_(rule) {
  if (enabled_) std::signal(SIGINT, erase_line_and_stop);
}

void ProgressLine::start(const std::string& detector, double snr_db) {
  detector_ = detector;
  snr_db_ = snr_db;
  start_ = last_shown_ = Clock::now();
}

void ProgressLine::update(const PointProgress& p) {
  if (!enabled_) return;
  const auto now = Clock::now();
  if (now - last_shown_ < std::chrono::milliseconds(200)) return;
  last_shown_ = now;
  const double elapsed = std::chrono::duration<double>(now - start_).count();
  // "\033[K" erases what a longer previous line left on the right.
  std::fprintf(stderr, "\r%s\033[K",
               progress_text(detector_, snr_db_, units_, p, rule_, elapsed).c_str());
  std::fflush(stderr);
  shown_ = true;
}

void ProgressLine::clear() {
  if (!enabled_ || !shown_) return;
  std::fputs("\r\033[K", stderr);
  std::fflush(stderr);
  shown_ = false;
}

}  // namespace mimorx::cli

// TdlConfig validation, the command-line form "tdl-b:100:400:low", and the OFDM symbol times.
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "channel/tdl_math.hpp"
#include "mimorx/channel/tdl.hpp"
#include "mimorx/core/error.hpp"

namespace mimorx::channel {
namespace {

bool antenna_count_ok(int n) { return n == 1 || n == 2 || n == 4 || n == 8; }

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& ch : out) ch = char(std::tolower(static_cast<unsigned char>(ch)));
  return out;
}

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> parts;
  std::size_t start = 0;
  while (true) {
    const std::size_t pos = s.find(sep, start);
    parts.push_back(s.substr(start, pos == std::string_view::npos ? pos : pos - start));
    if (pos == std::string_view::npos) return parts;
    start = pos + 1;
  }
}

// "'text': " built by appending (operator+ of a literal and a temporary trips GCC 12's
// -Wrestrict false positive).
std::string quoted(std::string_view text) {
  std::string out = "'";
  out.append(text);
  out.append("': ");
  return out;
}

double number(std::string_view field, const std::string& what, std::string_view text) {
  double v = 0.0;
  const char* end = field.data() + field.size();
  const auto [p, ec] = std::from_chars(field.data(), end, v);
  require(!field.empty() && ec == std::errc() && p == end && std::isfinite(v), "channel",
          quoted(text) + what + " '" + std::string(field) + "' is not a number");
  return v;
}
}  // namespace

std::string_view tdl_model_name(TdlModel model) {
  switch (model) {
    case TdlModel::a:
      return "tdl-a";
    case TdlModel::b:
      return "tdl-b";
    case TdlModel::c:
      return "tdl-c";
    case TdlModel::d:
      return "tdl-d";
    case TdlModel::e:
      return "tdl-e";
    case TdlModel::a30:
      return "tdla30";
    case TdlModel::b100:
      return "tdlb100";
    case TdlModel::c300:
      return "tdlc300";
  }
  return "unknown";
}

std::string tdl_name(const TdlConfig& c) {
  std::string out(tdl_model_name(c.model));
  char buf[64];
  if (tdl_fixed_delay_spread_ns(c.model)) {
    std::snprintf(buf, sizeof buf, "-%g:", c.max_doppler_hz);
  } else {
    std::snprintf(buf, sizeof buf, ":%g:%g:", c.delay_spread_ns, c.max_doppler_hz);
  }
  out.append(buf);
  out.append(tdl_correlation_name(c.correlation));
  return out;
}

std::string_view tdl_correlation_name(TdlCorrelation level) {
  switch (level) {
    case TdlCorrelation::low:
      return "low";
    case TdlCorrelation::medium:
      return "medium";
    case TdlCorrelation::high:
      return "high";
  }
  return "unknown";
}

void validate(const TdlConfig& c) {
  require(c.model >= TdlModel::a && c.model <= TdlModel::c300, "model",
          std::to_string(int(c.model)) + "; allowed TDL-A..TDL-E, TDLA30, TDLB100, TDLC300");
  const std::optional<double> fixed = tdl_fixed_delay_spread_ns(c.model);
  require(!fixed || c.delay_spread_ns == *fixed, "delay_spread_ns",
          std::to_string(c.delay_spread_ns) + "; " + std::string(tdl_model_name(c.model)) +
              " has fixed delays (delay spread " + std::to_string(int(fixed.value_or(0.0))) +
              " ns)");
  require(
      std::isfinite(c.delay_spread_ns) && c.delay_spread_ns > 0.0 && c.delay_spread_ns <= 10000.0,
      "delay_spread_ns", std::to_string(c.delay_spread_ns) + "; allowed (0, 10000] ns");
  require(std::isfinite(c.max_doppler_hz) && c.max_doppler_hz >= 0.0 && c.max_doppler_hz <= 10000.0,
          "max_doppler_hz", std::to_string(c.max_doppler_hz) + "; allowed [0, 10000] Hz");
  require(c.correlation >= TdlCorrelation::low && c.correlation <= TdlCorrelation::high,
          "correlation", std::to_string(int(c.correlation)) + "; allowed low, medium, high");
  require(c.link == TdlLink::uplink || c.link == TdlLink::downlink, "link",
          std::to_string(int(c.link)) + "; allowed uplink, downlink");
  require(antenna_count_ok(c.n_rx), "n_rx", std::to_string(c.n_rx) + "; allowed 1, 2, 4, 8");
  require(antenna_count_ok(c.n_tx), "n_tx", std::to_string(c.n_tx) + "; allowed 1, 2, 4, 8");
  if (c.correlation != TdlCorrelation::low) {
    // The specs define UE correlation matrices for 1, 2 and 4 antennas only.
    const bool uplink = c.link == TdlLink::uplink;
    const int ue = uplink ? c.n_tx : c.n_rx;
    require(ue <= 4, uplink ? "n_tx" : "n_rx",
            std::to_string(ue) + " UE antennas with " +
                std::string(tdl_correlation_name(c.correlation)) +
                " correlation; the UE correlation matrices exist for 1, 2, 4 antennas");
  }
  require(c.subcarrier_spacing_khz == 15 || c.subcarrier_spacing_khz == 30,
          "subcarrier_spacing_khz", std::to_string(c.subcarrier_spacing_khz) + "; allowed 15, 30");
  require(c.n_subcarriers >= 1 && c.n_subcarriers <= 3300, "n_subcarriers",
          std::to_string(c.n_subcarriers) + "; allowed 1..3300 (275 PRBs)");
  require(c.symbols_per_slot >= 1 && c.symbols_per_slot <= 14, "symbols_per_slot",
          std::to_string(c.symbols_per_slot) + "; allowed 1..14");
}

namespace {

TdlCorrelation parse_correlation(std::string_view field, std::string_view text) {
  const std::string corr = lower(field);
  if (corr == "low") return TdlCorrelation::low;
  if (corr == "medium") return TdlCorrelation::medium;
  if (corr == "high") return TdlCorrelation::high;
  throw InvalidArgument("channel: " + quoted(text) + "unknown correlation '" + std::string(field) +
                        "'; allowed low, medium, high");
}

// "tdlb100-400:low": a fixed-delay profile of TS 38.104 Annex G with its maximum Doppler.
TdlConfig parse_conformance_name(const std::vector<std::string_view>& f, std::string_view text) {
  const std::string name = lower(f[0]);
  const std::size_t dash = name.find('-');
  const std::string model = name.substr(0, dash);
  TdlConfig c;
  if (model == "tdla30") {
    c.model = TdlModel::a30;
  } else if (model == "tdlb100") {
    c.model = TdlModel::b100;
  } else if (model == "tdlc300") {
    c.model = TdlModel::c300;
  } else {
    throw InvalidArgument("channel: " + quoted(text) + "unknown model '" + model +
                          "'; allowed tdla30, tdlb100, tdlc300 (TS 38.104 Annex G), or "
                          "tdl-a..tdl-e:DS:fD:corr");
  }
  require(dash != std::string::npos, "channel",
          quoted(text) + "expected " + model + "-<maximum Doppler in Hz>:correlation, e.g. " +
              "tdlb100-400:low");
  c.delay_spread_ns = *tdl_fixed_delay_spread_ns(c.model);
  c.max_doppler_hz = number(std::string_view(f[0]).substr(dash + 1), "maximum Doppler (Hz)", text);
  c.correlation = parse_correlation(f[1], text);
  return c;
}
}  // namespace

TdlConfig parse_tdl(std::string_view text) {
  const std::vector<std::string_view> f = split(text, ':');
  if (f.size() == 2) {
    TdlConfig c = parse_conformance_name(f, text);
    require(c.max_doppler_hz >= 0.0 && c.max_doppler_hz <= 10000.0, "channel",
            quoted(text) + "maximum Doppler " + std::to_string(c.max_doppler_hz) +
                " Hz; allowed [0, 10000]");
    return c;
  }
  require(f.size() == 4, "channel",
          quoted(text) +
              "expected model:delay_spread_ns:max_doppler_hz:correlation (e.g. tdl-b:100:400:low) "
              "or a TS 38.104 profile with its Doppler (e.g. tdlb100-400:low)");
  TdlConfig c;
  const std::string model = lower(f[0]);
  const std::string models[] = {"tdl-a", "tdl-b", "tdl-c", "tdl-d", "tdl-e"};
  bool found = false;
  for (int m = 0; m < 5; ++m) {
    if (model == models[m]) {
      c.model = TdlModel(m);
      found = true;
    }
  }
  require(found, "channel",
          quoted(text) + "unknown model '" + std::string(f[0]) +
              "'; allowed tdl-a, tdl-b, tdl-c, tdl-d, tdl-e (or tdla30-fD:corr, tdlb100-fD:corr, "
              "tdlc300-fD:corr)");
  c.delay_spread_ns = number(f[1], "delay spread (ns)", text);
  c.max_doppler_hz = number(f[2], "maximum Doppler (Hz)", text);
  c.correlation = parse_correlation(f[3], text);
  require(c.delay_spread_ns > 0.0 && c.delay_spread_ns <= 10000.0, "channel",
          quoted(text) + "delay spread " + std::string(f[1]) + " ns; allowed (0, 10000]");
  require(c.max_doppler_hz >= 0.0 && c.max_doppler_hz <= 10000.0, "channel",
          quoted(text) + "maximum Doppler " + std::string(f[2]) + " Hz; allowed [0, 10000]");
  return c;
}

double tdl_symbol_time_s(int subcarrier_spacing_khz, std::int64_t slot, int symbol) {
  require(subcarrier_spacing_khz == 15 || subcarrier_spacing_khz == 30, "subcarrier_spacing_khz",
          std::to_string(subcarrier_spacing_khz) + "; allowed 15, 30");
  require(slot >= 0, "slot", std::to_string(slot) + "; must be >= 0");
  require(symbol >= 0 && symbol < 14, "symbol", std::to_string(symbol) + "; allowed 0..13");
  const int mu = subcarrier_spacing_khz == 15 ? 0 : 1;
  return double(detail::tdl_symbol_tc(mu, slot, symbol)) * detail::kTdlTcSeconds;
}

}  // namespace mimorx::channel

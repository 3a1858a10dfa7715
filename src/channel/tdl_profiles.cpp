// Power-delay profiles of 3GPP TR 38.901 V17.0.0 §7.7.2, Tables 7.7.2-1 (TDL-A), 7.7.2-2
// (TDL-B), 7.7.2-3 (TDL-C), 7.7.2-4 (TDL-D) and 7.7.2-5 (TDL-E): normalised delays
// tau_norm,n and powers in dB, in the tables' row order. TDL-D/E list the first tap twice: the
// LOS (specular) row and the Rayleigh row at the same delay, whose power ratio is the K-factor
// of the table (13.3 dB, 22 dB). Delays scale as tau_n = tau_norm,n * DS (§7.7.3, eq. 7.7-1).
// The simplified profiles of TS 38.104 V15 Annex G.2.1.1, Tables G.2.1.1-2 (TDLA30), -3
// (TDLB100) and -4 (TDLC300): 12 taps each, delays in ns as tabulated (not scaled).
#include <array>
#include <cmath>
#include <span>
#include <string>

#include "mimorx/channel/tdl.hpp"
#include "mimorx/core/error.hpp"

namespace mimorx::channel {
namespace {

struct Row {
  double delay;  // normalised delay tau_norm,n
  double db;     // power
  bool los;
};

constexpr std::array<Row, 23> kTdlA{{
    {0.0000, -13.4, false}, {0.3819, 0.0, false},   {0.4025, -2.2, false},  {0.5868, -4.0, false},
    {0.4610, -6.0, false},  {0.5375, -8.2, false},  {0.6708, -9.9, false},  {0.5750, -10.5, false},
    {0.7618, -7.5, false},  {1.5375, -15.9, false}, {1.8978, -6.6, false},  {2.2242, -16.7, false},
    {2.1718, -12.4, false}, {2.4942, -15.2, false}, {2.5119, -10.8, false}, {3.0582, -11.3, false},
    {4.0810, -12.7, false}, {4.4579, -16.2, false}, {4.5695, -18.3, false}, {4.7966, -18.9, false},
    {5.0066, -16.6, false}, {5.3043, -19.9, false}, {9.6586, -29.7, false},
}};

constexpr std::array<Row, 23> kTdlB{{
    {0.0000, 0.0, false},   {0.1072, -2.2, false},  {0.2155, -4.0, false},  {0.2095, -3.2, false},
    {0.2870, -9.8, false},  {0.2986, -1.2, false},  {0.3752, -3.4, false},  {0.5055, -5.2, false},
    {0.3681, -7.6, false},  {0.3697, -3.0, false},  {0.5700, -8.9, false},  {0.5283, -9.0, false},
    {1.1021, -4.8, false},  {1.2756, -5.7, false},  {1.5474, -7.5, false},  {1.7842, -1.9, false},
    {2.0169, -7.6, false},  {2.8294, -12.2, false}, {3.0219, -9.8, false},  {3.6187, -11.4, false},
    {4.1067, -14.9, false}, {4.2790, -9.2, false},  {4.7834, -11.3, false},
}};

constexpr std::array<Row, 24> kTdlC{{
    {0.0000, -4.4, false},  {0.2099, -1.2, false},  {0.2219, -3.5, false},  {0.2329, -5.2, false},
    {0.2176, -2.5, false},  {0.6366, 0.0, false},   {0.6448, -2.2, false},  {0.6560, -3.9, false},
    {0.6584, -7.4, false},  {0.7935, -7.1, false},  {0.8213, -10.7, false}, {0.9336, -11.1, false},
    {1.2285, -5.1, false},  {1.3083, -6.8, false},  {2.1704, -8.7, false},  {2.7105, -13.2, false},
    {4.2589, -13.9, false}, {4.6003, -13.9, false}, {5.4902, -15.8, false}, {5.6077, -17.1, false},
    {6.3065, -16.0, false}, {6.6374, -15.7, false}, {7.0427, -21.6, false}, {8.6523, -22.8, false},
}};

constexpr std::array<Row, 14> kTdlD{{
    {0.000, -0.2, true},
    {0.000, -13.5, false},
    {0.035, -18.8, false},
    {0.612, -21.0, false},
    {1.363, -22.8, false},
    {1.405, -17.9, false},
    {1.804, -20.1, false},
    {2.596, -21.9, false},
    {1.775, -22.9, false},
    {4.042, -27.8, false},
    {7.937, -23.6, false},
    {9.424, -24.8, false},
    {9.708, -30.0, false},
    {12.525, -27.7, false},
}};

constexpr std::array<Row, 15> kTdlE{{
    {0.0000, -0.03, true},
    {0.0000, -22.03, false},
    {0.5133, -15.8, false},
    {0.5440, -18.1, false},
    {0.5630, -19.8, false},
    {0.5440, -22.9, false},
    {0.7112, -22.4, false},
    {1.9092, -18.6, false},
    {1.9293, -20.8, false},
    {1.9589, -22.6, false},
    {2.6426, -22.3, false},
    {3.7136, -25.6, false},
    {5.4524, -20.2, false},
    {12.0034, -29.8, false},
    {20.6519, -29.2, false},
}};

// Delays in ns (not normalised).
constexpr std::array<Row, 12> kTdlA30{{
    {0, -15.5, false},
    {10, 0.0, false},
    {15, -5.1, false},
    {20, -5.1, false},
    {25, -9.6, false},
    {50, -8.2, false},
    {65, -13.1, false},
    {75, -11.5, false},
    {105, -11.0, false},
    {135, -16.2, false},
    {150, -16.6, false},
    {290, -26.2, false},
}};

constexpr std::array<Row, 12> kTdlB100{{
    {0, 0.0, false},
    {10, -2.2, false},
    {20, -0.6, false},
    {30, -0.6, false},
    {35, -0.3, false},
    {45, -1.2, false},
    {55, -5.9, false},
    {120, -2.2, false},
    {170, -0.8, false},
    {245, -6.3, false},
    {330, -7.5, false},
    {480, -7.1, false},
}};

constexpr std::array<Row, 12> kTdlC300{{
    {0, -6.9, false},
    {65, 0.0, false},
    {70, -7.7, false},
    {190, -2.5, false},
    {195, -2.4, false},
    {200, -9.9, false},
    {240, -8.0, false},
    {325, -6.6, false},
    {520, -7.1, false},
    {1045, -13.0, false},
    {1510, -14.2, false},
    {2595, -16.0, false},
}};

std::span<const Row> rows_of(TdlModel model) {
  switch (model) {
    case TdlModel::a:
      return kTdlA;
    case TdlModel::b:
      return kTdlB;
    case TdlModel::c:
      return kTdlC;
    case TdlModel::d:
      return kTdlD;
    case TdlModel::e:
      return kTdlE;
    case TdlModel::a30:
      return kTdlA30;
    case TdlModel::b100:
      return kTdlB100;
    case TdlModel::c300:
      return kTdlC300;
  }
  throw InvalidArgument("model: unknown TDL model " + std::to_string(int(model)));
}
}  // namespace

std::vector<TdlTap> tdl_profile(TdlModel model, double delay_spread_ns) {
  require(std::isfinite(delay_spread_ns) && delay_spread_ns > 0.0, "delay_spread_ns",
          std::to_string(delay_spread_ns) + "; the delay spread must be finite and > 0 ns");
  const std::span<const Row> rows = rows_of(model);
  const std::optional<double> fixed = tdl_fixed_delay_spread_ns(model);
  require(!fixed || delay_spread_ns == *fixed, "delay_spread_ns",
          std::to_string(delay_spread_ns) + "; " + std::string(tdl_model_name(model)) +
              " has fixed delays (delay spread " + std::to_string(int(*fixed)) + " ns)");
  const double scale = fixed ? 1.0 : delay_spread_ns;  // tabulated in ns, or normalised
  double total = 0.0;
  for (const Row& r : rows) total += std::pow(10.0, r.db / 10.0);
  std::vector<TdlTap> taps;
  taps.reserve(rows.size());
  for (const Row& r : rows) {
    taps.push_back({r.delay * scale, std::pow(10.0, r.db / 10.0) / total, r.los});
  }
  return taps;
}

std::optional<double> tdl_fixed_delay_spread_ns(TdlModel model) {
  switch (model) {
    case TdlModel::a30:
      return 30.0;
    case TdlModel::b100:
      return 100.0;
    case TdlModel::c300:
      return 300.0;
    default:
      (void)rows_of(model);  // rejects an invalid enumerator
      return std::nullopt;
  }
}

std::optional<double> tdl_k_factor_db(TdlModel model) {
  if (model == TdlModel::d) return 13.3;
  if (model == TdlModel::e) return 22.0;
  (void)rows_of(model);  // rejects an invalid enumerator
  return std::nullopt;
}

}  // namespace mimorx::channel

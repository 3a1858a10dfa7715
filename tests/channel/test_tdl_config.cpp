// TDL channels: profiles against TR 38.901 Tables 7.7.2-1..5, the correlation matrices of
// TS 38.104 / TS 38.101-4, symbol times, the command-line parser and config validation.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "mimorx/channel/tdl.hpp"
#include "mimorx/core/error.hpp"

namespace mimorx::channel {
namespace {

double db_of(double linear) { return 10.0 * std::log10(linear); }

// Rows (normalised delay, dB) of the spec tables, typed again here from TR 38.901 V17.0.0.
struct SpecRow {
  int index;
  double delay;
  double db;
};

void expect_rows(TdlModel model, std::size_t rows, double ds, std::initializer_list<SpecRow> spec) {
  const std::vector<TdlTap> taps = tdl_profile(model, ds);
  ASSERT_EQ(taps.size(), rows) << tdl_model_name(model);
  double total = 0.0;
  for (const TdlTap& t : taps) total += t.power;
  EXPECT_NEAR(total, 1.0, 1e-12);
  // dB relative to the first listed row, compared with the tables' dB differences.
  const SpecRow& ref = *spec.begin();
  for (const SpecRow& r : spec) {
    EXPECT_NEAR(taps[r.index].delay_ns, r.delay * ds, 1e-9) << tdl_model_name(model) << r.index;
    EXPECT_NEAR(db_of(taps[r.index].power / taps[ref.index].power), r.db - ref.db, 1e-9)
        << tdl_model_name(model) << " row " << r.index;
  }
}

TEST(TdlProfile, TablesOfTr38901) {
  expect_rows(TdlModel::a, 23, 30.0,
              {{0, 0.0, -13.4}, {1, 0.3819, 0.0}, {10, 1.8978, -6.6}, {22, 9.6586, -29.7}});
  expect_rows(TdlModel::b, 23, 100.0,
              {{0, 0.0, 0.0}, {5, 0.2986, -1.2}, {15, 1.7842, -1.9}, {22, 4.7834, -11.3}});
  expect_rows(TdlModel::c, 24, 300.0,
              {{0, 0.0, -4.4}, {5, 0.6366, 0.0}, {12, 1.2285, -5.1}, {23, 8.6523, -22.8}});
  expect_rows(TdlModel::d, 14, 30.0,
              {{0, 0.0, -0.2}, {1, 0.0, -13.5}, {8, 1.775, -22.9}, {13, 12.525, -27.7}});
  expect_rows(TdlModel::e, 15, 60.0,
              {{0, 0.0, -0.03}, {1, 0.0, -22.03}, {7, 1.9092, -18.6}, {14, 20.6519, -29.2}});
}

// TS 38.104 V15 Tables G.2.1.1-2..4, typed again here: (row, delay in ns, dB).
void expect_fixed_rows(TdlModel model, double ds, std::initializer_list<SpecRow> spec) {
  ASSERT_EQ(tdl_fixed_delay_spread_ns(model).value_or(-1.0), ds);
  const std::vector<TdlTap> taps = tdl_profile(model, ds);
  ASSERT_EQ(taps.size(), 12u) << tdl_model_name(model);
  double total = 0.0, linear = 0.0;
  for (const TdlTap& t : taps) total += t.power;
  EXPECT_NEAR(total, 1.0, 1e-12);
  for (const SpecRow& r : spec) linear += std::pow(10.0, r.db / 10.0);
  for (const SpecRow& r : spec) {
    EXPECT_EQ(taps[r.index].delay_ns, r.delay) << tdl_model_name(model) << r.index;
    EXPECT_NEAR(taps[r.index].power, std::pow(10.0, r.db / 10.0) / linear, 1e-12)
        << tdl_model_name(model) << " row " << r.index;
    EXPECT_FALSE(taps[r.index].los);
  }
  EXPECT_THROW(tdl_profile(model, ds + 1.0), InvalidArgument);
}

TEST(TdlProfile, FixedProfilesOfTs38104) {
  expect_fixed_rows(TdlModel::a30, 30.0,
                    {{0, 0, -15.5},
                     {1, 10, 0.0},
                     {2, 15, -5.1},
                     {3, 20, -5.1},
                     {4, 25, -9.6},
                     {5, 50, -8.2},
                     {6, 65, -13.1},
                     {7, 75, -11.5},
                     {8, 105, -11.0},
                     {9, 135, -16.2},
                     {10, 150, -16.6},
                     {11, 290, -26.2}});
  expect_fixed_rows(TdlModel::b100, 100.0,
                    {{0, 0, 0.0},
                     {1, 10, -2.2},
                     {2, 20, -0.6},
                     {3, 30, -0.6},
                     {4, 35, -0.3},
                     {5, 45, -1.2},
                     {6, 55, -5.9},
                     {7, 120, -2.2},
                     {8, 170, -0.8},
                     {9, 245, -6.3},
                     {10, 330, -7.5},
                     {11, 480, -7.1}});
  expect_fixed_rows(TdlModel::c300, 300.0,
                    {{0, 0, -6.9},
                     {1, 65, 0.0},
                     {2, 70, -7.7},
                     {3, 190, -2.5},
                     {4, 195, -2.4},
                     {5, 200, -9.9},
                     {6, 240, -8.0},
                     {7, 325, -6.6},
                     {8, 520, -7.1},
                     {9, 1045, -13.0},
                     {10, 1510, -14.2},
                     {11, 2595, -16.0}});
  for (TdlModel m : {TdlModel::a, TdlModel::b, TdlModel::c, TdlModel::d, TdlModel::e}) {
    EXPECT_FALSE(tdl_fixed_delay_spread_ns(m).has_value());
  }
}

// The simplified profiles keep the delay spread they are named after, to within 10 %.
TEST(TdlProfile, FixedProfilesRmsDelaySpread) {
  for (TdlModel m : {TdlModel::a30, TdlModel::b100, TdlModel::c300}) {
    const double ds = *tdl_fixed_delay_spread_ns(m);
    double mean = 0.0, second = 0.0;
    for (const TdlTap& t : tdl_profile(m, ds)) {
      mean += t.power * t.delay_ns;
      second += t.power * t.delay_ns * t.delay_ns;
    }
    EXPECT_NEAR(std::sqrt(second - mean * mean) / ds, 1.0, 0.1) << tdl_model_name(m);
  }
}

TEST(TdlProfile, LosRowAndKFactor) {
  for (TdlModel m : {TdlModel::d, TdlModel::e}) {
    const auto taps = tdl_profile(m, 50.0);
    ASSERT_TRUE(tdl_k_factor_db(m).has_value());
    EXPECT_TRUE(taps[0].los);
    for (std::size_t n = 1; n < taps.size(); ++n) EXPECT_FALSE(taps[n].los);
    EXPECT_EQ(taps[0].delay_ns, taps[1].delay_ns);
    EXPECT_NEAR(db_of(taps[0].power / taps[1].power), *tdl_k_factor_db(m), 1e-9);
  }
  EXPECT_NEAR(*tdl_k_factor_db(TdlModel::d), 13.3, 0);
  EXPECT_NEAR(*tdl_k_factor_db(TdlModel::e), 22.0, 0);
  for (TdlModel m : {TdlModel::a, TdlModel::b, TdlModel::c}) {
    EXPECT_FALSE(tdl_k_factor_db(m).has_value());
    for (const TdlTap& t : tdl_profile(m, 10.0)) EXPECT_FALSE(t.los);
  }
}

// The tables are normalised to an RMS delay spread of 1 (TR 38.901 §7.7.3): the scaled
// profile's RMS delay spread is DS, to the tables' 3-4 digit rounding.
TEST(TdlProfile, RmsDelaySpreadEqualsDs) {
  for (TdlModel m : {TdlModel::a, TdlModel::b, TdlModel::c, TdlModel::d, TdlModel::e}) {
    const double ds = 123.0;
    double mean = 0.0, second = 0.0;
    for (const TdlTap& t : tdl_profile(m, ds)) {
      mean += t.power * t.delay_ns;
      second += t.power * t.delay_ns * t.delay_ns;
    }
    EXPECT_NEAR(std::sqrt(second - mean * mean) / ds, 1.0, 0.01) << tdl_model_name(m);
  }
}

TEST(TdlCorrelationMatrix, EndMatricesOfTs38104) {
  const double a = 0.9;
  EXPECT_EQ(tdl_end_correlation(1, a), std::vector<double>{1.0});
  EXPECT_EQ(tdl_end_correlation(2, a), (std::vector<double>{1.0, a, a, 1.0}));
  const auto r4 = tdl_end_correlation(4, a);
  const double first_row4[] = {1.0, std::pow(a, 1.0 / 9), std::pow(a, 4.0 / 9), a};
  for (int j = 0; j < 4; ++j) EXPECT_DOUBLE_EQ(r4[std::size_t(j) * 4], first_row4[j]);
  EXPECT_DOUBLE_EQ(r4[1 * 4 + 2], std::pow(a, 1.0 / 9));  // (2, 1): one step
  const auto r8 = tdl_end_correlation(8, a);
  for (int j = 0; j < 8; ++j) {
    EXPECT_DOUBLE_EQ(r8[std::size_t(j) * 8], std::pow(a, double(j * j) / 49)) << j;
  }
  // 4-digit values of the spec's tables: 0.9^(1/9) = 0.9884, 0.9^(4/9) = 0.9543.
  EXPECT_NEAR(r4[4], 0.9884, 5e-5);
  EXPECT_NEAR(r4[8], 0.9543, 5e-5);
  EXPECT_EQ(tdl_end_correlation(4, 0.0),
            (std::vector<double>{1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1}));
  EXPECT_THROW(tdl_end_correlation(3, a), InvalidArgument);
  EXPECT_THROW(tdl_end_correlation(2, 1.5), InvalidArgument);
}

TEST(TdlCorrelationMatrix, LevelsAndKronecker) {
  EXPECT_EQ(tdl_alpha_beta(TdlCorrelation::low, TdlLink::uplink).alpha, 0.0);
  EXPECT_EQ(tdl_alpha_beta(TdlCorrelation::medium, TdlLink::uplink).alpha, 0.9);
  EXPECT_EQ(tdl_alpha_beta(TdlCorrelation::medium, TdlLink::uplink).beta, 0.3);
  EXPECT_EQ(tdl_alpha_beta(TdlCorrelation::medium, TdlLink::downlink).alpha, 0.3);
  EXPECT_EQ(tdl_alpha_beta(TdlCorrelation::medium, TdlLink::downlink).beta, 0.9);
  EXPECT_EQ(tdl_alpha_beta(TdlCorrelation::high, TdlLink::downlink).alpha, 0.9);
  EXPECT_EQ(tdl_alpha_beta(TdlCorrelation::high, TdlLink::uplink).beta, 0.9);

  // Uplink 2 UE x 2 gNB, medium: R_UE kron R_gNB = [1 b; b 1] kron [1 a; a 1], a = 0.9, b = 0.3.
  TdlConfig c;
  c.n_rx = 2;
  c.n_tx = 2;
  c.correlation = TdlCorrelation::medium;
  const auto r = tdl_spatial_correlation(c);
  const double want[4][4] = {
      {1, 0.9, 0.3, 0.27}, {0.9, 1, 0.27, 0.3}, {0.3, 0.27, 1, 0.9}, {0.27, 0.3, 0.9, 1}};
  for (int i = 0; i < 4; ++i) {
    for (int j = 0; j < 4; ++j) EXPECT_NEAR(r[std::size_t(j) * 4 + i], want[i][j], 1e-12);
  }
  // Uplink 2x4 high: (R + a I) / (1 + a) with a = 0.0001.
  c.n_rx = 4;
  c.correlation = TdlCorrelation::high;
  EXPECT_EQ(tdl_loading(c), 0.00010);
  const auto rh = tdl_spatial_correlation(c);
  EXPECT_NEAR(rh[0], 1.0, 1e-15);
  EXPECT_NEAR(rh[std::size_t(7) * 8], 0.81 / 1.0001, 1e-12);  // (0, 7): alpha * beta
  c.n_tx = 4;
  EXPECT_EQ(tdl_loading(c), 0.00012);
  c.correlation = TdlCorrelation::medium;
  EXPECT_EQ(tdl_loading(c), 0.00012);
  c.n_tx = 1;
  EXPECT_EQ(tdl_loading(c), 0.0);
  c.link = TdlLink::downlink;
  c.n_tx = 4;
  c.n_rx = 2;
  c.correlation = TdlCorrelation::high;
  EXPECT_EQ(tdl_loading(c), 0.00010);
}

TEST(TdlTime, SymbolTimesWithNormalCyclicPrefix) {
  const double tc = 1.0 / (480e3 * 4096);
  // 15 kHz: useful part 2048 * 64 Tc, CP 144 * 64 Tc, +16 * 64 Tc on symbols 0 and 7.
  EXPECT_DOUBLE_EQ(tdl_symbol_time_s(15, 0, 0), (160 * 64 + 1024 * 64) * tc);
  EXPECT_DOUBLE_EQ(tdl_symbol_time_s(15, 0, 1), (2208 * 64 + 144 * 64 + 1024 * 64) * tc);
  EXPECT_DOUBLE_EQ(tdl_symbol_time_s(15, 0, 7),
                   (2208 * 64 + 6 * 2192 * 64 + 160 * 64 + 1024 * 64) * tc);
  EXPECT_NEAR(tdl_symbol_time_s(15, 3, 0) - tdl_symbol_time_s(15, 0, 0), 3e-3, 1e-15);
  // 30 kHz: slot 0.5 ms, CP 72 * 64 Tc; only symbol 0 of each slot has the extra 16 * 64 Tc
  // (not scaled by 2^-mu).
  EXPECT_DOUBLE_EQ(tdl_symbol_time_s(30, 0, 0), (88 * 64 + 512 * 64) * tc);
  EXPECT_DOUBLE_EQ(tdl_symbol_time_s(30, 0, 7),
                   (1112 * 64 + 6 * 1096 * 64 + 72 * 64 + 512 * 64) * tc);
  EXPECT_NEAR(tdl_symbol_time_s(30, 2, 5) - tdl_symbol_time_s(30, 0, 5), 1e-3, 1e-15);
  EXPECT_THROW(tdl_symbol_time_s(60, 0, 0), InvalidArgument);
  EXPECT_THROW(tdl_symbol_time_s(30, 0, 14), InvalidArgument);
}

TEST(TdlParse, CommandLineNames) {
  const TdlConfig c = parse_tdl("tdl-b:100:400:low");
  EXPECT_EQ(c.model, TdlModel::b);
  EXPECT_EQ(c.delay_spread_ns, 100.0);
  EXPECT_EQ(c.max_doppler_hz, 400.0);
  EXPECT_EQ(c.correlation, TdlCorrelation::low);
  const TdlConfig d = parse_tdl("TDL-C:300:100:Medium");
  EXPECT_EQ(d.model, TdlModel::c);
  EXPECT_EQ(d.correlation, TdlCorrelation::medium);
  const TdlConfig e = parse_tdl("tdl-e:37.5:0:high");
  EXPECT_EQ(e.model, TdlModel::e);
  EXPECT_EQ(e.delay_spread_ns, 37.5);
  EXPECT_EQ(e.max_doppler_hz, 0.0);
  EXPECT_EQ(e.correlation, TdlCorrelation::high);
  EXPECT_EQ(parse_tdl("tdl-a:30:5:low").model, TdlModel::a);
  EXPECT_EQ(parse_tdl("tdl-d:30:75:low").model, TdlModel::d);
}

TEST(TdlParse, ConformanceNames) {
  const TdlConfig b = parse_tdl("tdlb100-400:low");
  EXPECT_EQ(b.model, TdlModel::b100);
  EXPECT_EQ(b.delay_spread_ns, 100.0);
  EXPECT_EQ(b.max_doppler_hz, 400.0);
  EXPECT_EQ(b.correlation, TdlCorrelation::low);
  EXPECT_NO_THROW(validate(b));
  const TdlConfig a = parse_tdl("TDLA30-10:Medium");
  EXPECT_EQ(a.model, TdlModel::a30);
  EXPECT_EQ(a.delay_spread_ns, 30.0);
  EXPECT_EQ(a.max_doppler_hz, 10.0);
  EXPECT_EQ(a.correlation, TdlCorrelation::medium);
  const TdlConfig c = parse_tdl("tdlc300-100:high");
  EXPECT_EQ(c.model, TdlModel::c300);
  EXPECT_EQ(c.delay_spread_ns, 300.0);
  // The command-line form round-trips.
  for (const char* text :
       {"tdlb100-400:low", "tdla30-10:medium", "tdl-c:300:100:low", "tdl-e:37.5:0:high"}) {
    EXPECT_EQ(tdl_name(parse_tdl(text)), text);
  }
}

void expect_parse_error(const std::string& text, const std::string& fragment) {
  try {
    parse_tdl(text);
    ADD_FAILURE() << "no error for '" << text << "'";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos)
        << "'" << text << "': " << e.what();
  }
}

TEST(TdlParse, ClearErrors) {
  expect_parse_error("", "expected model:delay_spread_ns");
  expect_parse_error("tdl-b:100:400", "expected model:delay_spread_ns");
  expect_parse_error("tdl-b:100:400:low:1", "expected model:delay_spread_ns");
  expect_parse_error("tdl-f:100:400:low", "unknown model 'tdl-f'");
  expect_parse_error("epa:100:400:low", "unknown model");
  expect_parse_error("tdl-b:abc:400:low", "delay spread (ns) 'abc' is not a number");
  expect_parse_error("tdl-b:100:4x0:low", "maximum Doppler (Hz) '4x0' is not a number");
  expect_parse_error("tdl-b::400:low", "is not a number");
  expect_parse_error("tdl-b:nan:400:low", "is not a number");
  expect_parse_error("tdl-b:0:400:low", "delay spread 0 ns");
  expect_parse_error("tdl-b:-5:400:low", "delay spread -5 ns");
  expect_parse_error("tdl-b:100:-1:low", "maximum Doppler -1 Hz");
  expect_parse_error("tdl-b:100:1e9:low", "maximum Doppler 1e9 Hz");
  expect_parse_error("tdl-b:100:400:mid", "unknown correlation 'mid'");
}

TEST(TdlParse, ConformanceNameErrors) {
  expect_parse_error("tdlb100:low", "expected tdlb100-<maximum Doppler in Hz>");
  expect_parse_error("tdlb100-x:low", "maximum Doppler (Hz) 'x' is not a number");
  expect_parse_error("tdlb100-:low", "is not a number");
  expect_parse_error("tdlb100-20000:low", "maximum Doppler");
  expect_parse_error("tdld30-5:low", "unknown model 'tdld30'");
  expect_parse_error("tdlb100-400:mid", "unknown correlation 'mid'");
  expect_parse_error("tdlb100:100:400:low", "unknown model 'tdlb100'");
  TdlConfig wrong = parse_tdl("tdlb100-400:low");
  wrong.delay_spread_ns = 50.0;
  EXPECT_THROW(validate(wrong), InvalidArgument);
}

TEST(TdlConfigCheck, BadConfigsThrow) {
  const auto bad = [](auto edit, const std::string& field) {
    TdlConfig c;
    edit(c);
    try {
      validate(c);
      ADD_FAILURE() << "no error for " << field;
    } catch (const InvalidArgument& e) {
      EXPECT_EQ(std::string(e.what()).rfind(field + ":", 0), 0u) << e.what();
    }
    EXPECT_THROW(TdlChannel(c, Backend::cpu()), InvalidArgument) << field;
  };
  EXPECT_NO_THROW(validate(TdlConfig{}));
  bad([](TdlConfig& c) { c.model = TdlModel(8); }, "model");
  bad([](TdlConfig& c) { c.delay_spread_ns = 0.0; }, "delay_spread_ns");
  bad([](TdlConfig& c) { c.delay_spread_ns = std::nan(""); }, "delay_spread_ns");
  bad([](TdlConfig& c) { c.max_doppler_hz = -1.0; }, "max_doppler_hz");
  bad([](TdlConfig& c) { c.max_doppler_hz = INFINITY; }, "max_doppler_hz");
  bad([](TdlConfig& c) { c.correlation = TdlCorrelation(5); }, "correlation");
  bad([](TdlConfig& c) { c.link = TdlLink(3); }, "link");
  bad([](TdlConfig& c) { c.n_rx = 3; }, "n_rx");
  bad([](TdlConfig& c) { c.n_tx = 0; }, "n_tx");
  bad([](TdlConfig& c) { c.n_tx = 16; }, "n_tx");
  bad(
      [](TdlConfig& c) {
        c.n_tx = 8;
        c.correlation = TdlCorrelation::high;
      },
      "n_tx");  // 8 UE antennas uplink: no UE matrix
  bad(
      [](TdlConfig& c) {
        c.n_rx = 8;
        c.link = TdlLink::downlink;
        c.correlation = TdlCorrelation::medium;
      },
      "n_rx");
  bad([](TdlConfig& c) { c.subcarrier_spacing_khz = 60; }, "subcarrier_spacing_khz");
  bad([](TdlConfig& c) { c.n_subcarriers = 0; }, "n_subcarriers");
  bad([](TdlConfig& c) { c.n_subcarriers = 3301; }, "n_subcarriers");
  bad([](TdlConfig& c) { c.symbols_per_slot = 15; }, "symbols_per_slot");
  // 8 gNB antennas with high correlation are allowed (the gNB matrix exists for 8).
  TdlConfig ok;
  ok.n_rx = 8;
  ok.n_tx = 4;
  ok.correlation = TdlCorrelation::high;
  EXPECT_NO_THROW(validate(ok));
}

TEST(TdlConfigCheck, BadOutputsThrow) {
  TdlConfig c;
  c.n_rx = 2;
  c.n_subcarriers = 4;
  c.symbols_per_slot = 2;
  TdlChannel ch(c, Backend::cpu());
  EXPECT_EQ(ch.matrices_per_slot(), 8);
  std::vector<cf32> h(64);
  EXPECT_THROW(ch.generate(1, {}, MatrixBatch<cf32>(h.data(), 8, 1, 1, Memory::host)),
               InvalidArgument);  // shape
  EXPECT_THROW(ch.generate(1, {}, MatrixBatch<cf32>(h.data(), 7, 2, 1, Memory::host)),
               InvalidArgument);  // not whole slots
  EXPECT_THROW(ch.generate(1, {}, MatrixBatch<cf32>(h.data(), 8, 2, 1, Memory::device)),
               InvalidArgument);  // residency
  EXPECT_THROW(ch.generate(1, {-1, 0, 1}, MatrixBatch<cf32>(h.data(), 8, 2, 1, Memory::host)),
               InvalidArgument);
  EXPECT_THROW(ch.generate(1, {0, 0, 0}, MatrixBatch<cf32>(h.data(), 8, 2, 1, Memory::host)),
               InvalidArgument);
  EXPECT_NO_THROW(ch.generate(1, {}, MatrixBatch<cf32>(h.data(), 16, 2, 1, Memory::host)));
}

}  // namespace
}  // namespace mimorx::channel

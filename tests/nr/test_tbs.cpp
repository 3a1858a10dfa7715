// TBS determination of TS 38.214 §5.1.3.2: worked cases, values of an independent tool, and
// properties of every TBS the procedure can give (consistency with TS 38.212 segmentation).
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "mimorx/core/error.hpp"
#include "mimorx/ldpc/segmentation.hpp"
#include "mimorx/nr/mcs.hpp"
#include "mimorx/nr/tbs.hpp"

namespace mimorx::nr {
namespace {

struct Worked {
  McsTable table;
  int mcs, n_prb, n_symb, n_dmrs, layers, n_oh;
  int n_re, n, c;
  std::int64_t n_info_prime;
  int tbs;
};

// Each row worked by hand from the procedure:
// A: table 1 MCS 0 (Qm 2, R 120/1024), 1 PRB, 12 symbols, 12 DMRS REs, 1 layer.
//    N'_RE = 144 - 12 = 132; N_RE = 132; N_info = 132 * 120/1024 * 2 = 30.9375 <= 3824;
//    n = max(3, 4 - 6) = 3; N'_info = max(24, 8 * floor(3.87)) = 24; TBS = 24.
// B: table 1 MCS 9 (2, 679), 10 PRB, 14 symbols, 12 DMRS REs, 1 layer.
//    N'_RE = 156; N_RE = 1560; N_info = 1560 * 679/1024 * 2 = 2068.83; n = 11 - 6 = 5;
//    N'_info = 32 * floor(64.65) = 2048; smallest table entry >= 2048: TBS = 2088.
// C: table 1 MCS 16 (4, 658), 20 PRB, 14 symbols, 24 DMRS REs, 1 layer.
//    N'_RE = 144; N_RE = 2880; N_info = 2880 * 658/1024 * 4 = 7402.5 > 3824;
//    n = floor(log2(7378.5)) - 5 = 7; N'_info = 128 * round(57.64) = 7424; R > 1/4 and
//    N'_info <= 8424: TBS = 8 * ceil(7448 / 8) - 24 = 7424.
// D: table 2 MCS 20 (8, 682.5), 52 PRB, 14 symbols, 12 DMRS REs, 2 layers.
//    N_RE = 156 * 52 = 8112; N_info = 8112 * 682.5/1024 * 8 * 2 = 86506.875;
//    n = floor(log2(86482.875)) - 5 = 11; N'_info = 2048 * round(42.23) = 86016;
//    C = ceil(86040 / 8424) = 11; TBS = 88 * ceil(86040 / 88) - 24 = 88 * 978 - 24 = 86040.
// E: table 3 MCS 0 (2, 30), 273 PRB, 14 symbols, 12 DMRS REs, 4 layers (R <= 1/4).
//    N_RE = 42588; N_info = 42588 * 30/1024 * 2 * 4 = 9981.5625; n = 13 - 5 = 8;
//    N'_info = 256 * round(38.90) = 9984; C = ceil(10008 / 3816) = 3;
//    TBS = 24 * ceil(10008 / 24) - 24 = 24 * 417 - 24 = 9984.
// F: table 1 MCS 27 (6, 910), 100 PRB, 12 symbols, 24 DMRS REs (type 2, 3 CDM groups, 2
//    symbols), xOverhead 6, 3 layers.
//    N'_RE = 144 - 24 - 6 = 114; N_RE = 11400; N_info = 11400 * 910/1024 * 6 * 3 =
//    182355.47; n = floor(log2(182331.47)) - 5 = 12; N'_info = 4096 * round(44.51) = 184320;
//    C = ceil(184344 / 8424) = 22; TBS = 176 * ceil(184344 / 176) - 24 = 176 * 1048 - 24 =
//    184424.
// G: table 2 MCS 27 (8, 948), 273 PRB, 14 symbols, 12 DMRS REs, 4 layers: the largest TBS.
//    N_RE = 42588; N_info = 42588 * 948/1024 * 32 = 1261669.5; n = 20 - 5 = 15;
//    N'_info = 32768 * round(38.50...) = 32768 * 39 = 1277952; C = ceil(1277976 / 8424) =
//    152; TBS = 1216 * ceil(1277976 / 1216) - 24 = 1216 * 1051 - 24 = 1277992.
const Worked kWorked[] = {
    {McsTable::qam64, 0, 1, 12, 12, 1, 0, 132, 3, 1, 24, 24},
    {McsTable::qam64, 9, 10, 14, 12, 1, 0, 1560, 5, 1, 2048, 2088},
    {McsTable::qam64, 16, 20, 14, 24, 1, 0, 2880, 7, 1, 7424, 7424},
    {McsTable::qam256, 20, 52, 14, 12, 2, 0, 8112, 11, 11, 86016, 86040},
    {McsTable::qam64_low_se, 0, 273, 14, 12, 4, 0, 42588, 8, 3, 9984, 9984},
    {McsTable::qam64, 27, 100, 12, 24, 3, 6, 11400, 12, 22, 184320, 184424},
    {McsTable::qam256, 27, 273, 14, 12, 4, 0, 42588, 15, 152, 1277952, 1277992},
};

TEST(Tbs, WorkedCases) {
  for (const Worked& w : kWorked) {
    SCOPED_TRACE(testing::Message() << "table " << int(w.table) << " mcs " << w.mcs);
    const TbsSteps s =
        tbs_steps(tbs_input(w.table, w.mcs, w.layers, w.n_prb, w.n_symb, w.n_dmrs, w.n_oh));
    EXPECT_EQ(s.n_re, w.n_re);
    EXPECT_EQ(s.n, w.n);
    EXPECT_EQ(s.n_info_prime, w.n_info_prime);
    EXPECT_EQ(s.c, w.c);
    EXPECT_EQ(s.tbs, w.tbs);
  }
}

TEST(Tbs, LargestIsTheLdpcLimit) {
  // ldpc::kMaxTbs is the largest TBS of tables 1..3 (no 1024QAM): case G above.
  int largest = 0;
  for (McsTable t : {McsTable::qam64, McsTable::qam256, McsTable::qam64_low_se}) {
    for (int m = 0; m <= max_mcs(t); ++m) {
      largest = std::max(largest, transport_block_size(tbs_input(t, m, 4, 273, 14, 6)));
    }
  }
  EXPECT_EQ(largest, ldpc::kMaxTbs);
}

TEST(Tbs, IndependentToolValues) {
  // MATLAB nrTBS values as tabulated in srsRAN_Project's
  // tests/unittests/ran/sch/tbs_calculator_test_data.h (symbols, DMRS REs, xOverhead, Qm,
  // R x 1024, layers, S, PRBs -> TBS).
  struct Case {
    int n_symb, n_dmrs, n_oh, qm;
    double r1024;
    int layers;
    double s;
    int n_prb, tbs;
  };
  const Case cases[] = {
      {12, 6, 0, 2, 102.4, 1, 1.0, 6, 160},     {12, 6, 0, 2, 102.4, 1, 0.25, 6, 40},
      {12, 36, 12, 2, 921.6, 1, 1.0, 6, 1032},  {12, 6, 0, 2, 921.6, 4, 1.0, 11, 11016},
      {12, 6, 12, 4, 921.6, 4, 1.0, 11, 19968}, {12, 36, 12, 4, 921.6, 4, 0.25, 11, 3824},
      {12, 6, 0, 6, 921.6, 4, 1.0, 11, 32776},  {12, 36, 0, 8, 921.6, 1, 1.0, 11, 8456},
      {12, 6, 12, 6, 102.4, 4, 1.0, 6, 1864},   {12, 36, 12, 4, 921.6, 4, 1.0, 6, 8192},
  };
  for (const Case& c : cases) {
    TbsInput in;
    in.qm = c.qm;
    in.code_rate = c.r1024 / 1024.0;
    in.layers = c.layers;
    in.n_prb = c.n_prb;
    in.n_symb_sh = c.n_symb;
    in.n_dmrs_prb = c.n_dmrs;
    in.n_oh_prb = c.n_oh;
    in.scaling = c.s;
    EXPECT_EQ(transport_block_size(in), c.tbs)
        << c.n_symb << " " << c.n_dmrs << " " << c.n_oh << " " << c.qm << " " << c.r1024 << " "
        << c.layers << " " << c.s << " " << c.n_prb;
  }
}

TEST(Tbs, EveryTbsSegmentsAndGrowsWithPrbs) {
  // For every MCS, layers, a set of allocations and all PRB counts: a small TBS is an entry
  // of Table 5.1.3.2-1; a large one satisfies TBS + 24 = 0 mod 8C with C the code blocks of
  // TS 38.212 §5.2.2 under the base graph of §7.2.2 (ldpc::segment, which throws otherwise);
  // TBS does not decrease with n_PRB.
  const auto small = small_tbs_table();
  ASSERT_EQ(small.size(), 93u);
  ASSERT_TRUE(std::is_sorted(small.begin(), small.end()));
  struct Alloc {
    int n_symb, n_dmrs, n_oh;
  };
  const Alloc allocs[] = {{14, 12, 0}, {12, 24, 6}, {7, 8, 0}, {4, 6, 18}};
  int checked = 0;
  for (McsTable t : {McsTable::qam64, McsTable::qam256, McsTable::qam64_low_se}) {
    for (int m = 0; m <= max_mcs(t); ++m) {
      for (int v = 1; v <= 4; ++v) {
        for (const Alloc& a : allocs) {
          int previous = 0;
          for (int n_prb = 1; n_prb <= 273; ++n_prb) {
            const TbsInput in = tbs_input(t, m, v, n_prb, a.n_symb, a.n_dmrs, a.n_oh);
            const TbsSteps s = tbs_steps(in);
            ASSERT_GE(s.tbs, previous) << int(t) << " " << m << " " << v << " " << n_prb;
            previous = s.tbs;
            if (s.n_info <= 3824.0) {
              ASSERT_TRUE(std::binary_search(small.begin(), small.end(), s.tbs));
            } else {
              ASSERT_EQ((s.tbs + 24) % (8 * s.c), 0);
            }
            const ldpc::Segmentation seg =
                ldpc::segment(s.tbs, ldpc::select_base_graph(s.tbs, in.code_rate));
            ASSERT_EQ(seg.c, s.c) << int(t) << " " << m << " " << v << " " << n_prb;
            ++checked;
          }
        }
      }
    }
  }
  EXPECT_GT(checked, 100000);
}

TEST(Tbs, RejectsIllegalInputs) {
  const TbsInput ok = tbs_input(McsTable::qam64, 10, 1, 10, 14, 12);
  EXPECT_NO_THROW(tbs_steps(ok));
  auto with = [&](auto change) {
    TbsInput in = ok;
    change(in);
    return in;
  };
  EXPECT_THROW(tbs_steps(with([](TbsInput& i) { i.qm = 3; })), InvalidArgument);
  EXPECT_THROW(tbs_steps(with([](TbsInput& i) { i.code_rate = 1.0; })), InvalidArgument);
  EXPECT_THROW(tbs_steps(with([](TbsInput& i) { i.layers = 5; })), InvalidArgument);
  EXPECT_THROW(tbs_steps(with([](TbsInput& i) { i.n_prb = 274; })), InvalidArgument);
  EXPECT_THROW(tbs_steps(with([](TbsInput& i) { i.n_symb_sh = 15; })), InvalidArgument);
  EXPECT_THROW(tbs_steps(with([](TbsInput& i) { i.n_oh_prb = 5; })), InvalidArgument);
  EXPECT_THROW(tbs_steps(with([](TbsInput& i) { i.scaling = 0.3; })), InvalidArgument);
  EXPECT_THROW(tbs_steps(with([](TbsInput& i) { i.n_dmrs_prb = 168; })), InvalidArgument);
  EXPECT_THROW(tbs_input(McsTable::qam64, 29, 1, 10, 14, 12), InvalidArgument);
  EXPECT_THROW(tbs_input(McsTable::qam256, 28, 1, 10, 14, 12), InvalidArgument);
}

}  // namespace
}  // namespace mimorx::nr

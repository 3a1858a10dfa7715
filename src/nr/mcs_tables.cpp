// TS 38.214 V17.x §5.1.3.1, Tables 5.1.3.1-1, 5.1.3.1-2 and 5.1.3.1-3 (unchanged since
// Release 15). Each row: Qm, target code rate R x 1024 (x2 here, to keep 682.5 and 916.5
// exact), spectral efficiency as printed; reserved rows carry Qm only.
#include <array>
#include <string>

#include "mimorx/core/error.hpp"
#include "mimorx/nr/mcs.hpp"

namespace mimorx::nr {
namespace {

struct Row {
  int qm;
  int rate_x2048;
  double se;
};
using Table = std::array<Row, kMcsIndices>;

// Table 5.1.3.1-1: MCS index table 1 for PDSCH (up to 64QAM). Indices 29..31 reserved.
constexpr Table kTable1 = {
    {{2, 240, 0.2344},  {2, 314, 0.3066},  {2, 386, 0.3770},  {2, 502, 0.4902},  {2, 616, 0.6016},
     {2, 758, 0.7402},  {2, 898, 0.8770},  {2, 1052, 1.0273}, {2, 1204, 1.1758}, {2, 1358, 1.3262},
     {4, 680, 1.3281},  {4, 756, 1.4766},  {4, 868, 1.6953},  {4, 980, 1.9141},  {4, 1106, 2.1602},
     {4, 1232, 2.4063}, {4, 1316, 2.5703}, {6, 876, 2.5664},  {6, 932, 2.7305},  {6, 1034, 3.0293},
     {6, 1134, 3.3223}, {6, 1232, 3.6094}, {6, 1332, 3.9023}, {6, 1438, 4.2129}, {6, 1544, 4.5234},
     {6, 1644, 4.8164}, {6, 1746, 5.1152}, {6, 1820, 5.3320}, {6, 1896, 5.5547}, {2, 0, 0.0},
     {4, 0, 0.0},       {6, 0, 0.0}}};

// Table 5.1.3.1-2: MCS index table 2 for PDSCH (up to 256QAM). Indices 28..31 reserved.
constexpr Table kTable2 = {
    {{2, 240, 0.2344},  {2, 386, 0.3770},  {2, 616, 0.6016},  {2, 898, 0.8770},  {2, 1204, 1.1758},
     {4, 756, 1.4766},  {4, 868, 1.6953},  {4, 980, 1.9141},  {4, 1106, 2.1602}, {4, 1232, 2.4063},
     {4, 1316, 2.5703}, {6, 932, 2.7305},  {6, 1034, 3.0293}, {6, 1134, 3.3223}, {6, 1232, 3.6094},
     {6, 1332, 3.9023}, {6, 1438, 4.2129}, {6, 1544, 4.5234}, {6, 1644, 4.8164}, {6, 1746, 5.1152},
     {8, 1365, 5.3320}, {8, 1422, 5.5547}, {8, 1508, 5.8906}, {8, 1594, 6.2266}, {8, 1682, 6.5703},
     {8, 1770, 6.9141}, {8, 1833, 7.1602}, {8, 1896, 7.4063}, {2, 0, 0.0},       {4, 0, 0.0},
     {6, 0, 0.0},       {8, 0, 0.0}}};

// Table 5.1.3.1-3: MCS index table 3 for PDSCH (low spectral efficiency). Indices 29..31
// reserved.
constexpr Table kTable3 = {
    {{2, 60, 0.0586},   {2, 80, 0.0781},   {2, 100, 0.0977},  {2, 128, 0.1250},  {2, 156, 0.1523},
     {2, 198, 0.1934},  {2, 240, 0.2344},  {2, 314, 0.3066},  {2, 386, 0.3770},  {2, 502, 0.4902},
     {2, 616, 0.6016},  {2, 758, 0.7402},  {2, 898, 0.8770},  {2, 1052, 1.0273}, {2, 1204, 1.1758},
     {4, 680, 1.3281},  {4, 756, 1.4766},  {4, 868, 1.6953},  {4, 980, 1.9141},  {4, 1106, 2.1602},
     {4, 1232, 2.4063}, {6, 876, 2.5664},  {6, 932, 2.7305},  {6, 1034, 3.0293}, {6, 1134, 3.3223},
     {6, 1232, 3.6094}, {6, 1332, 3.9023}, {6, 1438, 4.2129}, {6, 1544, 4.5234}, {2, 0, 0.0},
     {4, 0, 0.0},       {6, 0, 0.0}}};

const Table& table_of(McsTable table) {
  switch (table) {
    case McsTable::qam64:
      return kTable1;
    case McsTable::qam256:
      return kTable2;
    case McsTable::qam64_low_se:
      return kTable3;
  }
  throw InvalidArgument("mcs_table: " + std::to_string(int(table)) + "; allowed 1, 2 or 3");
}

}  // namespace

McsEntry mcs_entry(McsTable table, int mcs) {
  const Table& t = table_of(table);
  require(mcs >= 0 && mcs < kMcsIndices, "mcs", std::to_string(mcs) + "; allowed 0..31");
  const Row& r = t[mcs];
  return McsEntry{r.qm, r.rate_x2048, r.se, r.rate_x2048 == 0};
}

int max_mcs(McsTable table) {
  table_of(table);  // validates
  return table == McsTable::qam256 ? 27 : 28;
}

McsTable parse_mcs_table(std::string_view text) {
  if (text == "qam64" || text == "1") return McsTable::qam64;
  if (text == "qam256" || text == "2") return McsTable::qam256;
  if (text == "qam64lowse" || text == "3") return McsTable::qam64_low_se;
  throw InvalidArgument("mcs_table: '" + std::string(text) +
                        "'; allowed qam64 (1), qam256 (2), qam64lowse (3)");
}

std::string to_string(McsTable table) {
  switch (table) {
    case McsTable::qam64:
      return "qam64";
    case McsTable::qam256:
      return "qam256";
    case McsTable::qam64_low_se:
      return "qam64lowse";
  }
  return "mcs_table(" + std::to_string(int(table)) + ")";
}

}  // namespace mimorx::nr

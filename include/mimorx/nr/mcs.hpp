#pragma once
// MCS index tables of TS 38.214 §5.1.3.1 for PDSCH, also used by PUSCH without transform
// precoding (§6.1.4.1): Table 5.1.3.1-1 (64QAM), 5.1.3.1-2 (256QAM), 5.1.3.1-3 (low SE).
#include <string>
#include <string_view>

namespace mimorx::nr {

enum class McsTable : int { qam64 = 1, qam256 = 2, qam64_low_se = 3 };

struct McsEntry {
  int qm = 0;          // modulation order Qm (bits per symbol): 2, 4, 6 or 8
  int rate_x2048 = 0;  // target code rate R x 2048 (exact: two rows are 682.5 and 916.5 / 1024)
  double spectral_efficiency = 0.0;  // Qm R as printed in the table (4 decimals)
  // Reserved rows (the last 3 or 4 indices) carry only Qm; R and the TBS come from the
  // initial transmission. rate_x2048 and spectral_efficiency are 0 there.
  bool reserved = false;

  double code_rate() const { return rate_x2048 / 2048.0; }
  double rate_x1024() const { return rate_x2048 / 2.0; }
};

constexpr int kMcsIndices = 32;  // I_MCS in 0..31 (5 bits)

// Throws InvalidArgument for an index outside 0..31 or a table that is not 1, 2 or 3.
McsEntry mcs_entry(McsTable table, int mcs);
// Highest index with a target code rate: 28 (tables 1 and 3) or 27 (table 2).
int max_mcs(McsTable table);

// "qam64" | "qam256" | "qam64lowse" | "1" | "2" | "3"; throws InvalidArgument otherwise.
McsTable parse_mcs_table(std::string_view text);
std::string to_string(McsTable table);

}  // namespace mimorx::nr

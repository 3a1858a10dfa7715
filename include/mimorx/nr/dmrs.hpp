#pragma once
// DM-RS of PUSCH without transform precoding (TS 38.211 §6.4.1.1) and of PDSCH (§7.4.1.1),
// single-symbol, mapping type A: symbol positions, antenna-port parameters, sequence.
#include <cstdint>
#include <vector>

#include "mimorx/core/complex.hpp"

namespace mimorx::nr {

enum class SharedChannel { pusch, pdsch };
enum class DmrsType : int { type1 = 1, type2 = 2 };

// One row of Tables 6.4.1.1.3-1/-2 (PUSCH ports 0..) and 7.4.1.1.2-1/-2 (PDSCH ports 1000..),
// which agree row by row; `port` here is the row index p (PDSCH port 1000 + p).
struct DmrsPort {
  int cdm_group;  // lambda
  int delta;      // Delta: subcarrier offset of the CDM group
  int w_f[2];     // frequency OCC over k' = 0, 1
  int w_t[2];     // time OCC over l' = 0, 1 (single-symbol DM-RS uses l' = 0 only)
};

// Ports 0..7 (type 1) or 0..11 (type 2); InvalidArgument otherwise.
DmrsPort dmrs_port(DmrsType type, int port);
// CDM groups of a configuration type: 2 (type 1) or 3 (type 2).
int dmrs_cdm_groups(DmrsType type);
// REs of one CDM group in one PRB and one DM-RS symbol: 6 (type 1) or 4 (type 2).
int dmrs_re_per_group(DmrsType type);
// Whether subcarrier k (counted from CRB 0) belongs to CDM group `group` in a DM-RS symbol:
// k mod 2 == group (type 1), k mod 6 in {2 group, 2 group + 1} (type 2).
bool in_cdm_group(DmrsType type, int group, int k);

// DM-RS symbols l (in the slot, ascending) for mapping type A and single-symbol DM-RS:
// Table 6.4.1.1.3-3 (PUSCH) or 7.4.1.1.2-3 (PDSCH) at l_d = start + duration, the symbols from
// the start of the slot to the end of the allocation, l0 = type_a_position. Throws
// InvalidArgument for a duration the table leaves empty (PUSCH l_d < 4, PDSCH l_d < 3).
std::vector<int> dmrs_symbols(SharedChannel channel, int type_a_position, int additional_position,
                              int l_d);

// c_init of §6.4.1.1.1.1 / §7.4.1.1.1 for CDM groups 0 and 1 (the term 2^17 floor(lambda/2) of
// CDM group 2 is absent), without dmrs-Uplink-r16 / dmrs-Downlink-r16:
// (2^17 (14 n_s + l + 1)(2 N_ID + 1) + 2 N_ID + n_SCID) mod 2^31.
std::uint32_t dmrs_c_init(int slot, int symbol, int n_id, int n_scid);
// r(m) = ((1 - 2 c(2m)) + j (1 - 2 c(2m + 1))) / sqrt(2), m = 0 .. length - 1.
std::vector<cf32> dmrs_sequence(std::uint32_t c_init, int length);

}  // namespace mimorx::nr

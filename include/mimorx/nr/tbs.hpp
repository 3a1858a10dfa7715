#pragma once
// Transport block size determination of TS 38.214 §5.1.3.2 (PDSCH; §6.1.4.2 for PUSCH refers
// to it) for one codeword of up to 4 layers.
#include <cstdint>
#include <span>

#include "mimorx/nr/mcs.hpp"

namespace mimorx::nr {

struct TbsInput {
  int qm = 2;              // modulation order: 2, 4, 6 or 8
  double code_rate = 0.5;  // target code rate R in (0, 1); McsEntry::code_rate() is exact
  int layers = 1;          // v, 1..4
  int n_prb = 1;           // n_PRB, 1..273
  int n_symb_sh = 14;      // N_symb^sh: symbols of the allocation in the slot, 1..14
  int n_dmrs_prb = 12;     // N_DMRS^PRB: DM-RS REs per PRB in the allocation, incl. the REs
                           // of CDM groups without data (SlotPlan::dmrs_re_per_prb())
  int n_oh_prb = 0;        // N_oh^PRB (xOverhead): 0, 6, 12 or 18
  double scaling = 1.0;    // S of Table 5.1.3.2-2: 1, 0.5 or 0.25
};

// The quantities of the procedure, in its order, for reporting and checking.
struct TbsSteps {
  int n_re_prime = 0;             // N'_RE = 12 N_symb^sh - N_DMRS^PRB - N_oh^PRB
  int n_re = 0;                   // N_RE = min(156, N'_RE) n_PRB
  double n_info = 0.0;            // N_info = S N_RE R Qm v
  int n = 0;                      // the quantisation exponent of step 3 or 4
  std::int64_t n_info_prime = 0;  // N'_info
  int c = 1;                      // C of step 4 (1 in step 3)
  int tbs = 0;
};

// Throws InvalidArgument for a field outside its range or N'_RE <= 0.
TbsSteps tbs_steps(const TbsInput& in);
inline int transport_block_size(const TbsInput& in) { return tbs_steps(in).tbs; }

// TbsInput with Qm and R from an MCS table row (throws InvalidArgument for a reserved row:
// a retransmission reuses the TBS of the initial transmission).
TbsInput tbs_input(McsTable table, int mcs, int layers, int n_prb, int n_symb_sh, int n_dmrs_prb,
                   int n_oh_prb = 0);

// Table 5.1.3.2-1: the 93 TBS values for N_info <= 3824, ascending.
std::span<const int> small_tbs_table();

}  // namespace mimorx::nr

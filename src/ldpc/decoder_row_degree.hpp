#pragma once
// Dispatch on a row's degree for the row updates of the paired kernels (decoder_pair.hpp,
// decoder_half.hpp, decoder_half_records.cuh): their fixed-degree versions keep a row's values
// in registers, which needs the degree at compile time.
#include <type_traits>

#include "mimorx/core/hd.hpp"

namespace mimorx::ldpc::detail {

// TS 38.212's row degrees: 3..10 (BG2, BG1 rows >= 4) and 19 (BG1 rows 0-3). Calls
// fixed(std::integral_constant<int, D>{}) for D = 3..10, and for 19 where LONG_FIXED;
// other() for every other degree (and 19 without LONG_FIXED).
template <bool LONG_FIXED, class Fixed, class Other>
MIMORX_HD void with_row_degree(int deg, Fixed&& fixed, Other&& other) {
  switch (deg) {
    case 3:
      return fixed(std::integral_constant<int, 3>{});
    case 4:
      return fixed(std::integral_constant<int, 4>{});
    case 5:
      return fixed(std::integral_constant<int, 5>{});
    case 6:
      return fixed(std::integral_constant<int, 6>{});
    case 7:
      return fixed(std::integral_constant<int, 7>{});
    case 8:
      return fixed(std::integral_constant<int, 8>{});
    case 9:
      return fixed(std::integral_constant<int, 9>{});
    case 10:
      return fixed(std::integral_constant<int, 10>{});
    case 19:
      if constexpr (LONG_FIXED) return fixed(std::integral_constant<int, 19>{});
      [[fallthrough]];
    default:
      return other();
  }
}

}  // namespace mimorx::ldpc::detail

#pragma once
// Layer mapping of one codeword (TS 38.211 §6.3.1.3 / §7.3.1.3, Tables 6.3.1.3-1 / 7.3.1.3-1):
// x^(j)(i) = d(v i + j) for layer j of v, i = 0 .. M/v - 1.
#include <span>
#include <vector>

#include "mimorx/core/complex.hpp"

namespace mimorx::nr {

// Layer-major output: out[j * (M / v) + i] = d[v * i + j]. Throws InvalidArgument for v outside
// 1..4 or M not a multiple of v.
std::vector<cf32> map_to_layers(std::span<const cf32> d, int layers);
// The inverse: d[v * i + j] = x[j * (M / v) + i].
std::vector<cf32> demap_layers(std::span<const cf32> x, int layers);

}  // namespace mimorx::nr

#pragma once
// The LDPC decoder's parameters as the report headers of `ldpc ber` and `sim --ldpc` print them:
// "alpha=0.75" or "alpha=0.5->0.875" for nms, "beta=0.5" for oms, nothing for bp; " int8" after
// them on the integer path, " f16x2" on the half-precision one.
#include <fmt/format.h>

#include <string>

namespace mimorx::cli {

inline std::string decoder_params(const std::string& algo, float alpha, float alpha_last,
                                  float beta, bool int8, bool half = false) {
  const std::string arith = int8 ? " int8" : (half ? " f16x2" : "");
  if (algo == "oms") return fmt::format("beta={}", beta) + arith;
  if (algo != "nms") return "";
  return (alpha_last != 0.f ? fmt::format("alpha={}->{}", alpha, alpha_last)
                            : fmt::format("alpha={}", alpha)) +
         arith;
}

}  // namespace mimorx::cli

#pragma once
// The LDPC decoder's parameters as the report headers of `ldpc ber` and `sim --ldpc` print them:
// "alpha=0.75" or "alpha=0.5->0.875" for nms, "beta=0.5" for oms, nothing for bp; " int8" after
// them on the integer path, " f16x2" on the half-precision one.
#include <fmt/format.h>

#include <string>

#include "mimorx/core/error.hpp"
#include "mimorx/ldpc/decoder.hpp"

namespace mimorx::cli {

// The decoder arithmetic of --int8 / --half for `algo`, refusing the combinations that have no
// decoder (one line naming the flag).
inline ldpc::DecoderArithmetic decoder_arithmetic(ldpc::DecoderAlgo algo, bool int8, bool half) {
  require(!(int8 && algo == ldpc::DecoderAlgo::bp), "int8",
          "bp has no integer form; use --decoder nms or oms with --int8");
  require(!(int8 && half), "half",
          "--half and --int8 choose different decoder arithmetics; give one");
  require(!(half && algo == ldpc::DecoderAlgo::bp), "half",
          "bp has no half-precision form; use --decoder nms or oms with --half");
  return half ? ldpc::DecoderArithmetic::half : ldpc::DecoderArithmetic::automatic;
}

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

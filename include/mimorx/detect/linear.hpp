#pragma once
// Linear MIMO detectors: zero forcing (ZF) and linear MMSE, hard or soft (max-log) output,
// batched on the CPU (OpenMP over channels) or a GPU (one thread per channel for the
// equaliser, one thread per received vector for equalisation and demapping).
//
//   ZF:   W = (H^H H)^-1 H^H,            x~ = W y, noise of stream k: N0 [(H^H H)^-1]_kk
//   MMSE: W = (H^H H + N0 I)^-1 H^H,     x^ = W y, mu_k = (W H)_kk = 1 - N0 [(H^H H + N0 I)^-1]_kk
//         unbiased x~_k = x^_k / mu_k, effective noise variance 1/SINR_k = (1 - mu_k) / mu_k
// Soft output: each stream is demapped alone by scalar max-log (modem/demap.hpp maxlog_llrs)
// of x~_k with noise variance sigma_k^2 above; hard output: the nearest point of x~_k.
//
// Both equalisers come from one QR (linalg/qr_math.hpp, modified Gram-Schmidt): ZF of H = Q R,
// MMSE of the extended [H; sqrt(N0) I] = [Q1; Q2] R, then W = R^-1 Q1^H and
// [(.)^-1]_kk = ||row k of R^-1||^2, which avoids squaring the condition number in H^H H.
//
// Near-singular channels (ZF of a rank-deficient H, or MMSE with N0 vanishing against H): a
// pivot r_kk below 64 eps * max_j ||h_j|| is raised to that value. The affected streams get a
// huge noise variance, so their LLRs are ~0 and their hard bits arbitrary; nothing becomes NaN
// or Inf. Estimates are clipped to |Re|, |Im| <= 64 and noise variances to >= 1e-30 before
// demapping so that LLRs stay finite. See docs/linear.md.
#include <cstdint>

#include "mimorx/core/backend.hpp"
#include "mimorx/core/buffer.hpp"
#include "mimorx/detect/common.hpp"

namespace mimorx::detect {

enum class LinearKind { zf, mmse };

struct LinearConfig {
  MimoShape shape;
  LinearKind kind = LinearKind::mmse;
  bool soft = false;  // also write max-log LLRs
  // Check device inputs for NaN/Inf with a kernel (synchronises); benchmarks turn it off.
  bool check_device_values = true;
};

class LinearPlan {
 public:
  // Throws InvalidArgument for ZF with nt > nr (naming nt and nr) and for shapes validate()
  // rejects; Unsupported for CUDA in a build without it.
  LinearPlan(const LinearConfig& config, Backend backend);
  LinearPlan(LinearPlan&&) noexcept;
  LinearPlan& operator=(LinearPlan&&) noexcept;
  ~LinearPlan();

  // bits: V * nt * m hard decisions (may be empty when soft); llrs: V * nt * m max-log LLRs
  // when soft (ignored otherwise). Layouts as in detect/common.hpp. On the GPU the call is
  // asynchronous on `stream` except for the input check (check_device_values).
  void run(const DetectInput& in, View<std::uint8_t> bits, View<float> llrs,
           const Stream& stream = Stream{});

  const LinearConfig& config() const { return cfg_; }

 private:
  LinearConfig cfg_;
  Backend backend_;
  Buffer<cf32> w_;   // GPU: per slot nt x nr equaliser (rows scaled by 1/mu for MMSE)
  Buffer<float> d_;  // GPU: per slot nt noise terms
};

}  // namespace mimorx::detect

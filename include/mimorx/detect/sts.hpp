#pragma once
// Exact max-log soft-output MIMO detection by one tree search: the single tree search (STS)
// soft-output sphere decoder of Studer, Burg and Boelcskei, "Soft-output sphere decoding:
// algorithms and VLSI implementation", IEEE JSAC 26(2), 2008.
//
// Per received vector it returns the ML decision x_ML = argmin_x ||y - H x||^2 and, for every
// bit k, the max-log LLR
//   LLR_k = (min_{x: b_k = 1} ||y - Hx||^2 - min_{x: b_k = 0} ||y - Hx||^2) / N0 (positive = 0),
// the same quantity as MlPlan with soft = true, from one depth-first Schnorr-Euchner search of
// the real-valued tree (sphere.hpp's model and sorted QR) that keeps the ML metric and one
// counter-hypothesis metric per bit and prunes a subtree only when none of its leaves can lower
// any of them (docs/sts.md). Supported: 1 <= nt <= 8, nt <= nr <= 64, BPSK to 256-QAM.
//
// With clip = L > 0 the counter-hypothesis metrics are capped at the ML metric + L N0 during the
// search (the paper's LLR clipping): every |LLR| <= L, and an LLR with |LLR| < L is exact.
// CPU and CUDA backends give the same bits, LLRs and SearchStats bit for bit (docs/sts.md, "GPU
// mapping").
#include <cstdint>
#include <memory>

#include "mimorx/core/backend.hpp"
#include "mimorx/core/tensor.hpp"
#include "mimorx/detect/common.hpp"
#include "mimorx/detect/sphere.hpp"

namespace mimorx::detect {

// refill: one wave of resident threads, each taking the next vector from a queue when its search
// ends (keeps a warp's lanes busy while its longest search runs); one_per_vector: a thread per
// vector, run to completion (less overhead per vector); automatic: refill for exact searches
// (clip = 0: hundreds of nodes a vector, a long tail), one_per_vector with clipping (docs/sts.md).
enum class StsSchedule { automatic, refill, one_per_vector };

struct StsConfig {
  MimoShape shape;
  float clip = 0.f;           // LLR clipping L in LLR units, finite, >= 0; 0 = none (exact)
  std::int64_t node_cap = 0;  // 0: no cap; else stop a vector's search after this many nodes
                              // once a leaf is known (flagged in SearchStats::capped)
  // |LLR| given to a bit whose counter-hypothesis a capped search never reached (clip instead
  // when clip > 0); finite, > 0. Unused when node_cap = 0.
  float capped_llr = 32.f;
  bool sorted_qr = true;  // SQRD column order (sphere.hpp); false: the natural order
  // CUDA: how the search kernel assigns vectors to threads (same results either way).
  StsSchedule schedule = StsSchedule::automatic;
  // CUDA: check device inputs for NaN/Inf (detect::validate; a synchronising kernel).
  bool check_device_values = true;
};

// SearchStats per vector (sphere.hpp): nodes = partial distances evaluated (leaves included),
// leaves = leaves that lowered the ML metric or a counter-hypothesis metric, radius_updates =
// times the ML hypothesis changed, capped = 1 when the node cap stopped the search: the LLRs of
// such a vector are bounds from the leaves found so far, not exact max-log values.
class StsPlan {
 public:
  // Throws InvalidArgument for a bad config, Unsupported for a CUDA backend in a build without
  // CUDA. On CUDA, run() is asynchronous on `stream` apart from the input check
  // (check_device_values); the device workspace is kept between calls.
  StsPlan(const StsConfig& config, Backend backend);
  ~StsPlan();
  StsPlan(StsPlan&&) noexcept;
  StsPlan& operator=(StsPlan&&) noexcept;
  StsPlan(const StsPlan&) = delete;
  StsPlan& operator=(const StsPlan&) = delete;

  // Validates with detect::validate. bits: V * nt * m, the ML decision (required). llrs:
  // V * nt * m max-log LLRs, or empty (hard output). stats: V or empty. Layout as in
  // detect/common.hpp.
  void run(const DetectInput& in, View<std::uint8_t> bits, View<float> llrs,
           View<SearchStats> stats = {}, const Stream& stream = {});

  const StsConfig& config() const { return cfg_; }
  const Backend& backend() const { return backend_; }

 private:
  void run_cuda(const DetectInput& in, View<std::uint8_t> bits, View<float> llrs,
                View<SearchStats> stats, const Stream& stream);
  struct Workspace;
  StsConfig cfg_;
  Backend backend_;
  std::unique_ptr<Workspace> ws_;
};

}  // namespace mimorx::detect

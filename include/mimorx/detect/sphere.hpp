#pragma once
// Exact maximum-likelihood MIMO detection by tree search on the real-valued model.
//
//   CPU:  depth-first Schnorr-Euchner sphere decoder (zig-zag enumeration around the Babai
//         point of every level, radius shrunk on every leaf), OpenMP over received vectors.
//   CUDA: the Parallel Sphere Detector of Jozsa et al., "New Parallel Sphere Detector
//         algorithm providing high-throughput for optimal MIMO detection", ICCS 2013:
//         breadth-first expansion on a few chosen levels, depth-first between them, one team of
//         threads per received vector (docs/psd.md says what changed from the paper); or, the
//         default, one lane per vector searching depth-first (SphereConfig::lanes).
//
// Both return the decision x minimising ||y - H x||^2 over the whole constellation (ties may
// pick either point) unless a node cap stops the search early; such vectors are flagged in
// SearchStats::capped and never reported as exact.
//
// Real-valued model: square QAM splits into 2 nt real PAM symbols with sqrt(M) levels each;
// BPSK x = a (1+j)/sqrt(2), a = +-1, is rotated into nt real symbols by G = H (1+j)/sqrt(2),
// stacked as [Re G; Im G]. nr > nt is reduced by the QR decomposition (the residual outside the
// column space is a constant). Supported: 1 <= nt <= 8 (real dimension <= 16), nr >= nt,
// BPSK to 256-QAM.
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "mimorx/core/backend.hpp"
#include "mimorx/core/buffer.hpp"
#include "mimorx/core/tensor.hpp"
#include "mimorx/detect/common.hpp"

namespace mimorx::detect {

// The PSD's expert parameters (the paper's lvl_x and paths_lvl_x). Tree levels are counted on
// the real-valued tree from n (the first symbol detected, n = 2 nt, or nt for BPSK) down to 1
// (the leaves); the root sits at level n + 1.
//   lvl:   levels where nodes are expanded, strictly decreasing, each in [1, n], the last one 1.
//   paths: for each entry of lvl, how many of the best (sorted) partial paths of that level are
//          expanded together into the next one; the last entry (the leaf level) is not used but
//          must still be >= 1.
// Expanded nodes per level: exp_x = paths_{x-1} * Q^(lvl_{x-1} - lvl_x), with lvl_0 = n + 1,
// paths_0 = 1 and Q = sqrt(M) (2 for BPSK). Every level but the last keeps exp_x entries in
// shared memory; exp_x <= 512 for those.
struct PsdLevels {
  std::vector<int> lvl;
  std::vector<int> paths;
};

struct SphereConfig {
  MimoShape shape;
  std::optional<PsdLevels> levels;    // empty: chosen per (nt, nr, modulation, GPU)
  std::int64_t node_cap = 0;          // 0: no cap; else stop a vector's search after this many
                                      // nodes once a leaf is known (flagged in SearchStats)
  bool babai_initial_radius = false;  // start from the Babai (SIC) point's metric, not infinity
  // CUDA threads per received vector: 1 = one lane runs the depth-first search (the PSD with an
  // expansion on every level and one path; `levels` must then be empty), 8, 16 or 32 = a team
  // runs the breadth/depth-first PSD on `levels`; 0 = automatic (1, except a team when `levels`
  // is given and for 64/256-QAM with nt >= 4; docs/psd.md). Ignored on the CPU.
  int lanes = 0;
};

// Per received vector. nodes: tree nodes whose partial Euclidean distance was evaluated
// (leaves included); leaves: complete candidate vectors evaluated; radius_updates: times the
// radius shrank (the first leaf counts); capped: 1 when the node cap stopped the search, in
// which case the decision is the best leaf found so far and may not be the ML point.
struct SearchStats {
  std::int64_t nodes = 0;
  std::int32_t leaves = 0;
  std::int32_t radius_updates = 0;
  std::uint8_t capped = 0;
};

// Throws InvalidArgument naming the bad value when `p` is not a valid parameter set for a real
// tree of dimension n with q branches per level and `shared_limit_bytes` of shared memory per
// block. Used by SpherePlan; public so that callers (CLI) can check user input early.
void validate_psd_levels(const PsdLevels& p, int n, int q, std::size_t shared_limit_bytes);

// The automatic choice (docs/psd.md): depends on the shape and the GPU's shared memory.
PsdLevels choose_psd_levels(const MimoShape& shape, std::size_t shared_limit_bytes);

// Shared memory one PSD team (the threads serving one received vector) uses for valid
// parameters of a tree of dimension n with q branches per level.
std::size_t psd_team_shared_bytes(const PsdLevels& p, int n, int q);

class SpherePlan {
 public:
  SpherePlan(const SphereConfig& cfg, Backend backend);
  ~SpherePlan();
  SpherePlan(SpherePlan&&) noexcept;
  SpherePlan& operator=(SpherePlan&&) noexcept;
  SpherePlan(const SpherePlan&) = delete;
  SpherePlan& operator=(const SpherePlan&) = delete;

  // bits: V * nt * m hard bits (detect/common.hpp layout). metrics (optional, V values):
  // ||y - H x||^2 of the decision. stats (optional, V). symbols (optional, V * nt): the decided
  // constellation points. All on the backend's memory.
  void run(const DetectInput& in, View<std::uint8_t> bits, View<float> metrics = {},
           View<SearchStats> stats = {}, View<cf32> symbols = {}, const Stream& stream = {});

  const PsdLevels& levels() const { return levels_; }
  // CUDA threads per vector this plan uses (1, 8, 16, 32, or 0 = the team kernel at its
  // automatic width).
  int lanes() const { return lanes_; }
  const SphereConfig& config() const { return cfg_; }
  const Backend& backend() const { return backend_; }

 private:
  struct Workspace;
  SphereConfig cfg_;
  Backend backend_;
  PsdLevels levels_;
  int lanes_ = 0;
  std::unique_ptr<Workspace> ws_;
};

}  // namespace mimorx::detect

#pragma once
// Soft-output K-best detector: breadth-first search of the real-valued (MRVD) tree that keeps,
// level by level, the K partial paths of smallest partial distance among the K * sqrt(M)
// children of the kept paths (ties broken by child index, so the list is deterministic).
// Max-log LLRs come from the final list:
//   LLR(b) = clip((min_{list, b=1} d - min_{list, b=0} d) / N0), positive = bit 0,
// and a bit with no counter-hypothesis in the list takes as that minimum the distance of the
// best path with only the real coordinate carrying the bit moved to the nearest level with the
// other value (0 on H = 0; docs/kbest.md).
//
// The QR is the N-way detector's Algorithm 1 (MRVD + modified Gram-Schmidt of [H | y]) with the
// natural column order. Supported: nt in {2, 4, 8}, nt <= nr <= 64, QPSK to 256-QAM;
// 1 <= k with k * sqrt(M) <= 4096 and 2 * k * 2nt <= 16384 (the block's sort and path
// storage in shared memory), on both backends so that results never depend on the backend.
#include "mimorx/core/backend.hpp"
#include "mimorx/core/buffer.hpp"
#include "mimorx/core/tensor.hpp"
#include "mimorx/detect/common.hpp"
#include "mimorx/detect/list_plan.hpp"

namespace mimorx::detect {

struct KbestConfig {
  MimoShape shape;
  int k = 16;            // paths kept per level
  float llr_clip = 8.f;  // finite, > 0
  // Check device inputs for NaN/Inf with a kernel (synchronises); the simulator turns it off.
  bool check_device_values = true;
};

// run / qr / search / candidates as in list_plan.hpp. bits and llrs: V * nt * m. candidates:
// the final list of every vector, sorted by distance, k per vector (distance +inf where the
// tree has fewer than k leaves).
class KbestPlan : public ListDetectorPlan {
 public:
  KbestPlan(const KbestConfig& config, Backend backend);

  const KbestConfig& config() const;
  static int max_k(const MimoShape& shape);  // the largest k this shape allows
};

}  // namespace mimorx::detect

#pragma once
// Soft-output trellis MIMO detector (Wu, Sun, Cavallaro, "Reconfigurable real-time MIMO
// detector on GPU", Rice University / Asilomar 2009).
//
// After the complex QR H = Q R (R upper triangular nt x nt, real diagonal) and y^ = Q^H y, the
// search tree is seen as a trellis with one stage per transmit stream, processed from the last
// row of R upwards (stream nt-1 first), and Q vertices per stage (the constellation points).
// A path's distance is ||y^ - R x||^2 over the rows it has decided. The weight of the edge from
// path k (ending at stage s) to vertex q of stage s+1 (row i) is
//   w_{k,q} = |y^_i - delta_k - R_ii x_q|^2,  delta_k = sum_{j > i} R_ij x_j(path k),
// (the paper's eq. 11-13): delta_k is computed once per path and shared by the two steps below.
//   Edge reduction (Algorithm 2): vertex q keeps the best incoming path, min_k d_k + w_{k,q}.
//   Path extension (Algorithm 1): path k takes its best outgoing edge, argmin_q w_{k,q} (a
//     round-and-clip slice of (y^_i - delta_k) / R_ii per axis).
// List L_t (t = transmit stream): reduce from the first stage down to stream t (Q paths, each
// ending at a different vertex of stream t), then extend each to the last stage: Q full paths,
// path q passing through point q of stream t. The reductions are shared by all lists
// (docs/trellis.md gives the operation count). Max-log LLRs over the union of the nt lists:
//   LLR(b) = clip((min_{b=1} d - min_{b=0} d) / N0),  positive = bit 0,
// a bit without a counter-hypothesis in the union gets +-llr_clip. For nt = 2 the lists are
// exhaustive and the LLRs are exact max-log.
//
// Supported: nt in {2, 4, 8}, nt <= nr <= 64, QPSK, 16-, 64-, 256-QAM (BPSK: Unsupported).
// The QR is linalg's batched complex QR (QrPlan), bit-identical on both backends, and the
// search uses the same arithmetic on both (src/detect/trellis_math.hpp), so the CPU and CUDA
// candidate lists are identical.
#include <cstdint>
#include <memory>

#include "mimorx/core/backend.hpp"
#include "mimorx/core/buffer.hpp"
#include "mimorx/core/tensor.hpp"
#include "mimorx/detect/common.hpp"
#include "mimorx/detect/list_plan.hpp"

namespace mimorx::detect {

struct TrellisConfig {
  MimoShape shape;
  float llr_clip = 8.f;  // |LLR| <= llr_clip; finite and > 0
  // run() scans device inputs for NaN/Inf (a kernel and a synchronisation). Callers that feed
  // generated finite data (the simulator) turn it off so that run() never synchronises.
  bool check_device_values = true;
};

// run / qr / search / candidates as in list_plan.hpp. qr() is the complex QR of every channel
// and y^ = Q^H y of every vector. candidates: the nt lists of every vector, nt * Q per vector,
// at index (v * nt + t) * Q + q for list L_t and its path through constellation point q of
// stream t (Q = constellation size, points numbered as in modulation.hpp).
class TrellisPlan : public ListDetectorPlan {
 public:
  // Validates the config (InvalidArgument / Unsupported naming the value and what is allowed).
  TrellisPlan(const TrellisConfig& config, Backend backend);

  const TrellisConfig& config() const;
  int vertices() const;  // Q, vertices per stage = paths per list
};

}  // namespace mimorx::detect

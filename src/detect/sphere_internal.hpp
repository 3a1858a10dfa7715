#pragma once
// Internal to mimorx_detect_sphere (and its tests/benchmarks): the derived PSD schedule, the
// sequential CPU emulation of the PSD search, and the CUDA entry point.
#include <cstdint>
#include <vector>

#include "detect/sphere_math.hpp"
#include "mimorx/config.hpp"
#include "mimorx/detect/sphere.hpp"

namespace mimorx::detect::sphere {

// The per-level numbers the search needs, derived from validated PsdLevels.
struct PsdSchedule {
  int n = 0, q = 0, log2q = 0;
  int nlev = 0;
  int lvl[kMaxLevels] = {};
  int paths[kMaxLevels] = {};
  int exp[kMaxLevels] = {};  // expanded nodes of level x at most (the paper's exp_lvl_x)
  std::int64_t nodes_per_parent[kMaxLevels] = {};
  std::int64_t children_per_parent[kMaxLevels] = {};
  int buf_off[kMaxLevels] = {};  // byte offset of level x's buffer (uint64 vectors, then
                                 // float metrics) inside a team's buffer area (kernel layout)
  int buf_bytes = 0;             // the whole buffer area
  int capacity = 8;              // sort width: power of two >= every non-leaf exp_x, >= 8
  int tgt_floats = 1;            // the parents' targets of one expansion: max of np * d
};
PsdSchedule make_schedule(const PsdLevels& p, int n, int q);

// Per channel: sorted QR of the real model. q: m x n, r: n x n, inv_perm: n (real column ->
// tree column).
void qr_channel(Modulation mod, const cf32* h, int nr, int nt, float* q, float* r, int* inv_perm);

// The PSD search of one vector run sequentially on the CPU (tests compare it with the SE
// decoder and the brute force; it exercises the level/paths/backtracking logic of the kernel).
// lazy: order the buffers by lazy selection instead of a full sort, as the kernel can.
PsdOutcome psd_search_host(const PsdSchedule& s, const float* r, const float* z, float d2,
                           std::uint64_t best, std::int64_t node_cap, bool lazy = false);

// Depth-first Schnorr-Euchner search of one vector.
PsdOutcome se_search(const float* r, const float* z, int n, int L, float d2, std::uint64_t best,
                     std::int64_t node_cap);

// Benchmark knob: force the CUDA team width (1, 8, 16 or 32 threads per vector); 0 = the plan's
// choice.
void set_team_override(int team);
int team_override();
// Benchmark knob: the register budget of the CUDA kernel as blocks of 128 threads per SM that it
// must allow (0 = default 8; 10 and 12 exist for team/IPT 8/1, 16/1, 32/1, 8/2, 16/2, 32/2).
void set_min_blocks_override(int blocks);
int min_blocks_override();
// Benchmark knobs: which kernels SpherePlan::run launches (bit 0 QR, bit 1 search; 0 = both;
// search alone reuses the workspace's last QR), and the QR kernel (0 = shared memory, 1 = global).
void set_phase_override(int phases);
int phase_override();
void set_qr_mode_override(int mode);
int qr_mode_override();
// Benchmark knob: 1 = the lane kernel takes the channels in their own order instead of hardest
// first (0 = default).
void set_lane_order_override(int mode);
int lane_order_override();
// Benchmark knob: threads per block of the lane kernel (64, 128 or 256; 0 = default).
void set_lane_block_override(int threads);
int lane_block_override();
// Benchmark/test knob: 0 = default, 1 = full sort of every level buffer (the paper), 2 = lazy
// selection of each batch.
void set_order_override(int order);
int order_override();
// The CUDA team width (threads per vector: 1, 8, 16 or 32) for a schedule: `override_width` if
// non-zero, else the automatic choice among the team kernels (docs/psd.md); a team of 8 or 16 is
// widened to 32 where a sorted level holds more than 64 entries (at most 16 per lane, and only
// 32-lane teams have kernels for 8 and 16). 1 is the one-lane depth-first kernel.
int psd_team_width(const PsdSchedule& s, int override_width);
// The lanes per vector SpherePlan uses when SphereConfig::lanes is 0: 1 (the depth-first lane
// kernel), or 0 (the team kernel at its automatic width) for explicit levels and for 64-QAM and
// up with a real dimension >= 8.
int psd_auto_lanes(const MimoShape& shape, bool explicit_levels);

// The default ordering of the CUDA kernel (docs/psd.md, "Parameters": the sort is faster).
inline constexpr bool kDefaultLazySelect = false;

#if MIMORX_HAS_CUDA
struct PsdCudaArgs {
  Modulation mod;
  int nt = 0, nr = 0;
  PsdSchedule sched;
  std::int64_t node_cap = 0;
  bool babai = false;
  std::int64_t channels = 0, vectors = 0;
  int vectors_per_channel = 1;
  const cf32* h = nullptr;
  std::int64_t h_stride = 0;
  const cf32* y = nullptr;
  std::int64_t y_stride = 0;
  float* q = nullptr;       // workspace: channels * m * n
  float* r = nullptr;       // channels * n * n
  int* inv_perm = nullptr;  // channels * n
  int* counter = nullptr;   // one int, the work queue of the persistent teams
  int lane_block = 0;       // lane kernel: threads per block, 64, 128 or 256 (0: default)
  void* lane_ws = nullptr;  // lane kernel: psd_lane_workspace_bytes(channels) bytes, or nullptr
  std::size_t lane_ws_bytes = 0;  // to take the channels in their own order
  std::uint8_t* bits = nullptr;
  float* metrics = nullptr;
  SearchStats* stats = nullptr;
  cf32* symbols = nullptr;
  int device = 0;
  int team_override = 0;     // 0: automatic team width; 1 (lane kernel), 8, 16 or 32
  bool lazy_select = false;  // order the level buffers by lazy selection instead of a sort
  int chunk = 1;             // vectors a team takes from the queue at once (set by the launcher)
  int min_blocks = 0;        // 0: default register budget; 10 or 12 blocks per SM (sweeps)
  int phases = 3;   // bit 0: the QR kernel, bit 1: the search kernel, bit 3: skip the search
                    // itself (benchmark timing)
  int qr_mode = 0;  // 0: QR in shared memory; 1: in global memory (slower; for comparison)
};
void psd_run_cuda(const PsdCudaArgs& a, void* stream);
// The search with one lane per vector (sphere_lane_cuda.cu), after psd_run_cuda's QR.
void psd_run_lanes_cuda(const PsdCudaArgs& a, void* stream);
// Device workspace the lane kernel uses to order the channels hardest first.
std::size_t psd_lane_workspace_bytes(std::int64_t channels);
#endif

}  // namespace mimorx::detect::sphere

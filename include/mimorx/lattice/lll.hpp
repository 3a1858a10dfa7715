#pragma once
// LLL lattice reduction (Lenstra, Lenstra, Lovasz 1982) on the CPU and on CUDA.
//
// Convention: a basis is an n x m matrix B whose COLUMNS b_0..b_{m-1} are the basis vectors
// (n = dimension of the space, m = number of vectors, 1 <= m <= n), column-major as every
// mimorx matrix. fplll writes basis vectors as ROWS; `mimorx lll` transposes on input and output.
// Reduction returns B' and an integer unimodular T (m x m) with B' = B T.
//
// B' is (delta, eta)-LLL reduced when, with B' = Q R (R upper triangular, mu_ij = r_ij / r_ii):
//   size reduction  |mu_ij| <= eta (eta = 1/2 in exact arithmetic) for all i < j,
//   Lovasz          delta r_{k-1,k-1}^2 <= r_{k-1,k}^2 + r_{k,k}^2 for all k,
// delta in [0.25, 1) (default 0.75; complex LLL needs delta in (0.5, 1)).
//
// Methods (docs/lll.md):
//   sequential  textbook LLL in the Schnorr-Euchner floating-point form, one basis at a time
//               (the CPU reference; bases in parallel over OpenMP threads).
//   all_swap    CR-AS-LLL (Jozsa et al., J. Supercomput. 70(2), 2014, Alg. 1/2): parallel size
//               reduction of all columns, then Lovasz tests and swaps of all disjoint pairs of
//               one parity (odd/even phases), GS coefficients updated by Givens rotations and
//               recomputed when precision demands. CUDA: one thread block per basis
//               (warps along the vectors). CPU: OpenMP, bases in parallel and threads within one
//               basis for large m.
//   block       CR-MB-LLL for large bases: the projected diagonal blocks of size l are reduced
//               in parallel by all_swap without touching the rest, the GS coefficients are
//               updated once per pass (GSC-Update), block boundaries alternate between two
//               offsets until a full pass makes no swap.
// A float basis is reduced in float32 arithmetic, a double basis in float64. The vectors are put
// in order of increasing length first (LllConfig::presort), the permutation included in T.
// float32 outputs are checked against the input lattice and repaired where float32 rounding
// moved them off it (LllConfig::lattice_check): against B T, with the caller's T or, without
// it, by solving for T on the CPU and by tracking T internally on CUDA (docs/lll.md).
// Nothing unreduced is ever reported as reduced: every basis ends with a fresh Gram-Schmidt
// recomputation and a Lovasz check in the working precision; a failure is reported as
// LllStatus::precision_loss (or thrown as NumericalError when no status view is given).
#include <complex>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "mimorx/core/backend.hpp"
#include "mimorx/core/buffer.hpp"
#include "mimorx/core/tensor.hpp"

namespace mimorx::lattice {

enum class LllMethod { automatic, sequential, all_swap, block };

enum class LllStatus : std::int32_t {
  reduced = 0,         // passed the final check in the working precision
  not_converged = 1,   // the sweep limit was reached
  precision_loss = 2,  // the recomputed Gram-Schmidt data contradict the reduction
  singular = 3,        // a zero or non-finite Gram-Schmidt norm: dependent vectors or NaN/Inf
};
const char* to_string(LllStatus s);
const char* to_string(LllMethod m);
LllMethod parse_lll_method(const std::string& name);  // "auto", "sequential", "all-swap", "block"

struct LllConfig {
  int n = 0;  // rows (dimension of each vector)
  int m = 0;  // columns (number of basis vectors), 1 <= m <= n
  double delta = 0.75;
  LllMethod method = LllMethod::automatic;
  bool transform = false;  // also compute T with B' = B T
  int block = 0;           // CR-MB-LLL block size l (even, >= 4); 0 = automatic (docs/lll.md)
  int cpu_threads = 0;     // OpenMP threads for the CPU paths and the CPU+GPU scheduler; 0 = all
  long max_sweeps = 0;     // safety bound on sweeps/iterations; 0 = automatic
  // Put the vectors in order of increasing length before reducing (a permutation, included in
  // T). LLL ends in different bases from different input orders, and from the sorted one in
  // markedly shorter ones (Gaussian bases, delta 0.75: orthogonality defect 0.26x at m = 32,
  // 0.12x at m = 64; docs/lll.md). false keeps the input order (the textbook and the paper).
  bool presort = true;
  // float32: check that every reduced B' is still a basis of the input lattice (B' = B T with T
  // integer and unimodular) and rebuild it from B T in float64 where float32 rounding moved it
  // off. Without the caller's T the CPU solves for T (float64 LU) and CUDA tracks T internally
  // (m x m int64 per basis, batches in chunks of ~256 MB; slower, by ~1.7x for batches of 64x64
  // bases and ~1.25x for one 1024x1024 basis: docs/lll.md, "Performance").
  // false skips the check (faster; a float32 result on an ill-conditioned input may then sit
  // off the lattice while passing the LLL conditions). No effect in float64.
  bool lattice_check = true;
  // Size-reduction bound eta of the sequential method. 0.5: every |mu_kj| > 1/2 is reduced.
  // 0.5 < eta < sqrt(delta): fplll's lazy rule (b_k reduced only when some |mu_kj| > eta, then
  // every multiplier rounded; the Lovasz test on mu as it stands), which with fplll's delta and
  // eta (0.99, 0.51) and presort = false takes fplll's path (docs/lll.md). The other methods
  // always reduce to 1/2, which satisfies every eta >= 0.5.
  double eta = 0.5;
};

// Implementation variants of the plan's CUDA paths, for tests and benchmarks: a plan owns one
// (LllPlan's third argument) and passes it down to the kernels' launchers. Every value gives a
// valid reduction; the defaults are the variants measured fastest (docs/lll.md, "Implementation
// variants"), and each other value is what a test compares them with.
struct LllOptions {
  // All-swap, float32 with the lattice check: bases whose rebuilt B T fails the float64 re-check
  // are polished on the device first; false sends them all to the host (same statuses).
  bool device_polish = true;
  // All-swap kernel: the generic kernel even for square 4..64, which have fixed-shape kernels
  // (the same bits).
  bool all_swap_generic_only = false;
  // float32 64x64 kernel with T: unchecked int32 updates of T where its column bounds show they
  // fit; false checks every update (the same bits).
  bool int32_transform_fast_path = true;
  // The float32 lattice check of square 8..64 bases through the fixed-shape one-pass kernels;
  // false through the general product, rebuild and re-check kernels (the same statuses).
  bool square_check_kernel = true;
  // Block method on CUDA: the whole reduction resident on the GPU where its float64 Cholesky
  // factor is accurate; false always uses the host-side CPU+GPU block method.
  bool block_device = true;
  // The GPU-resident block method's start (prologue, copies, first factorisation and check)
  // replayed from a CUDA graph from the second run on; false launches it directly (same bits).
  bool captured_sequences = true;
  // GPU-resident block method: T's products in float64 where every partial sum is exact; false
  // in 128-bit integers only (the same T).
  bool block_t_float64 = true;
  // The block method's and the lattice check's products with their k range split over a
  // thread-block cluster (sm_90); false: one block per output tile (valid; float64 sums may
  // differ in their last bits).
  bool split_k = true;
  // Cholesky factorisations by the persistent lookahead kernel; false by the chain of panel
  // kernels (the same R to rounding).
  bool lookahead_factorisation = true;
  // The head inverse's diagonal blocks before R's last 128 columns inverted beside the first
  // factorisation; false after the start (the same bits).
  bool early_head_inverse = true;
  // A window of at most m / 8 columns refactorised after its block pass; false carries R
  // through the GSC-Update on every window (valid, may take another path).
  bool refactor_small_window = true;
  // That refactorisation enqueued before the host reads the pass's flags; false after
  // (valid).
  bool early_refactorisation = true;
  // That refactorisation keeps the head's block rows the pass left in R (times its U) and skips
  // the head inverse where every window is small; false recomputes them (valid; rounding may
  // differ).
  bool kept_head_rows = true;
  // Blocks of up to 32 columns reduced by one warp a column on R in float64; false by the
  // all-swap kernel on float copies of the blocks (valid, may take another path).
  bool column_warp_blocks = true;
  // The first size reduction's snapshots taken on a stream of their own right after the start;
  // false all before the size reduction (the same bits).
  bool snapshot_ahead = true;
};

// A plan for batches of bases of one shape. run() reduces `basis` in place.
//   basis:     B bases, n x m each (float -> float32 arithmetic, double -> float64)
//   transform: B matrices m x m (int64) when config.transform, else an empty batch
//   status:    B statuses; when empty, run() throws NumericalError if any basis failed
// Residency: host for Backend::cpu(); device for Backend::cuda(). The CUDA block method keeps
// each basis on the GPU for the whole reduction and falls back to the CPU+GPU scheduler (block
// reductions on the GPU, GSC-Update on CPU threads, one CUDA stream each) for bases whose
// float64 Gram-Cholesky factor is not accurate enough (docs/lll.md). The plan keeps its streams
// and GPU workspaces between runs: reuse one plan for many runs, and do not run one plan from
// two threads at once. options: implementation variants (LllOptions; the defaults for any use
// but tests and benchmarks).
class LllPlan {
 public:
  LllPlan(const LllConfig& config, Backend backend, const LllOptions& options = {});
  ~LllPlan();
  LllPlan(LllPlan&&) noexcept;
  LllPlan& operator=(LllPlan&&) noexcept;
  void run(MatrixBatch<double> basis, MatrixBatch<std::int64_t> transform, View<LllStatus> status,
           const Stream& stream = Stream{});
  void run(MatrixBatch<float> basis, MatrixBatch<std::int64_t> transform, View<LllStatus> status,
           const Stream& stream = Stream{});
  const LllConfig& config() const { return cfg_; }
  const LllOptions& options() const { return opt_; }
  LllMethod method() const { return method_; }  // the method chosen for this shape/backend
  int block() const { return block_; }          // l used by the block method
  const Backend& backend() const { return backend_; }

 private:
  template <class F>
  void run_impl(MatrixBatch<F> basis, MatrixBatch<std::int64_t> transform, View<LllStatus> status,
                const Stream& stream);
  LllConfig cfg_;
  LllOptions opt_;
  Backend backend_;
  LllMethod method_;
  int block_ = 0;
  Buffer<std::int32_t> dstatus_;  // per-basis status on the device (CUDA all-swap), reused
  Buffer<unsigned> dcount_;       // CUDA all-swap: how many of a chunk's statuses are not reduced
  Buffer<float> dinput_;          // CUDA all-swap, float32 checked: the inputs, for the rebuild
  Buffer<std::int64_t> dtransform_;  // CUDA all-swap, float32 checked without the caller's T
  struct FailedBases;  // CUDA all-swap, float32 checked: bases that failed the device re-check
  std::unique_ptr<FailedBases> failed_;
  struct BlockWorkers;  // CUDA block method: per-worker streams and workspaces
  std::unique_ptr<BlockWorkers> workers_;
};

// The block size chosen automatically for m columns (measured, docs/lll.md).
int automatic_block(int m);

// ---- Convenience and reference entry points (host memory, one basis) ----

struct LllStats {
  LllStatus status = LllStatus::reduced;
  std::int64_t swaps = 0;
  std::int64_t iterations = 0;
};

// Textbook LLL, Schnorr-Euchner floating-point variant, float64. b: n x m column-major,
// reduced in place; t (m x m, may be null) receives T. eta as LllConfig::eta. Throws
// InvalidArgument on NaN/Inf, dependent vectors, m > n, delta outside [0.25, 1), a bad eta.
LllStats lll_reference(int n, int m, double* b, std::int64_t* t, double delta = 0.75,
                       double eta = 0.5);

// Complex LLL (Gan, Ling, Mow, IEEE TSP 57(7), 2009): the same with complex mu_ij, size
// reduction by rounding to the nearest Gaussian integer (real and imaginary parts separately),
// Lovasz test on |r|^2; delta in (0.5, 1). t (may be null) receives T with Gaussian-integer
// entries stored exactly as doubles. Throws as lll_reference.
LllStats clll_reference(int n, int m, std::complex<double>* b, std::complex<double>* t,
                        double delta = 0.75);

// One host basis through a plan (convenience for the CLI and tests).
struct LllResult {
  std::vector<double> basis;            // n x m, column-major
  std::vector<std::int64_t> transform;  // m x m when requested
  LllStatus status = LllStatus::reduced;
};
// presort: LllConfig::presort (false keeps the textbook's input order); eta: LllConfig::eta.
LllResult lll_reduce(int n, int m, const std::vector<double>& b, double delta = 0.75,
                     bool transform = true, LllMethod method = LllMethod::sequential,
                     bool presort = true, double eta = 0.5);

}  // namespace mimorx::lattice

#pragma once
// Internal entry points of the lattice component (CPU reductions and the CUDA launcher).
#include <array>
#include <cstdint>
#include <functional>
#include <vector>

#include "mimorx/config.hpp"
#include "mimorx/core/buffer.hpp"
#include "mimorx/lattice/lll.hpp"

namespace mimorx::lattice::detail {

// CR-AS-LLL on one host basis (n x m, column-major), in the precision of F, with `threads`
// OpenMP threads inside the basis. t (m x m) may be null.
template <class F>
LllStats all_swap_cpu(int n, int m, F* b, std::int64_t* t, double delta, long max_iter,
                      int threads);

// Reduces a batch of `count` upper-triangular l x l blocks (column-major, stride l*l) in place
// and writes their transforms (stride l*l); returns the number of swaps made in all blocks.
template <class F>
using BlockReducer = std::function<std::int64_t(F* blocks, std::int64_t* transforms,
                                                LllStatus* status, int count, int l)>;

// R (m x m, column-major, upper triangular, zeros below) with B^T B = R^T R in float64 for the
// host basis b (n x m); false when the factorisation fails (the caller falls back to
// Householder QR). Empty: the block method computes it with Eigen on the CPU.
template <class F>
using GramFactor = std::function<bool(const F* b, int n, int m, double* r)>;

// The diagonal blocks of one CR-MB-LLL pass: [0, m) in blocks of l columns, shifted by l/2 on
// odd passes so that the boundary pairs of one pass lie inside blocks of the next (our form of
// the paper's boundary checks): a head block [0, l/2) on odd passes, the full blocks, a tail
// block. Blocks of fewer than 2 columns are left out (count 0). Block c of a group starts at
// start + c * stride. Used by the host and the GPU-resident block methods.
struct BlockGroup {
  int start, stride, count, size;
};
inline std::array<BlockGroup, 3> block_groups(int m, int l, long pass) {
  const int off = (pass & 1) ? l / 2 : 0;
  const int full = (m - off) / l, tail = (m - off) % l;
  return {BlockGroup{0, 0, off >= 2 ? 1 : 0, off}, BlockGroup{off, l, full, l},
          BlockGroup{off + full * l, 0, tail >= 2 ? 1 : 0, tail}};
}

// CR-MB-LLL on one host basis; block reductions are delegated to `reduce`, the float64 R factor
// to `gram` when given.
template <class F>
LllStats block_lll(int n, int m, F* b, std::int64_t* t, double delta, int l, long max_passes,
                   int threads, const BlockReducer<F>& reduce, const GramFactor<F>& gram = {});

long default_max_iter(int m);
// LllConfig::presort on a host basis (src/lattice/presort.cpp): the columns of b (n x m) in the
// order of presort_key, ties in input order; rank[j] receives the new position of input column j.
// F: float, double, or std::complex<double> (the LR-aided detectors' channels).
template <class F>
void presort_columns(int n, int m, F* b, std::int32_t* rank);
// T of the sorted basis -> T of the input basis (m x m): row j becomes row rank[j]. T: int64, or
// std::complex<double> (complex LLL's Gaussian-integer T).
template <class T>
void unsort_transform(int m, T* t, const std::int32_t* rank);

// The Schnorr-Euchner reference on one float64 basis without input checks (status reports
// dependence); t (m x m, may be null) receives T as exact integers in double. eta > 1/2: the
// lazy size reduction of LllConfig::eta.
LllStats se_lll_double(int n, int m, double* b, double* t, double delta, double eta = 0.5);
// Throws InvalidArgument unless eta = 0.5 or 0.5 < eta < sqrt(delta).
void check_eta(double eta, double delta);

#if MIMORX_HAS_CUDA
// CR-AS-LLL kernel launch: one thread block per basis (src/lattice/lll_cuda.cu).
// presort: each basis is first put in presort order inside the kernel (as presort_columns) and
// T starts as that permutation, so B' = B T holds for the basis as given. keep (optional,
// device memory, batch x n x m packed) receives the inputs as given (the float32 lattice check).
// options: all_swap_generic_only, int32_transform_fast_path.
template <class F>
void all_swap_cuda(F* b, std::int64_t* t, std::int32_t* status, std::int64_t batch, int n, int m,
                   std::int64_t stride_b, std::int64_t stride_t, double delta, long max_iter,
                   void* stream, int device, bool presort = false, F* keep = nullptr,
                   const LllOptions& options = {});
// Shared memory one basis needs, and whether the device can give it (the kernel that options
// select).
std::size_t all_swap_cuda_smem(int n, int m, bool transform, bool dbl,
                               const LllOptions& options = {});
bool all_swap_cuda_fits(int n, int m, bool transform, bool dbl, int device,
                        const LllOptions& options = {});

constexpr std::int32_t kStatusRecheck = 100;  // rebuild_from_transform_cuda's host handoff
// out (count x nm, packed) <- the matrices src + idx[c] * stride, and back (idx: device memory;
// count <= 2^31).
void gather_bases_cuda(const float* src, std::int64_t stride, const std::int64_t* idx,
                       std::int64_t count, std::size_t nm, float* out, void* stream, int device);
void gather_bases_cuda(const std::int64_t* src, std::int64_t stride, const std::int64_t* idx,
                       std::int64_t count, std::size_t nm, std::int64_t* out, void* stream,
                       int device);
// *count += how many of status[0..batch) are not LllStatus::reduced (device memory; the caller
// zeroes *count): a batch whose bases all reduced needs no copy of its statuses.
void count_unreduced_cuda(const std::int32_t* status, std::int64_t batch, unsigned* count,
                          void* stream, int device);
void scatter_bases_cuda(const float* in, float* dst, std::int64_t stride, const std::int64_t* idx,
                        std::int64_t count, std::size_t nm, void* stream, int device);
void scatter_bases_cuda(const std::int64_t* in, std::int64_t* dst, std::int64_t stride,
                        const std::int64_t* idx, std::int64_t count, std::size_t nm, void* stream,
                        int device);
// float32 with T: where a reduced basis b is not in (float32 rounding of) in * T, write the
// rounded float64 product over it and check its LLL conditions again in float64 on the device;
// one that fails that check gets status kStatusRecheck, for the host to check and polish
// (src/lattice/rebuild_cuda.cu). `in` holds the inputs packed (n x m per basis), b and t are
// strided; all device memory. Square 8/16/32/64 bases go through the fixed-shape one-pass
// kernels unless !options.square_check_kernel.
void rebuild_from_transform_cuda(const float* in, float* b, const std::int64_t* t,
                                 std::int32_t* status, std::int64_t batch, int n, int m,
                                 std::int64_t stride_b, std::int64_t stride_t, double delta,
                                 void* stream, int device, const LllOptions& options = {});
// The float64 re-check of rebuild_from_transform_cuda alone, for the bases of a packed batch
// (n x m each) whose status is kStatusRecheck: reduced where they pass.
void recheck_float64_cuda(const float* b, std::int32_t* status, std::int64_t batch, int n, int m,
                          double delta, void* stream, int device, const LllOptions& options = {});
// The device's form of polish_in_float64 (lll_plan.cpp) for float32 bases whose rebuilt B' failed
// the re-check, packed (in, b: n x m; t: m x m; status kStatusRecheck each): B T in float64,
// reduced further by the float64 all-swap kernel with its own T2; where that reduces and T T2
// fits int64, T becomes T T2, B' the float32 rounding of the result, and the float64 re-check
// decides (reduced, or kStatusRecheck with the new B' and T for the host). Bases it cannot take
// keep their B' and T and get kStatusHost. polish_fits_cuda: the float64 kernel with T fits.
struct PolishWorkspace {
  Buffer<double> bt;
  Buffer<std::int64_t> t2, tn;
  Buffer<std::int32_t> st2;
};
constexpr std::int32_t kStatusHost = 101;
bool polish_fits_cuda(int n, int m, int device, const LllOptions& options = {});
void polish_float64_cuda(const float* in, float* b, std::int64_t* t, std::int32_t* status,
                         std::int64_t count, int n, int m, double delta, PolishWorkspace& ws,
                         void* stream, int device, const LllOptions& options = {});

// buf holds at least n elements on `device` afterwards (workspaces that grow as needed).
template <class T>
void ensure_device(Buffer<T>& buf, std::size_t n, int device) {
  if (buf.size() < n) buf = Buffer<T>::device(n, device);
}

// float32 with T, one basis (the block method): B T in float64 on the device (a tiled product),
// compared entry by entry with B' as rebuild_cuda's batched kernel does: where
// max |B T - B'| > 1e-6 max |B T| the rounded B T is written over B' and the call returns true
// (the host then checks the LLL conditions again). in, b (n x m) and t (m x m) are device
// memory; scratch grows to n m + 2 doubles; synchronises. options: split_k.
bool rebuild_if_drifted_cuda(const float* in, float* b, const std::int64_t* t, int n, int m,
                             Buffer<double>& scratch, void* stream, int device,
                             const LllOptions& options = {});

// The block method's GramFactor on the GPU (src/lattice/gram_cholesky_cuda.cu): Gram matrix and
// blocked Cholesky in float64; the workspace grows as needed and belongs to one CPU thread.
// options (here and in the factorisations below): split_k, lookahead_factorisation.
template <class F>
struct GramWorkspace {
  Buffer<F> b;
  Buffer<double> g, diag;
  Buffer<int> flag;
};
template <class F>
bool gram_cholesky_cuda(const F* b, int n, int m, double* r, GramWorkspace<F>& ws, void* stream,
                        int device, const LllOptions& options = {});
// The same on device memory, enqueued on `stream` without a sync: R (m x m) from the device
// basis b; diag is scratch of diag_scratch_size(m) doubles; *fail (device) is set when a pivot is
// not positive; norm2 (m doubles, may be null) receives the squared column norms (the Gram
// diagonal).
std::size_t diag_scratch_size(int m);
template <class F>
void gram_cholesky_enqueue(const F* b, int n, int m, double* r, double* diag, int* fail,
                           double* norm2, void* stream, const LllOptions& options = {});
// The same for a basis whose columns before `first` are those R was last computed from (their R
// columns are kept, only the columns from `first` rounded down to the panel width are
// recomputed; norm2 likewise): the block method's refactorisation of its active window.
// rinv (may be null): W = R^{-1} of R's leading rinv_size x rinv_size block (tri_inverse_enqueue)
// with rinv_size >= first; then the head's block rows are one product W^T G instead of a
// forward substitution, with `scratch` (first x (m - first) doubles) for G. ready (may be null):
// the work that writes rinv and scratch, waited for just before they are used (the Gram
// columns before it do not need them).
// split (may be null): split->at() is called once R's columns before split->col are final, to
// enqueue work that needs them and may run beside the rest of the factorisation (which then
// leaves split->reserve blocks of the device free); where the factorisation cannot stop there
// (the chain of panel kernels, a lookahead kernel that would not fit), at the end.
// head_rows_kept: R's rows before the start column already hold the head's block rows X =
// R_hh^{-T} G_ht of the new columns (the block method's small window: the start's X times the
// block pass's integer U); only the tail's Gram block, its Schur complement and factor are
// computed (rinv and scratch unused).
class OrderEvent;
struct FactorSplit {
  int col = 0;
  int reserve = 0;
  std::function<void()> at;
};
template <class F>
void tail_cholesky_enqueue(const F* b, int n, int m, int first, double* r, double* diag, int* fail,
                           double* norm2, void* stream, const double* rinv = nullptr,
                           int rinv_size = 0, double* scratch = nullptr,
                           const OrderEvent* ready = nullptr, const FactorSplit* split = nullptr,
                           bool head_rows_kept = false, const LllOptions& options = {});
// The Cholesky factorisation of R's columns from `first` (a multiple of 32) on, whose Gram data
// (with the head's contribution subtracted) is in R's upper triangle, as one persistent
// cooperative kernel (chol_lookahead_cuda.cu); scratch: lookahead_scratch_size(m) doubles.
// Returns false, enqueuing nothing, where it does not apply (one panel, no cooperative launch):
// the caller then runs the chain of panel kernels (as it does for
// !LllOptions::lookahead_factorisation, without calling these).
// until > 0: only the panels before column `until` (a multiple of 32, less than the last
// panel's start), after which R's columns before `until` are final; a later call with first =
// until and resume = true does the rest (its panel `until` was factored by the first call).
// reserve: blocks of the device left free for kernels that run beside the factorisation (the
// resumed part runs beside the head inverse's diagonal blocks). A call with until > 0 or resume
// enqueues or throws; cholesky_lookahead_split_supported says beforehand whether it will enqueue.
bool cholesky_lookahead_enqueue(double* r, int m, int first, double* scratch, int* fail,
                                void* stream, int until = 0, bool resume = false, int reserve = 0);
bool cholesky_lookahead_split_supported(int m, int first, int until, int reserve);
std::size_t lookahead_scratch_size(int m);
// The column from which tail_cholesky_enqueue recomputes R for `first` (rounded down to the
// panel width), and whether from that start it uses rinv (of rinv_size columns).
int tail_cholesky_start(int first);
bool tail_cholesky_uses_inverse(int start, int rinv_size);
// W = R^{-1} of the leading f x f block of the upper-triangular R (column-major, ld ld, zero
// below the diagonal), into w (ld ld; its first f columns are overwritten, zero below the
// diagonal); tmp: scratch of ld x ld doubles. Enqueued on `stream` (tri_inverse_cuda.cu).
// W's leading k x k block is the inverse of R's (triangular). skip (device, may be null): where
// it is non-zero when the kernels run, they do nothing (W is then left zero). options: split_k
// (here and in the products below).
void tri_inverse_enqueue(const double* r, int ld, int f, double* w, double* tmp, void* stream,
                         const int* skip = nullptr, const LllOptions& options = {});
// tri_inverse_enqueue in its two parts, after W's first f columns were set to zero: the
// inverses of the kTriInverseBlock-wide diagonal blocks (from block block_begin on, of
// tri_inverse_diag_blocks(f) in all; a block's inverse needs only R's block), then the doubling's
// products (all the diagonal blocks' inverses there).
constexpr int kTriInverseBlock = 128;
int tri_inverse_diag_blocks(int f);
void tri_inverse_diag_enqueue(const double* r, int ld, int f, int block_begin, double* w,
                              void* stream, const int* skip = nullptr);
void tri_inverse_products_enqueue(const double* r, int ld, int f, double* w, double* tmp,
                                  void* stream, const int* skip = nullptr,
                                  const LllOptions& options = {});
// X = W^T G for W from tri_inverse_enqueue (f x f, ld ld), G f x cols (ld ldg) and X f x cols
// (ld ld; not overlapping G), enqueued on `stream`.
void tri_apply_enqueue(const double* w, int ld, int f, int cols, const double* g, long long ldg,
                       double* x, void* stream, const LllOptions& options = {});

// The global size reduction of the GPU-resident block method (size_reduce_cuda.cu), enqueued on
// `stream`: every column k of R (m x m, device, column-major) reduced against the snapshot r0
// (its diagonal the pivots); mult (m x m) receives the multipliers (zeroed first), mcol[k] = 1
// where column k has any. m <= 4096. first_col > 0: only the columns from first_col on (and
// the rest of its tile) are reduced; M's columns below it are left as they are. sync: device
// scratch of size_reduce_sync_size(m) ints. gate (device, may be null): where any of its
// gate_count ints is non-zero when the kernel runs, R is left as it is and mcol all zero (M
// unspecified), so that a caller can enqueue the reduction before it knows whether it wants it.
// size_reduce_prepare: the initialisation of mult, mcol and sync that the reduction starts
// with, enqueued on its own (on any stream, ordered before the reduction; then prepared = true
// with the same m and first_col), so that a caller can take it off the critical path.
std::size_t size_reduce_sync_size(int m);
void size_reduce_prepare(int m, double* mult, int* mcol, int* sync, void* stream,
                         int first_col = 0);
void size_reduce_enqueue(int m, double* r, const double* r0, double* mult, int* mcol, int* sync,
                         void* stream, int first_col = 0, const int* gate = nullptr,
                         int gate_count = 0, bool prepared = false);

// CR-MB-LLL with B and T resident on the GPU (src/lattice/block_lll_cuda.cu): global size
// reduction, block reductions by all_swap_cuda, products with U and the GSC-Update as kernels,
// R by gram_cholesky_enqueue at the start, every 8 passes and for the final check; the host
// only reads a few flags per pass.
// b (n x m) and t (m x m, may be null) are device memory. Returns false, with b restored to its
// input, when the float64 Cholesky factor fails or is inaccurate (the caller then uses the
// host-side block method, which falls back to Householder QR). ws.b_in holds the input after
// the call (the plan's float32 check reads it). prologue (may be null): the caller's work that
// goes first, enqueued as part of the start (ws.start).
// A CUDA event that orders the work of two streams (created on first use; a handle rather
// than cudaEvent_t keeps CUDA out of this header). order_event.cpp.
class OrderEvent {
 public:
  OrderEvent() = default;
  OrderEvent(const OrderEvent&) = delete;
  OrderEvent& operator=(const OrderEvent&) = delete;
  ~OrderEvent();
  void record(void* stream);      // marks the work enqueued on `stream` so far
  void wait(void* stream) const;  // later work on `stream` waits for the marked work
 private:
  void* handle_ = nullptr;
};

// A non-blocking stream of the lowest priority, for work off the critical path (the head
// inverse): the block scheduler prefers the blocks of the block method's own stream. Created on
// first use on `device`.
class SideStream {
 public:
  SideStream() = default;
  SideStream(const SideStream&) = delete;
  SideStream& operator=(const SideStream&) = delete;
  ~SideStream();
  void* get(int device);

 private:
  void* handle_ = nullptr;
};

// Work enqueued on one stream the same way run after run (the same launches on the same
// pointers), replayed from a CUDA graph: one launch instead of its operations one by one (the
// block method's start, ~10 operations, less host time per run). run()
// captures the body on the second consecutive call with the same key (what the body's launches
// bake in: pointers, sizes, options) and launches the graph from then on; a body whose key
// changes runs directly (a graph's instantiation costs more than it saves once). Where capture
// fails (a launch that cannot be captured), the body runs directly from then on.
// order_event.cpp.
class CapturedSequence {
 public:
  CapturedSequence() = default;
  CapturedSequence(const CapturedSequence&) = delete;
  CapturedSequence& operator=(const CapturedSequence&) = delete;
  ~CapturedSequence();
  // Returns whether the graph ran (true) or the body directly (false). enabled = false
  // (LllOptions::captured_sequences) runs the body directly.
  bool run(void* stream, const std::vector<std::uint64_t>& key, const std::function<void()>& body,
           bool enabled = true);

 private:
  void* exec_ = nullptr;             // cudaGraphExec_t
  std::vector<std::uint64_t> key_;   // exec_'s
  std::vector<std::uint64_t> seen_;  // the last direct run's
  bool unsupported_ = false;
};
// Test hook: how many times a CapturedSequence has launched its graph (all of them, so far).
long captured_sequence_launches();

// Work a caller of block_lll_device has enqueued first on the same stream (the presort), folded
// into its captured start: enqueue and the key of what its launches bake in.
struct StartPrologue {
  // enqueue(stream, copy, scratch): copy and scratch are null or n x m of the basis's type; with
  // them the prologue also leaves its output basis in copy (the start's copy of the input, which
  // then is not made again) and may clobber scratch.
  std::function<void(void*, void*, void*)> enqueue;
  std::vector<std::uint64_t> key;
};

template <class F>
struct BlockLllWorkspace {
  // The start of a run (the prologue, the input's copy, R of B and its first check) replayed
  // from a graph.
  CapturedSequence start;
  // The inverse of R (tri_inverse_enqueue) on a side stream: R copied (rcopy), W, the doubling's
  // scratch, the gates that skip it (all of it; the diagonal blocks left after the start);
  // `factored` recorded on the block method's stream, `copied` and `done` on the side stream.
  // Inside the start: `head_factored` (the block method's stream) and `head_inverted` (side).
  Buffer<double> rcopy, rinv, rinv_tmp;
  Buffer<int> inv_skip;
  SideStream side;
  OrderEvent factored, copied, done, head_factored, head_inverted;
  // The size reduction's snapshots taken ahead on a stream of their own (`snap`): from
  // `snap_from` (the block method's stream) to `snapped` (snap).
  SideStream snap;
  OrderEvent snap_from, snapped;
  Buffer<F> b_in, b0, blocks;
  Buffer<double> r, r0, diag, norm2, refl, mult, drift;
  Buffer<std::int64_t> t0, u;
  Buffer<double> colsum;              // T's products: column sums of |M|
  Buffer<unsigned long long> tbound;  // an upper bound of max |T| (device word)
  Buffer<std::int32_t> bstatus;
  Buffer<int> flags, hflags, mcol, ident, srsync;
};
// options: the plan's (LllOptions: the block method's variants, split_k and the factorisation's).
template <class F>
bool block_lll_device(int n, int m, F* b, std::int64_t* t, double delta, int l, long max_passes,
                      BlockLllWorkspace<F>& ws, void* stream, int device, LllStats* stats,
                      const LllOptions& options, const StartPrologue* prologue = nullptr);
// presort_columns and unsort_transform on one basis in device memory (src/lattice/presort_cuda.cu),
// enqueued on `stream`; rank: m int32 of device memory; keys: scratch of at least m doubles.
// sorted_copy and scratch (both or neither; n x m each): out of place, b's input goes through
// scratch (clobbered) and the sorted basis to both b and sorted_copy in one pass.
template <class F>
void presort_columns_cuda(F* b, int n, int m, std::int32_t* rank, double* keys, void* stream,
                          F* sorted_copy = nullptr, F* scratch = nullptr);
void unsort_transform_cuda(std::int64_t* t, int m, const std::int32_t* rank, void* stream);
#endif

}  // namespace mimorx::lattice::detail

#pragma once
// Batched QR decomposition of MIMO channels, on the CPU (OpenMP over the batch) or on a GPU
// (small shapes: one problem per thread in registers; larger ones: a group of lanes per
// problem with the matrices in shared memory), in the complex
// model or one of the two real-valued models, optionally sorted (SQRD) and with z = Q^H y.
//
//   QrConfig cfg{.nr = 4, .nt = 4, .model = QrModel::mrvd, .sorted = true};
//   QrPlan plan(cfg, Backend::cuda());
//   plan.run({.h = h}, {.q_real = q, .r_real = r, .perm = perm});
//
// The arithmetic (modified Gram-Schmidt with one re-orthogonalisation pass) is in
// mimorx/linalg/qr_math.hpp and is bit-identical on both backends. See docs/qr.md.
#include <cstdint>
#include <memory>

#include "mimorx/core/backend.hpp"
#include "mimorx/core/buffer.hpp"
#include "mimorx/core/complex.hpp"
#include "mimorx/core/tensor.hpp"
#include "mimorx/linalg/qr_math.hpp"

namespace mimorx::linalg {

struct QrConfig {
  int nr = 0;  // receive antennas (rows of H), nr >= nt
  int nt = 0;  // transmit streams (columns of H)
  QrModel model = QrModel::complex;
  // SQRD: at each step take the remaining column of minimum norm (Wubben et al. 2001).
  bool sorted = false;
  // Circular rotation of the column (detection) order by `rotation` positions of the model
  // matrix: column j of the decomposed matrix is column order[(j + rotation) % n] (n = nt in
  // the complex model, 2 nt in the real ones). With `sorted`, the SQRD order is found first
  // and then rotated and decomposed again (N-way detection runs N rotations).
  int rotation = 0;
  bool want_q = true;     // write Q
  bool want_qhy = false;  // write z = Q^H y for every received vector
};

// Inputs. `order` (optional, not with `sorted`): the initial column order of the model
// matrix, n ints for all channels or C * n (one order per channel); each must be a permutation
// of 0..n-1. Vector v of y uses channel v / vectors_per_channel.
struct QrInput {
  ConstMatrixBatch<cf32> h{};  // C matrices nr x nt
  ConstMatrixBatch<cf32> y{};  // V vectors nr x 1 (only with want_qhy), V = C * vectors_per_channel
  int vectors_per_channel = 1;
  View<const int> order{};
};

// Outputs on the plan's backend. The complex model fills q, r, z; the real models fill
// q_real, r_real, z_real (z_real is Q^T y_r with y_r the real model vector of y).
//   q: C x m x n, r: C x n x n (lower triangle zero, diagonal real >= 0), z: V x n x 1,
//   perm: C * n ints, column j of channel c's decomposed matrix is model column perm[c*n + j]
//   (optional), status: C ints of QrStatus (optional; when absent, run() synchronises and
//   throws NumericalError for a rank-deficient channel and InvalidArgument for a non-finite
//   one, naming the first such channel).
// m = model_rows(model, nr), n = model_cols(model, nt).
struct QrOutput {
  MatrixBatch<cf32> q{}, r{}, z{};
  MatrixBatch<float> q_real{}, r_real{}, z_real{};
  View<int> perm{};
  View<int> status{};
};

class QrPlan {
 public:
  // Throws InvalidArgument for nr < nt, sizes outside 1..64, a rotation outside 0..n-1.
  QrPlan(const QrConfig& config, Backend backend);
  QrPlan(QrPlan&&) noexcept;
  QrPlan& operator=(QrPlan&&) noexcept;
  ~QrPlan();

  void run(const QrInput& in, const QrOutput& out, const Stream& stream = Stream{});

  const QrConfig& config() const { return cfg_; }
  const Backend& backend() const { return backend_; }
  int rows() const { return model_rows(cfg_.model, cfg_.nr); }  // m
  int cols() const { return model_cols(cfg_.model, cfg_.nt); }  // n

 private:
  void check(const QrInput& in, const QrOutput& out) const;
  QrConfig cfg_;
  Backend backend_;
  Buffer<int> status_scratch_;  // used when the caller gives no status view
};

// Host helpers: the real model matrix (C x 2nr x 2nt) and vectors (V x 2nr x 1) of a complex
// batch, as the kernels build them internally (for tests and for callers that need them).
void to_real_model(QrModel model, ConstMatrixBatch<cf32> h, MatrixBatch<float> out);
void to_real_model_y(QrModel model, ConstMatrixBatch<cf32> y, MatrixBatch<float> out);

}  // namespace mimorx::linalg

// The float32 lattice check and repair of LllPlan's outputs (float32_check.hpp; docs/lll.md,
// "The float32 lattice check").
#include "lattice/float32_check.hpp"

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "lattice/lll_internal.hpp"
#include "mimorx/config.hpp"

namespace mimorx::lattice::detail {

// A float32 reduction that met a vanishing Gram-Schmidt norm (|r_jj| <= 16 eps_f32 ||b_j||,
// singular_fraction) calls the basis singular. The input tells whether it is, through a
// column-pivoted QR in float64: when its smallest pivot is at most 1e-6 of the largest (about
// float32 resolution) it stays singular; otherwise float32 lost a part the lattice has
// (precision_loss: the caller hears "try float64" instead of "dependent vectors", e.g. for
// inputs whose last column is the sum of the others plus 1e-3 noise). Where the input was not
// kept (CUDA all-swap without T) the basis as it is now stands in for it (unimodular steps keep
// the rank, but float32 rounding may already have erased the small independent part).
template <class T>
LllStatus classify_float32_singular(int n, int m, const T* b) {
  Eigen::MatrixXd a(n, m);
  for (int j = 0; j < m; ++j)
    for (int i = 0; i < n; ++i) a(i, j) = double(b[std::size_t(j) * n + i]);
  if (!a.allFinite()) return LllStatus::precision_loss;  // the input was finite
  const Eigen::ColPivHouseholderQR<Eigen::MatrixXd> qr(a);
  const double rmax = std::abs(qr.matrixQR()(0, 0));
  const double rmin = std::abs(qr.matrixQR()(m - 1, m - 1));
  return rmin > 1e-6 * rmax ? LllStatus::precision_loss : LllStatus::singular;
}
template LllStatus classify_float32_singular<float>(int, int, const float*);
template LllStatus classify_float32_singular<double>(int, int, const double*);

namespace {

// The LLL conditions of a rebuilt float32 basis, with the float32 tolerances of docs/lll.md
// (|mu| <= 0.51, Lovasz with delta - 1e-3), from a float64 Householder QR: the bases checked
// here are reduced or nearly, so well-conditioned, and check_lll's long-double Gram-Schmidt cost
// ~10x more (it dominated the float32 epilogues, which rebuild most bases: float32 updates leave
// B' 1e-6..1e-5 away from B T).
LllStatus recheck_float32(int n, int m, const float* b, double delta) {
  Eigen::MatrixXd a(n, m);
  for (int j = 0; j < m; ++j)
    for (int i = 0; i < n; ++i) a(i, j) = double(b[std::size_t(j) * n + i]);
  const Eigen::HouseholderQR<Eigen::MatrixXd> qr(a);
  const Eigen::MatrixXd& r = qr.matrixQR();
  const double dcheck = delta - 1e-3;
  for (int k = 0; k < m; ++k) {
    if (!(std::abs(r(k, k)) > 0) || !std::isfinite(r(k, k))) return LllStatus::precision_loss;
    for (int j = 0; j < k; ++j)
      if (!(std::abs(r(j, k) / r(j, j)) <= 0.51)) return LllStatus::precision_loss;
    if (k > 0 && !(r(k - 1, k) * r(k - 1, k) + r(k, k) * r(k, k) >=
                   dcheck * r(k - 1, k - 1) * r(k - 1, k - 1)))
      return LllStatus::precision_loss;
  }
  return LllStatus::reduced;
}

// B T in float64 (n x m, column-major) for an input basis in float32 or float64, summed over k in
// order, zero entries of T skipped: the rebuilt basis of the float32 paths.
template <class In>
std::vector<double> times_transform(int n, int m, const In* b_in, const std::int64_t* t) {
  std::vector<double> bt(std::size_t(n) * m, 0.0);
  for (int j = 0; j < m; ++j) {
    double* col = &bt[std::size_t(j) * n];
    for (int k = 0; k < m; ++k) {
      const double f = double(t[std::size_t(j) * m + k]);
      if (f == 0) continue;
      const In* src = b_in + std::size_t(k) * n;
      for (int i = 0; i < n; ++i) col[i] += f * double(src[i]);
    }
  }
  return bt;
}

// A rebuilt basis (B T, on the input lattice) that fails the LLL conditions: its T came from the
// drifted float32 basis. It is reduced further in float64 by the reference (T2 tracked), T
// becomes T T2 and B' the rounded result; the status is that result's re-check, precision_loss
// where the reference fails or T T2 leaves int64. bt: B T in float64 (overwritten). Rare (seen on
// Gaussian 64x64 bases with condition number ~3e5: |T| ~ 1e4, |mu| 0.52 after the rebuild).
LllStatus polish_in_float64(int n, int m, std::vector<double>& bt, std::int64_t* t, float* b,
                            double delta) {
  std::vector<double> t2(std::size_t(m) * m);
  if (detail::se_lll_double(n, m, bt.data(), t2.data(), delta).status != LllStatus::reduced)
    return LllStatus::precision_loss;
  std::vector<std::int64_t> tt(std::size_t(m) * m);
  for (int j = 0; j < m; ++j) {
    for (int i = 0; i < m; ++i) {
      long double v = 0;  // (T T2)(i, j), exact while it fits 64 bits
      for (int k = 0; k < m; ++k)
        v += (long double)t[std::size_t(k) * m + i] * (long double)t2[std::size_t(j) * m + k];
      if (!(std::abs(v) < 9.2e18L)) return LllStatus::precision_loss;
      tt[std::size_t(j) * m + i] = std::int64_t(v);
    }
  }
  std::copy(tt.begin(), tt.end(), t);
  for (std::size_t i = 0; i < bt.size(); ++i) b[i] = float(bt[i]);
  return recheck_float32(n, m, b, delta);
}

// float32 reductions with T tracked: B' is rebuilt as B T in float64 from the input and
// rounded once. The float32 reducers update B in float32, and where the multipliers grow
// large (|T| ~ 1e5 on ill-conditioned inputs) the accumulated rounding can leave B' percents
// away from B T, i.e. not a basis of the input lattice (e.g. a 16x16 basis of condition number
// 2.3e6: max |B T - B'| = 0.03 with |B'| ~ 1.3, volume off by 0.5-0.9 %). When the two differ
// by more than float32 rounding, the rebuilt basis replaces
// B' and must pass the LLL conditions again (float32 tolerances, docs/lll.md); where it does not,
// polish_in_float64 reduces it further. t may be updated (T T2).
// The repair itself, given bt = B T in float64 (overwritten by a polish): B' is kept where it
// equals bt to 1e-6 of max |bt|, else replaced by bt rounded once and re-checked.
LllStatus repair_from_product(int n, int m, std::vector<double>& bt, std::int64_t* t, float* b,
                              double delta) {
  double diff = 0, scale = 0;
  for (std::size_t i = 0; i < bt.size(); ++i) {
    diff = std::max(diff, std::abs(bt[i] - double(b[i])));
    scale = std::max(scale, std::abs(bt[i]));
  }
  if (diff <= 1e-6 * scale) return LllStatus::reduced;
  for (std::size_t i = 0; i < bt.size(); ++i) b[i] = float(bt[i]);
  if (recheck_float32(n, m, b, delta) == LllStatus::reduced) return LllStatus::reduced;
  return polish_in_float64(n, m, bt, t, b, delta);
}

LllStatus rebuild_from_transform(int n, int m, const double* b_in, std::int64_t* t, float* b,
                                 double delta) {
  std::vector<double> bt = times_transform(n, m, b_in, t);
  return repair_from_product(n, m, bt, t, b, delta);
}

#if MIMORX_HAS_CUDA
// The GPU-resident block method's host step for a basis the device rebuilt as B T (b_dev, t_dev;
// the float32 input in_dev): B' is checked again on the host and, where it fails, polished in
// float64 and written back with its new T. Rare: only bases that drifted.
LllStatus recheck_rebuilt_device(int n, int m, const float* in_dev, std::int64_t* t_dev,
                                 float* b_dev, double delta, const Stream& stream) {
  const std::size_t nm = std::size_t(n) * m, mm = std::size_t(m) * m;
  std::vector<float> hb(nm), hin(nm);
  std::vector<std::int64_t> ht(mm);
  mimorx::detail::copy_bytes(hb.data(), Memory::host, b_dev, Memory::device, nm * sizeof(float),
                             stream.handle());
  stream.synchronize();
  if (recheck_float32(n, m, hb.data(), delta) == LllStatus::reduced) return LllStatus::reduced;
  mimorx::detail::copy_bytes(hin.data(), Memory::host, in_dev, Memory::device, nm * sizeof(float),
                             stream.handle());
  mimorx::detail::copy_bytes(ht.data(), Memory::host, t_dev, Memory::device,
                             mm * sizeof(std::int64_t), stream.handle());
  stream.synchronize();
  const LllStatus status = recheck_rebuilt_host(n, m, hin.data(), ht.data(), hb.data(), delta);
  mimorx::detail::copy_bytes(b_dev, Memory::device, hb.data(), Memory::host, nm * sizeof(float),
                             stream.handle());
  mimorx::detail::copy_bytes(t_dev, Memory::device, ht.data(), Memory::host,
                             mm * sizeof(std::int64_t), stream.handle());
  stream.synchronize();
  return status;
}

// classify_float32_singular on a basis in device memory.
LllStatus classify_float32_singular_device(int n, int m, const float* b_dev, const Stream& stream) {
  std::vector<float> h(std::size_t(n) * m);
  mimorx::detail::copy_bytes(h.data(), Memory::host, b_dev, Memory::device,
                             h.size() * sizeof(float), stream.handle());
  stream.synchronize();
  return classify_float32_singular(n, m, h.data());
}
#endif

// float32 without T: B' must still be a basis of the input's lattice, and the drift that the T
// path repairs (above) can move it off. Here T is not known, so it is solved for: T = B^-1 B' in
// float64 (LU; QR for n > m), rounded to T_r. T_r is unimodular when |det(B T_r)| / |det B|, an
// integer, is 1 (log volumes in float64, accepted within 0.1 of 0; the next integers are log 2
// away). Then B T_r is a basis of the lattice and the T path's repair applies: B' stays where it
// equals B T_r to 1e-6, else B T_r replaces it, re-checked (and polished in float64 where
// needed). Where T_r is not unimodular the float32 result is dropped and the input reduced again
// by the float64 reference. Cost: two float64 factorisations, a solve and a product,
// O(n m^2 + m^3) (docs/lll.md, "The float32 lattice check").
LllStatus rebuild_without_transform(int n, int m, const double* b_in, float* b, double delta) {
  using Eigen::MatrixXd;
  const Eigen::Map<const MatrixXd> B(b_in, n, m);
  MatrixXd bp(n, m);
  for (int j = 0; j < m; ++j)
    for (int i = 0; i < n; ++i) bp(i, j) = double(b[std::size_t(j) * n + i]);
  auto log_volume = [m](const MatrixXd& f) {  // from the diagonal of an LU or QR factor
    double s = 0;
    for (int i = 0; i < m; ++i) s += std::log(std::abs(f(i, i)));
    return s;
  };
  MatrixXd ts, tr, btr;
  double log_vol_in = 0;
  if (n == m) {
    const Eigen::PartialPivLU<MatrixXd> lu(B);
    ts = lu.solve(bp);
    log_vol_in = log_volume(lu.matrixLU());
  } else {
    const Eigen::HouseholderQR<MatrixXd> qr(B);
    ts = qr.solve(bp);
    log_vol_in = log_volume(qr.matrixQR());
  }
  bool ok = ts.allFinite() && ts.cwiseAbs().maxCoeff() < 9.0e15;
  if (ok) {
    tr = ts.array().round().matrix();
    btr.noalias() = B * tr;
    const double log_vol_out = n == m ? log_volume(Eigen::PartialPivLU<MatrixXd>(btr).matrixLU())
                                      : log_volume(Eigen::HouseholderQR<MatrixXd>(btr).matrixQR());
    ok = std::abs(log_vol_out - log_vol_in) < 0.1;
  }
  if (!ok) {
    std::vector<double> bd(b_in, b_in + std::size_t(n) * m);
    if (detail::se_lll_double(n, m, bd.data(), nullptr, delta).status != LllStatus::reduced)
      return LllStatus::precision_loss;
    for (std::size_t i = 0; i < bd.size(); ++i) b[i] = float(bd[i]);
    return recheck_float32(n, m, b, delta);
  }
  std::vector<double> bt(btr.data(), btr.data() + std::size_t(n) * m);
  std::vector<std::int64_t> t(std::size_t(m) * m);
  for (std::size_t i = 0; i < t.size(); ++i) t[i] = std::int64_t(tr.data()[i]);
  return repair_from_product(n, m, bt, t.data(), b, delta);
}

}  // namespace

#if MIMORX_HAS_CUDA
// The host's part of the check of a rebuilt float32 basis hb (from its input hin and T ht): the
// LLL conditions with the float32 tolerances, else a float64 polish of B T (hb and ht updated).
LllStatus recheck_rebuilt_host(int n, int m, const float* hin, std::int64_t* ht, float* hb,
                               double delta) {
  if (recheck_float32(n, m, hb, delta) == LllStatus::reduced) return LllStatus::reduced;
  std::vector<double> bt = times_transform(n, m, hin, ht);
  return polish_in_float64(n, m, bt, ht, hb, delta);
}
#endif

// The CPU paths' float32 epilogue: a reduced basis is checked against the input lattice (from B T
// with T, by solving for T without) and rebuilt where it drifted, a singular one is judged on the
// input (b_in: the float32 input, as doubles). check: LllConfig::lattice_check.
LllStatus finish_float32(int n, int m, const double* b_in, std::int64_t* t, float* b, double delta,
                         LllStatus status, bool check) {
  if (check && status == LllStatus::reduced)
    return t ? rebuild_from_transform(n, m, b_in, t, b, delta)
             : rebuild_without_transform(n, m, b_in, b, delta);
  if (status == LllStatus::singular) return classify_float32_singular(n, m, b_in);
  return status;
}

#if MIMORX_HAS_CUDA
// The same for the GPU-resident block method (one large basis; in, b and t on the device): B T
// compared with B' on the device, and rebuilt there where it drifted; only then is B' copied
// to the host and checked again. A "singular" basis is judged on its input.
LllStatus finish_float32_device(int n, int m, const float* in, std::int64_t* t, float* b,
                                double delta, LllStatus status, bool check, Buffer<double>& scratch,
                                const Stream& stream, int device, const LllOptions& options) {
  if (status == LllStatus::singular) return classify_float32_singular_device(n, m, in, stream);
  if (!t || status != LllStatus::reduced || !check ||
      !rebuild_if_drifted_cuda(in, b, t, n, m, scratch, stream.handle(), device, options))
    return status;
  return recheck_rebuilt_device(n, m, in, t, b, delta, stream);
}
#endif

}  // namespace mimorx::lattice::detail

#pragma once
// One QR problem (channel) from input to outputs: the routine both backends run, the CPU with
// per-thread work arrays (element stride 1), the GPU with per-thread arrays interleaved in
// shared memory (element stride = threads per block).
#include <cstdint>

#include "mimorx/core/complex.hpp"
#include "mimorx/core/hd.hpp"
#include "mimorx/linalg/qr_math.hpp"

namespace mimorx::linalg::detail {

// Everything a kernel needs, as plain pointers (outputs may be null when not wanted).
struct QrArgs {
  int nr = 0, nt = 0, m = 0, n = 0;
  QrModel model = QrModel::complex;
  bool sorted = false;
  int rotation = 0;
  std::int64_t channels = 0;
  const cf32* h = nullptr;
  std::int64_t h_stride = 0;
  const cf32* y = nullptr;
  std::int64_t y_stride = 0;
  int vpc = 1;
  const int* order = nullptr;
  bool order_per_channel = false;
  void* q = nullptr;  // cf32 or float by model
  std::int64_t q_stride = 0;
  void* r = nullptr;
  std::int64_t r_stride = 0;
  void* z = nullptr;
  std::int64_t z_stride = 0;
  int* perm = nullptr;
  int* status = nullptr;
};

// Rotates v[0..n) left by s positions (v[j] <- v[(j + s) % n]) by three reversals, in place.
MIMORX_HD void reverse(int* v, int es, int lo, int hi) {
  for (; lo < hi; ++lo, --hi) {
    const int t = v[lo * es];
    v[lo * es] = v[hi * es];
    v[hi * es] = t;
  }
}
MIMORX_HD void rotate_left(int* v, int n, int es, int s) {
  if (s == 0) return;
  reverse(v, es, 0, s - 1);
  reverse(v, es, s, n - 1);
  reverse(v, es, 0, n - 1);
}

template <class T>
MIMORX_HD T model_y(const QrArgs& a, const cf32* y, int i);
template <>
MIMORX_HD cf32 model_y<cf32>(const QrArgs&, const cf32* y, int i) {
  return y[i];
}
template <>
MIMORX_HD float model_y<float>(const QrArgs& a, const cf32* y, int i) {
  return real_model_y(a.model, y, a.nr, i);
}

// Lanes per problem of the GPU kernel (and the reduction order the CPU reproduces): one lane
// per model row, rounded up to a power of two, at most a warp.
MIMORX_HD constexpr int qr_group_size(int m) {
  int g = 1;
  while (g < m && g < 32) g <<= 1;
  return g;
}

// Work arrays: wa m*n T and wr n*n T (element stride 1, rows owned as `ex` says), wp n ints
// and wn n floats private to this thread (stride ps).
template <class T, class Rows>
MIMORX_HD void qr_problem(const Rows& ex, const QrArgs& a, std::int64_t c, T* wa, T* wr, int* wp,
                          float* wn, int ps) {
  const int m = a.m, n = a.n;
  const int r0 = ex.first(), dr = ex.step();
  const cf32* h = a.h + c * a.h_stride;
  const int* base = a.order ? a.order + (a.order_per_channel ? c * n : 0) : nullptr;
  const int rot0 = a.sorted ? 0 : a.rotation;
  std::uint64_t seen[2] = {0, 0};  // n <= 128
  bool order_ok = true;
  for (int j = 0; j < n; ++j) {
    const int k = j + rot0 < n ? j + rot0 : j + rot0 - n;
    int col = base ? base[k] : k;
    if (col < 0 || col >= n || ((seen[col >> 6] >> (col & 63)) & 1u)) {
      order_ok = false;
      col = j;  // never read outside H
    } else {
      seen[col >> 6] |= std::uint64_t(1) << (col & 63);
    }
    wp[j * ps] = col;
  }
  int status = qr_ok;
  if (!order_ok) {
    status = qr_bad_order;
  } else if (!load_model(ex, a.model, h, a.nr, a.nt, wp, ps, wa, 1)) {
    status = qr_non_finite;
  } else {
    status = mgs_qr(ex, wa, m, n, 1, wr, 1, wp, ps, wn, ps, a.sorted, kQrRankTolerance);
    if (a.sorted && a.rotation != 0) {
      rotate_left(wp, n, ps, a.rotation);
      load_model(ex, a.model, h, a.nr, a.nt, wp, ps, wa, 1);
      status = mgs_qr(ex, wa, m, n, 1, wr, 1, wp, ps, wn, ps, false, kQrRankTolerance);
    }
  }
  const bool ok = status != qr_non_finite && status != qr_bad_order;
  if (a.q) {
    T* q = static_cast<T*>(a.q) + c * a.q_stride;
    for (int j = 0; j < n; ++j)
      for (int i = r0; i < m; i += dr) q[j * m + i] = ok ? wa[j * m + i] : hd::zero<T>();
  }
  if (a.r) {
    T* r = static_cast<T*>(a.r) + c * a.r_stride;
    for (int j = 0; j < n; ++j)
      for (int i = r0; i < n; i += dr) r[j * n + i] = ok ? wr[j * n + i] : hd::zero<T>();
  }
  if (a.perm) {
    for (int j = 0; j < n; ++j)
      if (ex.owns(j)) a.perm[c * n + j] = wp[j * ps];
  }
  if (a.status && ex.owns(0)) a.status[c] = status;
  if (a.z) {
    for (int u = 0; u < a.vpc; ++u) {
      const std::int64_t v = c * a.vpc + u;
      const cf32* y = a.y + v * a.y_stride;
      T* z = static_cast<T*>(a.z) + v * a.z_stride;
      const float ybad =
          ex.template rowsum<float>(a.nr, [&](int t) { return hd::finite(y[t]) ? 0.f : 1.f; });
      const bool yok = ybad == 0.f;
      for (int j = 0; j < n; ++j) {
        T s = hd::zero<T>();
        if (ok && yok) {
          s = ex.template rowsum<T>(
              m, [&](int t) { return hd::mulc(wa[j * m + t], model_y<T>(a, y, t)); });
        }
        if (ex.owns(j)) z[j] = s;
      }
      if (!yok && a.status && ex.owns(0)) a.status[c] = qr_non_finite;
    }
  }
}

// Launches the batched kernel on `stream` (cudaStream_t as void*). Defined in qr_cuda.cu.
void qr_run_cuda(const QrArgs& args, int device, void* stream);

}  // namespace mimorx::linalg::detail

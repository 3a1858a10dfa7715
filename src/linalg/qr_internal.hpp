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

// Work arrays: wa m*n T, wr n*n T, wp n ints, wn n floats, all with element stride es.
template <class T>
MIMORX_HD void qr_problem(const QrArgs& a, std::int64_t c, T* wa, T* wr, int* wp, float* wn,
                          int es) {
  const int m = a.m, n = a.n;
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
    wp[j * es] = col;
  }
  int status = qr_ok;
  if (!order_ok) {
    status = qr_bad_order;
  } else if (!load_model(a.model, h, a.nr, a.nt, wp, es, wa, es)) {
    status = qr_non_finite;
  } else {
    status = mgs_qr(wa, m, n, es, wr, es, wp, es, wn, es, a.sorted, kQrRankTolerance);
    if (a.sorted && a.rotation != 0) {
      rotate_left(wp, n, es, a.rotation);
      load_model(a.model, h, a.nr, a.nt, wp, es, wa, es);
      status = mgs_qr(wa, m, n, es, wr, es, wp, es, wn, es, false, kQrRankTolerance);
    }
  }
  const bool ok = status != qr_non_finite && status != qr_bad_order;
  if (a.q) {
    T* q = static_cast<T*>(a.q) + c * a.q_stride;
    for (int e = 0; e < m * n; ++e) q[e] = ok ? wa[e * es] : hd::zero<T>();
  }
  if (a.r) {
    T* r = static_cast<T*>(a.r) + c * a.r_stride;
    for (int e = 0; e < n * n; ++e) r[e] = ok ? wr[e * es] : hd::zero<T>();
  }
  if (a.perm) {
    for (int j = 0; j < n; ++j) a.perm[c * n + j] = wp[j * es];
  }
  if (a.status) a.status[c] = status;
  if (a.z) {
    for (int u = 0; u < a.vpc; ++u) {
      const std::int64_t v = c * a.vpc + u;
      const cf32* y = a.y + v * a.y_stride;
      T* z = static_cast<T*>(a.z) + v * a.z_stride;
      bool yok = true;
      for (int t = 0; t < a.nr; ++t) yok = yok && hd::finite(y[t]);
      for (int j = 0; j < n; ++j) {
        T s = hd::zero<T>();
        if (ok && yok) {
          for (int t = 0; t < m; ++t)
            s = hd::add(s, hd::mulc(wa[(j * m + t) * es], model_y<T>(a, y, t)));
        }
        z[j] = s;
      }
      if (!yok && a.status) a.status[c] = qr_non_finite;
    }
  }
}

// Launches the batched kernel on `stream` (cudaStream_t as void*). Defined in qr_cuda.cu.
void qr_run_cuda(const QrArgs& args, int device, void* stream);

}  // namespace mimorx::linalg::detail

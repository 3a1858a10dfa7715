#pragma once
// Compile-time specialisations of one QR problem for small shapes (complex nr x nt and the real
// models' 2nr x 2nt with nr <= kQrFixedMaxNr): the matrix, R, the permutation and the norms are
// fixed-size arrays indexed only by unrolled loop counters, so on the GPU they live in
// registers and one thread computes one problem with no shared-memory round trips and no
// shuffles; the dot products over rows are register trees.
//
// The operations and their order are exactly those of mgs_qr() with SerialRows{G} (G =
// qr_group_size(m)) and of qr_problem(): every sum over rows takes the partial sums of rows
// r = l mod G (l < G) and adds them pairwise from stride G/2 down to 1. Both backends run this
// code for these shapes (the CPU as the reference, the GPU kernel in qr_cuda.cu), and it is
// bit-identical to the general path (tests/linalg/test_qr.cpp checks that on the CPU).
#include <cstdint>
#include <type_traits>

#include "linalg/qr_internal.hpp"

namespace mimorx::linalg::detail {

// Largest nr (complex rows; the real models have 2nr rows) with a fixed-size instantiation.
inline constexpr int kQrFixedMaxNr = 4;

MIMORX_HD constexpr bool qr_fixed_shape(int nr, int nt) {
  return nr >= 1 && nr <= kQrFixedMaxNr && nt >= 1 && nt <= nr;
}

// Sum of f(0..M-1) in SerialRows{G}'s order.
template <int M, int G, class T, class F>
MIMORX_HD T fixed_rowsum(F f) {
  if constexpr (G == 1) {
    T s = hd::zero<T>();
    MIMORX_UNROLL
    for (int r = 0; r < M; ++r) s = hd::add(s, f(r));
    return s;
  } else {
    T part[G];
    MIMORX_UNROLL
    for (int l = 0; l < G; ++l) {
      if (l < M) {
        part[l] = f(l);
        MIMORX_UNROLL
        for (int r = l + G; r < M; r += G) part[l] = hd::add(part[l], f(r));
      } else {
        part[l] = hd::zero<T>();
      }
    }
    MIMORX_UNROLL
    for (int o = G / 2; o >= 1; o /= 2) {
      MIMORX_UNROLL
      for (int l = 0; l < o; ++l) part[l] = hd::add(part[l], part[l + o]);
    }
    return part[0];
  }
}

// One problem's state: a (column j = a[j], becoming Q), R (r[j][i] = element (i, j); only the
// upper triangle is used), the column order and the status. `via_complex`: an MRVD problem
// computed as the real form of the complex QR (see qr_fixed_problem); z then also comes from the
// complex arithmetic.
template <class T, int M, int N>
struct QrFixed {
  T a[N][M];
  T r[N][N];
  int perm[N];
  int status;
  bool via_complex;
};

// How the fixed-size path computes a real-model problem.
//  kFixedDirect: modified Gram-Schmidt on the real model matrix (every model and option).
//  kFixedViaComplex: MRVD, unsorted, every channel's column order keeps each symbol's two real
//    columns adjacent and in order (2p, 2p + 1) at positions (2q, 2q + 1): no explicit order and
//    an even rotation. The complex QR is computed and written in its MRVD real form.
//  kFixedViaComplexIfPaired: MRVD, unsorted, explicit orders: per channel, via the complex QR
//    when its order pairs the columns as above, else directly.
inline constexpr int kFixedDirect = 0, kFixedViaComplex = 1, kFixedViaComplexIfPaired = 2;

MIMORX_HD constexpr int qr_fixed_real_path(const QrArgs& a) {
  if (a.model != QrModel::mrvd || a.sorted) return kFixedDirect;
  if (a.order != nullptr) return kFixedViaComplexIfPaired;
  return (a.rotation & 1) == 0 ? kFixedViaComplex : kFixedDirect;
}

// SQRD step k: swaps the remaining column of least norm (the first one on ties) into place k.
template <class T, int M, int N>
MIMORX_HD void fixed_sqrd_swap(QrFixed<T, M, N>& s, float (&nrm)[N], int k) {
  float best = nrm[k];
  int p = k;
  MIMORX_UNROLL
  for (int l = k + 1; l < N; ++l) {
    if (nrm[l] < best) {
      best = nrm[l];
      p = l;
    }
  }
  MIMORX_UNROLL
  for (int l = k + 1; l < N; ++l) {
    const bool sw = p == l;
    MIMORX_UNROLL
    for (int i = 0; i < M; ++i) {
      const T x = s.a[k][i], y = s.a[l][i];
      s.a[k][i] = sw ? y : x;
      s.a[l][i] = sw ? x : y;
    }
    MIMORX_UNROLL
    for (int i = 0; i < k; ++i) {
      const T x = s.r[k][i], y = s.r[l][i];
      s.r[k][i] = sw ? y : x;
      s.r[l][i] = sw ? x : y;
    }
    const float nx = nrm[k], ny = nrm[l];
    nrm[k] = sw ? ny : nx;
    nrm[l] = sw ? nx : ny;
    const int px = s.perm[k], py = s.perm[l];
    s.perm[k] = sw ? py : px;
    s.perm[l] = sw ? px : py;
  }
}

// Step k's projections of the later columns on q_k. They are independent: all dot products
// first, then the updates, so that their dependency chains overlap.
template <class T, int M, int N>
MIMORX_HD void fixed_project(QrFixed<T, M, N>& s, float (&nrm)[N], int k) {
  using namespace hd;
  constexpr int G = qr_group_size(M);
  T cs[N];
  MIMORX_UNROLL
  for (int l = k + 1; l < N; ++l)
    cs[l] = fixed_rowsum<M, G, T>([&](int t) { return mulc(s.a[k][t], s.a[l][t]); });
  MIMORX_UNROLL
  for (int l = k + 1; l < N; ++l) {
    s.r[l][k] = cs[l];
    MIMORX_UNROLL
    for (int t = 0; t < M; ++t) s.a[l][t] = sub(s.a[l][t], mul(s.a[k][t], cs[l]));
    nrm[l] = fsub(nrm[l], abs2(cs[l]));
  }
}

// mgs_qr() for an M x N problem held in `s` (see qr_math.hpp for the algorithm).
template <class T, int M, int N>
MIMORX_HD int fixed_mgs(QrFixed<T, M, N>& s, bool sorted, float tol_rel) {
  using namespace hd;
  constexpr int G = qr_group_size(M);
  float nrm[N];
  float big = 0.f;
  MIMORX_UNROLL
  for (int j = 0; j < N; ++j) {
    nrm[j] = fixed_rowsum<M, G, float>([&](int i) { return abs2(s.a[j][i]); });
    big = nrm[j] > big ? nrm[j] : big;
  }
  MIMORX_UNROLL
  for (int j = 0; j < N; ++j) {
    MIMORX_UNROLL
    for (int i = 0; i <= j; ++i) s.r[j][i] = zero<T>();
  }
  const float tol2 = fmul(fmul(tol_rel, tol_rel), big);
  int status = qr_ok;
  MIMORX_UNROLL
  for (int k = 0; k < N; ++k) {
    if constexpr (N > 1) {
      if (sorted && k + 1 < N) fixed_sqrd_swap(s, nrm, k);
    }
    // Second Gram-Schmidt pass of column k against the finished columns.
    MIMORX_UNROLL
    for (int i = 0; i < k; ++i) {
      const T c = fixed_rowsum<M, G, T>([&](int t) { return mulc(s.a[i][t], s.a[k][t]); });
      MIMORX_UNROLL
      for (int t = 0; t < M; ++t) s.a[k][t] = sub(s.a[k][t], mul(s.a[i][t], c));
      s.r[k][i] = add(s.r[k][i], c);
    }
    const float sk = fixed_rowsum<M, G, float>([&](int t) { return abs2(s.a[k][t]); });
    if (!(sk > tol2)) {
      status = qr_rank_deficient;
      MIMORX_UNROLL
      for (int t = 0; t < M; ++t) s.a[k][t] = zero<T>();
    } else {
      const float rkk = fsqrt(sk);
      s.r[k][k] = from_real<T>(rkk);
      const float inv = fdiv(1.f, rkk);
      MIMORX_UNROLL
      for (int t = 0; t < M; ++t) s.a[k][t] = scale(s.a[k][t], inv);
      if constexpr (N > 1) fixed_project(s, nrm, k);
    }
  }
  return status;
}

// Column c of the model matrix into a[j] (the rows of one column), from the complex channel
// read through hget(index) (index = column * nr + row, column-major nr x nt).
template <class T, int NR, int NT, int M, class HGet>
MIMORX_HD void fixed_load_column(QrModel model, HGet& hget, int c, T (&col)[M]) {
  if constexpr (std::is_same_v<T, cf32>) {
    (void)model;
    MIMORX_UNROLL
    for (int i = 0; i < M; ++i) col[i] = hget(c * NR + i);
  } else if (model == QrModel::rvd) {
    // [Re, -Im; Im, Re] (see real_model_entry)
    const bool right = c >= NT;
    const int cc = right ? c - NT : c;
    MIMORX_UNROLL
    for (int i = 0; i < NR; ++i) {
      const cf32 v = hget(cc * NR + i);
      col[i] = right ? -v.im : v.re;
      col[i + NR] = right ? v.re : v.im;
    }
  } else {
    const bool odd = (c & 1) != 0;
    const int cc = c >> 1;
    MIMORX_UNROLL
    for (int i = 0; i < NR; ++i) {
      const cf32 v = hget(cc * NR + i);
      col[2 * i] = odd ? -v.im : v.re;
      col[2 * i + 1] = odd ? v.re : v.im;
    }
  }
}

// Loads columns perm[0..N) of the model matrix; false when one is not finite.
template <class T, int NR, int NT, int M, int N, class HGet>
MIMORX_HD bool fixed_load(QrModel model, HGet& hget, QrFixed<T, M, N>& s) {
  bool ok = true;
  MIMORX_UNROLL
  for (int j = 0; j < N; ++j) {
    fixed_load_column<T, NR, NT, M>(model, hget, s.perm[j], s.a[j]);
    MIMORX_UNROLL
    for (int i = 0; i < M; ++i) ok = ok && hd::finite(s.a[j][i]);
  }
  return ok;
}

template <class T, int NR>
inline constexpr int fixed_rows = std::is_same_v<T, cf32> ? NR : 2 * NR;

// Entry t of the model vector of y (NR complex entries), as model_y / real_model_y.
template <class T, int NR>
MIMORX_HD T fixed_model_y(QrModel model, const cf32 (&y)[NR], int t) {
  if constexpr (std::is_same_v<T, cf32>) {
    (void)model;
    return y[t];
  } else if (model == QrModel::rvd) {
    return t < NR ? y[t].re : y[t - NR].im;
  } else {
    return (t & 1) ? y[t >> 1].im : y[t >> 1].re;
  }
}

// The MRVD real form of a complex QR: every complex entry x becomes the 2x2 block
// [Re x, -Im x; Im x, Re x] (rows/columns 2i = Re, 2i + 1 = Im, as real_model_entry). The
// negation is 0 - x so that zeros stay +0 (the diagonal blocks are exactly [r, 0; 0, r]).
// realform(H) = realform(Q) realform(R) with realform(Q) orthonormal and realform(R) upper
// triangular with a positive diagonal: by uniqueness the real QR of the MRVD matrix.
template <int NR, int NT>
MIMORX_HD void fixed_mrvd_real_form(const QrFixed<cf32, NR, NT>& c,
                                    QrFixed<float, 2 * NR, 2 * NT>& s) {
  MIMORX_UNROLL
  for (int j = 0; j < NT; ++j) {
    MIMORX_UNROLL
    for (int i = 0; i < NR; ++i) {
      const cf32 q = c.a[j][i];
      s.a[2 * j][2 * i] = q.re;
      s.a[2 * j][2 * i + 1] = q.im;
      s.a[2 * j + 1][2 * i] = hd::fsub(0.f, q.im);
      s.a[2 * j + 1][2 * i + 1] = q.re;
    }
    MIMORX_UNROLL
    for (int i = 0; i <= j; ++i) {
      const cf32 r = c.r[j][i];
      s.r[2 * j][2 * i] = r.re;
      s.r[2 * j][2 * i + 1] = r.im;  // below the diagonal when i == j (never written out)
      s.r[2 * j + 1][2 * i] = hd::fsub(0.f, r.im);
      s.r[2 * j + 1][2 * i + 1] = r.re;
    }
  }
}

// qr_problem() up to the outputs for channel c whose H is read through hget: the order check,
// the load, the decomposition (twice for sorted with a rotation), and zeroed a and r when the
// channel is not usable (non-finite H or a bad order). s.perm is what qr_problem writes.
// PATH (real models only, see kFixedDirect): with kFixedViaComplex[IfPaired] a channel whose
// order pairs the columns is decomposed as the complex nr x nt QR with column order
// perm[2p] / 2 and written in its MRVD real form. Statuses keep their meaning: the order is
// checked on the real order, as on the real path; non-finite H is the same test on the same
// values; the rank threshold is the same (64 eps relative to the largest column norm^2, which
// is the same for a complex column and both of its real columns), applied once per symbol to
// the complex remaining norm^2, which mathematically equals the remaining norm^2 of both real
// columns 2k and 2k + 1 in the real MGS (the real path tests them separately, so rounding could
// flag only one of them there; here both columns of the symbol are flagged and zeroed together).
template <class T, int NR, int NT, int PATH = kFixedDirect, class HGet>
MIMORX_HD void qr_fixed_problem(const QrArgs& a, std::int64_t c, HGet hget,
                                QrFixed<T, fixed_rows<T, NR>, fixed_rows<T, NT>>& s) {
  constexpr int M = fixed_rows<T, NR>, N = fixed_rows<T, NT>;
  static_assert(PATH == kFixedDirect || std::is_same_v<T, float>, "complex models go direct");
  s.via_complex = false;
  const int* base = a.order ? a.order + (a.order_per_channel ? c * N : 0) : nullptr;
  const int rot0 = a.sorted ? 0 : a.rotation;
  unsigned seen = 0;  // N <= 8
  bool order_ok = true;
  MIMORX_UNROLL
  for (int j = 0; j < N; ++j) {
    const int k = j + rot0 < N ? j + rot0 : j + rot0 - N;
    int col = base ? base[k] : k;
    if (col < 0 || col >= N || ((seen >> col) & 1u)) {
      order_ok = false;
      col = j;  // never read outside H
    } else {
      seen |= 1u << col;
    }
    s.perm[j] = col;
  }
  int status = qr_ok;
  bool paired = PATH == kFixedViaComplex;
  if constexpr (PATH == kFixedViaComplexIfPaired) {
    paired = order_ok;
    MIMORX_UNROLL
    for (int p = 0; p < N / 2; ++p)
      paired = paired && (s.perm[2 * p] & 1) == 0 && s.perm[2 * p + 1] == s.perm[2 * p] + 1;
  }
  if (!order_ok) {
    status = qr_bad_order;
  } else if (PATH != kFixedDirect && paired) {
    if constexpr (PATH != kFixedDirect) {
      QrFixed<cf32, NR, NT> cs;
      MIMORX_UNROLL
      for (int p = 0; p < NT; ++p) cs.perm[p] = s.perm[2 * p] >> 1;
      if (!fixed_load<cf32, NR, NT>(QrModel::complex, hget, cs)) {
        status = qr_non_finite;
      } else {
        status = fixed_mgs(cs, false, kQrRankTolerance);
        fixed_mrvd_real_form(cs, s);
      }
      s.via_complex = true;
    }
  } else if (!fixed_load<T, NR, NT>(a.model, hget, s)) {
    status = qr_non_finite;
  } else {
    status = fixed_mgs(s, a.sorted, kQrRankTolerance);
    if (a.sorted && a.rotation != 0) {
      // rotate_left(perm, rotation): perm[j] <- perm[(j + rotation) % N]
      int rotated[N];
      MIMORX_UNROLL
      for (int j = 0; j < N; ++j) {
        const int from = j + a.rotation < N ? j + a.rotation : j + a.rotation - N;
        int v = s.perm[0];
        MIMORX_UNROLL
        for (int u = 1; u < N; ++u) v = from == u ? s.perm[u] : v;
        rotated[j] = v;
      }
      MIMORX_UNROLL
      for (int j = 0; j < N; ++j) s.perm[j] = rotated[j];
      fixed_load<T, NR, NT>(a.model, hget, s);
      status = fixed_mgs(s, false, kQrRankTolerance);
    }
  }
  if (status == qr_non_finite || status == qr_bad_order) {
    MIMORX_UNROLL
    for (int j = 0; j < N; ++j) {
      MIMORX_UNROLL
      for (int i = 0; i < M; ++i) s.a[j][i] = hd::zero<T>();
      MIMORX_UNROLL
      for (int i = 0; i <= j; ++i) s.r[j][i] = hd::zero<T>();
    }
  }
  s.status = status;
}

// z = Q^H y for the vectors of channel c (after qr_fixed_problem); updates s.status to
// qr_non_finite when a vector is not finite, as qr_problem does.
template <class T, int NR, int M, int N>
MIMORX_HD void qr_fixed_qhy(const QrArgs& a, std::int64_t c, QrFixed<T, M, N>& s) {
  constexpr int G = qr_group_size(M);
  const bool ok = s.status != qr_non_finite && s.status != qr_bad_order;
  for (int u = 0; u < a.vpc; ++u) {
    const std::int64_t v = c * a.vpc + u;
    const cf32* y = a.y + v * a.y_stride;
    T* z = static_cast<T*>(a.z) + v * a.z_stride;
    cf32 yc[NR];
    bool yok = true;
    MIMORX_UNROLL
    for (int t = 0; t < NR; ++t) {
      yc[t] = y[t];
      yok = yok && hd::finite(yc[t]);
    }
    bool direct = true;
    if constexpr (std::is_same_v<T, float> && M % 2 == 0 && N % 2 == 0) {
      if (s.via_complex) {
        // z = Q^H y of the complex QR (the complex model's arithmetic), in the MRVD layout:
        // Q_r^T y_r = (Re z_0, Im z_0, Re z_1, ...).
        direct = false;
        constexpr int GC = qr_group_size(NR);
        MIMORX_UNROLL
        for (int j = 0; j < N / 2; ++j) {
          cf32 sum = hd::zero<cf32>();
          if (ok && yok) {
            sum = fixed_rowsum<NR, GC, cf32>([&](int t) {
              return hd::mulc(cf32(s.a[2 * j][2 * t], s.a[2 * j][2 * t + 1]), yc[t]);
            });
          }
          z[2 * j] = sum.re;
          z[2 * j + 1] = sum.im;
        }
      }
    }
    if (direct) {
      T ym[M];
      MIMORX_UNROLL
      for (int t = 0; t < M; ++t) ym[t] = fixed_model_y<T, NR>(a.model, yc, t);
      MIMORX_UNROLL
      for (int j = 0; j < N; ++j) {
        T sum = hd::zero<T>();
        if (ok && yok)
          sum = fixed_rowsum<M, G, T>([&](int t) { return hd::mulc(s.a[j][t], ym[t]); });
        z[j] = sum;
      }
    }
    if (!yok) s.status = qr_non_finite;
  }
}

// Writes q, r and perm of channel c straight to the outputs (the CPU path; the kernel stages
// them in shared memory for coalesced stores). The status is written by the caller after z.
template <class T, int M, int N>
MIMORX_HD void qr_fixed_store(const QrArgs& a, std::int64_t c, const QrFixed<T, M, N>& s) {
  if (a.q) {
    T* q = static_cast<T*>(a.q) + c * a.q_stride;
    for (int j = 0; j < N; ++j)
      for (int i = 0; i < M; ++i) q[j * M + i] = s.a[j][i];
  }
  if (a.r) {
    T* r = static_cast<T*>(a.r) + c * a.r_stride;
    for (int j = 0; j < N; ++j)
      for (int i = 0; i < N; ++i) r[j * N + i] = i <= j ? s.r[j][i] : hd::zero<T>();
  }
  if (a.perm) {
    for (int j = 0; j < N; ++j) a.perm[c * N + j] = s.perm[j];
  }
}

// Calls f.template operator()<T, NR, NT, PATH>() for the plan's shape when it has a fixed-size
// instantiation (T = cf32 for the complex model, float for the real ones; PATH =
// qr_fixed_real_path(a), always kFixedDirect for the complex model); false otherwise.
template <int NR, int NT, class F>
bool qr_fixed_dispatch_from(const QrArgs& a, F& f) {
  if (a.nr == NR && a.nt == NT) {
    if (a.model == QrModel::complex) {
      f.template operator()<cf32, NR, NT, kFixedDirect>();
    } else {
      switch (qr_fixed_real_path(a)) {
        case kFixedViaComplex:
          f.template operator()<float, NR, NT, kFixedViaComplex>();
          break;
        case kFixedViaComplexIfPaired:
          f.template operator()<float, NR, NT, kFixedViaComplexIfPaired>();
          break;
        default:
          f.template operator()<float, NR, NT, kFixedDirect>();
          break;
      }
    }
    return true;
  }
  if constexpr (NT < NR) {
    return qr_fixed_dispatch_from<NR, NT + 1>(a, f);
  } else if constexpr (NR < kQrFixedMaxNr) {
    return qr_fixed_dispatch_from<NR + 1, 1>(a, f);
  } else {
    return false;
  }
}
template <class F>
bool qr_fixed_dispatch(const QrArgs& a, F&& f) {
  if (!qr_fixed_shape(a.nr, a.nt)) return false;
  return qr_fixed_dispatch_from<1, 1>(a, f);
}

}  // namespace mimorx::linalg::detail

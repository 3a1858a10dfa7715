#include <gtest/gtest.h>

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <complex>
#include <cstring>
#include <limits>
#include <numeric>
#include <random>
#include <tuple>
#include <type_traits>
#include <vector>

#include "linalg/qr_fixed.hpp"
#include "linalg/qr_internal.hpp"
#include "mimorx/core/rng.hpp"
#include "mimorx/linalg/qr.hpp"
#include "support/gpu.hpp"

namespace mimorx::linalg {
namespace {

using Cd = std::complex<double>;
using MatC = Eigen::Matrix<Cd, Eigen::Dynamic, Eigen::Dynamic>;
using MatR = Eigen::MatrixXd;

// i.i.d. CN(0, 1) entries from the Philox stream (seed, stream).
Buffer<cf32> gaussian_cf32(std::uint64_t seed, std::uint64_t stream, std::int64_t n) {
  Buffer<cf32> b = Buffer<cf32>::host(std::size_t(n));
  const float s = std::sqrt(0.5f);
  for (std::int64_t i = 0; i < n; ++i)
    b[i] = cf32(s * rng::gaussian_at(seed, stream, 2 * i),
                s * rng::gaussian_at(seed, stream, 2 * i + 1));
  return b;
}

MatC to_eigen(const cf32* p, int rows, int cols) {
  MatC m(rows, cols);
  for (int j = 0; j < cols; ++j)
    for (int i = 0; i < rows; ++i) m(i, j) = Cd(p[j * rows + i].re, p[j * rows + i].im);
  return m;
}
MatR to_eigen(const float* p, int rows, int cols) {
  MatR m(rows, cols);
  for (int j = 0; j < cols; ++j)
    for (int i = 0; i < rows; ++i) m(i, j) = p[j * rows + i];
  return m;
}
template <class Mat>
Mat permuted(const Mat& h, const int* perm) {
  Mat p(h.rows(), h.cols());
  for (int j = 0; j < h.cols(); ++j) p.col(j) = h.col(perm[j]);
  return p;
}
bool is_permutation(const int* p, int n) {
  std::vector<int> v(p, p + n);
  std::sort(v.begin(), v.end());
  for (int i = 0; i < n; ++i)
    if (v[i] != i) return false;
  return true;
}

// Holds a plan's outputs on the host for one configuration.
struct Result {
  Buffer<cf32> q, r, z;
  Buffer<float> qr_, rr, zr;
  Buffer<int> perm, status;
};

Result run_qr(const QrConfig& cfg, const Backend& be, const Buffer<cf32>& h_host, std::int64_t C,
              const Buffer<cf32>* y_host = nullptr, int vpc = 1,
              const Buffer<int>* order_host = nullptr) {
  QrPlan plan(cfg, be);
  const int m = plan.rows(), n = plan.cols();
  const bool cplx = cfg.model == QrModel::complex;
  const std::int64_t V = C * vpc;
  const Memory mem = be.is_cuda() ? Memory::device : Memory::host;
  Buffer<cf32> h(h_host.size(), mem);
  h.copy_from(h_host);
  Buffer<cf32> y;
  if (y_host) {
    y = Buffer<cf32>(y_host->size(), mem);
    y.copy_from(*y_host);
  }
  Buffer<int> order;
  if (order_host) {
    order = Buffer<int>(order_host->size(), mem);
    order.copy_from(*order_host);
  }
  Buffer<cf32> q(cplx ? C * m * n : 0, mem), r(cplx ? C * n * n : 0, mem),
      z(cplx && y_host ? V * n : 0, mem);
  Buffer<float> qr_(cplx ? 0 : C * m * n, mem), rr(cplx ? 0 : C * n * n, mem),
      zr(!cplx && y_host ? V * n : 0, mem);
  Buffer<int> perm(C * n, mem), status(C, mem);
  QrInput in;
  in.h = MatrixBatch<const cf32>(h.data(), C, cfg.nr, cfg.nt, h.where());
  if (y_host) in.y = MatrixBatch<const cf32>(y.data(), V, cfg.nr, 1, y.where());
  in.vectors_per_channel = vpc;
  if (order_host) in.order = View<const int>(order);
  QrOutput out;
  if (cplx) {
    out.q = MatrixBatch<cf32>::over(q, C, m, n);
    out.r = MatrixBatch<cf32>::over(r, C, n, n);
    if (y_host) out.z = MatrixBatch<cf32>::over(z, V, n, 1);
  } else {
    out.q_real = MatrixBatch<float>::over(qr_, C, m, n);
    out.r_real = MatrixBatch<float>::over(rr, C, n, n);
    if (y_host) out.z_real = MatrixBatch<float>::over(zr, V, n, 1);
  }
  out.perm = View<int>(perm);
  out.status = View<int>(status);
  plan.run(in, out);
  auto host = [](auto& b) {
    using T = std::remove_reference_t<decltype(b[0])>;
    Buffer<T> hb = Buffer<T>::host(b.size());
    if (b.size()) hb.copy_from(b);
    return hb;
  };
  return Result{host(q), host(r), host(z), host(qr_), host(rr), host(zr), host(perm), host(status)};
}

struct Case {
  int nr, nt;
};
const Case kCases[] = {{1, 1}, {2, 2}, {3, 1}, {4, 4}, {8, 4}, {6, 5}, {16, 8}, {8, 8}};

// Complex model against Eigen's Householder QR in double precision.
TEST(Qr, ComplexMatchesEigenHouseholder) {
  const auto seed = test::fresh_seed();
  for (const Case cs : kCases) {
    const std::int64_t C = 200;
    QrConfig cfg{.nr = cs.nr, .nt = cs.nt};
    const auto h = gaussian_cf32(seed, 1 + cs.nr * 100 + cs.nt, C * cs.nr * cs.nt);
    const Result res = run_qr(cfg, Backend::cpu(), h, C);
    const int n = cs.nt, m = cs.nr;
    for (std::int64_t c = 0; c < C; ++c) {
      SCOPED_TRACE(testing::Message() << cs.nr << "x" << cs.nt << " channel " << c);
      ASSERT_EQ(res.status[c], qr_ok);
      for (int j = 0; j < n; ++j) ASSERT_EQ(res.perm[c * n + j], j);
      const MatC H = to_eigen(h.data() + c * m * n, m, n);
      const MatC Q = to_eigen(res.q.data() + c * m * n, m, n);
      const MatC R = to_eigen(res.r.data() + c * n * n, n, n);
      EXPECT_LT((Q * R - H).norm() / H.norm(), 1e-5);
      EXPECT_LT((Q.adjoint() * Q - MatC::Identity(n, n)).cwiseAbs().maxCoeff(), 1e-5);
      for (int j = 0; j < n; ++j) {
        for (int i = j + 1; i < n; ++i) EXPECT_EQ(R(i, j), Cd(0));
        EXPECT_EQ(R(j, j).imag(), 0.0);
        EXPECT_GT(R(j, j).real(), 0.0);
      }
      // The QR with a positive real diagonal is unique: Eigen's R up to row phases.
      Eigen::HouseholderQR<MatC> hh(H);
      const MatC Re = hh.matrixQR().topRows(n).triangularView<Eigen::Upper>();
      for (int i = 0; i < n; ++i) {
        const Cd ph = Re(i, i) / std::abs(Re(i, i));
        for (int j = i; j < n; ++j)
          EXPECT_NEAR(std::abs(R(i, j) - std::conj(ph) * Re(i, j)), 0.0, 2e-5 * H.norm());
      }
    }
  }
}

TEST(Qr, QhyMatchesEigenWithCoherence) {
  const auto seed = test::fresh_seed();
  const int nr = 6, nt = 4, vpc = 5;
  const std::int64_t C = 50, V = C * vpc;
  const auto h = gaussian_cf32(seed, 11, C * nr * nt);
  const auto y = gaussian_cf32(seed, 12, V * nr);
  for (QrModel model : {QrModel::complex, QrModel::rvd, QrModel::mrvd}) {
    QrConfig cfg{.nr = nr, .nt = nt, .model = model, .want_q = true, .want_qhy = true};
    const Result res = run_qr(cfg, Backend::cpu(), h, C, &y, vpc);
    for (std::int64_t v = 0; v < V; ++v) {
      const std::int64_t c = v / vpc;
      if (model == QrModel::complex) {
        const MatC Q = to_eigen(res.q.data() + c * nr * nt, nr, nt);
        const MatC yv = to_eigen(y.data() + v * nr, nr, 1);
        const MatC z = to_eigen(res.z.data() + v * nt, nt, 1);
        EXPECT_LT((Q.adjoint() * yv - z).norm(), 1e-5 * (1 + yv.norm()));
      } else {
        const MatR Q = to_eigen(res.qr_.data() + c * 4 * nr * nt, 2 * nr, 2 * nt);
        Buffer<float> yr = Buffer<float>::host(2 * nr);
        to_real_model_y(model, MatrixBatch<const cf32>(y.data() + v * nr, 1, nr, 1, Memory::host),
                        MatrixBatch<float>::over(yr, 1, 2 * nr, 1));
        const MatR z = to_eigen(res.zr.data() + v * 2 * nt, 2 * nt, 1);
        const MatR yv = to_eigen(yr.data(), 2 * nr, 1);
        EXPECT_LT((Q.transpose() * yv - z).norm(), 1e-5 * (1 + yv.norm()));
      }
    }
  }
}

// z does not depend on whether Q is written; a non-finite y flags its channel.
TEST(Qr, QhyWithoutQAndNonFiniteY) {
  const auto seed = test::fresh_seed();
  const int nr = 4, nt = 3, vpc = 2;
  const std::int64_t C = 30, V = C * vpc;
  const auto h = gaussian_cf32(seed, 13, C * nr * nt);
  auto y = gaussian_cf32(seed, 14, V * nr);
  y[15 * nr + 2].im = std::numeric_limits<float>::quiet_NaN();  // vector 15 = channel 7
  for (QrModel model : {QrModel::complex, QrModel::mrvd}) {
    const int n = model_cols(model, nt);
    const Result with =
        run_qr(QrConfig{.nr = nr, .nt = nt, .model = model, .want_q = true, .want_qhy = true},
               Backend::cpu(), h, C, &y, vpc);
    const Result without =
        run_qr(QrConfig{.nr = nr, .nt = nt, .model = model, .want_q = false, .want_qhy = true},
               Backend::cpu(), h, C, &y, vpc);
    for (std::int64_t c = 0; c < C; ++c) {
      EXPECT_EQ(with.status[c], c == 7 ? qr_non_finite : qr_ok);
      EXPECT_EQ(without.status[c], with.status[c]);
    }
    for (std::int64_t i = 0; i < V * n; ++i) {
      if (model == QrModel::complex) {
        EXPECT_EQ(with.z[i], without.z[i]);
        if (i / n == 15) {
          EXPECT_EQ(with.z[i], cf32(0.f, 0.f));
        }
        EXPECT_TRUE(std::isfinite(with.z[i].re) && std::isfinite(with.z[i].im));
      } else {
        EXPECT_EQ(with.zr[i], without.zr[i]);
        if (i / n == 15) {
          EXPECT_EQ(with.zr[i], 0.f);
        }
        EXPECT_TRUE(std::isfinite(with.zr[i]));
      }
    }
  }
}

// Real-valued models: Q_r R_r reproduces the real model matrix, Q_r is orthonormal, and for
// MRVD without sorting R_r is the 2x2-block image of the complex R.
TEST(Qr, RealModelsReproduceRealChannel) {
  const auto seed = test::fresh_seed();
  for (const Case cs : kCases) {
    const std::int64_t C = 100;
    const int m = 2 * cs.nr, n = 2 * cs.nt;
    const auto h = gaussian_cf32(seed, 2000 + cs.nr * 100 + cs.nt, C * cs.nr * cs.nt);
    const Result cres = run_qr(QrConfig{.nr = cs.nr, .nt = cs.nt}, Backend::cpu(), h, C);
    for (QrModel model : {QrModel::rvd, QrModel::mrvd}) {
      for (bool sorted : {false, true}) {
        QrConfig cfg{.nr = cs.nr, .nt = cs.nt, .model = model, .sorted = sorted};
        const Result res = run_qr(cfg, Backend::cpu(), h, C);
        Buffer<float> hr = Buffer<float>::host(C * m * n);
        to_real_model(model, MatrixBatch<const cf32>(h.data(), C, cs.nr, cs.nt, Memory::host),
                      MatrixBatch<float>::over(hr, C, m, n));
        for (std::int64_t c = 0; c < C; ++c) {
          SCOPED_TRACE(testing::Message() << cs.nr << "x" << cs.nt << " model " << int(model)
                                          << " sorted " << sorted << " channel " << c);
          ASSERT_EQ(res.status[c], qr_ok);
          ASSERT_TRUE(is_permutation(res.perm.data() + c * n, n));
          const MatR H = permuted(to_eigen(hr.data() + c * m * n, m, n), res.perm.data() + c * n);
          const MatR Q = to_eigen(res.qr_.data() + c * m * n, m, n);
          const MatR R = to_eigen(res.rr.data() + c * n * n, n, n);
          EXPECT_LT((Q * R - H).norm() / H.norm(), 1e-5);
          EXPECT_LT((Q.transpose() * Q - MatR::Identity(n, n)).cwiseAbs().maxCoeff(), 1e-5);
          for (int j = 0; j < n; ++j) {
            for (int i = j + 1; i < n; ++i) EXPECT_EQ(R(i, j), 0.0);
            EXPECT_GT(R(j, j), 0.0);
          }
          if (model == QrModel::mrvd && !sorted) {
            const MatC Rc = to_eigen(cres.r.data() + c * cs.nt * cs.nt, cs.nt, cs.nt);
            for (int j = 0; j < cs.nt; ++j)
              for (int i = 0; i <= j; ++i) {
                const double tol = 2e-5 * H.norm();
                EXPECT_NEAR(R(2 * i, 2 * j), Rc(i, j).real(), tol);
                EXPECT_NEAR(R(2 * i + 1, 2 * j), Rc(i, j).imag(), tol);
                EXPECT_NEAR(R(2 * i, 2 * j + 1), -Rc(i, j).imag(), tol);
                EXPECT_NEAR(R(2 * i + 1, 2 * j + 1), Rc(i, j).real(), tol);
              }
          }
        }
      }
    }
  }
}

// SQRD: step k picks the remaining column of least norm after projecting out the columns
// chosen before it (checked in double precision), so r_kk^2 equals that minimum.
TEST(Qr, SortedPicksMinimumNormColumn) {
  const auto seed = test::fresh_seed();
  for (const Case cs : kCases) {
    const std::int64_t C = 100;
    const int m = cs.nr, n = cs.nt;
    const auto h = gaussian_cf32(seed, 3000 + cs.nr * 100 + cs.nt, C * m * n);
    const Result res = run_qr(QrConfig{.nr = m, .nt = n, .sorted = true}, Backend::cpu(), h, C);
    int non_identity = 0;
    for (std::int64_t c = 0; c < C; ++c) {
      SCOPED_TRACE(testing::Message() << m << "x" << n << " channel " << c);
      const int* p = res.perm.data() + c * n;
      ASSERT_TRUE(is_permutation(p, n));
      const MatC H = to_eigen(h.data() + c * m * n, m, n);
      const MatC R = to_eigen(res.r.data() + c * n * n, n, n);
      const MatC Q = to_eigen(res.q.data() + c * m * n, m, n);
      EXPECT_LT((Q * R - permuted(H, p)).norm() / H.norm(), 1e-5);
      for (int k = 0; k < n; ++k) {
        // Orthonormal basis of the chosen columns, in double.
        MatC B = permuted(H, p).leftCols(k);
        MatC P = MatC::Identity(m, m);
        if (k > 0) {
          Eigen::HouseholderQR<MatC> qr(B);
          const MatC Qk = qr.householderQ() * MatC::Identity(m, k);
          P -= Qk * Qk.adjoint();
        }
        double best = std::numeric_limits<double>::infinity();
        for (int l = k; l < n; ++l) best = std::min(best, (P * H.col(p[l])).squaredNorm());
        const double rkk2 = std::norm(R(k, k));
        EXPECT_NEAR(rkk2, best, 1e-4 * H.squaredNorm());
      }
      for (int j = 0; j < n; ++j) non_identity += p[j] != j;
    }
    if (n > 1) {
      EXPECT_GT(non_identity, 0) << "sorting never changed the order";
    }
  }
}

TEST(Qr, RotationAndExplicitOrder) {
  const auto seed = test::fresh_seed();
  const int nr = 4, nt = 4;
  const std::int64_t C = 64;
  const auto h = gaussian_cf32(seed, 21, C * nr * nt);
  for (QrModel model : {QrModel::complex, QrModel::mrvd}) {
    const int n = model_cols(model, nt);
    // Per-channel random orders.
    Buffer<int> order = Buffer<int>::host(C * n);
    for (std::int64_t c = 0; c < C; ++c) {
      std::iota(order.data() + c * n, order.data() + (c + 1) * n, 0);
      for (int j = n - 1; j > 0; --j) {
        const int k = int(rng::uniform_at(seed, 22, c * n + j) * float(j + 1)) % (j + 1);
        std::swap(order[c * n + j], order[c * n + k]);
      }
    }
    for (int rot : {0, 1, n - 1}) {
      const Result plain = run_qr(QrConfig{.nr = nr, .nt = nt, .model = model, .rotation = rot},
                                  Backend::cpu(), h, C);
      const Result ord = run_qr(QrConfig{.nr = nr, .nt = nt, .model = model, .rotation = rot},
                                Backend::cpu(), h, C, nullptr, 1, &order);
      const Result sorted = run_qr(QrConfig{.nr = nr, .nt = nt, .model = model, .sorted = true},
                                   Backend::cpu(), h, C);
      const Result sorted_rot =
          run_qr(QrConfig{.nr = nr, .nt = nt, .model = model, .sorted = true, .rotation = rot},
                 Backend::cpu(), h, C);
      for (std::int64_t c = 0; c < C; ++c) {
        for (int j = 0; j < n; ++j) {
          EXPECT_EQ(plain.perm[c * n + j], (j + rot) % n);
          EXPECT_EQ(ord.perm[c * n + j], order[c * n + (j + rot) % n]);
          EXPECT_EQ(sorted_rot.perm[c * n + j], sorted.perm[c * n + (j + rot) % n]);
        }
        // The decomposition is of the permuted matrix.
        if (model == QrModel::complex) {
          const MatC H =
              permuted(to_eigen(h.data() + c * nr * nt, nr, nt), ord.perm.data() + c * n);
          const MatC Q = to_eigen(ord.q.data() + c * nr * nt, nr, nt);
          const MatC R = to_eigen(ord.r.data() + c * nt * nt, nt, nt);
          EXPECT_LT((Q * R - H).norm() / H.norm(), 1e-5);
        }
      }
    }
  }
}

TEST(Qr, BadInputIsRejected) {
  EXPECT_THROW(QrPlan(QrConfig{.nr = 2, .nt = 4}, Backend::cpu()), InvalidArgument);
  EXPECT_THROW(QrPlan(QrConfig{.nr = 0, .nt = 0}, Backend::cpu()), InvalidArgument);
  EXPECT_THROW(QrPlan(QrConfig{.nr = 4, .nt = 4, .rotation = 4}, Backend::cpu()), InvalidArgument);
  EXPECT_NO_THROW(
      QrPlan(QrConfig{.nr = 4, .nt = 4, .model = QrModel::rvd, .rotation = 7}, Backend::cpu()));
  try {
    QrPlan(QrConfig{.nr = 2, .nt = 3}, Backend::cpu());
    FAIL();
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("nr=2"), std::string::npos) << e.what();
  }
  const auto seed = test::fresh_seed();
  const std::int64_t C = 8;
  auto h = gaussian_cf32(seed, 31, C * 16);
  QrPlan plan(QrConfig{.nr = 4, .nt = 4}, Backend::cpu());
  Buffer<cf32> q = Buffer<cf32>::host(C * 16), r = Buffer<cf32>::host(C * 16);
  QrOutput out{.q = MatrixBatch<cf32>::over(q, C, 4, 4), .r = MatrixBatch<cf32>::over(r, C, 4, 4)};
  QrInput in{.h = MatrixBatch<const cf32>(h.data(), C, 4, 4, Memory::host)};
  EXPECT_NO_THROW(plan.run(in, out));
  // Wrong shapes and an order that is no permutation.
  QrInput bad = in;
  bad.h.cols = 3;
  EXPECT_THROW(plan.run(bad, out), InvalidArgument);
  Buffer<int> order = Buffer<int>::host(4);
  order[0] = 0, order[1] = 1, order[2] = 1, order[3] = 3;
  bad = in;
  bad.order = View<const int>(order);
  EXPECT_THROW(plan.run(bad, out), InvalidArgument);
  // Rank deficiency: column 2 of channel 3 equals column 0 times a complex factor.
  for (int i = 0; i < 4; ++i) h[3 * 16 + 2 * 4 + i] = h[3 * 16 + i] * cf32(0.5f, -2.f);
  EXPECT_THROW(plan.run(in, out), NumericalError);
  Buffer<int> status = Buffer<int>::host(C);
  out.status = View<int>(status);
  EXPECT_NO_THROW(plan.run(in, out));
  for (std::int64_t c = 0; c < C; ++c) EXPECT_EQ(status[c], c == 3 ? qr_rank_deficient : qr_ok);
  for (int i = 0; i < 16; ++i) EXPECT_TRUE(std::isfinite(q[3 * 16 + i].re));
  // NaN: flagged, outputs zero, and without a status view an InvalidArgument naming h.
  h[5 * 16 + 7].im = std::numeric_limits<float>::quiet_NaN();
  EXPECT_NO_THROW(plan.run(in, out));
  EXPECT_EQ(status[5], qr_non_finite);
  for (int i = 0; i < 16; ++i) EXPECT_EQ(q[5 * 16 + i], cf32(0.f, 0.f));
  out.status = {};
  try {
    plan.run(in, out);
    FAIL();
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("channel 3"), std::string::npos) << e.what();
  } catch (const NumericalError& e) {
    EXPECT_NE(std::string(e.what()).find("channel 3"), std::string::npos) << e.what();
  }
  // Host memory given to a CUDA plan (only where CUDA exists).
  if (cuda_available()) {
    QrPlan gplan(QrConfig{.nr = 4, .nt = 4}, Backend::cuda());
    EXPECT_THROW(gplan.run(in, out), InvalidArgument);
  }
}

// The fixed-size specialisation (registers, unrolled; what the GPU runs for nr <= 4) computes
// bit for bit what the general routine (qr_problem with SerialRows{G}) computes, including
// rank-deficient channels, SQRD ties (duplicate columns), non-finite H or y, bad orders,
// explicit orders and rotations. Exception: unsorted MRVD channels whose column order pairs
// each symbol's real columns (2p, 2p + 1) are computed as the real form of the complex QR
// (qr_fixed_problem's kFixedViaComplex); for them permutation and status must still be equal,
// and Q, R, z must be a valid real QR within the Eigen comparison's tolerance (bitwise equal
// zeros where the channel is not usable).
// First index where two arrays differ in their bits, or -1.
template <class V>
long first_difference(const V& x, const V& y) {
  for (std::size_t i = 0; i < x.size(); ++i)
    if (std::memcmp(&x[i], &y[i], sizeof(x[i])) != 0) return long(i);
  return -1;
}
// Bit equality of count elements at offset off.
template <class V>
bool same_bits(const V& x, const V& y, std::size_t off, std::size_t count) {
  return count == 0 || std::memcmp(&x[off], &y[off], count * sizeof(x[0])) == 0;
}

TEST(Qr, FixedSizePathIsBitIdenticalToGeneral) {
  const auto seed = test::fresh_seed();
  const Case shapes[] = {{1, 1}, {2, 1}, {2, 2}, {3, 2}, {3, 3}, {4, 1}, {4, 3}, {4, 4}};
  for (const Case cs : shapes) {
    const std::int64_t C = 300;
    const int vpc = 2;
    auto h = gaussian_cf32(seed, 7000 + cs.nr * 10 + cs.nt, C * cs.nr * cs.nt);
    auto y = gaussian_cf32(seed, 8000 + cs.nr * 10 + cs.nt, C * vpc * cs.nr);
    const int hs = cs.nr * cs.nt;
    for (std::int64_t c = 0; c < C; c += 7) {
      // Duplicate and dependent columns: SQRD ties and rank deficiency.
      if (cs.nt >= 2) {
        for (int i = 0; i < cs.nr; ++i) h[c * hs + cs.nr + i] = h[c * hs + i];
        if (c % 14 == 0)
          for (int i = 0; i < cs.nr; ++i) h[c * hs + cs.nr + i] = h[c * hs + i] * cf32(0.f, -2.f);
      }
    }
    h[5 * hs].im = std::numeric_limits<float>::quiet_NaN();
    y[11 * vpc * cs.nr].re = std::numeric_limits<float>::infinity();
    for (QrModel model : {QrModel::complex, QrModel::rvd, QrModel::mrvd}) {
      const int m = model_rows(model, cs.nr), n = model_cols(model, cs.nt);
      // Per-channel random orders with some that are no permutation.
      std::vector<int> order(std::size_t(C) * n);
      std::mt19937 gen(unsigned(seed) + unsigned(m * 31 + n));
      for (std::int64_t c = 0; c < C; ++c) {
        std::iota(order.begin() + c * n, order.begin() + (c + 1) * n, 0);
        std::shuffle(order.begin() + c * n, order.begin() + (c + 1) * n, gen);
      }
      // Every fifth channel: an order whose rotated real order pairs the MRVD columns (a
      // random symbol order, columns 2p, 2p + 1 of each symbol kept adjacent and in order).
      if (model == QrModel::mrvd) {
        const int rot = n / 2;  // variant 2's rotation
        std::vector<int> sym(static_cast<std::size_t>(cs.nt)), paired(static_cast<std::size_t>(n));
        for (std::int64_t c = 0; c < C; c += 5) {
          std::iota(sym.begin(), sym.end(), 0);
          std::shuffle(sym.begin(), sym.end(), gen);
          for (int p = 0; p < cs.nt; ++p)
            paired[2 * p] = 2 * sym[p], paired[2 * p + 1] = 2 * sym[p] + 1;
          for (int j = 0; j < n; ++j) order[c * n + (j + rot) % n] = paired[j];
        }
      }
      if (n > 1) order[13 * n] = order[13 * n + 1];
      order[17 * n] = n;
      for (int variant = 0; variant < 5; ++variant) {
        const bool sorted = variant >= 3;
        const int rotation = variant == 1 || variant == 4 ? n - 1 : variant == 2 ? n / 2 : 0;
        const bool with_order = variant == 2;
        SCOPED_TRACE(testing::Message()
                     << cs.nr << "x" << cs.nt << " model " << int(model) << " variant " << variant);
        detail::QrArgs a;
        a.nr = cs.nr, a.nt = cs.nt, a.m = m, a.n = n, a.model = model, a.sorted = sorted;
        a.rotation = rotation, a.channels = C, a.h = h.data(), a.h_stride = hs;
        a.y = y.data(), a.y_stride = cs.nr, a.vpc = vpc, a.z_stride = n;
        if (with_order) a.order = order.data(), a.order_per_channel = true;
        a.q_stride = std::int64_t(m) * n, a.r_stride = std::int64_t(n) * n;
        auto both = [&]<class T>(T) {
          std::vector<T> q(std::size_t(C) * m * n), r(std::size_t(C) * n * n),
              z(std::size_t(C) * vpc * n);
          std::vector<int> perm(static_cast<std::size_t>(C) * n),
              status(static_cast<std::size_t>(C));
          detail::QrArgs g = a;
          g.q = q.data(), g.r = r.data(), g.z = z.data(), g.perm = perm.data();
          g.status = status.data();
          {
            const SerialRows rows{detail::qr_group_size(m)};
            std::vector<T> wa(std::size_t(m) * n), wr(std::size_t(n) * n);
            std::vector<int> wp(n);
            std::vector<float> wn(n);
            for (std::int64_t c = 0; c < C; ++c)
              detail::qr_problem<T>(rows, g, c, wa.data(), wr.data(), wp.data(), wn.data(), 1);
          }
          std::vector<T> q2(q.size()), r2(r.size()), z2(z.size());
          std::vector<int> perm2(perm.size()), status2(status.size());
          std::vector<char> via(static_cast<std::size_t>(C), 0);
          detail::QrArgs f = a;
          f.q = q2.data(), f.r = r2.data(), f.z = z2.data(), f.perm = perm2.data();
          f.status = status2.data();
          const bool fixed = detail::qr_fixed_dispatch(f, [&]<class U, int NR, int NT, int PATH>() {
            if constexpr (std::is_same_v<U, T>) {
              constexpr int M = detail::fixed_rows<U, NR>, N = detail::fixed_rows<U, NT>;
              for (std::int64_t c = 0; c < C; ++c) {
                const cf32* hc = f.h + c * f.h_stride;
                detail::QrFixed<U, M, N> st;
                detail::qr_fixed_problem<U, NR, NT, PATH>(
                    f, c, [hc](int i) { return hc[i]; }, st);
                detail::qr_fixed_store(f, c, st);
                detail::qr_fixed_qhy<U, NR>(f, c, st);
                f.status[c] = st.status;
                via[std::size_t(c)] = st.via_complex;
              }
            }
          });
          ASSERT_TRUE(fixed);
          EXPECT_EQ(first_difference(perm, perm2), -1);
          EXPECT_EQ(first_difference(status, status2), -1);
          const int path = detail::qr_fixed_real_path(a);
          const bool may_via =
              model == QrModel::mrvd && !sorted && (with_order || rotation % 2 == 0);
          EXPECT_EQ(path != detail::kFixedDirect, may_via);
          int n_via = 0;
          for (std::int64_t c = 0; c < C; ++c) {
            const int* pc = perm.data() + c * n;
            bool pairs = status[c] != qr_bad_order;
            for (int p = 0; p < n / 2; ++p)
              pairs = pairs && pc[2 * p] % 2 == 0 && pc[2 * p + 1] == pc[2 * p] + 1;
            // Exactly the channels whose order pairs the columns go through the complex QR.
            EXPECT_EQ(bool(via[std::size_t(c)]), may_via && pairs) << "channel " << c;
            n_via += via[std::size_t(c)];
            const std::size_t qo = std::size_t(c) * m * n, ro = std::size_t(c) * n * n,
                              zo = std::size_t(c) * vpc * n;
            bool h_ok = true;
            for (int i = 0; i < hs; ++i)
              h_ok = h_ok && std::isfinite(h[c * hs + i].re) && std::isfinite(h[c * hs + i].im);
            const bool usable = h_ok && status[c] != qr_bad_order;
            if (!via[std::size_t(c)] || !usable) {
              EXPECT_TRUE(same_bits(q, q2, qo, std::size_t(m) * n)) << "channel " << c;
              EXPECT_TRUE(same_bits(r, r2, ro, std::size_t(n) * n)) << "channel " << c;
              EXPECT_TRUE(same_bits(z, z2, zo, std::size_t(vpc) * n)) << "channel " << c;
              continue;
            }
            if constexpr (std::is_same_v<T, float>) {
              SCOPED_TRACE(testing::Message() << "via complex, channel " << c);
              Buffer<float> hr = Buffer<float>::host(std::size_t(m) * n);
              to_real_model(
                  model, MatrixBatch<const cf32>(h.data() + c * hs, 1, cs.nr, cs.nt, Memory::host),
                  MatrixBatch<float>::over(hr, 1, m, n));
              const MatR H = permuted(to_eigen(hr.data(), m, n), pc);
              const MatR Q = to_eigen(q2.data() + qo, m, n);
              const MatR R = to_eigen(r2.data() + ro, n, n);
              EXPECT_LT((Q * R - H).norm() / H.norm(), 1e-5);
              MatR D = MatR::Zero(n, n);  // columns zeroed for rank deficiency stay zero
              for (int j = 0; j < n; ++j) D(j, j) = Q.col(j).squaredNorm() > 0 ? 1.0 : 0.0;
              EXPECT_LT((Q.transpose() * Q - D).cwiseAbs().maxCoeff(), 1e-5);
              if (status[c] == qr_ok) {
                EXPECT_EQ(D, MatR::Identity(n, n));
              }
              for (int j = 0; j < n; ++j) {
                for (int i = j + 1; i < n; ++i) EXPECT_EQ(R(i, j), 0.0);
                EXPECT_GE(R(j, j), 0.0);
              }
              for (int u = 0; u < vpc; ++u) {
                const std::int64_t v = c * vpc + u;
                bool y_ok = true;
                for (int t = 0; t < cs.nr; ++t)
                  y_ok = y_ok && std::isfinite(y[v * cs.nr + t].re) &&
                         std::isfinite(y[v * cs.nr + t].im);
                const std::size_t zv = std::size_t(v) * n;
                if (!y_ok) {
                  EXPECT_TRUE(same_bits(z, z2, zv, std::size_t(n)));
                  continue;
                }
                Buffer<float> yr = Buffer<float>::host(std::size_t(m));
                to_real_model_y(
                    model, MatrixBatch<const cf32>(y.data() + v * cs.nr, 1, cs.nr, 1, Memory::host),
                    MatrixBatch<float>::over(yr, 1, m, 1));
                const MatR yv = to_eigen(yr.data(), m, 1);
                const MatR zv2 = to_eigen(z2.data() + zv, n, 1);
                EXPECT_LT((Q.transpose() * yv - zv2).norm(), 1e-5 * (1 + yv.norm()));
              }
            }
          }
          if (may_via) {
            EXPECT_GT(n_via, 0);
          }
          int flagged = 0;
          for (int v : status) flagged += v != qr_ok;
          EXPECT_GT(flagged, 0);
        };
        if (model == QrModel::complex) {
          both(cf32{});
        } else {
          both(0.f);
        }
      }
    }
  }
}

// Unsorted MRVD with paired column orders is computed as the real form of the complex QR: its
// outputs equal, bit for bit, the MRVD real form of the complex model's outputs for the same
// channels (Q, R, z = Q^T y_r, the permutation with symbol p's columns 2p, 2p + 1, the status),
// including rank-deficient and non-finite channels. Rotations r (complex) and 2r (MRVD) and
// explicit orders.
TEST(Qr, MrvdViaComplexIsRealFormOfComplex) {
  const auto seed = test::fresh_seed();
  for (const Case cs : {Case{1, 1}, Case{2, 2}, Case{3, 2}, Case{4, 3}, Case{4, 4}}) {
    const std::int64_t C = 120;
    const int vpc = 2, nr = cs.nr, nt = cs.nt, m = 2 * nr, n = 2 * nt, hs = nr * nt;
    auto h = gaussian_cf32(seed, 9000 + nr * 10 + nt, C * hs);
    auto y = gaussian_cf32(seed, 9100 + nr * 10 + nt, C * vpc * nr);
    if (nt >= 2)
      for (int i = 0; i < nr; ++i) h[3 * hs + nr + i] = h[3 * hs + i] * cf32(0.5f, -2.f);
    h[5 * hs + hs - 1].re = std::numeric_limits<float>::quiet_NaN();
    y[(7 * vpc + 1) * nr].im = std::numeric_limits<float>::infinity();
    // Per-channel symbol orders and their MRVD images.
    Buffer<int> oc = Buffer<int>::host(C * nt), orr = Buffer<int>::host(C * n);
    std::mt19937 gen(unsigned(seed) + unsigned(nr * 7 + nt));
    for (std::int64_t c = 0; c < C; ++c) {
      std::iota(oc.data() + c * nt, oc.data() + (c + 1) * nt, 0);
      std::shuffle(oc.data() + c * nt, oc.data() + (c + 1) * nt, gen);
      for (int p = 0; p < nt; ++p)
        orr[c * n + 2 * p] = 2 * oc[c * nt + p], orr[c * n + 2 * p + 1] = 2 * oc[c * nt + p] + 1;
    }
    for (int rot = 0; rot < nt; ++rot) {
      for (bool with_order : {false, true}) {
        SCOPED_TRACE(testing::Message()
                     << nr << "x" << nt << " rotation " << rot << " order " << with_order);
        const Result cr = run_qr(QrConfig{.nr = nr, .nt = nt, .rotation = rot, .want_qhy = true},
                                 Backend::cpu(), h, C, &y, vpc, with_order ? &oc : nullptr);
        const Result rr = run_qr(
            QrConfig{
                .nr = nr, .nt = nt, .model = QrModel::mrvd, .rotation = 2 * rot, .want_qhy = true},
            Backend::cpu(), h, C, &y, vpc, with_order ? &orr : nullptr);
        // The MRVD real form, negations as 0 - x (zeros stay +0).
        auto block = [](const cf32* x, int rows, int cols, float* out) {
          for (int j = 0; j < cols; ++j)
            for (int i = 0; i < rows; ++i) {
              const cf32 v = x[j * rows + i];
              const int R = 2 * rows;
              out[(2 * j) * R + 2 * i] = v.re;
              out[(2 * j) * R + 2 * i + 1] = v.im;
              out[(2 * j + 1) * R + 2 * i] = 0.f - v.im;
              out[(2 * j + 1) * R + 2 * i + 1] = v.re;
            }
        };
        std::vector<float> qe(std::size_t(C) * m * n), re(std::size_t(C) * n * n);
        for (std::int64_t c = 0; c < C; ++c) {
          block(cr.q.data() + c * hs, nr, nt, qe.data() + c * m * n);
          block(cr.r.data() + c * nt * nt, nt, nt, re.data() + c * n * n);
          for (int j = 0; j < n; ++j)  // below the diagonal: zero (the complex Im r_jj = 0)
            for (int i = j + 1; i < n; ++i) re[std::size_t(c) * n * n + j * n + i] = 0.f;
        }
        std::vector<float> ze(std::size_t(C) * vpc * n);
        for (std::size_t i = 0; i < ze.size() / 2; ++i)
          ze[2 * i] = cr.z[i].re, ze[2 * i + 1] = cr.z[i].im;
        EXPECT_EQ(std::memcmp(qe.data(), rr.qr_.data(), qe.size() * sizeof(float)), 0);
        EXPECT_EQ(std::memcmp(re.data(), rr.rr.data(), re.size() * sizeof(float)), 0);
        EXPECT_EQ(std::memcmp(ze.data(), rr.zr.data(), ze.size() * sizeof(float)), 0);
        for (std::int64_t c = 0; c < C; ++c) {
          ASSERT_EQ(rr.status[c], cr.status[c]) << "channel " << c;
          for (int p = 0; p < nt; ++p) {
            ASSERT_EQ(rr.perm[c * n + 2 * p], 2 * cr.perm[c * nt + p]);
            ASSERT_EQ(rr.perm[c * n + 2 * p + 1], 2 * cr.perm[c * nt + p] + 1);
          }
        }
        EXPECT_EQ(cr.status[5], qr_non_finite);
        EXPECT_EQ(cr.status[7], qr_non_finite);
        if (nt >= 2) {
          EXPECT_EQ(cr.status[3], qr_rank_deficient);
        }
      }
    }
  }
}

// CPU and CUDA run the same correctly rounded operations: results are identical.
TEST(QrGpu, MatchesCpu) {
  MIMORX_REQUIRE_GPU();
  const auto seed = test::fresh_seed();
  for (const Case cs : {Case{4, 4}, Case{8, 4}, Case{2, 2}, Case{16, 8}, Case{16, 16}}) {
    const std::int64_t C = 777;
    const int vpc = 3;
    const auto h = gaussian_cf32(seed, 4000 + cs.nr * 100 + cs.nt, C * cs.nr * cs.nt);
    const auto y = gaussian_cf32(seed, 5000 + cs.nr * 100 + cs.nt, C * vpc * cs.nr);
    // Rotation 1 and 2: unsorted MRVD with an even rotation takes the via-complex path.
    for (const auto& [model, sorted, rot] :
         {std::tuple{QrModel::complex, false, 1}, std::tuple{QrModel::complex, true, 1},
          std::tuple{QrModel::rvd, false, 1}, std::tuple{QrModel::rvd, true, 1},
          std::tuple{QrModel::mrvd, false, 1}, std::tuple{QrModel::mrvd, true, 1},
          std::tuple{QrModel::mrvd, false, 2}, std::tuple{QrModel::mrvd, false, 0}}) {
      {
        const int n = model_cols(model, cs.nt);
        QrConfig cfg{.nr = cs.nr,
                     .nt = cs.nt,
                     .model = model,
                     .sorted = sorted,
                     .rotation = rot % n,
                     .want_q = true,
                     .want_qhy = true};
        SCOPED_TRACE(testing::Message() << cs.nr << "x" << cs.nt << " model " << int(model)
                                        << " sorted " << sorted << " rotation " << cfg.rotation);
        const Result a = run_qr(cfg, Backend::cpu(), h, C, &y, vpc);
        const Result b = run_qr(cfg, Backend::cuda(), h, C, &y, vpc);
        auto near = [](const auto& x, const auto& yb, std::size_t count) {
          const float* p = reinterpret_cast<const float*>(x.data());
          const float* q = reinterpret_cast<const float*>(yb.data());
          const std::size_t k = count * sizeof(x[0]) / sizeof(float);
          double worst = 0;
          for (std::size_t i = 0; i < k; ++i)
            worst = std::max(worst, double(std::abs(p[i] - q[i])));
          return worst;
        };
        EXPECT_LE(near(a.q, b.q, a.q.size()), 1e-5);
        EXPECT_LE(near(a.r, b.r, a.r.size()), 1e-5);
        EXPECT_LE(near(a.z, b.z, a.z.size()), 1e-5);
        EXPECT_LE(near(a.qr_, b.qr_, a.qr_.size()), 1e-5);
        EXPECT_LE(near(a.rr, b.rr, a.rr.size()), 1e-5);
        EXPECT_LE(near(a.zr, b.zr, a.zr.size()), 1e-5);
        for (std::size_t i = 0; i < a.perm.size(); ++i) ASSERT_EQ(a.perm[i], b.perm[i]);
        for (std::size_t i = 0; i < a.status.size(); ++i) ASSERT_EQ(a.status[i], b.status[i]);
      }
    }
  }
}

TEST(QrGpu, FlagsBadChannels) {
  MIMORX_REQUIRE_GPU();
  const auto seed = test::fresh_seed();
  const std::int64_t C = 100;
  auto h = gaussian_cf32(seed, 41, C * 16);
  for (int i = 0; i < 4; ++i) h[7 * 16 + 12 + i] = h[7 * 16 + 4 + i] * cf32(-1.5f, 0.25f);
  h[9 * 16 + 1].re = std::numeric_limits<float>::infinity();
  const Result b = run_qr(QrConfig{.nr = 4, .nt = 4}, Backend::cuda(), h, C);
  for (std::int64_t c = 0; c < C; ++c)
    EXPECT_EQ(b.status[c], c == 7 ? qr_rank_deficient : c == 9 ? qr_non_finite : qr_ok);
  // An order that is no permutation is caught per channel on the device.
  Buffer<int> order = Buffer<int>::host(C * 4);
  for (std::int64_t i = 0; i < C * 4; ++i) order[i] = int(i % 4);
  order[11 * 4 + 2] = 0;
  order[12 * 4 + 1] = 9;
  const Result o = run_qr(QrConfig{.nr = 4, .nt = 4}, Backend::cuda(), h, C, nullptr, 1, &order);
  EXPECT_EQ(o.status[11], qr_bad_order);
  EXPECT_EQ(o.status[12], qr_bad_order);
  EXPECT_EQ(o.status[13], qr_ok);
  // Without a status view the GPU plan throws like the CPU one.
  Buffer<cf32> hd = Buffer<cf32>::device(h.size());
  hd.copy_from(h);
  Buffer<cf32> q = Buffer<cf32>::device(C * 16), r = Buffer<cf32>::device(C * 16);
  QrPlan plan(QrConfig{.nr = 4, .nt = 4}, Backend::cuda());
  QrInput in{.h = MatrixBatch<const cf32>(hd.data(), C, 4, 4, Memory::device)};
  QrOutput out{.q = MatrixBatch<cf32>::over(q, C, 4, 4), .r = MatrixBatch<cf32>::over(r, C, 4, 4)};
  EXPECT_THROW(plan.run(in, out), Error);
}

}  // namespace
}  // namespace mimorx::linalg

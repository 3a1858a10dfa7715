// LR-aided detection: exact recovery without noise, the lattice shift checked on one-stream
// channels, and (slow) uncoded BER at 4x4 16-QAM against plain MMSE with a diversity-slope
// estimate.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

#include "mimorx/core/error.hpp"
#include "mimorx/detect/linear.hpp"
#include "mimorx/detect/lr_aided.hpp"
#include "mimorx/modem/modulation.hpp"
#include "support/gpu.hpp"

using namespace mimorx;
using namespace mimorx::detect;

namespace {

struct Frame {
  MimoShape shape;
  int channels = 0, vpc = 0;
  std::vector<cf32> h, y;
  std::vector<float> n0;
  std::vector<std::uint8_t> bits;
};

Frame make_frame(std::mt19937_64& g, MimoShape s, int channels, int vpc, double n0) {
  Frame f;
  f.shape = s;
  f.channels = channels;
  f.vpc = vpc;
  std::normal_distribution<float> d(0.f, std::sqrt(0.5f));
  std::bernoulli_distribution coin;
  const int m = bits_per_symbol(s.mod);
  f.h.resize(std::size_t(channels) * s.nr * s.nt);
  for (auto& x : f.h) x = {d(g), d(g)};
  const std::int64_t V = std::int64_t(channels) * vpc;
  f.bits.resize(V * s.nt * m);
  for (auto& b : f.bits) b = coin(g);
  f.y.resize(V * s.nr);
  f.n0 = {float(n0)};
  const float sn = float(std::sqrt(n0));
  for (std::int64_t v = 0; v < V; ++v) {
    const cf32* h = &f.h[(v / vpc) * s.nr * s.nt];
    std::vector<cf32> x(s.nt);
    for (int t = 0; t < s.nt; ++t) x[t] = map_symbol(s.mod, &f.bits[(v * s.nt + t) * m]);
    for (int i = 0; i < s.nr; ++i) {
      cf32 acc{0.f, 0.f};
      for (int t = 0; t < s.nt; ++t) acc += h[t * s.nr + i] * x[t];
      f.y[v * s.nr + i] = acc + cf32(d(g) * sn, d(g) * sn);
    }
  }
  return f;
}

DetectInput input_of(const Frame& f) {
  DetectInput in;
  in.h = ConstMatrixBatch<cf32>(f.h.data(), f.channels, f.shape.nr, f.shape.nt, Memory::host);
  in.y = ConstMatrixBatch<cf32>(f.y.data(), std::int64_t(f.channels) * f.vpc, f.shape.nr, 1,
                                Memory::host);
  in.noise_var = View<const float>(f.n0.data(), 1, Memory::host);
  in.vectors_per_channel = f.vpc;
  return in;
}

std::int64_t bit_errors(const std::vector<std::uint8_t>& a, const std::vector<std::uint8_t>& b) {
  std::int64_t e = 0;
  for (std::size_t i = 0; i < a.size(); ++i) e += a[i] != b[i];
  return e;
}

std::int64_t lr_errors(const Frame& f, LrKind kind) {
  LrPlan plan({f.shape, kind, 0.75}, Backend::cpu());
  std::vector<std::uint8_t> out(f.bits.size(), 7);
  plan.run(input_of(f), View<std::uint8_t>(out.data(), std::int64_t(out.size()), Memory::host));
  return bit_errors(out, f.bits);
}

std::int64_t mmse_errors(const Frame& f) {
  LinearConfig c;
  c.shape = f.shape;
  c.kind = LinearKind::mmse;
  LinearPlan plan(c, Backend::cpu());
  std::vector<std::uint8_t> out(f.bits.size(), 7);
  plan.run(input_of(f), View<std::uint8_t>(out.data(), std::int64_t(out.size()), Memory::host),
           View<float>());
  return bit_errors(out, f.bits);
}

}  // namespace

TEST(LrAided, NoiselessRecoveryAllKindsAndModulations) {
  std::mt19937_64 g(test::fresh_seed());
  for (auto mod : {Modulation::qpsk, Modulation::qam16, Modulation::qam64, Modulation::qam256}) {
    for (auto [nt, nr] : {std::pair{4, 4}, std::pair{2, 4}, std::pair{8, 8}}) {
      const auto f = make_frame(g, {nt, nr, mod}, 20, 5, 1e-9);
      for (auto kind : {LrKind::zf, LrKind::mmse, LrKind::mmse_sic})
        EXPECT_EQ(lr_errors(f, kind), 0)
            << to_string(mod) << " " << nt << "x" << nr << " kind " << int(kind);
    }
  }
}

TEST(LrAided, ShiftAndScaleOnAScalarChannel) {
  // One stream, h = 1: the detector must reproduce the slicer exactly (tests x = 2 s z + o).
  std::mt19937_64 g(test::fresh_seed());
  for (auto mod : {Modulation::qpsk, Modulation::qam16, Modulation::qam64}) {
    auto f = make_frame(g, {1, 1, mod}, 1, 400, 1e-9);
    f.h[0] = {1.f, 0.f};
    const int m = bits_per_symbol(mod);
    for (int v = 0; v < 400; ++v) f.y[v] = map_symbol(mod, &f.bits[v * m]);
    EXPECT_EQ(lr_errors(f, LrKind::zf), 0) << to_string(mod);
    EXPECT_EQ(lr_errors(f, LrKind::mmse_sic), 0) << to_string(mod);
  }
}

TEST(LrAided, InvalidConfigurations) {
  EXPECT_THROW(LrPlan({{4, 2, Modulation::qam16}, LrKind::zf}, Backend::cpu()), InvalidArgument);
  EXPECT_THROW(LrPlan({{4, 4, Modulation::qam16}, LrKind::mmse, 0.4}, Backend::cpu()),
               InvalidArgument);
  EXPECT_THROW(LrPlan({{2, 2, Modulation::bpsk}, LrKind::mmse}, Backend::cpu()), Unsupported);
  LrPlan plan({{2, 2, Modulation::qpsk}, LrKind::mmse}, Backend::cpu());
  std::mt19937_64 g(test::fresh_seed());
  auto f = make_frame(g, {2, 2, Modulation::qpsk}, 2, 1, 0.1);
  std::vector<std::uint8_t> out(3);
  EXPECT_THROW(plan.run(input_of(f), View<std::uint8_t>(out.data(), 3, Memory::host)),
               InvalidArgument);
  f.n0[0] = -1.f;
  out.resize(8);
  EXPECT_THROW(plan.run(input_of(f), View<std::uint8_t>(out.data(), 8, Memory::host)),
               InvalidArgument);
}

TEST(LrAidedSlow, BerAt4x4Qam16AndDiversitySlope) {
  // SNR = nt Es / N0 (total receive SNR per antenna with unit-energy symbols and CN(0,1) H).
  std::mt19937_64 g(test::fresh_seed());
  const MimoShape s{4, 4, Modulation::qam16};
  std::printf("| SNR dB | MMSE | LR-ZF | LR-MMSE | LR-MMSE-SIC |\n|---|---|---|---|---|\n");
  std::vector<double> ber_mmse, ber_lr;
  for (double snr_db : {20.0, 26.0}) {
    const double n0 = s.nt / std::pow(10.0, snr_db / 10);
    std::int64_t e[4] = {0, 0, 0, 0}, total = 0;
    for (int rep = 0; rep < 10; ++rep) {
      const auto f = make_frame(g, s, 2000, 1, n0);
      e[0] += mmse_errors(f);
      e[1] += lr_errors(f, LrKind::zf);
      e[2] += lr_errors(f, LrKind::mmse);
      e[3] += lr_errors(f, LrKind::mmse_sic);
      total += std::int64_t(f.bits.size());
    }
    std::printf("| %.0f | %.3e | %.3e | %.3e | %.3e |\n", snr_db, double(e[0]) / total,
                double(e[1]) / total, double(e[2]) / total, double(e[3]) / total);
    ber_mmse.push_back(double(e[0]) / total);
    ber_lr.push_back(double(e[3]) / total);
    if (snr_db == 20.0) {  // measured: MMSE 4.3e-2, LR-MMSE 1.9e-2, LR-MMSE-SIC 1.2e-2
      EXPECT_LT(e[3] * 2, e[0]) << "LR-MMSE-SIC must be much better than MMSE at 20 dB";
      EXPECT_LT(e[2] * 3, e[0] * 2) << "LR-MMSE must be better than MMSE at 20 dB";
    } else {  // measured: MMSE 1.3e-2, LR-MMSE-SIC 1.1e-4
      EXPECT_LT(e[3] * 20, e[0]) << "LR-MMSE-SIC must be far better than MMSE at 26 dB";
    }
  }
  // Diversity order ~ -d log10(BER) / d(SNR/10): MMSE ~1 (nr - nt + 1), LR ~nr.
  const double d_mmse = -std::log10(ber_mmse[1] / ber_mmse[0]) / 0.6;
  const double d_lr = -std::log10(std::max(ber_lr[1], 1e-9) / ber_lr[0]) / 0.6;
  std::printf("diversity slope 20->26 dB: MMSE %.2f, LR-MMSE-SIC %.2f\n", d_mmse, d_lr);
  EXPECT_GT(d_lr, d_mmse + 0.5);
}

TEST(LrAidedGpu, StagedCudaBackendMatchesCpu) {
  MIMORX_REQUIRE_GPU();
  std::mt19937_64 g(test::fresh_seed());
  const auto f = make_frame(g, {4, 4, Modulation::qam16}, 50, 4, 0.05);
  std::vector<std::uint8_t> cpu(f.bits.size());
  LrPlan({f.shape, LrKind::mmse_sic}, Backend::cpu())
      .run(input_of(f), View<std::uint8_t>(cpu.data(), std::int64_t(cpu.size()), Memory::host));
  auto dh = Buffer<cf32>::device(f.h.size());
  auto dy = Buffer<cf32>::device(f.y.size());
  auto dn = Buffer<float>::device(1);
  auto db = Buffer<std::uint8_t>::device(f.bits.size());
  dh.copy_from_host(f.h.data(), f.h.size());
  dy.copy_from_host(f.y.data(), f.y.size());
  dn.copy_from_host(f.n0.data(), 1);
  DetectInput in;
  in.h = ConstMatrixBatch<cf32>(dh.data(), f.channels, 4, 4, Memory::device);
  in.y = ConstMatrixBatch<cf32>(dy.data(), std::int64_t(f.channels) * f.vpc, 4, 1, Memory::device);
  in.noise_var = View<const float>(dn.data(), 1, Memory::device);
  in.vectors_per_channel = f.vpc;
  LrPlan({f.shape, LrKind::mmse_sic}, Backend::cuda()).run(in, View<std::uint8_t>(db));
  std::vector<std::uint8_t> gpu(f.bits.size());
  db.copy_to_host(gpu.data(), gpu.size());
  EXPECT_EQ(cpu, gpu);
}

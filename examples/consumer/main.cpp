// A user's program against an installed mimorx: one LDPC transport block (one code block,
// TS 38.212) sent as 16-QAM over a 4x4 Rayleigh channel, the vectors detected by detectors chosen
// by name (detect/factory.hpp) and the block decoded from their LLRs. Exit 0 when every detector
// delivers the block with its CRC passing and its bits equal to those sent.
#include <cmath>
#include <cstdio>
#include <vector>

#include "mimorx/mimorx.hpp"

int main() {
  using namespace mimorx;
  const Backend cpu = Backend::cpu();
  const detect::MimoShape shape{4, 4, Modulation::qam16};  // nt, nr, modulation
  const int bits_per_vector = shape.bits_per_vector();     // 16

  // The transport block: 256 information bits at rate 1/2, G a multiple of 16 bits (4 layers).
  ldpc::TransportConfig tc;
  tc.tbs = 256;
  tc.code_rate = 0.5;
  tc.mod = shape.mod;
  tc.layers = shape.nt;
  const ldpc::TransportPlan transport(tc, cpu);
  auto u = Buffer<float>::host(std::size_t(tc.tbs));
  rng::fill_uniform(cpu, 1, 0, View<float>(u));
  std::vector<std::uint8_t> tb(std::size_t(tc.tbs)), coded(std::size_t(transport.g()));
  for (std::size_t i = 0; i < tb.size(); ++i) tb[i] = u[i] < 0.5f ? 1 : 0;
  transport.encode(tb, coded);

  // Map, one channel per vector (i.i.d. CN(0, 1)), y = H x + n at Es/N0 = 10 dB (Es = 1 per
  // transmit antenna, N0 per receive antenna, as the README's conventions).
  const std::int64_t vectors = transport.g() / bits_per_vector;
  const float n0 = float(std::pow(10.0, -10.0 / 10.0));
  auto h = Buffer<cf32>::host(std::size_t(vectors) * 16);
  auto y = Buffer<cf32>::host(std::size_t(vectors) * 4);
  auto g = Buffer<float>::host(std::size_t(vectors) * (32 + 8));
  rng::fill_gaussian(cpu, 2, 0, View<float>(g));
  for (std::int64_t v = 0; v < vectors; ++v) {
    const float* gv = &g[std::size_t(v) * 40];
    cf32 x[4];
    for (int t = 0; t < 4; ++t) x[t] = map_symbol(shape.mod, &coded[std::size_t(v * 4 + t) * 4]);
    for (int k = 0; k < 16; ++k)  // column-major: entry (r, t) at t * 4 + r
      h[std::size_t(v) * 16 + k] =
          cf32(gv[2 * k] * std::sqrt(0.5f), gv[2 * k + 1] * std::sqrt(0.5f));
    for (int r = 0; r < 4; ++r) {
      cf32 s(gv[32 + 2 * r] * std::sqrt(n0 / 2), gv[33 + 2 * r] * std::sqrt(n0 / 2));
      for (int t = 0; t < 4; ++t) {
        const cf32 a = h[std::size_t(v) * 16 + t * 4 + r];
        s.re += a.re * x[t].re - a.im * x[t].im;
        s.im += a.re * x[t].im + a.im * x[t].re;
      }
      y[std::size_t(v) * 4 + r] = s;
    }
  }
  const float noise[1] = {n0};
  detect::DetectInput in;
  in.h = MatrixBatch<const cf32>(h.data(), vectors, 4, 4, Memory::host);
  in.y = MatrixBatch<const cf32>(y.data(), vectors, 4, 1, Memory::host);
  in.noise_var = View<const float>(noise, 1, Memory::host);

  int failures = 0;
  for (const char* name : {"mmse", "kbest:16"}) {
    const auto detector =
        detect::make_detector(name, shape, cpu, detect::DetectorOptions{.soft = true});
    auto bits = Buffer<std::uint8_t>::host(coded.size());
    auto llrs = Buffer<float>::host(coded.size());
    detector->run(in, View<std::uint8_t>(bits), View<float>(llrs));
    int raw_errors = 0;
    for (std::size_t i = 0; i < coded.size(); ++i) raw_errors += bits[i] != coded[i];
    std::vector<std::uint8_t> decoded(tb.size());
    const auto r = transport.decode(std::span<const float>(llrs.data(), llrs.size()), decoded);
    const bool ok = r.tb_crc_ok && decoded == tb;
    std::printf("%-8s %lld vectors, %d of %zu coded bits wrong before decoding, block %s\n", name,
                static_cast<long long>(vectors), raw_errors, coded.size(), ok ? "decoded" : "LOST");
    failures += ok ? 0 : 1;
  }
  std::printf("mimorx %s, CUDA in this build: %s\n", MIMORX_VERSION,
              built_with_cuda() ? "yes" : "no");
  return failures == 0 ? 0 : 1;
}

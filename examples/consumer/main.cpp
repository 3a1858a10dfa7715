// Maps a few bits to 16-QAM and draws Philox Gaussians through an installed mimorx.
#include <cstdio>
#include <vector>

#include "mimorx/core/rng.hpp"
#include "mimorx/modem/modulation.hpp"

int main() {
  const auto mod = mimorx::parse_modulation("16qam");
  const std::uint8_t bits[4] = {0, 0, 0, 0};
  const mimorx::cf32 s = mimorx::map_symbol(mod, bits);
  mimorx::Buffer<float> z = mimorx::Buffer<float>::host(4);
  mimorx::rng::fill_gaussian(mimorx::Backend::cpu(), 1, 0, mimorx::View<float>(z));
  std::printf("16qam(0000) = %.6f%+.6fj, backend %s, z0 = %.6f\n", s.re, s.im,
              mimorx::Backend::automatic().name().c_str(), z[0]);
  return (s.re > 0.3162f && s.re < 0.3163f) ? 0 : 1;
}

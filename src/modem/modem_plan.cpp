#include <cmath>
#include <string>

#include "mimorx/config.hpp"
#include "mimorx/core/error.hpp"
#include "mimorx/modem/demap.hpp"
#include "mimorx/modem/modem.hpp"
#include "modem/modem_cuda.hpp"

namespace mimorx::modem {

namespace {
void require_valid_modulation(Modulation mod) {
  const int m = bits_per_symbol(mod);
  require(m == 1 || m == 2 || m == 4 || m == 6 || m == 8, "mod",
          "enum value " + std::to_string(m) + " is not a modulation; use bpsk, qpsk, 16qam, " +
              "64qam or 256qam");
}

void require_cuda_build() {
#if !MIMORX_HAS_CUDA
  throw Unsupported("backend: this build of mimorx has no CUDA backend");
#endif
}
}  // namespace

Mapper::Mapper(Modulation mod, Backend backend) : mod_(mod), backend_(backend) {
  require_valid_modulation(mod);
  if (backend.is_cuda()) require_cuda_build();
}

void Mapper::run(View<const std::uint8_t> bits, View<cf32> symbols, const Stream& stream) const {
  const int m = bits_per_symbol(mod_);
  const Memory mem = memory_of(backend_);
  require_memory(bits.where, mem, "bits");
  require_memory(symbols.where, mem, "symbols");
  require_size(bits, symbols.size * m, "bits");
  const std::int64_t n = symbols.size;
  if (backend_.is_cuda()) {
#if MIMORX_HAS_CUDA
    detail::map_cuda(mod_, bits.data, symbols.data, n, backend_.device(), stream.handle());
#endif
    return;
  }
  (void)stream;
  // The check builds its message only on failure: require() would format a string per bit.
  for (std::int64_t i = 0; i < n * m; ++i) {
    if (bits[i] > 1) {
      throw InvalidArgument("bits: value " + std::to_string(int(bits[i])) + " at index " +
                            std::to_string(i) + "; bits are unpacked, each 0 or 1");
    }
  }
#pragma omp parallel for schedule(static) if (n > 65536)
  for (std::int64_t s = 0; s < n; ++s) symbols[s] = map_symbol(mod_, bits.data + s * m);
}

Demapper::Demapper(const DemapperConfig& config, Backend backend)
    : config_(config), backend_(backend) {
  require_valid_modulation(config.mod);
  if (backend.is_cuda()) require_cuda_build();
}

void Demapper::run(View<const cf32> symbols, View<const float> noise_var, View<std::uint8_t> bits,
                   View<float> llrs, const Stream& stream) const {
  const Modulation mod = config_.mod;
  const int m = bits_per_symbol(mod);
  const std::int64_t n = symbols.size;
  const Memory mem = memory_of(backend_);
  require_memory(symbols.where, mem, "symbols");
  const bool want_bits = !config_.soft || bits.size != 0;
  if (want_bits) {
    require_memory(bits.where, mem, "bits");
    require_size(bits, n * m, "bits");
  }
  if (config_.soft) {
    require_memory(llrs.where, mem, "llrs");
    require_size(llrs, n * m, "llrs");
    require_memory(noise_var.where, mem, "noise_var");
    require(noise_var.size == 1 || noise_var.size == n, "noise_var",
            "has " + std::to_string(noise_var.size) + " values; give 1 or one per symbol (" +
                std::to_string(n) + ")");
  }
  if (backend_.is_cuda()) {
#if MIMORX_HAS_CUDA
    detail::demap_cuda(mod, symbols.data, config_.soft ? noise_var.data : nullptr, noise_var.size,
                       want_bits ? bits.data : nullptr, config_.soft ? llrs.data : nullptr, n,
                       backend_.device(), stream.handle());
#endif
    return;
  }
  (void)stream;
  for (std::int64_t s = 0; s < n; ++s) {
    if (!std::isfinite(symbols[s].re) || !std::isfinite(symbols[s].im)) {
      throw InvalidArgument("symbols: NaN or Inf at index " + std::to_string(s) +
                            "; every observation must be finite");
    }
  }
  if (!config_.soft) {
#pragma omp parallel for schedule(static) if (n > 65536)
    for (std::int64_t s = 0; s < n; ++s) hard_bits(mod, symbols[s], bits.data + s * m);
    return;
  }
  for (std::int64_t i = 0; i < noise_var.size; ++i) {
    if (!(std::isfinite(noise_var[i]) && noise_var[i] > 0.f)) {
      throw InvalidArgument("noise_var: value " + std::to_string(noise_var[i]) + " at index " +
                            std::to_string(i) + "; the noise variance must be finite and > 0");
    }
  }
#pragma omp parallel for schedule(static) if (n > 65536)
  for (std::int64_t s = 0; s < n; ++s) {
    float l[8];
    maxlog_llrs(mod, symbols[s], noise_var[noise_var.size == 1 ? 0 : s], l);
    for (int k = 0; k < m; ++k) {
      llrs[s * m + k] = l[k];
      if (want_bits) bits[s * m + k] = l[k] < 0.f ? 1 : 0;
    }
  }
}

}  // namespace mimorx::modem

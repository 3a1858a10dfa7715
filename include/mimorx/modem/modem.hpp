#pragma once
// Batched mapper (bits -> symbols) and demapper (symbols -> hard bits or max-log LLRs) plans on
// the CPU or a CUDA device. The per-symbol arithmetic is modulation.hpp (map_symbol) and
// demap.hpp (hard_bits, maxlog_llrs), shared by both backends.
//
// Layout: symbol s carries bits [s*m, (s+1)*m) in 38.211 order (b0 first), unpacked 0/1.
// LLRs: positive = bit 0, scalar AWGN channel y = x + n, n ~ CN(0, N0).
#include <cstdint>

#include "mimorx/core/backend.hpp"
#include "mimorx/core/buffer.hpp"
#include "mimorx/core/complex.hpp"
#include "mimorx/core/tensor.hpp"
#include "mimorx/modem/modulation.hpp"

namespace mimorx::modem {

class Mapper {
 public:
  Mapper(Modulation mod, Backend backend);
  // bits: n*m values in {0, 1} (checked on host memory; device bits must be 0/1, other values
  // give unspecified points); symbols: n. Both in the backend's memory.
  void run(View<const std::uint8_t> bits, View<cf32> symbols, const Stream& stream = {}) const;
  Modulation modulation() const { return mod_; }

 private:
  Modulation mod_;
  Backend backend_;
};

struct DemapperConfig {
  Modulation mod = Modulation::qpsk;
  bool soft = false;  // false: hard bits; true: max-log LLRs
};

class Demapper {
 public:
  Demapper(const DemapperConfig& config, Backend backend);
  // symbols: n observations. noise_var: N0 per symbol (size n) or one for all (size 1); needed
  // when soft, ignored (may be empty) when hard. bits: n*m hard decisions (required when hard;
  // when soft, empty or n*m, filled from the LLR signs). llrs: n*m (required when soft, ignored
  // when hard). Host inputs are checked for NaN/Inf and N0 > 0.
  void run(View<const cf32> symbols, View<const float> noise_var, View<std::uint8_t> bits,
           View<float> llrs, const Stream& stream = {}) const;
  const DemapperConfig& config() const { return config_; }

 private:
  DemapperConfig config_;
  Backend backend_;
};

}  // namespace mimorx::modem

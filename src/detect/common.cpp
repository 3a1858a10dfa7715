#include "mimorx/detect/common.hpp"

#include <cmath>
#include <string>

#include "detect/common_cuda.hpp"
#include "mimorx/config.hpp"
#include "mimorx/core/error.hpp"

namespace mimorx::detect {

namespace {
bool all_finite(const float* p, std::int64_t n) {
  for (std::int64_t i = 0; i < n; ++i) {
    if (!std::isfinite(p[i])) return false;
  }
  return true;
}
}  // namespace

void validate(const DetectInput& in, const MimoShape& s, const Backend& backend,
              bool check_device_values) {
  require(s.nt >= 1 && s.nt <= 64, "nt", std::to_string(s.nt) + " transmit antennas; allowed 1..64");
  require(s.nr >= 1 && s.nr <= 64, "nr", std::to_string(s.nr) + " receive antennas; allowed 1..64");
  require(in.vectors_per_channel >= 1, "vectors_per_channel",
          std::to_string(in.vectors_per_channel) + "; must be >= 1");
  require(in.h.rows == s.nr && in.h.cols == s.nt, "h",
          "matrices are " + std::to_string(in.h.rows) + "x" + std::to_string(in.h.cols) +
              ", expected nr x nt = " + std::to_string(s.nr) + "x" + std::to_string(s.nt));
  require(in.y.rows == s.nr && in.y.cols == 1, "y",
          "vectors are " + std::to_string(in.y.rows) + "x" + std::to_string(in.y.cols) +
              ", expected nr x 1 = " + std::to_string(s.nr) + "x1");
  require(in.y.batch == in.h.batch * in.vectors_per_channel, "y",
          std::to_string(in.y.batch) + " vectors for " + std::to_string(in.h.batch) +
              " channels x " + std::to_string(in.vectors_per_channel) +
              " vectors per channel; the counts must match");
  require(in.noise_var.size == 1 || in.noise_var.size == in.y.batch, "noise_var",
          "has " + std::to_string(in.noise_var.size) + " values; give 1 or one per vector (" +
              std::to_string(in.y.batch) + ")");
  const Memory mem = memory_of(backend);
  require_memory(in.h.where, mem, "h");
  require_memory(in.y.where, mem, "y");
  require_memory(in.noise_var.where, mem, "noise_var");
  const auto hn = 2 * in.h.elements();
  const auto yn = 2 * in.y.elements();
  if (mem == Memory::host) {
    require(in.h.batch_stride == std::int64_t(s.nr) * s.nt || in.h.batch <= 1 ||
                in.h.batch_stride >= std::int64_t(s.nr) * s.nt,
            "h", "batch stride smaller than one matrix");
    require(all_finite(reinterpret_cast<const float*>(in.h.data), hn), "h",
            "contains NaN or Inf; every channel coefficient must be finite");
    require(all_finite(reinterpret_cast<const float*>(in.y.data), yn), "y",
            "contains NaN or Inf; every received sample must be finite");
    for (std::int64_t i = 0; i < in.noise_var.size; ++i) {
      const float n0 = in.noise_var[i];
      require(std::isfinite(n0) && n0 > 0.f, "noise_var",
              "value " + std::to_string(n0) + " at index " + std::to_string(i) +
                  "; the noise variance must be finite and > 0 (use a tiny value for 'noiseless')");
    }
    return;
  }
#if MIMORX_HAS_CUDA
  if (check_device_values) {
    const int bad = detail::count_bad_values_cuda(reinterpret_cast<const float*>(in.h.data), hn,
                                                  reinterpret_cast<const float*>(in.y.data), yn,
                                                  in.noise_var.data, in.noise_var.size,
                                                  backend.device());
    require((bad & 1) == 0, "h", "contains NaN or Inf; every channel coefficient must be finite");
    require((bad & 2) == 0, "y", "contains NaN or Inf; every received sample must be finite");
    require((bad & 4) == 0, "noise_var", "the noise variance must be finite and > 0");
  }
#else
  (void)check_device_values;
#endif
}

}  // namespace mimorx::detect

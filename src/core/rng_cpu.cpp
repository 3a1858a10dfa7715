#include "core/rng_cuda.hpp"
#include "mimorx/config.hpp"
#include "mimorx/core/rng.hpp"

namespace mimorx::rng {

namespace {
template <class F>
void fill_host(View<float> out, F&& element, std::uint64_t offset) {
#pragma omp parallel for schedule(static) if (out.size > 65536)
  for (std::int64_t k = 0; k < out.size; ++k) out.data[k] = element(offset + std::uint64_t(k));
}
}  // namespace

void fill_uniform(const Backend& backend, std::uint64_t seed, std::uint64_t stream,
                  View<float> out, std::uint64_t offset) {
  require_memory(out.where, memory_of(backend), "out");
  if (backend.is_cuda()) {
#if MIMORX_HAS_CUDA
    detail::fill_uniform_cuda(seed, stream, out.data, out.size, offset, backend.device());
#endif
    return;
  }
  fill_host(out, [&](std::uint64_t i) { return uniform_at(seed, stream, i); }, offset);
}

void fill_gaussian(const Backend& backend, std::uint64_t seed, std::uint64_t stream,
                   View<float> out, std::uint64_t offset) {
  require_memory(out.where, memory_of(backend), "out");
  if (backend.is_cuda()) {
#if MIMORX_HAS_CUDA
    detail::fill_gaussian_cuda(seed, stream, out.data, out.size, offset, backend.device());
#endif
    return;
  }
  fill_host(out, [&](std::uint64_t i) { return gaussian_at(seed, stream, i); }, offset);
}

}  // namespace mimorx::rng

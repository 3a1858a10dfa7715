#include "mimorx/nr/layer_map.hpp"

#include <string>

#include "mimorx/core/error.hpp"

namespace mimorx::nr {
namespace {

std::size_t per_layer(std::size_t m, int layers) {
  require(layers >= 1 && layers <= 4, "layers",
          std::to_string(layers) + "; allowed 1..4 (one codeword)");
  require(m % std::size_t(layers) == 0, "symbols",
          std::to_string(m) + " symbols do not split evenly over " + std::to_string(layers) +
              " layers");
  return m / std::size_t(layers);
}

}  // namespace

std::vector<cf32> map_to_layers(std::span<const cf32> d, int layers) {
  const std::size_t n = per_layer(d.size(), layers), v = std::size_t(layers);
  std::vector<cf32> x(d.size());
  for (std::size_t j = 0; j < v; ++j) {
    for (std::size_t i = 0; i < n; ++i) x[j * n + i] = d[v * i + j];
  }
  return x;
}

std::vector<cf32> demap_layers(std::span<const cf32> x, int layers) {
  const std::size_t n = per_layer(x.size(), layers), v = std::size_t(layers);
  std::vector<cf32> d(x.size());
  for (std::size_t j = 0; j < v; ++j) {
    for (std::size_t i = 0; i < n; ++i) d[v * i + j] = x[j * n + i];
  }
  return d;
}

}  // namespace mimorx::nr

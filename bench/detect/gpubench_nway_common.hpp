#pragma once
// Shared by gpubench_nway.cpp and gpubench_kbest.cpp: input generation on the GPU (Philox),
// median timing with CUDA events, JSON lines.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "mimorx/core/backend.hpp"
#include "mimorx/core/buffer.hpp"
#include "mimorx/core/rng.hpp"
#include "mimorx/core/tensor.hpp"
#include "mimorx/detect/common.hpp"

namespace mimorx::bench {

constexpr std::int64_t kSlot = 8400;  // MIMO symbols (vectors) in one 20 MHz LTE slot

// Median over `reps` of a GPU-timed body, after two warm-up calls.
inline float median_ms(const Stream& s, int reps, const std::function<void()>& body) {
  body();
  body();
  std::vector<float> t;
  for (int r = 0; r < reps; ++r) {
    GpuTimer timer(s);
    timer.start();
    body();
    timer.stop();
    t.push_back(timer.elapsed_ms());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}
// Per-call time of `calls` back-to-back calls between one pair of events (median of `reps`):
// the steady state of a stream of batches, where the host work of one call overlaps the GPU
// work of the previous ones.
inline float back_to_back_ms(const Stream& s, int reps, int calls,
                             const std::function<void()>& body) {
  return median_ms(s, reps,
                   [&] {
                     for (int c = 0; c < calls; ++c) body();
                   }) /
         float(calls);
}
// Median wall-clock time (ms) of a body that synchronises itself.
inline float median_wall_ms(int reps, const std::function<void()>& body) {
  body();
  std::vector<float> t;
  for (int r = 0; r < reps; ++r) {
    const auto a = std::chrono::steady_clock::now();
    body();
    const auto b = std::chrono::steady_clock::now();
    t.push_back(std::chrono::duration<float, std::milli>(b - a).count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

// Gaussian H (C channels) and y (V vectors) on the device, also in pinned host memory. The
// tree searches have a fixed complexity, so y need not follow the model for timing.
struct BenchData {
  detect::MimoShape shape;
  std::int64_t vectors = 0, channels = 0;
  int vpc = 1;
  Buffer<cf32> h, y, h_host, y_host;
  Buffer<float> n0;
  BenchData(detect::MimoShape s, std::int64_t v, int vectors_per_channel, std::uint64_t seed)
      : shape(s), vectors(v), channels(v / vectors_per_channel), vpc(vectors_per_channel) {
    const Backend gpu = Backend::cuda();
    h = Buffer<cf32>::device(std::size_t(channels) * s.nr * s.nt);
    y = Buffer<cf32>::device(std::size_t(vectors) * s.nr);
    rng::fill_gaussian(gpu, seed, 1,
                       View<float>(reinterpret_cast<float*>(h.data()), 2 * std::int64_t(h.size()),
                                   Memory::device));
    rng::fill_gaussian(gpu, seed, 2,
                       View<float>(reinterpret_cast<float*>(y.data()), 2 * std::int64_t(y.size()),
                                   Memory::device));
    h_host = Buffer<cf32>::pinned(h.size());
    y_host = Buffer<cf32>::pinned(y.size());
    h_host.copy_from(h);
    y_host.copy_from(y);
    n0 = Buffer<float>::device(1);
    const float one = 0.1f;
    n0.copy_from_host(&one, 1);
  }
  detect::DetectInput input(const cf32* hp, const cf32* yp, std::int64_t first, std::int64_t count,
                            Memory where) const {
    detect::DetectInput in;
    in.h = ConstMatrixBatch<cf32>(hp + (first / vpc) * shape.nr * shape.nt, count / vpc, shape.nr,
                                  shape.nt, where);
    in.y = ConstMatrixBatch<cf32>(yp + first * shape.nr, count, shape.nr, 1, where);
    in.noise_var = View<const float>(n0.data(), 1, Memory::device);
    in.vectors_per_channel = vpc;
    return in;
  }
  detect::DetectInput device_input() const {
    return input(h.data(), y.data(), 0, vectors, Memory::device);
  }
  std::size_t in_bytes() const { return h.bytes() + y.bytes(); }
};

inline void append_json(const char* path, const std::string& line) {
  if (!path) return;
  std::ofstream f(path, std::ios::app);
  f << line << "\n";
}

inline std::string device_name() {
  const auto d = cuda_devices();
  return d.empty() ? std::string("none") : d[0].name;
}

}  // namespace mimorx::bench

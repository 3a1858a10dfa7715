// CPU throughput of the batched mapper and demapper (hard and max-log soft), per modulation.
// Items = symbols; Google Benchmark reports items/s (and bytes/s of unpacked bits in and out).
#include <benchmark/benchmark.h>

#include <cstdint>
#include <random>
#include <vector>

#include "mimorx/modem/modem.hpp"

namespace {

using mimorx::Backend;
using mimorx::cf32;
using mimorx::Memory;
using mimorx::Modulation;
using mimorx::View;

constexpr std::int64_t kSymbols = 1 << 16;

Modulation mod_of(std::int64_t i) {
  constexpr Modulation all[] = {Modulation::bpsk, Modulation::qpsk, Modulation::qam16,
                                Modulation::qam64, Modulation::qam256};
  return all[i];
}

struct Data {
  std::vector<std::uint8_t> bits, hard;
  std::vector<cf32> x;
  std::vector<float> llr, n0{0.1f};
  explicit Data(Modulation mod) {
    const int m = mimorx::bits_per_symbol(mod);
    std::mt19937_64 gen(7);
    bits.resize(std::size_t(kSymbols * m));
    for (auto& b : bits) b = std::uint8_t(gen() & 1);
    hard.resize(bits.size());
    llr.resize(bits.size());
    x.resize(std::size_t(kSymbols));
    mimorx::modem::Mapper(mod, Backend::cpu())
        .run(View<const std::uint8_t>(bits.data(), std::int64_t(bits.size()), Memory::host),
             View<cf32>(x.data(), kSymbols, Memory::host));
    std::normal_distribution<float> g(0.f, 0.2f);
    for (auto& v : x) v = v + cf32{g(gen), g(gen)};
  }
};

void BM_Mapper(benchmark::State& state) {
  const Modulation mod = mod_of(state.range(0));
  Data d(mod);
  mimorx::modem::Mapper mapper(mod, Backend::cpu());
  for (auto _ : state) {
    mapper.run(View<const std::uint8_t>(d.bits.data(), std::int64_t(d.bits.size()), Memory::host),
               View<cf32>(d.x.data(), kSymbols, Memory::host));
    benchmark::DoNotOptimize(d.x.data());
  }
  state.SetItemsProcessed(state.iterations() * kSymbols);
  state.SetLabel(mimorx::to_string(mod));
}

void BM_Demapper(benchmark::State& state) {
  const Modulation mod = mod_of(state.range(0));
  const bool soft = state.range(1) != 0;
  Data d(mod);
  mimorx::modem::Demapper demapper({mod, soft}, Backend::cpu());
  for (auto _ : state) {
    demapper.run(
        View<const cf32>(d.x.data(), kSymbols, Memory::host),
        View<const float>(d.n0.data(), 1, Memory::host),
        soft ? View<std::uint8_t>{}
             : View<std::uint8_t>(d.hard.data(), std::int64_t(d.hard.size()), Memory::host),
        soft ? View<float>(d.llr.data(), std::int64_t(d.llr.size()), Memory::host) : View<float>{});
    benchmark::DoNotOptimize(d.llr.data());
    benchmark::DoNotOptimize(d.hard.data());
  }
  state.SetItemsProcessed(state.iterations() * kSymbols);
  state.SetLabel(mimorx::to_string(mod) + (soft ? " maxlog" : " hard"));
}

BENCHMARK(BM_Mapper)->DenseRange(0, 4);
BENCHMARK(BM_Demapper)->ArgsProduct({{0, 1, 2, 3, 4}, {0, 1}});

}  // namespace

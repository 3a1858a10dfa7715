// The NR slot link on the GPU (sim/nr_link.hpp with Backend::cuda): the counts equal the CPU's
// for one seed across channels, CSI, HARQ, layers, detectors and batch sizes; and the grid
// kernels (sim/nr_link_cuda.hpp) write what the host functions (sim/nr_link_grid.hpp) write,
// bit for bit.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <numeric>
#include <span>
#include <string>
#include <vector>

#include "mimorx/config.hpp"
#include "mimorx/core/buffer.hpp"
#include "mimorx/core/rng.hpp"
#include "mimorx/sim/nr_link.hpp"
#include "sim/nr_link_cuda.hpp"
#include "sim/nr_link_grid.hpp"
#include "support/gpu.hpp"

namespace mimorx::sim {
namespace {

struct Case {
  int layers;
  bool tdl;
  NrCsi csi;
  int harq;
  std::string detector;
};

std::string describe(const Case& k) {
  return "layers " + std::to_string(k.layers) + (k.tdl ? " tdl" : " flat") + " csi " +
         std::to_string(int(k.csi)) + " harq " + std::to_string(k.harq) + " " + k.detector;
}

NrLinkConfig config_of(const Case& k, std::uint64_t seed) {
  NrLinkConfig c;
  c.slot.n_prb = 4;
  c.slot.layers = k.layers;
  c.n_rx = k.layers >= 3 ? 4 : 2;
  c.mcs_table = nr::McsTable::qam64;
  c.mcs = 9;  // QPSK, R = 679/1024
  c.detector = k.detector;
  c.harq_transmissions = k.harq;
  c.csi = k.csi;
  if (k.tdl) c.tdl = channel::parse_tdl("tdl-c:300:100:low");
  c.seed = seed;
  c.max_slots = 23;  // not a multiple of the batch sizes below
  return c;
}

void expect_same(const std::vector<NrPointResult>& cpu, const std::vector<NrPointResult>& gpu,
                 const std::string& what) {
  ASSERT_EQ(cpu.size(), gpu.size()) << what;
  for (std::size_t i = 0; i < cpu.size(); ++i) {
    EXPECT_EQ(cpu[i].blocks, gpu[i].blocks) << what << " point " << i;
    EXPECT_EQ(cpu[i].slots, gpu[i].slots) << what << " point " << i;
    EXPECT_EQ(cpu[i].tx_errors, gpu[i].tx_errors) << what << " point " << i;
    EXPECT_EQ(cpu[i].delivered_bits, gpu[i].delivered_bits) << what << " point " << i;
    EXPECT_EQ(cpu[i].undetected_errors, gpu[i].undetected_errors) << what << " point " << i;
    EXPECT_EQ(cpu[i].tbs, gpu[i].tbs) << what << " point " << i;
  }
}

// Every combination the link distinguishes on the GPU: flat and TDL channels (TDL antennas are
// 1, 2, 4 or 8, so 3 layers runs on the flat channel only), perfect and estimated CSI, HARQ with
// 1 and 3 transmissions, 1..4 layers, MMSE and nway:v; the GPU with two batch sizes. The SNRs
// span errors and deliveries on the first transmission.
TEST(NrLinkGpu, CountsEqualCpuForEveryChannelCsiHarqAndLayerCount) {
  MIMORX_REQUIRE_GPU();
  const std::uint64_t seed = test::fresh_seed();
  std::vector<Case> cases;
  int i = 0;
  for (int layers = 1; layers <= 4; ++layers)
    for (bool tdl : {false, true})
      for (NrCsi csi : {NrCsi::perfect, NrCsi::ls_linear, NrCsi::ls_lmmse}) {
        if (tdl && layers == 3) continue;
        // nway:N needs nt = 2, 4 or 8.
        const bool nway = layers != 1 && layers != 3 && i % 3 == 2;
        cases.push_back({layers, tdl, csi, i % 2 == 0 ? 3 : 1,
                         nway ? "nway:" + std::to_string(layers) : "mmse"});
        ++i;
      }
  const std::vector<double> snrs = {-2.0, 4.0, 10.0};
  std::int64_t first_tx_errors = 0, delivered = 0, retransmissions = 0;
  for (const Case& k : cases) {
    const NrLinkConfig c = config_of(k, seed);
    const auto cpu = run_nr_link(c, Backend::cpu(), snrs);
    for (std::int64_t batch : {std::int64_t(0), std::int64_t(5)}) {
      NrLinkConfig g = c;
      g.batch_blocks = batch;
      expect_same(cpu, run_nr_link(g, Backend::cuda(), snrs),
                  describe(k) + " gpu batch " + std::to_string(batch));
    }
    for (const auto& r : cpu) {
      first_tx_errors += r.tx_errors[0];
      delivered += r.delivered_bits;
      retransmissions += r.slots - r.blocks;
    }
  }
  // The comparison covers errors, deliveries and retransmissions.
  EXPECT_GT(first_tx_errors, 0);
  EXPECT_GT(delivered, 0);
  EXPECT_GT(retransmissions, 0);
}

// The benchmark's grid (273 PRB, 4 layers, 64-QAM, TDL-C, LMMSE estimates) on a few slots.
TEST(NrLinkGpu, CountsEqualCpuOnTheFullBandwidthGrid) {
  MIMORX_REQUIRE_GPU();
  NrLinkConfig c;
  c.slot.n_prb = 273;
  c.slot.layers = 4;
  c.n_rx = 4;
  c.mcs = 19;
  c.tdl = channel::parse_tdl("tdl-c:300:100:low");
  c.csi = NrCsi::ls_lmmse;
  c.harq_transmissions = 2;
  c.seed = test::fresh_seed();
  c.max_slots = 6;
  const std::vector<double> snrs = {14.0, 22.0};
  const auto cpu = run_nr_link(c, Backend::cpu(), snrs);
  c.batch_blocks = 4;
  expect_same(cpu, run_nr_link(c, Backend::cuda(), snrs), "273 PRB");
}

template <class T>
std::vector<T> to_host(const Buffer<T>& d, std::size_t n) {
  std::vector<T> h(n);
  d.copy_to_host(h.data(), n);
  return h;
}

template <class T>
Buffer<T> to_device(const std::vector<T>& h) {
  Buffer<T> d(h.size(), Memory::device);
  d.copy_from_host(h.data(), h.size());
  return d;
}

template <class T>
bool same_bits(const std::vector<T>& a, const std::vector<T>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0;
}

[[maybe_unused]] std::vector<cf32> random_symbols(std::uint64_t seed, std::size_t n) {
  std::vector<cf32> d(n);
  for (std::size_t i = 0; i < n; ++i) {
    float re, im;
    rng::gaussian_pair_at(seed, 77, 2 * i, &re, &im);
    d[i] = {re, im};
  }
  return d;
}

// One batch of three slots (blocks 5, 9 and 10, transmission 1) through every grid kernel,
// against the host functions for each slot: x, the flat channel, y, the gathered y, H and N0
// (with one N0 and with N0 per slot), the codeword order of the LLRs and the HARQ compaction.
TEST(NrLinkGpu, GridKernelsEqualHostFunctionsBitForBit) {
  MIMORX_REQUIRE_GPU();
#if MIMORX_HAS_CUDA
  using namespace detail;
  const std::uint64_t seed = test::fresh_seed();
  for (int layers : {1, 3, 4}) {
    NrLinkConfig c;
    c.slot.n_prb = 6;
    c.slot.layers = layers;
    c.slot.dmrs_type = layers == 3 ? nr::DmrsType::type2 : nr::DmrsType::type1;
    c.slot.additional_position = 2;
    c.n_rx = 4;
    const nr::SlotPlan plan(c.slot);
    const std::int64_t res = grid_res(plan);
    const int data = plan.data_re_count(), n_rx = c.n_rx, per = n_rx * layers;
    const std::vector<std::int64_t> blocks = {5, 9, 10};
    const int num = int(blocks.size()), tx = 1;
    const float n0 = 0.37f;
    const std::vector<float> n0_slot = {0.11f, 0.5f, 2.25f};

    // Host, slot by slot.
    const auto d = random_symbols(seed + std::uint64_t(layers), std::size_t(num) * data * layers);
    std::vector<cf32> x(std::size_t(num) * res * layers), h(std::size_t(num) * res * per),
        y(std::size_t(num) * res * n_rx), y_data(std::size_t(num) * data * n_rx),
        h_data(std::size_t(num) * data * per), h_data2(h_data.size());
    std::vector<float> noise(std::size_t(num) * data), noise2(noise.size());
    NrSlotChannel flat(c, plan);
    for (int p = 0; p < num; ++p) {
      const auto P = std::size_t(p);
      std::span<cf32> xs(x.data() + P * res * layers, std::size_t(res) * layers);
      std::span<cf32> hs(h.data() + P * res * per, std::size_t(res) * per);
      std::span<cf32> ys(y.data() + P * res * n_rx, std::size_t(res) * n_rx);
      place_layers(plan, {d.data() + P * data * layers, std::size_t(data) * layers}, xs);
      place_dmrs(plan, xs);
      flat.generate(seed, blocks[P], tx, hs);
      receive_grid(seed, nr_noise_slot(blocks[P], tx), plan, n_rx, hs, xs, n0, ys);
      gather_data_y(plan, n_rx, ys, {y_data.data() + P * data * n_rx, std::size_t(data) * n_rx});
      data_re_csi(plan, n_rx, hs, n0, {h_data.data() + P * data * per, std::size_t(data) * per},
                  {noise.data() + P * data, std::size_t(data)});
      data_re_csi(plan, n_rx, hs, n0_slot[P],
                  {h_data2.data() + P * data * per, std::size_t(data) * per},
                  {noise2.data() + P * data, std::size_t(data)});
    }

    // Device, the whole batch per call.
    const auto pos = data_re_positions(plan);
    const auto dmrs = dmrs_table(plan);
    auto pos_d = to_device(pos);
    auto at_d = to_device(dmrs.at);
    auto val_d = to_device(dmrs.value);
    NrGridTables t;
    t.data_pos = pos_d.data();
    t.dmrs_at = at_d.data();
    t.dmrs_value = val_d.data();
    t.data_res = data;
    t.dmrs_count = int(dmrs.at.size());
    t.res = res;
    t.layers = layers;
    t.n_rx = n_rx;
    auto blocks_d = to_device(blocks);
    auto d_d = to_device(d);
    auto n0_d = to_device(n0_slot);
    Buffer<cf32> x_d(x.size(), Memory::device), h_d(h.size(), Memory::device),
        y_d(y.size(), Memory::device), yd_d(y_data.size(), Memory::device),
        hd_d(h_data.size(), Memory::device);
    Buffer<float> noise_d(noise.size(), Memory::device);
    x_d.fill_bytes(0xFF);  // every element must be written
    h_d.fill_bytes(0xFF);
    nr_place_cuda(t, num, d_d.data(), x_d.data(), nullptr);
    nr_flat_channel_cuda(t, seed, blocks_d.data(), tx, num, h_d.data(), nullptr);
    nr_receive_cuda(t, seed, blocks_d.data(), tx, num, h_d.data(), x_d.data(), n0, y_d.data(),
                    nullptr);
    nr_gather_cuda(t, num, y_d.data(), h_d.data(), n0, nullptr, yd_d.data(), hd_d.data(),
                   noise_d.data(), nullptr);
    const std::string at = "layers " + std::to_string(layers);
    EXPECT_TRUE(same_bits(to_host(x_d, x.size()), x)) << at << ": grid x";
    EXPECT_TRUE(same_bits(to_host(h_d, h.size()), h)) << at << ": flat channel";
    EXPECT_TRUE(same_bits(to_host(y_d, y.size()), y)) << at << ": received grid y";
    EXPECT_TRUE(same_bits(to_host(yd_d, y_data.size()), y_data)) << at << ": data REs' y";
    EXPECT_TRUE(same_bits(to_host(hd_d, h_data.size()), h_data)) << at << ": data REs' H";
    EXPECT_TRUE(same_bits(to_host(noise_d, noise.size()), noise)) << at << ": N0";
    nr_gather_cuda(t, num, y_d.data(), h_d.data(), n0, n0_d.data(), yd_d.data(), hd_d.data(),
                   noise_d.data(), nullptr);
    EXPECT_TRUE(same_bits(to_host(hd_d, h_data2.size()), h_data2)) << at << ": H, N0 per slot";
    EXPECT_TRUE(same_bits(to_host(noise_d, noise2.size()), noise2)) << at << ": N0 per slot";

    // LLRs to codeword order: distinct values, so any misplacement shows.
    const int m = 6;
    const std::int64_t g = std::int64_t(data) * layers * m;
    std::vector<float> det(std::size_t(num * g)), cw(det.size());
    std::iota(det.begin(), det.end(), 0.5f);
    for (int p = 0; p < num; ++p)
      llrs_to_codeword({det.data() + p * g, std::size_t(g)}, layers, m,
                       {cw.data() + p * g, std::size_t(g)});
    auto det_d = to_device(det);
    Buffer<float> cw_d(cw.size(), Memory::device);
    nr_llrs_to_codeword_cuda(det_d.data(), num, g, layers, m, cw_d.data(), nullptr);
    EXPECT_TRUE(same_bits(to_host(cw_d, cw.size()), cw)) << at << ": codeword LLR order";

    // HARQ compaction: rows 2 and 0 of three kept, in that order.
    const std::vector<int> keep = {2, 0};
    auto keep_d = to_device(keep);
    Buffer<float> rows_d(std::size_t(2 * g), Memory::device);
    nr_gather_rows_cuda(det_d.data(), keep_d.data(), 2, g, rows_d.data(), nullptr);
    const auto rows = to_host(rows_d, std::size_t(2 * g));
    EXPECT_TRUE(std::equal(rows.begin(), rows.begin() + g, det.begin() + 2 * g)) << at;
    EXPECT_TRUE(std::equal(rows.begin() + g, rows.end(), det.begin())) << at;
  }
#endif
}

}  // namespace
}  // namespace mimorx::sim

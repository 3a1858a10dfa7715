// How fast could the paired layered min-sum decoder be on this GPU? Two ceilings, each an upper
// bound on the real kernel (decoder_pair_cuda.cu), measured rather than estimated:
//   arith: the row update's arithmetic alone (decoder_pair.hpp's edge_q, RowScan, row_mins,
//          edge_out) on values held in registers: no loads or stores, no addresses, no
//          barriers, no widening of int8 storage;
//   row:   the kernel's own row code (row_update_fixed: int8 pairs in shared memory, the cyclic
//          shift's address arithmetic, messages in shared memory) with every thread working on
//          its own variables, so that no barrier is needed between rows.
// Each runs one wave of resident blocks, every thread updating one row of degree DEG many times.
// The rates (edge updates of a codeword per second) then give, for each code of
// gpubench_decoder_ldpc, the information throughput no decoder built from these operations can
// exceed at 10 iterations: K / sum over decoded rows of (Z deg_row iterations / rate(deg_row)).
// Usage: gpubench_ceiling_ldpc [out.jsonl]
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/cuda_check.hpp"
#include "ldpc/decoder_pair.hpp"
#include "ldpc/decoder_quant.hpp"
#include "mimorx/core/backend.hpp"
#include "mimorx/core/buffer.hpp"
#include "mimorx/ldpc/base_graph.hpp"

using namespace mimorx;
using namespace mimorx::ldpc;
namespace pair = mimorx::ldpc::detail::pair;
using pair::u32;
using Word = std::uint16_t;

namespace {

constexpr int kThreads = 256;

// A well-mixed int8 pair in [-127, 127] per (thread, edge), so that minima and signs vary.
__device__ u32 start_value(int tid, int j) {
  u32 h = u32(tid) * 0x9e3779b9u + u32(j) * 0x85ebca6bu;
  h ^= h >> 15;
  h *= 0x2c1b3c6du;
  h ^= h >> 12;
  const int lo = int(h % 255u) - 127, hi = int((h >> 16) % 255u) - 127;
  return (u32(lo) & 0xffffu) | (u32(hi) << 16);
}

template <int DEG>
__global__ void __launch_bounds__(kThreads) arith_ceiling(u32* out, int reps, pair::Scale sc) {
  const int tid = blockIdx.x * blockDim.x + threadIdx.x;
  u32 app[DEG], msg[DEG];
  MIMORX_UNROLL
  for (int j = 0; j < DEG; ++j) {
    app[j] = start_value(tid, j);
    msg[j] = 0;
  }
  for (int it = 0; it < reps; ++it) {
    u32 q[DEG];
    pair::RowScan scan;
    MIMORX_UNROLL
    for (int j = 0; j < DEG; ++j) {
      q[j] = pair::edge_q(app[j], msg[j]);
      scan.add(q[j]);
    }
    const pair::RowMins rm = pair::row_mins(scan.m1, scan.m2, scan.sign_xor, sc);
    MIMORX_UNROLL
    for (int j = 0; j < DEG; ++j) {
      const pair::EdgeOut o = pair::edge_out(q[j], rm);
      app[j] = o.app;
      msg[j] = o.msg;
    }
  }
  u32 acc = 0;
  MIMORX_UNROLL
  for (int j = 0; j < DEG; ++j) acc ^= app[j] ^ msg[j];
  out[tid] = acc;
}

template <int DEG>
__global__ void __launch_bounds__(kThreads) row_ceiling(u32* out, int reps, pair::Scale sc) {
  __shared__ Word s_app[DEG * kThreads];
  __shared__ Word s_msg[DEG * kThreads];
  __shared__ pair::PairEdge s_edges[DEG];
  const int r = threadIdx.x, z = kThreads;
  // Shift 0 for every edge: thread r reads and writes only variable r of each column, as in a
  // layer of the real kernel, but then also across rows, so no barrier is needed between them.
  // The address arithmetic still runs (the shifts come from shared memory at run time).
  if (r < DEG) s_edges[r] = pair::pair_edge(ldpc::detail::DecEdge{r * z, 0}, z);
  const int tid = blockIdx.x * blockDim.x + r;
  for (int j = 0; j < DEG; ++j) {
    s_app[j * z + r] = Word(pair::narrow(start_value(tid, j)));
    s_msg[r * DEG + j] = 0;
  }
  __syncthreads();
  for (int it = 0; it < reps; ++it) {
    // Messages as the kernel keeps them in shared memory: thread r's DEG words contiguous.
    pair::row_update_fixed<DEG>(s_app, s_msg + r * DEG, 1, s_edges, r, z, sc);
  }
  u32 acc = 0;
  for (int j = 0; j < DEG; ++j) acc ^= u32(s_app[j * z + r]) ^ u32(s_msg[r * DEG + j]);
  out[tid] = acc;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

struct Rate {
  int regs = 0;
  int blocks_per_sm = 0;
  double ms = 0;
  double cw_edges_per_s = 0;       // edge updates of one codeword per second (2 per pair-edge)
  double slots_per_pair_edge = 0;  // thread issue slots at the base clock per pair-edge
};

template <class Kernel>
Rate measure(Kernel kernel, int deg, int sms, double clock_hz, const pair::Scale& sc) {
  Rate r;
  cudaFuncAttributes attr{};
  MIMORX_CUDA_CHECK(cudaFuncGetAttributes(&attr, kernel));
  r.regs = attr.numRegs;
  MIMORX_CUDA_CHECK(
      cudaOccupancyMaxActiveBlocksPerMultiprocessor(&r.blocks_per_sm, kernel, kThreads, 0));
  const int grid = sms * r.blocks_per_sm;
  const int reps = std::max(64, 40000 / deg);
  Buffer<u32> out = Buffer<u32>::device(std::size_t(grid) * kThreads);
  Stream s = Stream::create();
  auto launch = [&] {
    kernel<<<grid, kThreads, 0, static_cast<cudaStream_t>(s.handle())>>>(out.data(), reps, sc);
    MIMORX_CUDA_CHECK_LAUNCH();
  };
  launch();
  std::vector<double> ms;
  for (int i = 0; i < 5; ++i) {
    GpuTimer t(s);
    t.start();
    launch();
    t.stop();
    ms.push_back(t.elapsed_ms());
  }
  r.ms = median(ms);
  const double pair_edges = double(grid) * kThreads * reps * deg;
  r.cw_edges_per_s = 2.0 * pair_edges / (r.ms * 1e-3);
  r.slots_per_pair_edge = double(sms) * 4 * 32 * clock_hz * (r.ms * 1e-3) / pair_edges;
  return r;
}

template <int DEG>
void measure_degree(std::map<int, Rate>& arith, std::map<int, Rate>& row, int sms, double clock,
                    const pair::Scale& sc) {
  arith[DEG] = measure(arith_ceiling<DEG>, DEG, sms, clock, sc);
  row[DEG] = measure(row_ceiling<DEG>, DEG, sms, clock, sc);
}

struct Code {
  std::string name;
  BaseGraph bg;
  int z;
  int rows;
  double target_gbps;  // the issue's target, 0 where none
};

// Information Gbit/s at 10 iterations if every row of degree d ran at rates.at(d).
double code_ceiling(const Code& c, const std::map<int, Rate>& rates) {
  const LiftedGraph g(c.bg, c.z);
  double seconds_per_word = 0;
  for (int l = 0; l < c.rows; ++l) {
    const int deg = g.row_start()[l + 1] - g.row_start()[l];
    seconds_per_word += 10.0 * c.z * deg / rates.at(deg).cw_edges_per_s;
  }
  return double(g.k()) / seconds_per_word / 1e9;
}

}  // namespace

int main(int argc, char** argv) {
  if (!cuda_available()) {
    std::printf("gpubench_ceiling: no CUDA GPU available; nothing to measure\n");
    return 0;
  }
  std::ofstream json;
  if (argc > 1) json.open(argv[1], std::ios::app);
  const auto dev = cuda_devices().at(0);
  int clock_khz = 0;
  MIMORX_CUDA_CHECK(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, 0));
  const double clock = clock_khz * 1e3;
  std::printf("device: %s, %d SMs, clock %.2f GHz (issue limit %.1f T thread instructions/s)\n",
              dev.name.c_str(), dev.sm_count, clock / 1e9, dev.sm_count * 128.0 * clock / 1e12);
  const pair::Scale sc{ldpc::detail::IntArith{}};  // NMS, alpha 0.75, messages capped at 47

  std::map<int, Rate> arith, row;
  measure_degree<3>(arith, row, dev.sm_count, clock, sc);
  measure_degree<4>(arith, row, dev.sm_count, clock, sc);
  measure_degree<5>(arith, row, dev.sm_count, clock, sc);
  measure_degree<6>(arith, row, dev.sm_count, clock, sc);
  measure_degree<7>(arith, row, dev.sm_count, clock, sc);
  measure_degree<8>(arith, row, dev.sm_count, clock, sc);
  measure_degree<9>(arith, row, dev.sm_count, clock, sc);
  measure_degree<10>(arith, row, dev.sm_count, clock, sc);
  measure_degree<19>(arith, row, dev.sm_count, clock, sc);

  std::printf(
      "\n| row degree | ceiling | registers | blocks/SM | ms | G codeword-edge updates/s | issue "
      "slots per pair-edge |\n|---|---|---|---|---|---|---|\n");
  for (const auto* set : {&arith, &row}) {
    const char* kind = set == &arith ? "arith" : "row";
    for (const auto& [deg, r] : *set) {
      std::printf("| %d | %s | %d | %d | %.3f | %.0f | %.1f |\n", deg, kind, r.regs,
                  r.blocks_per_sm, r.ms, r.cw_edges_per_s / 1e9, r.slots_per_pair_edge);
      if (json.is_open()) {
        json << nlohmann::json{{"bench", "ldpc_ceiling_degree"},
                               {"device", dev.name},
                               {"ceiling", kind},
                               {"degree", deg},
                               {"registers", r.regs},
                               {"blocks_per_sm", r.blocks_per_sm},
                               {"kernel_ms", r.ms},
                               {"codeword_edge_updates_per_s", r.cw_edges_per_s},
                               {"issue_slots_per_pair_edge", r.slots_per_pair_edge}}
                    .dump()
             << "\n";
      }
    }
  }

  const std::vector<Code> codes = {
      {"paper (2080,1760) BG1 Z=80 6 rows", BaseGraph::bg1, 80, 6, 100},
      {"BG1 Z=384 R=1/3 (46 rows)", BaseGraph::bg1, 384, 46, 50},
      {"BG1 Z=384 R=1/2 (24 rows)", BaseGraph::bg1, 384, 24, 0},
      {"BG1 Z=384 R=2/3 (13 rows)", BaseGraph::bg1, 384, 13, 0},
      {"BG1 Z=384 R=0.846 (6 rows, >=5/6)", BaseGraph::bg1, 384, 6, 0},
      {"BG1 Z=384 R=0.917 (4 rows, >=8/9)", BaseGraph::bg1, 384, 4, 200},
      {"BG2 Z=384 R=1/5 (42 rows)", BaseGraph::bg2, 384, 42, 0},
      {"BG2 Z=384 R=1/3 (22 rows)", BaseGraph::bg2, 384, 22, 0},
      {"BG2 Z=384 R=2/3 (7 rows)", BaseGraph::bg2, 384, 7, 0},
  };
  std::printf(
      "\n| code | target Gbit/s | ceiling: arithmetic only | ceiling: row code, no barriers |\n"
      "|---|---|---|---|\n");
  for (const Code& c : codes) {
    const double a = code_ceiling(c, arith), w = code_ceiling(c, row);
    std::printf("| %s | %s | %.1f | %.1f |\n", c.name.c_str(),
                c.target_gbps > 0 ? std::to_string(int(c.target_gbps)).c_str() : "-", a, w);
    if (json.is_open()) {
      json << nlohmann::json{{"bench", "ldpc_ceiling_code"},
                             {"device", dev.name},
                             {"code", c.name},
                             {"target_gbps", c.target_gbps},
                             {"arith_ceiling_gbps", a},
                             {"row_ceiling_gbps", w}}
                  .dump()
           << "\n";
    }
  }
  return 0;
}

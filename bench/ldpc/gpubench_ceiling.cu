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
// Each ceiling is measured for several instruction mixes of the same row update ("mix" in the
// JSON lines): int16x2, the integer lanes of decoder_pair.hpp (the decoder's own arithmetic), and
// the half-precision pairs of ceiling_half_row.cuh: f16x2_xorsign (min.xorsign.abs for the
// minimum and the sign product), f16x2_hmin (__hmin2/__hmax2 and a sign xor, sm_80's way),
// f16x2_xorsign_nosat (no clamps: half storage needs none), f16x2_xorsign_i8 (only the APP clamped,
// stored as int8 pairs), f16x2_decoder (the decoder's own half row update, decoder_half.hpp).
// The row ceiling stores half pairs as 32-bit words (twice the int8 pairs'
// shared memory), except f16x2_xorsign_i8 (int8 pairs, converted by byte permutes).
// Usage: gpubench_ceiling_ldpc [out.jsonl] [--profile]
//   --profile: one launch per kernel, no warm-up (for a profiler: scripts/ncu-ldpc-ceiling);
//   otherwise a warm-up and the median of 5 timed launches.
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <type_traits>
#include <vector>

#include "ceiling_half_row.cuh"
#include "core/cuda_check.hpp"
#include "ldpc/decoder_half.hpp"
#include "ldpc/decoder_pair.hpp"
#include "ldpc/decoder_quant.hpp"
#include "mimorx/core/backend.hpp"
#include "mimorx/core/buffer.hpp"
#include "mimorx/ldpc/base_graph.hpp"

using namespace mimorx;
using namespace mimorx::ldpc;
namespace pair = mimorx::ldpc::detail::pair;
namespace half_pair = mimorx::ldpc::detail::half_pair;
namespace hpair = mimorx::ldpc::detail::hpair;
using half_pair::Mix;
using pair::u32;

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
// The same values as half pairs.
template <Mix M>
__device__ u32 start_word(int tid, int j) {
  const u32 v = start_value(tid, j);
  if constexpr (M == Mix::int16x2) {
    return v;
  } else {
    return half_pair::bits(__halves2half2(__int2half_rn(int(std::int16_t(v & 0xffffu))),
                                          __int2half_rn(int(std::int16_t(v >> 16)))));
  }
}

// The scaling of both arithmetics, from one IntArith.
struct Scales {
  pair::Scale i;
  half_pair::Scale h;
  hpair::Scale d;  // the decoder's half scaling (alpha 0.75)
};

template <int DEG, Mix M>
__global__ void __launch_bounds__(kThreads) arith_ceiling(u32* out, int reps, Scales sc) {
  const int tid = blockIdx.x * blockDim.x + threadIdx.x;
  u32 app[DEG], msg[DEG];
  MIMORX_UNROLL
  for (int j = 0; j < DEG; ++j) {
    app[j] = start_word<M>(tid, j);
    msg[j] = 0;  // 0 and +0.0
  }
  for (int it = 0; it < reps; ++it) {
    u32 q[DEG];
    if constexpr (M == Mix::int16x2) {
      pair::RowScan scan;
      MIMORX_UNROLL
      for (int j = 0; j < DEG; ++j) {
        q[j] = pair::edge_q(app[j], msg[j]);
        scan.add(q[j]);
      }
      const pair::RowMins rm = pair::row_mins(scan.m1, scan.m2, scan.sign_xor, sc.i);
      MIMORX_UNROLL
      for (int j = 0; j < DEG; ++j) {
        const pair::EdgeOut o = pair::edge_out(q[j], rm);
        app[j] = o.app;
        msg[j] = o.msg;
      }
    } else if constexpr (M == Mix::f16x2_decoder) {
      hpair::RowScan scan;
      MIMORX_UNROLL
      for (int j = 0; j < DEG; ++j) {
        q[j] = hpair::hsub(app[j], msg[j]);
        scan.add(q[j]);
      }
      const hpair::RowMins rm = hpair::row_mins(scan, sc.d);
      MIMORX_UNROLL
      for (int j = 0; j < DEG; ++j) {
        const hpair::EdgeOut o = hpair::edge_out(q[j], rm);
        app[j] = o.app;
        msg[j] = o.msg;
      }
    } else {
      half_pair::RowScan<M> scan;
      MIMORX_UNROLL
      for (int j = 0; j < DEG; ++j) {
        q[j] = half_pair::edge_q<M>(app[j], msg[j]);
        scan.add(q[j]);
      }
      const half_pair::RowMins rm = half_pair::row_mins(scan, sc.h);
      MIMORX_UNROLL
      for (int j = 0; j < DEG; ++j) {
        const half_pair::EdgeOut o = half_pair::edge_out<M>(q[j], rm);
        app[j] = o.app;
        msg[j] = o.msg;
      }
    }
  }
  u32 acc = 0;
  MIMORX_UNROLL
  for (int j = 0; j < DEG; ++j) acc ^= app[j] ^ msg[j];
  out[tid] = acc;
}

template <int DEG, Mix M>
__global__ void __launch_bounds__(kThreads) row_ceiling(u32* out, int reps, Scales sc) {
  // int8 pairs (16-bit words, widened on load) for the integer lanes and f16x2_xorsign_i8, half
  // pairs as 32-bit words for the other f16x2 mixes.
  constexpr bool kInt8 = M == Mix::int16x2 || half_pair::kInt8Storage<M>;
  using Word = std::conditional_t<kInt8, std::uint16_t, u32>;
  // Thread r's messages at r * kStride: the decoder's odd stride for f16x2_decoder.
  constexpr int kStride = M == Mix::f16x2_decoder ? (DEG | 1) : DEG;
  __shared__ Word s_app[DEG * kThreads];
  __shared__ Word s_msg[kStride * kThreads];
  using Edge = std::conditional_t<M == Mix::f16x2_decoder, hpair::HalfEdge, pair::PairEdge>;
  __shared__ Edge s_edges[DEG];
  const int r = threadIdx.x, z = kThreads;
  // Shift 0 for every edge: thread r reads and writes only variable r of each column, as in a
  // layer of the real kernel, but then also across rows, so no barrier is needed between them.
  // The address arithmetic still runs (the shifts come from shared memory at run time).
  if (r < DEG) {
    const ldpc::detail::DecEdge e{r * z, 0};
    if constexpr (M == Mix::f16x2_decoder) {
      s_edges[r] = hpair::half_edge(e, z);
    } else {
      s_edges[r] = pair::pair_edge(e, z);
    }
  }
  const int tid = blockIdx.x * blockDim.x + r;
  for (int j = 0; j < DEG; ++j) {
    const u32 v = start_value(tid, j);
    if constexpr (M == Mix::int16x2) {
      s_app[j * z + r] = Word(pair::narrow(v));
      s_msg[r * kStride + j] = 0;
    } else if constexpr (kInt8) {  // excess-128 bytes
      s_app[j * z + r] = Word(pair::narrow(v ^ 0x00800080u));
      s_msg[r * kStride + j] = Word(0x8080u);
    } else {
      s_app[j * z + r] = start_word<M>(tid, j);
      s_msg[r * kStride + j] = 0;
    }
  }
  __syncthreads();
  for (int it = 0; it < reps; ++it) {
    // Messages as the kernel keeps them in shared memory: thread r's DEG words contiguous.
    if constexpr (M == Mix::int16x2) {
      pair::row_update_fixed<DEG>(s_app, s_msg + r * DEG, 1, s_edges, r, z, sc.i);
    } else if constexpr (M == Mix::f16x2_decoder) {
      hpair::row_update_fixed<DEG>(s_app, s_msg + r * kStride, 1, s_edges, r, z, sc.d);
    } else {
      half_pair::row_update_fixed<DEG, M>(s_app, s_msg + r * DEG, 1, s_edges, r, z, sc.h);
    }
  }
  u32 acc = 0;
  for (int j = 0; j < DEG; ++j) acc ^= u32(s_app[j * z + r]) ^ u32(s_msg[r * kStride + j]);
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
Rate measure(Kernel kernel, int deg, int sms, double clock_hz, const Scales& sc, bool profile) {
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
  if (!profile) launch();
  std::vector<double> ms;
  for (int i = 0; i < (profile ? 1 : 5); ++i) {
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

using RateTable = std::map<int, Rate>;  // by row degree

template <int DEG, Mix M>
void measure_degree(std::map<Mix, RateTable>& arith, std::map<Mix, RateTable>& row, int sms,
                    double clock, const Scales& sc, bool profile) {
  arith[M][DEG] = measure(arith_ceiling<DEG, M>, DEG, sms, clock, sc, profile);
  row[M][DEG] = measure(row_ceiling<DEG, M>, DEG, sms, clock, sc, profile);
}

// Every degree of the two base graphs: 3..10 (BG2, BG1 rows >= 4) and 19 (BG1 rows 0-3).
template <Mix M>
void measure_mix(std::map<Mix, RateTable>& arith, std::map<Mix, RateTable>& row, int sms,
                 double clock, const Scales& sc, bool profile) {
  measure_degree<3, M>(arith, row, sms, clock, sc, profile);
  measure_degree<4, M>(arith, row, sms, clock, sc, profile);
  measure_degree<5, M>(arith, row, sms, clock, sc, profile);
  measure_degree<6, M>(arith, row, sms, clock, sc, profile);
  measure_degree<7, M>(arith, row, sms, clock, sc, profile);
  measure_degree<8, M>(arith, row, sms, clock, sc, profile);
  measure_degree<9, M>(arith, row, sms, clock, sc, profile);
  measure_degree<10, M>(arith, row, sms, clock, sc, profile);
  measure_degree<19, M>(arith, row, sms, clock, sc, profile);
}

struct Code {
  std::string name;
  BaseGraph bg;
  int z;
  int rows;
  double target_gbps;  // the issue's target, 0 where none
};

// Information Gbit/s at 10 iterations if every row of degree d ran at rates.at(d).
double code_ceiling(const Code& c, const RateTable& rates) {
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
  std::string json_path;
  bool profile = false;
  for (int a = 1; a < argc; ++a) {
    const std::string arg = argv[a];
    if (arg == "--profile") {
      profile = true;
    } else if (json_path.empty() && arg.rfind("--", 0) != 0) {
      json_path = arg;
    } else {
      std::fprintf(stderr,
                   "gpubench_ceiling: usage: gpubench_ceiling_ldpc [out.jsonl] [--profile]\n");
      return 2;
    }
  }
  if (!cuda_available()) {
    std::printf("gpubench_ceiling: no CUDA GPU available; nothing to measure\n");
    return 0;
  }
  std::ofstream json;
  if (!json_path.empty()) {
    json.open(json_path, std::ios::app);
    if (!json) {
      std::fprintf(stderr, "gpubench_ceiling: cannot open %s for writing\n", json_path.c_str());
      return 2;
    }
  }
  const auto dev = cuda_devices().at(0);
  int clock_khz = 0;
  MIMORX_CUDA_CHECK(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, 0));
  const double clock = clock_khz * 1e3;
  std::printf("device: %s, %d SMs, clock %.2f GHz (issue limit %.1f T thread instructions/s)\n",
              dev.name.c_str(), dev.sm_count, clock / 1e9, dev.sm_count * 128.0 * clock / 1e12);
  const ldpc::detail::IntArith ia{};  // NMS, alpha 0.75, messages capped at 47
  const Scales sc{pair::Scale(ia), half_pair::Scale(ia), hpair::make_scale(0.75f, 0.5f, false)};

  const Mix mixes[] = {Mix::int16x2,          Mix::f16x2_xorsign,
                       Mix::f16x2_hmin,       Mix::f16x2_xorsign_nosat,
                       Mix::f16x2_xorsign_i8, Mix::f16x2_decoder};
  std::map<Mix, RateTable> arith, row;
  measure_mix<Mix::int16x2>(arith, row, dev.sm_count, clock, sc, profile);
  measure_mix<Mix::f16x2_xorsign>(arith, row, dev.sm_count, clock, sc, profile);
  measure_mix<Mix::f16x2_hmin>(arith, row, dev.sm_count, clock, sc, profile);
  measure_mix<Mix::f16x2_xorsign_nosat>(arith, row, dev.sm_count, clock, sc, profile);
  measure_mix<Mix::f16x2_xorsign_i8>(arith, row, dev.sm_count, clock, sc, profile);
  measure_mix<Mix::f16x2_decoder>(arith, row, dev.sm_count, clock, sc, profile);

  std::printf(
      "\n| mix | row degree | ceiling | registers | blocks/SM | ms | G codeword-edge updates/s | "
      "issue slots per pair-edge |\n|---|---|---|---|---|---|---|---|\n");
  for (const Mix mix : mixes) {
    for (const auto* set : {&arith, &row}) {
      const char* kind = set == &arith ? "arith" : "row";
      for (const auto& [deg, r] : set->at(mix)) {
        std::printf("| %s | %d | %s | %d | %d | %.3f | %.0f | %.1f |\n", half_pair::mix_name(mix),
                    deg, kind, r.regs, r.blocks_per_sm, r.ms, r.cw_edges_per_s / 1e9,
                    r.slots_per_pair_edge);
        if (json.is_open()) {
          json << nlohmann::json{{"bench", "ldpc_ceiling_degree"},
                                 {"device", dev.name},
                                 {"mix", half_pair::mix_name(mix)},
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
      "\n| code | target Gbit/s | mix | ceiling: arithmetic only | ceiling: row code, no barriers "
      "|\n|---|---|---|---|---|\n");
  for (const Code& c : codes) {
    for (const Mix mix : mixes) {
      const double a = code_ceiling(c, arith.at(mix)), w = code_ceiling(c, row.at(mix));
      std::printf("| %s | %s | %s | %.1f | %.1f |\n", c.name.c_str(),
                  c.target_gbps > 0 ? std::to_string(int(c.target_gbps)).c_str() : "-",
                  half_pair::mix_name(mix), a, w);
      if (json.is_open()) {
        json << nlohmann::json{{"bench", "ldpc_ceiling_code"},
                               {"device", dev.name},
                               {"mix", half_pair::mix_name(mix)},
                               {"code", c.name},
                               {"target_gbps", c.target_gbps},
                               {"arith_ceiling_gbps", a},
                               {"row_ceiling_gbps", w}}
                    .dump()
             << "\n";
      }
    }
  }
  json.flush();
  if (json.is_open() && !json) {
    std::fprintf(stderr, "gpubench_ceiling: writing %s failed\n", json_path.c_str());
    return 1;
  }
  return 0;
}

#pragma once
// Warp-wide top-C selection of the K-best detector's warp kernel (kbest_warp_cuda.cu): N
// unsigned keys (32 or 64 bits) held as R registers of 32 lanes (slot s = register * 32 + lane)
// leave with the C smallest in ascending order in slots 0..C-1.
//
// On unique keys (e.g. distance bits << 32 | child index) a bitonic network gives exactly the
// order of a stable sort by distance, which is the CPU reference's order. Only the C best are
// needed, so the network sorts chunks of C slots and then merges pairs of chunks keeping the
// smaller half: an element-wise minimum of an ascending chunk and its partner in the opposite
// order is a bitonic sequence holding the C smallest of both, which log2(C) half-cleaner stages
// sort. Pairs of registers merge first (no shuffle; the upper register, sorted descending, drops
// out, so later stages touch half the registers), then pairs of lane groups (a shuffle from the
// mirror-image lane; both groups keep the merged copy). Directions are per register: runs within
// a register are merged by mirror stages (mirror_stage), so a lane keeps the minimum or the
// maximum by one bit of its lane number. Stage count for N = 64, C = 16 (4x4 16-QAM, K = 16): 10
// sort stages on 2 registers, then 2 merges of 4 stages on 1, against 21 on 2 for a full sort.
#include <cstdint>

namespace mimorx::detect::kbest_cuda::warp {

using Key = unsigned long long;
constexpr Key kPad = ~Key(0);  // an empty slot: after every child
constexpr unsigned kFull = 0xffffffffu;

// min / max of unsigned keys (one integer min/max instruction for 32-bit keys).
template <class T>
__device__ __forceinline__ T kmin(T a, T b) {
  return b < a ? b : a;
}
template <class T>
__device__ __forceinline__ T kmax(T a, T b) {
  return b < a ? a : b;
}

// Compare-exchange of slot s with slot s ^ J over registers [0, E): the lower slot of a pair
// keeps the smaller key where the pair is ascending, the larger where descending; descending
// iff s & DK (DK = 0: ascending). DK > J, so both slots of a pair agree on the direction.
template <int E, int J, int DK, int R, class T>
__device__ __forceinline__ void stage(T (&v)[R], int lane) {
  static_assert(E <= R && (DK == 0 || DK > J));
#pragma unroll
  for (int e = 0; e < E; ++e) {
    const bool desc = DK != 0 && ((e * 32 + lane) & DK) != 0;
    if constexpr (J >= 32) {
      constexpr int RJ = J / 32;
      if ((e & RJ) == 0) {
        const T a = v[e], b = v[e + RJ];
        const T lo = kmin(a, b), hi = kmax(a, b);
        v[e] = desc ? hi : lo;
        v[e + RJ] = desc ? lo : hi;
      }
    } else {
      const T o = __shfl_xor_sync(kFull, v[e], J);
      const bool keep_min = ((lane & J) != 0) == desc;
      v[e] = keep_min ? kmin(o, v[e]) : kmax(o, v[e]);
    }
  }
}

// Stages J, J/2, ..., 1 with one direction rule: sorts bitonic chunks of 2J slots.
template <int E, int J, int DK, int R, class T>
__device__ __forceinline__ void merge_stages(T (&v)[R], int lane) {
  stage<E, J, DK>(v, lane);
  if constexpr (J > 1) merge_stages<E, J / 2, DK>(v, lane);
}

// The first stage of a merge of two sorted J-runs (J < 32) of the same direction: slot s with
// slot s ^ (2J - 1), its mirror image in the 2J-chunk. With this stage no run needs the
// opposite direction of its neighbour, so directions are per register (DK = 0 or DK >= 32) and
// every lane-level stage keeps the minimum or the maximum by one bit of the lane, the same bit
// for every stage at that distance.
template <int E, int J, int DK, int R, class T>
__device__ __forceinline__ void mirror_stage(T (&v)[R], int lane) {
  static_assert(J < 32 && (DK == 0 || DK >= 32));
#pragma unroll
  for (int e = 0; e < E; ++e) {
    const bool desc = DK != 0 && ((e * 32) & DK) != 0;
    const T o = __shfl_xor_sync(kFull, v[e], 2 * J - 1);
    const bool keep_min = ((lane & J) != 0) == desc;
    v[e] = keep_min ? kmin(o, v[e]) : kmax(o, v[e]);
  }
}

// Sorted K-runs (K < C <= 32, within registers) merged up to C-runs in each register's
// direction (DK = 0 or >= 32).
template <int E, int C, int DK, int K, int R, class T>
__device__ __forceinline__ void merge_runs(T (&v)[R], int lane) {
  mirror_stage<E, K, DK>(v, lane);
  if constexpr (K > 1) merge_stages<E, K / 2, DK>(v, lane);
  if constexpr (2 * K < C) merge_runs<E, C, DK, 2 * K>(v, lane);
}

// Every C-chunk sorted, direction P0 (0: ascending; >= 32: per register, descending where
// (register * 32) & P0), from bitonic K0-chunks (K0 <= C): half-cleaners sort the K0-chunks,
// mirror merges build runs up to 32 lanes, then register pairs (in-lane stages) up to C.
template <int E, int C, int P0, int K, int R, class T>
__device__ __forceinline__ void merge_registers(T (&v)[R], int lane) {
  merge_stages<E, K / 2, K == C ? P0 : K>(v, lane);
  if constexpr (K < C) merge_registers<E, C, P0, 2 * K>(v, lane);
}
template <int E, int C, int P0, int K0, int R, class T>
__device__ __forceinline__ void sort_chunks(T (&v)[R], int lane) {
  static_assert(K0 <= C && (P0 == 0 || P0 >= 32));
  constexpr int CL = C < 32 ? C : 32;    // runs within registers
  constexpr int DL = C <= 32 ? P0 : 32;  // their direction: alternate where C spans registers
  constexpr int K1 = K0 < CL ? K0 : CL;
  merge_stages<E, K1 / 2, DL>(v, lane);
  if constexpr (K1 < CL) merge_runs<E, CL, DL, K1>(v, lane);
  if constexpr (C > 32) merge_registers<E, C, P0, 64>(v, lane);
}

// The direction rule (DK) for E active registers of sorted C-chunks before the next merge:
// registers e and e + E/2 pair while more than one chunk spans registers (the upper half
// descending), else ascending (lane groups pair by mirror merges).
template <int E, int C>
constexpr int next_pairing() {
  return E > 1 && E * 32 > C ? E * 16 : 0;
}

// Lane-group merges of ascending C-runs at lane distance P, 2P, ..., 16 within register 0: the
// element-wise minimum of a run and the mirror image of its partner run (a bitonic sequence
// holding the C smallest of both; the partner group keeps its reverse), then half-cleaners.
template <int C, int P, int R, class T>
__device__ __forceinline__ void lane_merges(T (&v)[R], int lane) {
  v[0] = kmin(v[0], T(__shfl_xor_sync(kFull, v[0], P | (C - 1))));
  if constexpr (C > 1) merge_stages<1, C / 2, 0>(v, lane);
  if constexpr (2 * P < 32) lane_merges<C, 2 * P>(v, lane);
}

// Register merges (E -> E/2 active) until one chunk or one register is left, then lane merges.
template <int E, int C, int R, class T>
__device__ __forceinline__ void merge_chunks(T (&v)[R], int lane) {
  if constexpr (E > 1 && E * 32 > C) {
    constexpr int H = E / 2;
#pragma unroll
    for (int e = 0; e < H; ++e) v[e] = kmin(v[e], v[e + H]);
    merge_stages<H, C / 2, next_pairing<H, C>()>(v, lane);
    merge_chunks<H, C>(v, lane);
  } else if constexpr (E == 1 && C < 32) {
    lane_merges<C, C>(v, lane);
  }
}

// The C smallest of the R * 32 keys, ascending, in slots 0..C-1 (C a power of two, 2 <= C,
// C <= R * 32). Every chunk of K0 slots (a power of two) must be bitonic already (K0 = 2: any
// input); larger K0 skips the first log2(K0) (log2(K0) - 1) / 2 stages of the chunk sort.
template <int C, int K0 = 2, int R, class T>
__device__ __forceinline__ void select_smallest(T (&v)[R], int lane) {
  static_assert(C >= 2 && (C & (C - 1)) == 0 && C <= R * 32 && (R & (R - 1)) == 0);
  static_assert(K0 >= 2 && (K0 & (K0 - 1)) == 0);
  sort_chunks<R, C, next_pairing<R, C>(), (K0 < C ? K0 : C)>(v, lane);
  merge_chunks<R, C>(v, lane);
}

// Slots 0..C-1 sorted ascending (C a power of two, C <= R * 32; the other slots are left in
// an unspecified order): all of a level's children when at most C exist. K0 as above.
template <int C, int K0 = 2, int R, class T>
__device__ __forceinline__ void sort_first(T (&v)[R], int lane) {
  static_assert(C >= 2 && (C & (C - 1)) == 0 && C <= R * 32);
  static_assert(K0 >= 2 && (K0 & (K0 - 1)) == 0);
  sort_chunks<(C + 31) / 32, C, 0, (K0 < C ? K0 : C)>(v, lane);
}

}  // namespace mimorx::detect::kbest_cuda::warp

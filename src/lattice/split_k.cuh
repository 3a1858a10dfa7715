#pragma once
// Split-K products on thread-block clusters (sm_90): the blocks of one cluster share an output
// tile and each sums its own part of the k range; their partial tiles are added in rank order
// through distributed shared memory. Deterministic (the order is fixed by the code, not by
// scheduling) and without global scratch. A product with a long k range and few output tiles
// (the block method's B -= B0 M over the last columns, the tail factorisation's Schur complement)
// otherwise runs on a few SMs, bound by the latency of its k steps.
#include <cooperative_groups.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <map>
#include <mutex>

#include "core/cuda_check.hpp"

namespace mimorx::lattice::detail {

// Blocks per cluster of a split launch (the portable cluster size).
constexpr int kSplitK = 8;

// Every block of the calling cluster holds its partial tile in `part` (`words` doubles, the same
// shared-memory variable in each block). Block `rank` of s adds the s partials of entries
// [rank words / s, (rank + 1) words / s) (rounded down: s need not divide words), in rank order,
// and hands each sum to out(e, sum). Called by every thread of every block of the cluster; a launch
// without clusters (a cluster of one block) hands on its own partials.
template <class Out>
__device__ void cluster_sum(const double* part, int words, Out&& out) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  namespace cg = cooperative_groups;
  cg::cluster_group cl = cg::this_cluster();
  const int s = int(cl.num_blocks()), rank = int(cl.block_rank());
  const int begin = rank * words / s, end = (rank + 1) * words / s;
  cl.sync();  // every block's partial written
  for (int e = begin + int(threadIdx.x); e < end; e += int(blockDim.x)) {
    double v = 0;
    for (int q = 0; q < s; ++q) v += cl.map_shared_rank(part, q)[e];
    out(e, v);
  }
  cl.sync();  // no block leaves while another still reads its shared memory
#else
  __syncthreads();
  for (int e = int(threadIdx.x); e < words; e += int(blockDim.x)) out(e, part[e]);
#endif
}

// *p as block 0 of the calling cluster read it, the same in every block (for a choice that the
// whole cluster must make alike from a word that others change concurrently). Called by every
// thread of every block of the cluster.
template <class T>
__device__ T cluster_rank0_value(const T* p) {
  __shared__ T s_value;
  if (threadIdx.x == 0) s_value = *p;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  namespace cg = cooperative_groups;
  cg::cluster_group cl = cg::this_cluster();
  cl.sync();
  const T v = *cl.map_shared_rank(&s_value, 0);
  cl.sync();  // block 0's s_value read by all before any block moves on
  return v;
#else
  __syncthreads();
  return s_value;
#endif
}

// This block's share [begin, end) of the k range [0, k_end) in steps of `step`, by its rank
// along z (the cluster's z extent is the grid's: the launches below).
__device__ __forceinline__ void split_range(int k_end, int step, int& begin, int& end) {
  const int steps = (k_end + step - 1) / step;
  const int per = (steps + int(gridDim.z) - 1) / int(gridDim.z);
  begin = min(k_end, int(blockIdx.z) * per * step);
  end = min(k_end, (int(blockIdx.z) + 1) * per * step);
}

// Clusters need sm_90 on the device and in the kernel's code: a build for an older virtual
// architecture may run on a newer GPU through its PTX, without the cluster path.
inline bool split_supported(const void* kernel) {
  static std::mutex mu;
  static std::map<const void*, int> ptx;  // the kernels' PTX versions
  int version = 0;
  {
    const std::lock_guard<std::mutex> lock(mu);
    auto it = ptx.find(kernel);
    if (it == ptx.end()) {
      cudaFuncAttributes a{};
      MIMORX_CUDA_CHECK(cudaFuncGetAttributes(&a, kernel));
      it = ptx.emplace(kernel, a.ptxVersion).first;
    }
    version = it->second;
  }
  int device = 0, major = 0;
  MIMORX_CUDA_CHECK(cudaGetDevice(&device));
  MIMORX_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
  return major >= 9 && version >= 90;
}

// The split to launch `kernel` with: `want` (at most kSplitK) where clusters work and `allowed`
// (LllOptions::split_k), else 1.
inline int split_for(const void* kernel, int want, bool allowed) {
  return allowed && split_supported(kernel) ? std::max(1, std::min(kSplitK, want)) : 1;
}

// grid.z = split blocks per output tile, as one cluster (split 1: an ordinary launch).
template <class... Params, class... Args>
void launch_split(int split, void (*kernel)(Params...), dim3 grid, dim3 block, cudaStream_t s,
                  Args... args) {
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = dim3(grid.x, grid.y, unsigned(split));
  cfg.blockDim = block;
  cfg.stream = s;
  cudaLaunchAttribute attr{};
  attr.id = cudaLaunchAttributeClusterDimension;
  attr.val.clusterDim.x = 1;
  attr.val.clusterDim.y = 1;
  attr.val.clusterDim.z = unsigned(split);
  cfg.attrs = &attr;
  cfg.numAttrs = split > 1 ? 1 : 0;
  MIMORX_CUDA_CHECK(cudaLaunchKernelEx(&cfg, kernel, Params(args)...));
}

}  // namespace mimorx::lattice::detail

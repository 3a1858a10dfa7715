// CUDA kernel of the trellis detector: Q threads per received vector, thread q owning vertex q
// of every stage (the paper's mapping), G = 128 / Q vectors per block for Q < 128 (32 for
// QPSK, 8 for 16-QAM, 2 for 64-QAM; one vector of 256 threads for 256-QAM).
//
// Per vector, shared memory holds R' (scale * R) and y^ (read once, broadcast to all Q
// threads), and per stage the published state of the Q surviving paths: (distance, residual
// re, im) as one float4 and the path word. The edge reduction reads the Q incoming paths as
// broadcast float4 loads: one shared-memory instruction per incoming edge, where warp
// shuffles would need three (distance and both residual parts) and would not reach across
// warps for Q > 32. The list paths' (distance, bit word) go to shared memory at the end, and
// the max-log merge is the N-way kernel's transpose: thread (s, j) scans candidates s, s + S,
// ... for bit j. The operations are those of the CPU reference (trellis_math.hpp, same order),
// so lists, bits and LLRs are bit-identical to it.
#include <algorithm>
#include <cstdint>
#include <string>
#include <type_traits>

#include "core/cuda_check.hpp"
#include "detect/nway_math.hpp"
#include "detect/trellis_cuda.hpp"
#include "detect/trellis_math.hpp"
#include "mimorx/core/error.hpp"

namespace mimorx::detect::trellis_cuda {

namespace {

using trellis::Path;
constexpr float kInf = __builtin_huge_valf();

template <int L>
constexpr int vectors_per_block() {
  return L * L >= 128 ? 1 : 128 / (L * L);
}

template <int NT, int L>
struct alignas(16) VectorSmem {
  static constexpr int Q = L * L, NB = NT * 2 * nway::log2_pow2(L), NC = NT * Q;
  using Word = std::conditional_t<(NB > 32), std::uint64_t, std::uint32_t>;
  float4 pub[Q];  // (distance, residual re, residual im, unused) of the surviving paths
  Path path[Q];   // their vertices
  Word cw[NC];    // list paths: bit words
  float cd[NC];   // list paths: distances (index t * Q + vertex)
  float red[2 * Q];
  cf32 rs[NT * NT];  // R', column-major, zero below the diagonal
  cf32 yh[NT];
  float inv[NT];  // 1 / (2 R'_ii)
};

template <int NT, int L>
__global__ void __launch_bounds__(vectors_per_block<L>() * L * L)
    trellis_kernel(const cf32* __restrict__ r, std::int64_t r_stride, const cf32* __restrict__ z,
                   std::int64_t z_stride, std::int64_t vectors, int vpc, float scale,
                   const float* __restrict__ n0, std::int64_t n0_size, float clip,
                   std::uint8_t* __restrict__ bits, float* __restrict__ llrs,
                   float* __restrict__ cand_d, std::uint8_t* __restrict__ cand_sym) {
  using S = VectorSmem<NT, L>;
  using Word = typename S::Word;
  constexpr int Q = S::Q, NB = S::NB, NC = S::NC, G = vectors_per_block<L>();
  // Raw storage: cf32's member initialisers make S non-trivially constructible.
  __shared__ __align__(16) unsigned char raw[sizeof(S) * G];
  const int vl = int(threadIdx.x) / Q, q = int(threadIdx.x) - vl * Q;
  S& s = reinterpret_cast<S*>(raw)[vl];
  const std::int64_t v = std::int64_t(blockIdx.x) * G + vl;
  const bool valid = v < vectors;
  // Threads of a vector past the end compute on zeros (no NaN arises) and write nothing; they
  // take part in every barrier.
  {
    const cf32* rv = r + (valid ? (v / vpc) * r_stride : 0);
    for (int idx = q; idx < NT * NT; idx += Q) {
      const int j = idx / NT, i = idx - j * NT;
      s.rs[idx] = (valid && i <= j) ? trellis::scaled(rv[idx], scale) : cf32(0.f, 0.f);
    }
    for (int idx = q; idx < NT; idx += Q)
      s.yh[idx] = valid ? z[v * z_stride + idx] : cf32(0.f, 0.f);
  }
  __syncthreads();
  for (int idx = q; idx < NT; idx += Q) s.inv[idx] = trellis::inv_half(s.rs[idx * NT + idx].re);
  __syncthreads();

  const float a = trellis::amp_re<L>(q), b = trellis::amp_im<L>(q);
  float dist = trellis::edge_weight(s.yh[NT - 1], s.rs[(NT - 1) * NT + NT - 1].re, a, b);
  Path p = trellis::with_vertex(0, NT - 1, q);
#pragma unroll 1
  for (int i = NT - 1; i >= 0; --i) {
    // Path q ends at vertex q of row i; its residual at row i-1 serves the extension of list
    // L_i and the reduction into row i-1 (the paper's shared delta_k).
    cf32 u(0.f, 0.f);
    if (i > 0) {
      u = trellis::residual<NT, L>(s.rs, s.yh[i - 1], i - 1, p);
      s.pub[q] = make_float4(dist, u.re, u.im, 0.f);
      s.path[q] = p;
    }
    {
      float d = dist;
      Path pp = p;
      if (i > 0) trellis::extend<NT, L>(s.rs, s.yh, s.inv, i - 1, u, &d, &pp);
      if (cand_d) {
        if (valid) {
          const std::int64_t c = (v * NT + i) * Q + trellis::vertex_symbol<L>(q);
          cand_d[c] = d;
#pragma unroll
          for (int j = 0; j < NT; ++j) {
            cand_sym[c * NT + j] =
                std::uint8_t(trellis::vertex_symbol<L>(trellis::vertex_of(pp, j)));
          }
        }
      } else {
        s.cd[i * Q + q] = d;
        s.cw[i * Q + q] = trellis::path_bits<NT, L, Word>(pp);
      }
    }
    if (i == 0) break;
    __syncthreads();
    int arg = 0;
    const float nd = trellis::reduce_vertex<Q>(
        [&](int k, float* dk, cf32* uk) {
          const float4 e = s.pub[k];
          *dk = e.x;
          *uk = cf32(e.y, e.z);
        },
        s.rs[(i - 1) * NT + i - 1].re, a, b, &arg);
    const Path np = trellis::with_vertex(s.path[arg], i - 1, q);
    __syncthreads();  // every thread has read the published state before it is overwritten
    dist = nd;
    p = np;
  }
  if (cand_d) return;  // uniform over the grid: no barrier follows
  __syncthreads();

  // Max-log merge over the union of the nt lists.
  constexpr int SC = Q / NB > 1 ? Q / NB : 1;  // threads per bit
  const float inv_n0 = valid ? nway::fdiv(1.f, n0[n0_size == 1 ? 0 : v]) : 0.f;
  for (int item = q; item < NB * SC; item += Q) {
    const int sub = item / NB, j = item - sub * NB;
    float m0 = kInf, m1 = kInf;
#pragma unroll 4
    for (int c = sub; c < NC; c += SC) {
      const float dc = s.cd[c];
      const bool one = (s.cw[c] >> j) & 1u;
      m0 = one ? m0 : nway::fmin2(m0, dc);
      m1 = one ? nway::fmin2(m1, dc) : m1;
    }
    if constexpr (SC == 1) {
      if (valid) {
        const std::int64_t o = v * NB + j;
        bits[o] = nway::hard_of_minima(m0, m1);
        if (llrs) llrs[o] = nway::llr_of_minima(m0, m1, inv_n0, clip);
      }
    } else {
      s.red[2 * item] = m0;
      s.red[2 * item + 1] = m1;
    }
  }
  if constexpr (SC > 1) {
    __syncthreads();
    if (valid && q < NB) {
      float m0 = kInf, m1 = kInf;
      for (int sub = 0; sub < SC; ++sub) {
        m0 = nway::fmin2(m0, s.red[2 * (sub * NB + q)]);
        m1 = nway::fmin2(m1, s.red[2 * (sub * NB + q) + 1]);
      }
      const std::int64_t o = v * NB + q;
      bits[o] = nway::hard_of_minima(m0, m1);
      if (llrs) llrs[o] = nway::llr_of_minima(m0, m1, inv_n0, clip);
    }
  }
}

template <int NT, int L>
void launch(const cf32* r, std::int64_t r_stride, const cf32* z, std::int64_t z_stride,
            std::int64_t vectors, int vpc, const float* n0, std::int64_t n0_size, float clip,
            std::uint8_t* bits, float* llrs, float* cand_d, std::uint8_t* cand_sym,
            cudaStream_t stream) {
  constexpr int G = vectors_per_block<L>(), threads = G * L * L;
  static_assert(sizeof(VectorSmem<NT, L>) * G <= 48 * 1024, "static shared memory over 48 KB");
  const float scale = qam_scale(Modulation(2 * nway::log2_pow2(L)));
  const std::int64_t blocks = (vectors + G - 1) / G;
  trellis_kernel<NT, L><<<unsigned(blocks), threads, 0, stream>>>(r, r_stride, z, z_stride, vectors,
                                                                  vpc, scale, n0, n0_size, clip,
                                                                  bits, llrs, cand_d, cand_sym);
  MIMORX_CUDA_CHECK_LAUNCH();
}

template <int NT>
void launch_l(int levels, const cf32* r, std::int64_t r_stride, const cf32* z,
              std::int64_t z_stride, std::int64_t vectors, int vpc, const float* n0,
              std::int64_t n0_size, float clip, std::uint8_t* bits, float* llrs, float* cand_d,
              std::uint8_t* cand_sym, cudaStream_t s) {
  switch (levels) {
    case 2:
      return launch<NT, 2>(r, r_stride, z, z_stride, vectors, vpc, n0, n0_size, clip, bits, llrs,
                           cand_d, cand_sym, s);
    case 4:
      return launch<NT, 4>(r, r_stride, z, z_stride, vectors, vpc, n0, n0_size, clip, bits, llrs,
                           cand_d, cand_sym, s);
    case 8:
      return launch<NT, 8>(r, r_stride, z, z_stride, vectors, vpc, n0, n0_size, clip, bits, llrs,
                           cand_d, cand_sym, s);
    case 16:
      return launch<NT, 16>(r, r_stride, z, z_stride, vectors, vpc, n0, n0_size, clip, bits, llrs,
                            cand_d, cand_sym, s);
  }
  throw Unsupported("mod: " + std::to_string(levels) + " levels per axis");
}

}  // namespace

void search(const cf32* r, std::int64_t r_stride, const cf32* z, std::int64_t z_stride,
            std::int64_t vectors, int vectors_per_channel, int nt, Modulation mod, const float* n0,
            std::int64_t n0_size, float clip, std::uint8_t* bits, float* llrs, float* cand_d,
            std::uint8_t* cand_sym, int device, void* stream) {
  if (vectors == 0) return;
  MIMORX_CUDA_CHECK(cudaSetDevice(device));
  const cudaStream_t s = detail::as_stream(stream);
  const int levels = axis_levels(mod), vpc = vectors_per_channel;
  switch (nt) {
    case 2:
      return launch_l<2>(levels, r, r_stride, z, z_stride, vectors, vpc, n0, n0_size, clip, bits,
                         llrs, cand_d, cand_sym, s);
    case 4:
      return launch_l<4>(levels, r, r_stride, z, z_stride, vectors, vpc, n0, n0_size, clip, bits,
                         llrs, cand_d, cand_sym, s);
    case 8:
      return launch_l<8>(levels, r, r_stride, z, z_stride, vectors, vpc, n0, n0_size, clip, bits,
                         llrs, cand_d, cand_sym, s);
  }
  throw Unsupported("nt: " + std::to_string(nt));
}

}  // namespace mimorx::detect::trellis_cuda

#pragma once
// Shared by the decoder tests: codewords, BPSK over AWGN, the rate-matching-free transmission.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "mimorx/core/rng.hpp"
#include "mimorx/ldpc/base_graph.hpp"
#include "mimorx/ldpc/decoder.hpp"
#if __has_include("mimorx/ldpc/encoder.hpp")
#include "mimorx/ldpc/encoder.hpp"
#define MIMORX_TEST_HAS_ENCODER 1
#else
#define MIMORX_TEST_HAS_ENCODER 0
#endif

namespace mimorx::ldpc::test {

// An encoder written from linear algebra alone, independent of the library's: the 4Z core
// parity bits solve a dense GF(2) system (Gauss-Jordan on bitsets), every extension row i >= 4
// fixes its own degree-1 parity column kb + i. Used to cross-check the library encoder.
class ReferenceEncoder {
 public:
  ReferenceEncoder(BaseGraph bg, int z) : g_(bg, z) {
    const int m = 4 * z, words = (2 * m + 63) / 64;
    std::vector<std::vector<std::uint64_t>> a(m, std::vector<std::uint64_t>(words, 0));
    const int kb = g_.info_cols();
    for (int i = 0; i < 4; ++i) {
      for (int e = g_.row_start()[i]; e < g_.row_start()[i + 1]; ++e) {
        const Edge& ed = g_.edges()[e];
        if (ed.col < kb) continue;
        for (int r = 0; r < z; ++r) {
          const int c = (ed.col - kb) * z + (r + ed.shift) % z;
          a[i * z + r][c / 64] ^= std::uint64_t(1) << (c % 64);
        }
      }
    }
    for (int r = 0; r < m; ++r) a[r][(m + r) / 64] |= std::uint64_t(1) << ((m + r) % 64);
    for (int c = 0; c < m; ++c) {
      int p = c;
      while (p < m && !((a[p][c / 64] >> (c % 64)) & 1)) ++p;
      if (p == m) throw std::runtime_error("reference encoder: singular core");
      std::swap(a[p], a[c]);
      for (int r = 0; r < m; ++r) {
        if (r != c && ((a[r][c / 64] >> (c % 64)) & 1)) {
          for (int w = 0; w < words; ++w) a[r][w] ^= a[c][w];
        }
      }
    }
    inv_.assign(m, std::vector<std::uint8_t>(m));
    for (int r = 0; r < m; ++r) {
      for (int c = 0; c < m; ++c) inv_[r][c] = (a[r][(m + c) / 64] >> ((m + c) % 64)) & 1;
    }
  }
  void encode(const std::uint8_t* info, std::uint8_t* cw) const {
    const int z = g_.z(), kb = g_.info_cols(), n = g_.n();
    std::fill(cw, cw + n, std::uint8_t(0));
    std::copy(info, info + g_.k(), cw);
    std::vector<std::uint8_t> lambda(4 * z, 0);
    for (int i = 0; i < 4; ++i) {
      for (int e = g_.row_start()[i]; e < g_.row_start()[i + 1]; ++e) {
        const Edge& ed = g_.edges()[e];
        if (ed.col >= kb) continue;
        for (int r = 0; r < z; ++r) lambda[i * z + r] ^= cw[ed.col * z + (r + ed.shift) % z];
      }
    }
    for (int r = 0; r < 4 * z; ++r) {
      int b = 0;
      for (int c = 0; c < 4 * z; ++c) b ^= inv_[r][c] & lambda[c];
      cw[kb * z + r] = std::uint8_t(b);
    }
    for (int i = 4; i < g_.base_rows(); ++i) {
      int own_shift = 0;
      std::vector<std::uint8_t> acc(z, 0);
      for (int e = g_.row_start()[i]; e < g_.row_start()[i + 1]; ++e) {
        const Edge& ed = g_.edges()[e];
        if (ed.col == kb + i) {
          own_shift = ed.shift;
          continue;
        }
        for (int r = 0; r < z; ++r) acc[r] ^= cw[ed.col * z + (r + ed.shift) % z];
      }
      for (int r = 0; r < z; ++r) cw[(kb + i) * z + (r + own_shift) % z] = acc[r];
    }
  }

 private:
  LiftedGraph g_;
  std::vector<std::vector<std::uint8_t>> inv_;
};

// num random codewords (num x 68Z or 52Z bits) from the library's encoder, checked by the
// parity-check matrix; info bits are element (w, i) of Philox stream 1 of `seed`.
inline std::vector<std::uint8_t> random_codewords(BaseGraph bg, int z, int num,
                                                  std::uint64_t seed) {
  const LiftedGraph g(bg, z);
  std::vector<std::uint8_t> info(std::size_t(num) * g.k());
  for (std::size_t i = 0; i < info.size(); ++i) {
    info[i] = rng::uniform_at(seed, 1, i) < 0.5f ? 1 : 0;
  }
  std::vector<std::uint8_t> cw(std::size_t(num) * g.n());
#if MIMORX_TEST_HAS_ENCODER
  EncoderPlan enc(bg, z, Backend::cpu());
  enc.encode(View<const std::uint8_t>(info.data(), std::int64_t(info.size()), Memory::host), num,
             View<std::uint8_t>(cw.data(), std::int64_t(cw.size()), Memory::host));
#else
  const ReferenceEncoder enc(bg, z);
  for (int w = 0; w < num; ++w)
    enc.encode(&info[std::size_t(w) * g.k()], &cw[std::size_t(w) * g.n()]);
#endif
  for (int w = 0; w < num; ++w) {
    EXPECT_TRUE(g.is_codeword(cw.data() + std::size_t(w) * g.n())) << "encoder output " << w;
    for (int i = 0; i < g.k(); ++i) {
      EXPECT_EQ(cw[std::size_t(w) * g.n() + i], info[std::size_t(w) * g.k() + i]);
    }
  }
  return cw;
}

// BPSK (bit 0 -> +1) over AWGN of variance sigma2 per real dimension, LLR = 2 y / sigma2, for the
// first `n_used` bits of each codeword; the first 2Z columns are punctured (LLR 0). sigma2 = 0
// gives noiseless LLRs of magnitude 8.
inline std::vector<float> bpsk_llrs(const std::vector<std::uint8_t>& cw, int n_full, int n_used,
                                    int z, float sigma2, std::uint64_t seed) {
  const std::size_t num = cw.size() / n_full;
  std::vector<float> llr(num * n_used);
  for (std::size_t w = 0; w < num; ++w) {
    for (int i = 0; i < n_used; ++i) {
      const float x = cw[w * n_full + i] ? -1.f : 1.f;
      float v;
      if (i < 2 * z) {
        v = 0.f;
      } else if (sigma2 == 0.f) {
        v = 8.f * x;
      } else {
        const float y = x + std::sqrt(sigma2) * rng::gaussian_at(seed, 2, w * n_full + i);
        v = 2.f * y / sigma2;
      }
      llr[w * n_used + i] = v;
    }
  }
  return llr;
}

// Noise variance for Eb/N0 (dB) at code rate R with BPSK: sigma2 = 1 / (2 R Eb/N0).
inline float sigma2_for(double ebn0_db, double rate) {
  return float(1.0 / (2.0 * rate * std::pow(10.0, ebn0_db / 10.0)));
}

template <class T>
View<const T> cview(const std::vector<T>& v) {
  return View<const T>(v.data(), std::int64_t(v.size()), Memory::host);
}
template <class T>
View<T> hview(std::vector<T>& v) {
  return View<T>(v.data(), std::int64_t(v.size()), Memory::host);
}

}  // namespace mimorx::ldpc::test

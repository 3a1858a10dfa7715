#include "mimorx/ldpc/transport_batch.hpp"

#include <array>
#include <map>
#include <cmath>
#include <string>
#include <vector>

#include "ldpc/transport_batch_math.hpp"
#include "mimorx/config.hpp"
#include "mimorx/core/error.hpp"
#include "mimorx/ldpc/crc.hpp"
#if MIMORX_HAS_CUDA
#include "ldpc/transport_batch_cuda.hpp"
#endif

namespace mimorx::ldpc {

namespace {

// Rate matching of one redundancy version as index tables over a whole transport block:
//   tx_map[i]: for coded bit i (of g), its code block r and mother position p as r n + p;
//   rx_start / rx_idx: for every r n + p, the coded bits read from it, in selection order
//   (CSR), so that rate recovery is a gather with the sums of rate_recover().
struct RvTables {
  std::vector<int> tx_map, rx_start, rx_idx;
  Buffer<int> device;  // tx_map | rx_start | rx_idx on the device (CUDA plans)
  const int* dev_tx() const { return device.data(); }
  const int* dev_rx_start() const { return device.data() + tx_map.size(); }
  const int* dev_rx_idx() const { return device.data() + tx_map.size() + rx_start.size(); }
};

RvTables build_rv_tables(const TransportPlan& p, int rv) {
  const Segmentation& s = p.segmentation();
  const int n = p.n(), c = s.c, qm = bits_per_symbol(p.config().mod), skip = 2 * s.zc;
  RvTables t;
  t.tx_map.resize(std::size_t(p.g()));
  std::vector<int> src(std::size_t(p.g()));  // selection order -> (r n + p) and coded index
  std::vector<int> coded_of(std::size_t(p.g()));
  std::int64_t offset = 0, sel = 0;
  for (int r = 0; r < c; ++r) {
    const int e = p.e()[std::size_t(r)];
    const auto pos =
        selected_positions(RateMatchConfig{s.bg, s.zc, s.k_prime, p.ncb(), e, qm, rv});
    const int rows = qm, cols = e / qm;
    // §5.4.2.2: f_(i + j Qm) = e_(i E/Qm + j).
    for (int o = 0; o < e; ++o) {
      const int i = o % rows, j = o / rows;
      t.tx_map[std::size_t(offset + o)] = r * n + skip + pos[std::size_t(i * cols + j)];
    }
    for (int q = 0; q < e; ++q, ++sel) {
      src[std::size_t(sel)] = r * n + skip + pos[std::size_t(q)];
      coded_of[std::size_t(sel)] = int(offset + (q / cols) + (q % cols) * rows);
    }
    offset += e;
  }
  t.rx_start.assign(std::size_t(c) * n + 1, 0);
  for (int v : src) ++t.rx_start[std::size_t(v) + 1];
  for (std::size_t i = 1; i < t.rx_start.size(); ++i) t.rx_start[i] += t.rx_start[i - 1];
  t.rx_idx.resize(src.size());
  std::vector<int> fill(t.rx_start.begin(), t.rx_start.end() - 1);
  for (std::size_t q = 0; q < src.size(); ++q) t.rx_idx[std::size_t(fill[std::size_t(src[q])]++)] = coded_of[q];
  return t;
}

detail::ChainDims dims_of(const TransportPlan& p) {
  const Segmentation& s = p.segmentation();
  detail::ChainDims d{};
  d.a = s.a;
  d.l_tb = s.l_tb;
  d.tb_poly = crc_polynomial(tb_crc_type(s.a));
  d.c = s.c;
  d.l_cb = s.l_cb;
  d.payload = s.k_prime - s.l_cb;
  d.k_prime = s.k_prime;
  d.k = s.k;
  d.n = p.n();
  d.g = p.g();
  return d;
}

DecoderConfig decoder_config(const TransportPlan& p) {
  DecoderConfig c = DecoderConfig{p.segmentation().bg, p.segmentation().zc}.with(p.config().decoder);
  c.check_input = false;  // the plan checks its LLRs itself (options.check_llrs)
  return c;
}

}  // namespace

struct TransportBatchPlan::Impl {
  TransportPlan chain;  // on the CPU: sizes, tables, the reference
  Backend backend;
  TransportBatchOptions opts;
  detail::ChainDims d;
  EncoderPlan encoder;
  DecoderPlan decoder;                          // every base row (decode_harq)
  std::map<int, DecoderPlan> reduced;           // fewer base rows (decode), by row count
  std::array<std::unique_ptr<RvTables>, 4> rv_tables;
  // Workspace for max_blocks transport blocks.
  Buffer<std::uint32_t> parity;
  Buffer<std::uint8_t> enc_in, codewords, decoded;
  Buffer<float> dec_f;
  Buffer<std::int8_t> dec_q;

  Impl(const TransportConfig& cfg, Backend b, const TransportBatchOptions& o)
      : chain(cfg, Backend::cpu()),
        backend(b),
        opts(o),
        d(dims_of(chain)),
        encoder(chain.segmentation().bg, chain.segmentation().zc, b),
        decoder(decoder_config(chain), b) {
    require(o.max_blocks >= 1, "max_blocks", std::to_string(o.max_blocks) + "; must be >= 1");
    const std::size_t blocks = std::size_t(o.max_blocks) * std::size_t(d.c);
    const Memory mem = memory_of(b);
    const int dev = b.is_cuda() ? b.device() : 0;
    parity = Buffer<std::uint32_t>(std::size_t(o.max_blocks), mem, false, dev);
    enc_in = Buffer<std::uint8_t>(blocks * std::size_t(d.k), mem, false, dev);
    codewords = Buffer<std::uint8_t>(blocks * std::size_t(d.n), mem, false, dev);
    decoded = Buffer<std::uint8_t>(blocks * std::size_t(d.k), mem, false, dev);
    if (quantized()) {
      dec_q = Buffer<std::int8_t>(blocks * std::size_t(d.n), mem, false, dev);
    } else {
      dec_f = Buffer<float>(blocks * std::size_t(d.n), mem, false, dev);
    }
  }
  bool quantized() const { return decoder.config().quantized; }
  DecoderPlan& decoder_for(int rows) {
    if (rows == decoder.rows()) return decoder;
    auto it = reduced.find(rows);
    if (it == reduced.end()) {
      DecoderConfig dc = decoder.config();
      dc.rows = rows;
      it = reduced.emplace(rows, DecoderPlan(dc, backend)).first;
    }
    return it->second;
  }
  int limit() const { return (1 << (decoder.config().llr_bits - 1)) - 1; }

  const RvTables& tables(int rv) {
    if (rv < 0) rv = chain.config().rv;
    require(rv <= 3, "rv", std::to_string(rv) + "; allowed 0..3");
    auto& t = rv_tables[std::size_t(rv)];
    if (!t) {
      t = std::make_unique<RvTables>(build_rv_tables(chain, rv));
      if (backend.is_cuda()) {
        const std::size_t n = t->tx_map.size() + t->rx_start.size() + t->rx_idx.size();
        t->device = Buffer<int>::device(n, backend.device());
        std::vector<int> all(t->tx_map);
        all.insert(all.end(), t->rx_start.begin(), t->rx_start.end());
        all.insert(all.end(), t->rx_idx.begin(), t->rx_idx.end());
        t->device.copy_from_host(all.data(), all.size());
      }
    }
    return *t;
  }

  template <class T>
  void check_view(const View<T>& v, std::int64_t want, const std::string& name) const {
    require_memory(v.where, memory_of(backend), name);
    require(v.size >= want, name,
            "has " + std::to_string(v.size) + " elements, expected " + std::to_string(want));
  }
  void check_num(int num) const {
    require(num >= 0 && num <= opts.max_blocks, "num",
            std::to_string(num) + " transport blocks; allowed 0.." +
                std::to_string(opts.max_blocks) + " (options.max_blocks)");
  }
  void check_finite(const float* x, std::int64_t n, const std::string& name, const Stream& s) {
    if (!opts.check_llrs) return;
    std::int64_t bad = 0;
    if (backend.is_cuda()) {
#if MIMORX_HAS_CUDA
      bad = detail::count_nonfinite_cuda(x, n, backend.device(), s.handle());
#endif
    } else {
      for (std::int64_t i = 0; i < n; ++i) bad += !std::isfinite(x[i]);
    }
    (void)s;
    require(bad == 0, name,
            "holds " + std::to_string(bad) + " NaN or Inf values; LLRs must be finite");
  }

  // Rate recovery of num blocks into the decoder's input (fresh) or into harq (in place).
  // out_stride: values per code block written (the decoder's n() for fewer rows, d.n for HARQ).
  void recover(const float* llrs, int num, const RvTables& t, const float* harq_in, float* out_f,
               std::int8_t* out_q, int out_stride, const Stream& s) {
    const float scale = decoder.config().llr_scale;
    const int lim = limit();
    if (backend.is_cuda()) {
#if MIMORX_HAS_CUDA
      detail::batch_rate_recover_cuda(d, llrs, num, t.dev_rx_start(), t.dev_rx_idx(), harq_in,
                                      out_f, out_q, out_stride, scale, lim, s.handle());
      return;
#endif
    }
    (void)s;
#pragma omp parallel for schedule(static)
    for (int b = 0; b < num; ++b) {
      for (int r = 0; r < d.c; ++r) {
       for (int p = 0; p < out_stride; ++p) {
        const std::int64_t i = (std::int64_t(b) * d.c + r) * out_stride + p;
        const float v = detail::recovered_llr(llrs + b * d.g, t.rx_start.data(), t.rx_idx.data(),
                                              r * d.n + p, p, d, harq_in ? harq_in[i] : 0.f);
        if (out_f) {
          out_f[i] = v;
        } else {
          out_q[i] = std::int8_t(detail::quantize_llr(v, scale, lim));
        }
       }
      }
    }
  }

  // CRCs and the TB bits out of the decoded blocks.
  void finish(int num, View<std::uint8_t> tb, View<std::uint8_t> tb_ok, View<std::uint8_t> cb_ok,
              const Stream& s) {
    if (backend.is_cuda()) {
#if MIMORX_HAS_CUDA
      detail::batch_check_cuda(d, decoded.data(), num, tb.data, tb_ok.data,
                               cb_ok.size ? cb_ok.data : nullptr, s.handle());
      return;
#endif
    }
    (void)s;
    const std::uint8_t* dec = decoded.data();
#pragma omp parallel for schedule(static)
    for (int b = 0; b < num; ++b) {
      const std::uint8_t* blocks = dec + std::int64_t(b) * d.c * d.k;
      if (cb_ok.size) {
        for (int r = 0; r < d.c; ++r) {
          cb_ok.data[std::int64_t(b) * d.c + r] =
              d.c == 1 ||
              detail::crc_of_bits(blocks + std::int64_t(r) * d.k, d.k_prime, detail::kCrc24bPoly,
                                  24) == 0;
        }
      }
      tb_ok.data[b] = detail::crc_of_payloads(blocks, d) == 0;
      std::uint8_t* out = tb.data + std::int64_t(b) * d.a;
      for (int t = 0; t < d.a; ++t) {
        const int r = t / d.payload;
        out[t] = blocks[std::int64_t(r) * d.k + (t - r * d.payload)];
      }
    }
  }

  void check_outputs(int num, View<std::uint8_t> tb, View<std::uint8_t> tb_ok,
                     View<std::uint8_t> cb_ok, View<int> iterations) const {
    check_view(tb, std::int64_t(num) * d.a, "tb");
    check_view(tb_ok, num, "tb_crc_ok");
    if (cb_ok.size) check_view(cb_ok, std::int64_t(num) * d.c, "cb_crc_ok");
    if (iterations.size) check_view(iterations, std::int64_t(num) * d.c, "iterations");
  }

  void run_decoder(DecoderPlan& dec, int num, View<int> iterations, const Stream& s) {
    const int words = num * d.c;
    const std::int64_t n_used = dec.n();
    const Memory mem = memory_of(backend);
    const View<std::uint8_t> out(decoded.data(), std::int64_t(words) * d.k, mem);
    const View<int> it = iterations.size ? View<int>(iterations.data, words, mem) : View<int>{};
    if (quantized()) {
      dec.decode(View<const std::int8_t>(dec_q.data(), words * n_used, mem), words, out, it, s);
    } else {
      dec.decode(View<const float>(dec_f.data(), words * n_used, mem), words, out, it, s);
    }
  }
};

TransportBatchPlan::TransportBatchPlan(const TransportConfig& cfg, Backend backend,
                                       const TransportBatchOptions& options)
    : impl_(std::make_unique<Impl>(cfg, backend, options)) {}
TransportBatchPlan::~TransportBatchPlan() = default;
TransportBatchPlan::TransportBatchPlan(TransportBatchPlan&&) noexcept = default;
TransportBatchPlan& TransportBatchPlan::operator=(TransportBatchPlan&&) noexcept = default;

const TransportPlan& TransportBatchPlan::chain() const { return impl_->chain; }
const TransportBatchOptions& TransportBatchPlan::options() const { return impl_->opts; }
const Backend& TransportBatchPlan::backend() const { return impl_->backend; }
int TransportBatchPlan::tbs() const { return impl_->d.a; }
std::int64_t TransportBatchPlan::g() const { return impl_->d.g; }
int TransportBatchPlan::code_blocks() const { return impl_->d.c; }
int TransportBatchPlan::n() const { return impl_->d.n; }
std::size_t TransportBatchPlan::harq_size() const { return impl_->chain.harq_size(); }

void TransportBatchPlan::encode(View<const std::uint8_t> tb, int num, View<std::uint8_t> coded,
                                int rv, const Stream& stream) {
  Impl& m = *impl_;
  m.check_num(num);
  m.check_view(tb, std::int64_t(num) * m.d.a, "tb");
  m.check_view(coded, std::int64_t(num) * m.d.g, "coded");
  const RvTables& t = m.tables(rv);
  if (num == 0) return;
  const detail::ChainDims& d = m.d;
  const Memory mem = memory_of(m.backend);
  const std::int64_t words = std::int64_t(num) * d.c;
  if (m.backend.is_cuda()) {
#if MIMORX_HAS_CUDA
    detail::batch_segment_cuda(d, tb.data, num, m.parity.data(), m.enc_in.data(),
                               stream.handle());
#endif
  } else {
#pragma omp parallel for schedule(static)
    for (int b = 0; b < num; ++b) {
      const std::uint8_t* bits = tb.data + std::int64_t(b) * d.a;
      const std::uint32_t parity = detail::crc_of_bits(bits, d.a, d.tb_poly, d.l_tb);
      for (int r = 0; r < d.c; ++r) {
        std::uint8_t* blk = m.enc_in.data() + (std::int64_t(b) * d.c + r) * d.k;
        for (int kk = 0; kk < d.k; ++kk) blk[kk] = detail::segment_bit(bits, parity, d, r, kk);
        if (d.c > 1) {
          const std::uint32_t p = detail::crc_of_bits(blk, d.payload, detail::kCrc24bPoly, 24);
          for (int i = 0; i < 24; ++i) blk[d.payload + i] = std::uint8_t((p >> (23 - i)) & 1u);
        }
      }
    }
  }
  m.encoder.encode(View<const std::uint8_t>(m.enc_in.data(), words * d.k, mem), int(words),
                   View<std::uint8_t>(m.codewords.data(), words * d.n, mem), stream);
  if (m.backend.is_cuda()) {
#if MIMORX_HAS_CUDA
    detail::batch_rate_match_cuda(d, m.codewords.data(), num, t.dev_tx(), coded.data,
                                  stream.handle());
#endif
    return;
  }
  const std::int64_t per_tb = std::int64_t(d.c) * d.n;
#pragma omp parallel for schedule(static)
  for (int b = 0; b < num; ++b) {
    const std::uint8_t* cw = m.codewords.data() + b * per_tb;
    std::uint8_t* out = coded.data + std::int64_t(b) * d.g;
    for (std::int64_t i = 0; i < d.g; ++i) out[i] = cw[t.tx_map[std::size_t(i)]];
  }
}

void TransportBatchPlan::accumulate(View<const float> llrs, int num, View<float> harq, int rv,
                                    const Stream& stream) {
  Impl& m = *impl_;
  m.check_num(num);
  m.check_view(llrs, std::int64_t(num) * m.d.g, "llrs");
  m.check_view(harq, std::int64_t(num) * std::int64_t(harq_size()), "harq");
  const RvTables& t = m.tables(rv);
  m.check_finite(llrs.data, std::int64_t(num) * m.d.g, "llrs", stream);
  m.recover(llrs.data, num, t, harq.data, harq.data, nullptr, m.d.n, stream);
}

void TransportBatchPlan::decode_harq(View<const float> harq, int num, View<std::uint8_t> tb,
                                     View<std::uint8_t> tb_crc_ok, View<std::uint8_t> cb_crc_ok,
                                     View<int> iterations, const Stream& stream) {
  Impl& m = *impl_;
  m.check_num(num);
  const std::int64_t values = std::int64_t(num) * std::int64_t(harq_size());
  m.check_view(harq, values, "harq");
  m.check_outputs(num, tb, tb_crc_ok, cb_crc_ok, iterations);
  if (num == 0) return;
  m.check_finite(harq.data, values, "harq", stream);
  const Memory mem = memory_of(m.backend);
  const int words = num * m.d.c;
  const View<std::uint8_t> out(m.decoded.data(), std::int64_t(words) * m.d.k, mem);
  const View<int> it = iterations.size ? View<int>(iterations.data, words, mem) : View<int>{};
  m.decoder.decode(View<const float>(harq.data, values, mem), words, out, it, stream);
  m.finish(num, tb, tb_crc_ok, cb_crc_ok, stream);
}

void TransportBatchPlan::decode(View<const float> llrs, int num, View<std::uint8_t> tb,
                                View<std::uint8_t> tb_crc_ok, View<std::uint8_t> cb_crc_ok,
                                View<int> iterations, int rv, const Stream& stream) {
  Impl& m = *impl_;
  m.check_num(num);
  m.check_view(llrs, std::int64_t(num) * m.d.g, "llrs");
  m.check_outputs(num, tb, tb_crc_ok, cb_crc_ok, iterations);
  const RvTables& t = m.tables(rv);
  if (num == 0) return;
  m.check_finite(llrs.data, std::int64_t(num) * m.d.g, "llrs", stream);
  DecoderPlan& dec = m.decoder_for(m.chain.decoded_rows(rv));
  m.recover(llrs.data, num, t, nullptr, m.quantized() ? nullptr : m.dec_f.data(),
            m.quantized() ? m.dec_q.data() : nullptr, dec.n(), stream);
  m.run_decoder(dec, num, iterations, stream);
  m.finish(num, tb, tb_crc_ok, cb_crc_ok, stream);
}

}  // namespace mimorx::ldpc

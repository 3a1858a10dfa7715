#include "mimorx/ldpc/transport.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <string>

#include "mimorx/core/buffer.hpp"
#include "mimorx/core/error.hpp"

namespace mimorx::ldpc {

struct TransportPlan::Impl {
  TransportConfig cfg;
  Backend backend;
  Segmentation seg;
  std::int64_t g;
  std::vector<int> e;
  std::vector<std::int64_t> offset;  // start of each block's E bits in the G bits
  int ncb;
  EncoderPlan encoder;
  mutable DecoderPlan decoder;                 // decode() is not const (workspace)
  mutable std::map<int, DecoderPlan> reduced;  // decoders of fewer base rows, by row count
  Impl(const TransportConfig& c, Backend b, const Segmentation& s)
      : cfg(c), backend(b), seg(s), encoder(s.bg, s.zc, b), decoder(decoder_config(c, s), b) {}
  static DecoderConfig decoder_config(const TransportConfig& c, const Segmentation& s) {
    return DecoderConfig{s.bg, s.zc}.with(c.decoder);
  }
  int qm() const { return bits_per_symbol(cfg.mod); }
  DecoderPlan& decoder_for(int rows) const {
    if (rows == decoder.rows()) return decoder;
    auto it = reduced.find(rows);
    if (it == reduced.end()) {
      DecoderConfig dc = decoder_config(cfg, seg);
      dc.rows = rows;
      it = reduced.emplace(rows, DecoderPlan(dc, backend)).first;
    }
    return it->second;
  }
  TransportDecodeResult decode_rows(std::span<const float> llrs, int stride, int rows,
                                    std::span<std::uint8_t> tb) const;
  RateMatchConfig rm(int r, int rv) const {
    return RateMatchConfig{seg.bg, seg.zc, seg.k_prime, ncb, e[r], qm(), rv};
  }
};

namespace {
Segmentation checked_segmentation(const TransportConfig& c) {
  require(std::isfinite(c.code_rate) && c.code_rate >= 0.1 && c.code_rate <= 0.95, "code_rate",
          value_text(c.code_rate) + "; allowed 0.1..0.95");
  require(c.rv >= 0 && c.rv <= 3, "rv", std::to_string(c.rv) + "; allowed 0..3");
  require(c.layers >= 1 && c.layers <= 4, "layers", std::to_string(c.layers) + "; allowed 1..4");
  return segment(c.tbs, select_base_graph(c.tbs, c.code_rate));
}
}  // namespace

TransportPlan::TransportPlan(const TransportConfig& cfg, Backend backend)
    : impl_(std::make_unique<Impl>(cfg, backend, checked_segmentation(cfg))) {
  Impl& m = *impl_;
  const std::int64_t unit = std::int64_t(cfg.layers) * m.qm();
  if (cfg.g > 0) {
    m.g = cfg.g;
  } else {
    const auto bits = std::int64_t(std::ceil(double(m.seg.b_prime) / cfg.code_rate));
    m.g = (bits + unit - 1) / unit * unit;
  }
  m.e = code_block_e(m.g, m.seg.c, cfg.layers, m.qm());
  m.offset.assign(m.seg.c + 1, 0);
  for (int r = 0; r < m.seg.c; ++r) m.offset[r + 1] = m.offset[r] + m.e[r];
  m.ncb = circular_buffer_size(m.seg.bg, m.seg.zc, m.seg.c, cfg.lbrm,
                               cfg.tbs_lbrm > 0 ? cfg.tbs_lbrm : cfg.tbs);
  for (int r = 0; r < m.seg.c; ++r) validate(m.rm(r, cfg.rv));
}

TransportPlan::~TransportPlan() = default;
TransportPlan::TransportPlan(TransportPlan&&) noexcept = default;
TransportPlan& TransportPlan::operator=(TransportPlan&&) noexcept = default;

const TransportConfig& TransportPlan::config() const { return impl_->cfg; }
const Segmentation& TransportPlan::segmentation() const { return impl_->seg; }
std::int64_t TransportPlan::g() const { return impl_->g; }
const std::vector<int>& TransportPlan::e() const { return impl_->e; }
int TransportPlan::ncb() const { return impl_->ncb; }
int TransportPlan::n() const { return impl_->encoder.n(); }
std::size_t TransportPlan::harq_size() const { return std::size_t(impl_->seg.c) * n(); }

void TransportPlan::encode(std::span<const std::uint8_t> tb, std::span<std::uint8_t> out,
                           int rv) const {
  const Impl& m = *impl_;
  if (rv < 0) rv = m.cfg.rv;
  require(rv <= 3, "rv", std::to_string(rv) + "; allowed 0..3");
  require(tb.size() == std::size_t(m.seg.a), "tb",
          "has " + std::to_string(tb.size()) + " bits, expected tbs = " + std::to_string(m.seg.a));
  require(out.size() == std::size_t(m.g), "out",
          "has " + std::to_string(out.size()) + " bits, expected G = " + std::to_string(m.g));
  const auto with_crc = crc_attach(tb_crc_type(m.seg.a), tb);
  const auto blocks = segment_bits(m.seg, with_crc);
  const int c = m.seg.c, nn = n();
  std::vector<std::uint8_t> cw(std::size_t(c) * nn);
  if (m.backend.is_cuda()) {
    auto d_in = Buffer<std::uint8_t>::device(blocks.size(), m.backend.device());
    auto d_cw = Buffer<std::uint8_t>::device(cw.size(), m.backend.device());
    d_in.copy_from_host(blocks.data(), blocks.size());
    m.encoder.encode(d_in, c, d_cw);
    d_cw.copy_to_host(cw.data(), cw.size());
  } else {
    m.encoder.encode(
        View<const std::uint8_t>(blocks.data(), std::int64_t(blocks.size()), Memory::host), c,
        View<std::uint8_t>(cw.data(), std::int64_t(cw.size()), Memory::host));
  }
  for (int r = 0; r < c; ++r) {
    rate_match(m.rm(r, rv), std::span<const std::uint8_t>(cw.data() + std::size_t(r) * nn, nn),
               out.subspan(m.offset[r], m.e[r]));
  }
}

void TransportPlan::accumulate(std::span<const float> llrs, std::span<float> harq, int rv) const {
  const Impl& m = *impl_;
  if (rv < 0) rv = m.cfg.rv;
  require(rv <= 3, "rv", std::to_string(rv) + "; allowed 0..3");
  require(llrs.size() == std::size_t(m.g), "llrs",
          "has " + std::to_string(llrs.size()) + " values, expected G = " + std::to_string(m.g));
  require(harq.size() == harq_size(), "harq",
          "has " + std::to_string(harq.size()) +
              " values, expected C x n = " + std::to_string(harq_size()));
  const int nn = n();
  for (int r = 0; r < m.seg.c; ++r) {
    rate_recover(m.rm(r, rv), llrs.subspan(m.offset[r], m.e[r]),
                 harq.subspan(std::size_t(r) * nn, nn));
  }
}

int TransportPlan::decoded_rows(int rv) const {
  const Impl& m = *impl_;
  if (rv < 0) rv = m.cfg.rv;
  const LiftedGraph g(m.seg.bg, m.seg.zc);
  int last = 0;
  for (int r = 0; r < m.seg.c; ++r) {
    const auto pos = selected_positions(m.rm(r, rv));
    last = std::max(last, 2 * m.seg.zc + *std::max_element(pos.begin(), pos.end()));
  }
  return std::clamp(last / m.seg.zc + 1 - g.info_cols(), 4, g.base_rows());
}

TransportDecodeResult TransportPlan::decode_harq(std::span<const float> harq,
                                                 std::span<std::uint8_t> tb) const {
  const Impl& m = *impl_;
  require(harq.size() == harq_size(), "harq",
          "has " + std::to_string(harq.size()) +
              " values, expected C x n = " + std::to_string(harq_size()));
  require(tb.size() == std::size_t(m.seg.a), "tb",
          "has " + std::to_string(tb.size()) + " bits, expected tbs = " + std::to_string(m.seg.a));
  for (std::size_t i = 0; i < harq.size(); ++i) {
    require(std::isfinite(harq[i]), "harq",
            "value at index " + std::to_string(i) + " is NaN or Inf; LLRs must be finite");
  }
  return m.decode_rows(harq, n(), m.decoder.rows(), tb);
}

// Decodes C words whose first `stride` LLRs (of `rows` base rows) are at llrs + r * stride.
TransportDecodeResult TransportPlan::Impl::decode_rows(std::span<const float> llrs, int stride,
                                                       int rows, std::span<std::uint8_t> tb) const {
  DecoderPlan& dec = decoder_for(rows);
  const int c = seg.c, k = encoder.k();
  std::vector<std::uint8_t> bits(std::size_t(c) * k);
  std::vector<float> packed;  // the words' decoded prefixes, back to back
  std::span<const float> in = llrs;
  if (stride != dec.n()) {
    packed.resize(std::size_t(c) * dec.n());
    for (int r = 0; r < c; ++r) {
      std::copy_n(llrs.begin() + std::ptrdiff_t(r) * stride, dec.n(),
                  packed.begin() + std::ptrdiff_t(r) * dec.n());
    }
    in = packed;
  }
  TransportDecodeResult res;
  res.iterations.assign(c, 0);
  if (backend.is_cuda()) {
    auto d_llr = Buffer<float>::device(in.size(), backend.device());
    auto d_bits = Buffer<std::uint8_t>::device(bits.size(), backend.device());
    auto d_it = Buffer<int>::device(c, backend.device());
    d_llr.copy_from_host(in.data(), in.size());
    dec.decode(d_llr, c, d_bits, d_it);
    d_bits.copy_to_host(bits.data(), bits.size());
    d_it.copy_to_host(res.iterations.data(), c);
  } else {
    dec.decode(View<const float>(in.data(), std::int64_t(in.size()), Memory::host), c,
               View<std::uint8_t>(bits.data(), std::int64_t(bits.size()), Memory::host),
               View<int>(res.iterations.data(), c, Memory::host));
  }
  // Desegmentation: each block's first K' - L_CB bits, in order, form B = A + L_TB.
  const int payload = seg.k_prime - seg.l_cb;
  std::vector<std::uint8_t> b;
  b.reserve(std::size_t(seg.b));
  res.cb_crc_ok.assign(c, 1);
  for (int r = 0; r < c; ++r) {
    const std::uint8_t* blk = bits.data() + std::size_t(r) * k;
    if (c > 1) {
      res.cb_crc_ok[r] =
          crc_check(CrcType::crc24b, std::span<const std::uint8_t>(blk, seg.k_prime));
    }
    b.insert(b.end(), blk, blk + payload);
  }
  res.tb_crc_ok = crc_check(tb_crc_type(seg.a), b);
  std::copy(b.begin(), b.begin() + seg.a, tb.begin());
  return res;
}

TransportDecodeResult TransportPlan::decode(std::span<const float> llrs, std::span<std::uint8_t> tb,
                                            int rv) const {
  const Impl& m = *impl_;
  require(tb.size() == std::size_t(m.seg.a), "tb",
          "has " + std::to_string(tb.size()) + " bits, expected tbs = " + std::to_string(m.seg.a));
  std::vector<float> harq(harq_size(), 0.f);
  accumulate(llrs, harq, rv);
  return m.decode_rows(harq, n(), decoded_rows(rv), tb);
}

}  // namespace mimorx::ldpc

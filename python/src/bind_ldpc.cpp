// 5G NR LDPC: encoder, decoders (float and 8-bit integer), rate matching, CRCs, segmentation and
// the transport chain, single-block on the host and batched on either backend.
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cctype>
#include <span>

#include "arrays.hpp"
#include "bindings.hpp"
#include "mimorx/interop/layout.hpp"
#include "mimorx/ldpc/base_graph.hpp"
#include "mimorx/ldpc/crc.hpp"
#include "mimorx/ldpc/decoder.hpp"
#include "mimorx/ldpc/encoder.hpp"
#include "mimorx/ldpc/rate_match.hpp"
#include "mimorx/ldpc/segmentation.hpp"
#include "mimorx/ldpc/transport.hpp"
#include "mimorx/ldpc/transport_batch.hpp"

namespace mimorx::python {
namespace {

using namespace mimorx::ldpc;

BaseGraph base_graph(int bg) {
  require(bg == 1 || bg == 2, "bg", "is " + std::to_string(bg) + "; use 1 or 2");
  return bg == 1 ? BaseGraph::bg1 : BaseGraph::bg2;
}

CrcType crc_type(const std::string& name) {
  for (auto t : {CrcType::crc24a, CrcType::crc24b, CrcType::crc24c, CrcType::crc16, CrcType::crc11,
                 CrcType::crc6}) {
    std::string lower = crc_name(t);
    for (auto& ch : lower) ch = char(std::tolower(static_cast<unsigned char>(ch)));
    if (lower == name) return t;
  }
  throw InvalidArgument("crc: '" + name +
                        "' is not one of crc24a, crc24b, crc24c, crc16, crc11, crc6");
}

template <class T>
std::span<const T> host_span(const In& a, const std::string& name) {
  auto v = flat<const T>(a, {std::int64_t(a.size())}, Backend::cpu(), name);
  require(a.ndim() == 1, name, "must be one-dimensional");
  return {v.data, std::size_t(v.size)};
}
template <class T>
std::span<T> host_span_out(const Out& a, std::int64_t n, const std::string& name) {
  auto v = flat<T>(a, {n}, Backend::cpu(), name);
  return {v.data, std::size_t(v.size)};
}

class Encoder {
 public:
  Encoder(int bg, int z, const std::string& backend)
      : backend_(Backend::parse(backend)), plan_(base_graph(bg), z, backend_), convert_(backend_) {}
  // Bits as floats in, bits as floats out, in one call (mimorx.sionna's encoder): u (num, k_in)
  // float32 0/1 with k_in <= k, padded with zeros into the workspace info (num, k) uint8,
  // encoded into the workspace codewords (num, n) uint8, and out[r, j] = codewords[r, index[j]]
  // as float32 (num, len(index)). invalid: None or (1,) int32, set to 1 when u holds other
  // values than 0 and 1 (on CUDA, after the stream's work).
  void encode_float(const In& u, const Out& info, const Out& codewords, const In& index,
                    const Out& out, const Out& invalid, std::uintptr_t stream) {
    if (u.ndim() != 2) throw nb::value_error("u: must have shape (num, k)");
    const std::int64_t num = std::int64_t(u.shape(0));
    const int k_in = int(u.shape(1));
    auto uv = flat<const float>(u, {num, k_in}, backend_, "u");
    auto i = flat<std::uint8_t>(info, {num, plan_.k()}, backend_, "info");
    auto c = flat<std::uint8_t>(codewords, {num, plan_.n()}, backend_, "codewords");
    auto idx = flat<const int>(index, {-1}, backend_, "index");
    auto o = flat<float>(out, {num, idx.size}, backend_, "out");
    View<int> bad;
    if (invalid.is_valid()) bad = flat<int>(invalid, {1}, backend_, "invalid");
    const Stream st = stream_of(stream);
    nb::gil_scoped_release unlocked;
    convert_.bits_from_float(uv, num, k_in, i, plan_.k(), bad, st);
    plan_.encode(i, int(num), c, st);
    convert_.gather_bits_to_float(c, num, plan_.n(), idx, o, st);
  }
  void encode(const In& info, const Out& codewords, std::uintptr_t stream) {
    if (info.ndim() != 2) throw nb::value_error("info: must have shape (num, k)");
    const std::int64_t num = std::int64_t(info.shape(0));
    auto i = flat<const std::uint8_t>(info, {num, plan_.k()}, backend_, "info");
    auto c = flat<std::uint8_t>(codewords, {num, plan_.n()}, backend_, "codewords");
    const Stream st = stream_of(stream);
    nb::gil_scoped_release unlocked;
    plan_.encode(i, int(num), c, st);
  }
  int k() const { return plan_.k(); }
  int n() const { return plan_.n(); }
  int z() const { return plan_.z(); }
  int bg() const { return int(plan_.bg()); }

 private:
  Backend backend_;
  EncoderPlan plan_;
  interop::LayoutConverter convert_;
};

class Decoder {
 public:
  Decoder(int bg, int z, const std::string& algo, int max_iters, float alpha, float alpha_last,
          float beta, bool early_termination, bool quantized, int rows, const std::string& order,
          bool check_input, const std::string& backend, bool half)
      : backend_(Backend::parse(backend)),
        plan_(config(bg, z, algo, max_iters, alpha, alpha_last, beta, early_termination, quantized,
                     rows, order, check_input, half),
              backend_),
        convert_(backend_) {}
  // Rate-matched float LLRs in, decided bits as floats out, in one call (mimorx.sionna's
  // decoder): the workspace mother (num, n) float32 is built by gathers, the first with
  // rounds[0] over base (n,), the others accumulating (mother[r, j] = base[j] +
  // sum over rounds of scale * llr[r, round[j]], entries < 0 adding nothing); it is decoded
  // into the workspace bits (num, k) uint8, or (num, n) with codeword; then
  // out[r, j] = bits[r, out_index[j]] as float32.
  void decode_float(const In& llr, const std::vector<In>& rounds, const In& base, float scale,
                    const Out& mother, const Out& bits, const In& out_index, const Out& out,
                    bool codeword, std::uintptr_t stream) {
    if (llr.ndim() != 2) throw nb::value_error("llr: must have shape (num, e)");
    if (rounds.empty()) throw nb::value_error("rounds: give at least one gather index");
    const std::int64_t num = std::int64_t(llr.shape(0));
    const int e = int(llr.shape(1)), n = plan_.n();
    auto l = flat<const float>(llr, {num, e}, backend_, "llr");
    std::vector<View<const int>> idx;
    for (const auto& r : rounds) idx.push_back(flat<const int>(r, {n}, backend_, "rounds"));
    auto b = flat<const float>(base, {n}, backend_, "base");
    auto m = flat<float>(mother, {num, n}, backend_, "mother");
    const int bits_cols = codeword ? n : plan_.k();
    auto d = flat<std::uint8_t>(bits, {num, bits_cols}, backend_, "bits");
    auto oi = flat<const int>(out_index, {-1}, backend_, "out_index");
    auto o = flat<float>(out, {num, oi.size}, backend_, "out");
    const Stream st = stream_of(stream);
    nb::gil_scoped_release unlocked;
    for (std::size_t i = 0; i < idx.size(); ++i) {
      convert_.gather_scaled(l, num, e, idx[i], scale, b, i > 0, m, st);
    }
    if (codeword) {
      plan_.decode_codeword(m, int(num), d, {}, {}, st);
    } else {
      plan_.decode(m, int(num), d, {}, st);
    }
    convert_.gather_bits_to_float(d, num, bits_cols, oi, o, st);
  }
  // llrs: (num, n) float32 or int8 (integer decoder); out: (num, k) info bits or, with
  // codeword, (num, n) bits. iterations (num,) int32 and syndrome_ok (num,) uint8 optional.
  void decode(const In& llrs, const Out& out, const Out& iterations, const Out& syndrome_ok,
              bool codeword, std::uintptr_t stream) {
    if (llrs.ndim() != 2) throw nb::value_error("llrs: must have shape (num, n)");
    const std::int64_t num = std::int64_t(llrs.shape(0));
    const int n = plan_.n();
    auto o = flat<std::uint8_t>(out, {num, codeword ? n : plan_.k()}, backend_,
                                codeword ? "bits" : "info");
    View<int> it;
    View<std::uint8_t> ok;
    if (iterations.is_valid()) it = flat<int>(iterations, {num}, backend_, "iterations");
    if (syndrome_ok.is_valid())
      ok = flat<std::uint8_t>(syndrome_ok, {num}, backend_, "syndrome_ok");
    const Stream st = stream_of(stream);
    if (llrs.dtype() == nb::dtype<std::int8_t>()) {
      auto l = flat<const std::int8_t>(llrs, {num, n}, backend_, "llrs");
      nb::gil_scoped_release unlocked;
      if (codeword) {
        plan_.decode_codeword(l, int(num), o, it, ok, st);
      } else {
        plan_.decode(l, int(num), o, it, st);
      }
    } else {
      auto l = flat<const float>(llrs, {num, n}, backend_, "llrs");
      nb::gil_scoped_release unlocked;
      if (codeword) {
        plan_.decode_codeword(l, int(num), o, it, ok, st);
      } else {
        plan_.decode(l, int(num), o, it, st);
      }
    }
  }
  void quantize(const In& llrs, const Out& out) {
    std::vector<std::int64_t> shape;
    for (std::size_t i = 0; i < llrs.ndim(); ++i) shape.push_back(std::int64_t(llrs.shape(i)));
    auto l = flat<const float>(llrs, shape, Backend::cpu(), "llrs");
    auto o = flat<std::int8_t>(out, shape, Backend::cpu(), "out");
    plan_.quantize_llrs(l, o);
  }
  int n() const { return plan_.n(); }
  int k() const { return plan_.k(); }
  int rows() const { return plan_.rows(); }
  std::int64_t edges() const { return plan_.edges(); }

 private:
  static DecoderConfig config(int bg, int z, const std::string& algo, int max_iters, float alpha,
                              float alpha_last, float beta, bool early_termination, bool quantized,
                              int rows, const std::string& order, bool check_input, bool half) {
    require(!(quantized && half), "half", "half=True and int8=True choose different arithmetics");
    DecoderConfig c{base_graph(bg), z};
    c.algo = parse_decoder_algo(algo, "algo");
    c.max_iters = max_iters;
    c.alpha = alpha;
    c.alpha_last = alpha_last;
    c.beta = beta;
    c.early_termination = early_termination;
    c.quantized = quantized;
    c.rows = rows;
    c.layer_order = parse_layer_order(order, "layer_order");
    c.check_input = check_input;
    c.arithmetic = half ? DecoderArithmetic::half : DecoderArithmetic::automatic;
    return c;
  }
  Backend backend_;
  DecoderPlan plan_;
  interop::LayoutConverter convert_;
};

TransportConfig transport_config(int tbs, double rate, const std::string& mod, int layers, int rv,
                                 bool lbrm, std::int64_t tbs_lbrm, std::int64_t g,
                                 const std::string& algo, int max_iters, float alpha,
                                 float alpha_last, float beta, bool quantized,
                                 bool early_termination) {
  TransportConfig c;
  c.tbs = tbs;
  c.code_rate = rate;
  c.mod = parse_modulation(mod);
  c.layers = layers;
  c.rv = rv;
  c.lbrm = lbrm;
  c.tbs_lbrm = tbs_lbrm;
  c.g = g;
  c.decoder.algo = parse_decoder_algo(algo, "algo");
  c.decoder.max_iters = max_iters;
  c.decoder.alpha = alpha;
  c.decoder.alpha_last = alpha_last;
  c.decoder.beta = beta;
  c.decoder.quantized = quantized;
  c.decoder.early_termination = early_termination;
  return c;
}

nb::dict segmentation_dict(const Segmentation& s) {
  nb::dict d;
  d["bg"] = int(s.bg);
  d["a"] = s.a;
  d["l_tb"] = s.l_tb;
  d["b"] = s.b;
  d["kcb"] = s.kcb;
  d["c"] = s.c;
  d["l_cb"] = s.l_cb;
  d["b_prime"] = s.b_prime;
  d["k_prime"] = s.k_prime;
  d["kb"] = s.kb;
  d["zc"] = s.zc;
  d["ils"] = s.ils;
  d["k"] = s.k;
  d["f"] = s.f;
  return d;
}

class Transport {
 public:
  explicit Transport(const TransportConfig& c) : plan_(c, Backend::cpu()) {}
  void encode(const In& tb, const Out& out, int rv) {
    auto t = host_span<std::uint8_t>(tb, "tb");
    require(std::int64_t(t.size()) == plan_.config().tbs, "tb",
            "has " + std::to_string(t.size()) +
                " bits, expected tbs = " + std::to_string(plan_.config().tbs));
    plan_.encode(t, host_span_out<std::uint8_t>(out, plan_.g(), "out"), rv);
  }
  void accumulate(const In& llrs, const Out& harq, int rv) {
    auto l = host_span<float>(llrs, "llrs");
    require(
        std::int64_t(l.size()) == plan_.g(), "llrs",
        "has " + std::to_string(l.size()) + " values, expected g = " + std::to_string(plan_.g()));
    plan_.accumulate(l, host_span_out<float>(harq, std::int64_t(plan_.harq_size()), "harq"), rv);
  }
  nb::dict decode(const In& llrs, const Out& tb, int rv, bool harq) {
    auto l = host_span<float>(llrs, harq ? "harq" : "llrs");
    const std::int64_t want = harq ? std::int64_t(plan_.harq_size()) : plan_.g();
    require(std::int64_t(l.size()) == want, harq ? "harq" : "llrs",
            "has " + std::to_string(l.size()) + " values, expected " + std::to_string(want));
    auto t = host_span_out<std::uint8_t>(tb, plan_.config().tbs, "tb");
    TransportDecodeResult r;
    {
      nb::gil_scoped_release unlocked;
      r = harq ? plan_.decode_harq(l, t) : plan_.decode(l, t, rv);
    }
    nb::dict d;
    d["tb_crc_ok"] = r.tb_crc_ok;
    d["cb_crc_ok"] = std::vector<bool>(r.cb_crc_ok.begin(), r.cb_crc_ok.end());
    d["iterations"] = r.iterations;
    return d;
  }
  const TransportPlan& plan() const { return plan_; }

 private:
  TransportPlan plan_;
};

class TransportBatch {
 public:
  TransportBatch(const TransportConfig& c, const std::string& backend, int max_blocks,
                 bool check_llrs)
      : backend_(Backend::parse(backend)), plan_(c, backend_, {max_blocks, check_llrs}) {}
  void encode(const In& tb, const Out& coded, int rv, std::uintptr_t stream) {
    const std::int64_t num = rows_of(tb, "tb");
    auto t = flat<const std::uint8_t>(tb, {num, plan_.tbs()}, backend_, "tb");
    auto c = flat<std::uint8_t>(coded, {num, plan_.g()}, backend_, "coded");
    const Stream st = stream_of(stream);
    nb::gil_scoped_release unlocked;
    plan_.encode(t, int(num), c, rv, st);
  }
  void accumulate(const In& llrs, const Out& harq, int rv, std::uintptr_t stream) {
    const std::int64_t num = rows_of(llrs, "llrs");
    auto l = flat<const float>(llrs, {num, plan_.g()}, backend_, "llrs");
    auto h = flat<float>(harq, {num, std::int64_t(plan_.harq_size())}, backend_, "harq");
    const Stream st = stream_of(stream);
    nb::gil_scoped_release unlocked;
    plan_.accumulate(l, int(num), h, rv, st);
  }
  void decode(const In& llrs, const Out& tb, const Out& tb_crc_ok, const Out& cb_crc_ok,
              const Out& iterations, int rv, bool harq, std::uintptr_t stream) {
    const char* name = harq ? "harq" : "llrs";
    const std::int64_t num = rows_of(llrs, name);
    auto l = flat<const float>(llrs, {num, harq ? std::int64_t(plan_.harq_size()) : plan_.g()},
                               backend_, name);
    auto t = flat<std::uint8_t>(tb, {num, plan_.tbs()}, backend_, "tb");
    auto ok = flat<std::uint8_t>(tb_crc_ok, {num}, backend_, "tb_crc_ok");
    View<std::uint8_t> cb;
    View<int> it;
    if (cb_crc_ok.is_valid()) {
      cb = flat<std::uint8_t>(cb_crc_ok, {num, plan_.code_blocks()}, backend_, "cb_crc_ok");
    }
    if (iterations.is_valid()) {
      it = flat<int>(iterations, {num, plan_.code_blocks()}, backend_, "iterations");
    }
    const Stream st = stream_of(stream);
    nb::gil_scoped_release unlocked;
    if (harq) {
      plan_.decode_harq(l, int(num), t, ok, cb, it, st);
    } else {
      plan_.decode(l, int(num), t, ok, cb, it, rv, st);
    }
  }
  const TransportBatchPlan& plan() const { return plan_; }

 private:
  static std::int64_t rows_of(const In& a, const char* name) {
    if (a.ndim() != 2) {
      throw nb::value_error((std::string(name) + ": must have shape (num, ...)").c_str());
    }
    return std::int64_t(a.shape(0));
  }
  Backend backend_;
  TransportBatchPlan plan_;
};

int tbs_of(const TransportPlan& p) { return p.config().tbs; }
int tbs_of(const TransportBatchPlan& p) { return p.tbs(); }

template <class C>
void transport_properties(C& cls) {
  cls.def_prop_ro("tbs", [](const typename C::Type& t) { return tbs_of(t.plan()); })
      .def_prop_ro("g", [](const typename C::Type& t) { return t.plan().g(); })
      .def_prop_ro("n", [](const typename C::Type& t) { return t.plan().n(); })
      .def_prop_ro("harq_size", [](const typename C::Type& t) { return t.plan().harq_size(); });
}

}  // namespace

void bind_ldpc(nb::module_& m) {
  nb::class_<Encoder>(m, "LdpcEncoder")
      .def(nb::init<int, int, const std::string&>(), nb::arg("bg"), nb::arg("z"),
           nb::arg("backend"))
      .def("encode", &Encoder::encode, nb::arg("info"), nb::arg("codewords"), nb::arg("stream"))
      .def("encode_float", &Encoder::encode_float, nb::arg("u"), nb::arg("info"),
           nb::arg("codewords"), nb::arg("index"), nb::arg("out"), nb::arg("invalid").none(),
           nb::arg("stream"))
      .def_prop_ro("k", &Encoder::k)
      .def_prop_ro("n", &Encoder::n)
      .def_prop_ro("z", &Encoder::z)
      .def_prop_ro("bg", &Encoder::bg);
  nb::class_<Decoder>(m, "LdpcDecoder")
      .def(nb::init<int, int, const std::string&, int, float, float, float, bool, bool, int,
                    const std::string&, bool, const std::string&, bool>(),
           nb::arg("bg"), nb::arg("z"), nb::arg("algo"), nb::arg("max_iters"), nb::arg("alpha"),
           nb::arg("alpha_last"), nb::arg("beta"), nb::arg("early_termination"),
           nb::arg("quantized"), nb::arg("rows"), nb::arg("layer_order"), nb::arg("check_input"),
           nb::arg("backend"), nb::arg("half") = false)
      .def("decode", &Decoder::decode, nb::arg("llrs"), nb::arg("out"),
           nb::arg("iterations").none(), nb::arg("syndrome_ok").none(), nb::arg("codeword"),
           nb::arg("stream"))
      .def("quantize", &Decoder::quantize, nb::arg("llrs"), nb::arg("out"))
      .def("decode_float", &Decoder::decode_float, nb::arg("llr"), nb::arg("rounds"),
           nb::arg("base"), nb::arg("scale"), nb::arg("mother"), nb::arg("bits"),
           nb::arg("out_index"), nb::arg("out"), nb::arg("codeword"), nb::arg("stream"))
      .def_prop_ro("n", &Decoder::n)
      .def_prop_ro("k", &Decoder::k)
      .def_prop_ro("rows", &Decoder::rows)
      .def_prop_ro("edges", &Decoder::edges);

  m.def("transport_config", &transport_config, nb::arg("tbs"), nb::arg("rate"), nb::arg("mod"),
        nb::arg("layers"), nb::arg("rv"), nb::arg("lbrm"), nb::arg("tbs_lbrm"), nb::arg("g"),
        nb::arg("algo"), nb::arg("max_iters"), nb::arg("alpha"), nb::arg("alpha_last"),
        nb::arg("beta"), nb::arg("quantized"), nb::arg("early_termination"));
  nb::class_<TransportConfig>(m, "TransportConfig");
  auto t =
      nb::class_<Transport>(m, "Transport")
          .def(nb::init<const TransportConfig&>(), nb::arg("config"))
          .def("encode", &Transport::encode, nb::arg("tb"), nb::arg("out"), nb::arg("rv"))
          .def("accumulate", &Transport::accumulate, nb::arg("llrs"), nb::arg("harq"),
               nb::arg("rv"))
          .def("decode", &Transport::decode, nb::arg("llrs"), nb::arg("tb"), nb::arg("rv"),
               nb::arg("harq"))
          .def_prop_ro("e", [](const Transport& t) { return t.plan().e(); })
          .def_prop_ro("ncb", [](const Transport& t) { return t.plan().ncb(); })
          .def("decoded_rows", [](const Transport& t, int rv) { return t.plan().decoded_rows(rv); })
          .def_prop_ro("segmentation", [](const Transport& t) {
            return segmentation_dict(t.plan().segmentation());
          });
  transport_properties(t);
  auto tb =
      nb::class_<TransportBatch>(m, "TransportBatch")
          .def(nb::init<const TransportConfig&, const std::string&, int, bool>(), nb::arg("config"),
               nb::arg("backend"), nb::arg("max_blocks"), nb::arg("check_llrs"))
          .def("encode", &TransportBatch::encode, nb::arg("tb"), nb::arg("coded"), nb::arg("rv"),
               nb::arg("stream"))
          .def("accumulate", &TransportBatch::accumulate, nb::arg("llrs"), nb::arg("harq"),
               nb::arg("rv"), nb::arg("stream"))
          .def("decode", &TransportBatch::decode, nb::arg("llrs"), nb::arg("tb"),
               nb::arg("tb_crc_ok"), nb::arg("cb_crc_ok").none(), nb::arg("iterations").none(),
               nb::arg("rv"), nb::arg("harq"), nb::arg("stream"))
          .def_prop_ro("code_blocks",
                       [](const TransportBatch& t) { return t.plan().code_blocks(); });
  transport_properties(tb);

  m.def("lifting_sizes", &lifting_sizes);
  m.def(
      "segment", [](int tbs, int bg) { return segmentation_dict(segment(tbs, base_graph(bg))); },
      nb::arg("tbs"), nb::arg("bg"));
  m.def(
      "select_base_graph", [](int tbs, double rate) { return int(select_base_graph(tbs, rate)); },
      nb::arg("tbs"), nb::arg("rate"));
  m.def(
      "circular_buffer_size",
      [](int bg, int zc, int c, bool lbrm, std::int64_t tbs_lbrm) {
        return circular_buffer_size(base_graph(bg), zc, c, lbrm, tbs_lbrm);
      },
      nb::arg("bg"), nb::arg("zc"), nb::arg("c"), nb::arg("lbrm"), nb::arg("tbs_lbrm"));
  m.def(
      "rv_start",
      [](int bg, int zc, int ncb, int rv) { return rv_start(base_graph(bg), zc, ncb, rv); },
      nb::arg("bg"), nb::arg("zc"), nb::arg("ncb"), nb::arg("rv"));
  m.def("code_block_e", &code_block_e, nb::arg("g"), nb::arg("c"), nb::arg("layers"),
        nb::arg("qm"));
  auto rm_config = [](int bg, int zc, int k_prime, int ncb, int e, int qm, int rv) {
    RateMatchConfig c{base_graph(bg), zc, k_prime, ncb, e, qm, rv};
    validate(c);
    return c;
  };
  m.def(
      "selected_positions",
      [rm_config](int bg, int zc, int k_prime, int ncb, int e, int qm, int rv) {
        return selected_positions(rm_config(bg, zc, k_prime, ncb, e, qm, rv));
      },
      nb::arg("bg"), nb::arg("zc"), nb::arg("k_prime"), nb::arg("ncb"), nb::arg("e"), nb::arg("qm"),
      nb::arg("rv"));
  m.def(
      "rate_match",
      [rm_config](int bg, int zc, int k_prime, int ncb, int e, int qm, int rv, const In& cw,
                  const Out& out) {
        const auto c = rm_config(bg, zc, k_prime, ncb, e, qm, rv);
        const int n = (bg == 1 ? 68 : 52) * zc;
        auto w = host_span<std::uint8_t>(cw, "codeword");
        require(std::int64_t(w.size()) == n, "codeword",
                "has " + std::to_string(w.size()) + " bits, expected " + std::to_string(n));
        rate_match(c, w, host_span_out<std::uint8_t>(out, e, "out"));
      },
      nb::arg("bg"), nb::arg("zc"), nb::arg("k_prime"), nb::arg("ncb"), nb::arg("e"), nb::arg("qm"),
      nb::arg("rv"), nb::arg("codeword"), nb::arg("out"));
  m.def(
      "rate_recover",
      [rm_config](int bg, int zc, int k_prime, int ncb, int e, int qm, int rv, const In& llrs,
                  const Out& mother) {
        const auto c = rm_config(bg, zc, k_prime, ncb, e, qm, rv);
        const int n = (bg == 1 ? 68 : 52) * zc;
        auto l = host_span<float>(llrs, "llrs");
        require(std::int64_t(l.size()) == e, "llrs",
                "has " + std::to_string(l.size()) + " values, expected e = " + std::to_string(e));
        rate_recover(c, l, host_span_out<float>(mother, n, "mother"));
      },
      nb::arg("bg"), nb::arg("zc"), nb::arg("k_prime"), nb::arg("ncb"), nb::arg("e"), nb::arg("qm"),
      nb::arg("rv"), nb::arg("llrs"), nb::arg("mother"));
  m.attr("filler_llr") = kFillerLlr;

  m.def(
      "crc_length", [](const std::string& t) { return crc_length(crc_type(t)); }, nb::arg("crc"));
  m.def(
      "crc_compute",
      [](const std::string& t, const In& bits) {
        return crc_compute(crc_type(t), host_span<std::uint8_t>(bits, "bits"));
      },
      nb::arg("crc"), nb::arg("bits"));
  m.def(
      "crc_check",
      [](const std::string& t, const In& bits) {
        return crc_check(crc_type(t), host_span<std::uint8_t>(bits, "bits"));
      },
      nb::arg("crc"), nb::arg("bits"));
  m.def(
      "crc_attach",
      [](const std::string& t, const In& bits) {
        return crc_attach(crc_type(t), host_span<std::uint8_t>(bits, "bits"));
      },
      nb::arg("crc"), nb::arg("bits"));
}

}  // namespace mimorx::python

// Modulation (mapper, max-log demapper), channels (Philox fading, AWGN) and the Philox streams.
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "arrays.hpp"
#include "bindings.hpp"
#include "mimorx/channel/awgn.hpp"
#include "mimorx/channel/fading.hpp"
#include "mimorx/core/rng.hpp"
#include "mimorx/interop/layout.hpp"
#include "mimorx/modem/modem.hpp"

namespace mimorx::python {
namespace {

class Mapper {
 public:
  Mapper(const std::string& mod, const std::string& backend)
      : plan_(parse_modulation(mod), Backend::parse(backend)),
        backend_(Backend::parse(backend)),
        convert_(backend_) {}
  // Bits held as float32 0/1 (mimorx.sionna's mapper): converted into the workspace bits_u8
  // (n*m,) uint8 (values other than 1 count as 0), then mapped, in one call.
  void run_float(const In& bits, const Out& bits_u8, const Out& symbols, std::uintptr_t stream) {
    const int m = bits_per_symbol(plan_.modulation());
    if (symbols.ndim() != 1) throw nb::value_error("symbols: must be one-dimensional");
    const std::int64_t n = std::int64_t(symbols.shape(0));
    auto f = flat<const float>(bits, {n * m}, backend_, "bits");
    auto b = flat<std::uint8_t>(bits_u8, {n * m}, backend_, "bits_u8");
    auto s = flat<cf32>(symbols, {n}, backend_, "symbols");
    const Stream st = stream_of(stream);
    nb::gil_scoped_release unlocked;
    convert_.bits_from_float(f, 1, int(n * m), b, int(n * m), {}, st);
    plan_.run(b, s, st);
  }
  void run(const In& bits, const Out& symbols, std::uintptr_t stream) {
    const int m = bits_per_symbol(plan_.modulation());
    if (symbols.ndim() != 1) throw nb::value_error("symbols: must be one-dimensional");
    const std::int64_t n = std::int64_t(symbols.shape(0));
    auto b = flat<const std::uint8_t>(bits, {n * m}, backend_, "bits");
    auto s = flat<cf32>(symbols, {n}, backend_, "symbols");
    const Stream st = stream_of(stream);
    nb::gil_scoped_release unlocked;
    plan_.run(b, s, st);
  }

 private:
  modem::Mapper plan_;
  Backend backend_;
  interop::LayoutConverter convert_;
};

class Demapper {
 public:
  Demapper(const std::string& mod, bool soft, const std::string& backend)
      : plan_({parse_modulation(mod), soft}, Backend::parse(backend)),
        backend_(Backend::parse(backend)) {}
  void run(const In& symbols, const In& noise_var, const Out& bits, const Out& llrs,
           std::uintptr_t stream) {
    const int m = bits_per_symbol(plan_.config().mod);
    if (symbols.ndim() != 1) throw nb::value_error("symbols: must be one-dimensional");
    const std::int64_t n = std::int64_t(symbols.shape(0));
    auto s = flat<const cf32>(symbols, {n}, backend_, "symbols");
    View<const float> nv;
    if (noise_var.is_valid()) nv = flat<const float>(noise_var, {-1}, backend_, "noise_var");
    View<std::uint8_t> b;
    View<float> l;
    if (bits.is_valid()) b = flat<std::uint8_t>(bits, {n * m}, backend_, "bits");
    if (llrs.is_valid()) l = flat<float>(llrs, {n * m}, backend_, "llrs");
    const Stream st = stream_of(stream);
    nb::gil_scoped_release unlocked;
    plan_.run(s, nv, b, l, st);
  }

 private:
  modem::Demapper plan_;
  Backend backend_;
};

class Fading {
 public:
  Fading(int nr, int nt, double rho_tx, double rho_rx, const std::string& backend)
      : plan_({nr, nt, rho_tx, rho_rx}, Backend::parse(backend)),
        backend_(Backend::parse(backend)) {}
  void generate(std::uint64_t seed, std::int64_t first, const Out& h, std::uintptr_t stream) {
    if (h.ndim() != 3) throw nb::value_error("h: must have shape (C, nr, nt)");
    auto hv = matrices<cf32>(h, std::int64_t(h.shape(0)), plan_.config().nr, plan_.config().nt,
                             backend_, "h");
    const Stream st = stream_of(stream);
    nb::gil_scoped_release unlocked;
    plan_.generate(seed, first, hv, st);
  }

 private:
  channel::FadingPlan plan_;
  Backend backend_;
};

void apply_channel(const std::string& backend_name, const In& h, const In& x, const In& noise_var,
                   std::uint64_t seed, std::int64_t first_vector, const Out& y,
                   std::uintptr_t stream) {
  const Backend backend = Backend::parse(backend_name);
  if (h.ndim() != 3) throw nb::value_error("h: must have shape (C, nr, nt)");
  if (x.ndim() != 2) throw nb::value_error("x: must have shape (V, nt)");
  const std::int64_t c = std::int64_t(h.shape(0)), v = std::int64_t(x.shape(0));
  const int nr = int(h.shape(1)), nt = int(h.shape(2));
  if (c <= 0 || v % c != 0) {
    throw nb::value_error("x: the number of vectors must be a positive multiple of the channels");
  }
  auto hv = matrices<const cf32>(h, c, nr, nt, backend, "h");
  auto xv = flat<const cf32>(x, {v, nt}, backend, "x");
  auto yv = flat<cf32>(y, {v, nr}, backend, "y");
  auto nv = flat<const float>(noise_var, {-1}, backend, "noise_var");
  const Stream st = stream_of(stream);
  nb::gil_scoped_release unlocked;
  channel::apply_channel(backend, hv, ConstMatrixBatch<cf32>(xv.data, v, nt, 1, xv.where),
                         int(v / c), nv, seed, first_vector,
                         MatrixBatch<cf32>(yv.data, v, nr, 1, yv.where), st);
}

void add_awgn(const std::string& backend_name, const In& x, const In& noise_var, std::uint64_t seed,
              std::int64_t first, const Out& y, std::uintptr_t stream) {
  const Backend backend = Backend::parse(backend_name);
  if (x.ndim() != 1) throw nb::value_error("x: must be one-dimensional");
  const std::int64_t n = std::int64_t(x.shape(0));
  auto xv = flat<const cf32>(x, {n}, backend, "x");
  auto yv = flat<cf32>(y, {n}, backend, "y");
  auto nv = flat<const float>(noise_var, {-1}, backend, "noise_var");
  const Stream st = stream_of(stream);
  nb::gil_scoped_release unlocked;
  channel::add_awgn(backend, xv, nv, seed, first, yv, st);
}

void fill(bool gaussian, const std::string& backend_name, std::uint64_t seed,
          std::uint64_t stream_id, const Out& out, std::uint64_t offset) {
  const Backend backend = Backend::parse(backend_name);
  auto o = flat<float>(out, {std::int64_t(out.size())}, backend, "out");
  nb::gil_scoped_release unlocked;
  if (gaussian) {
    rng::fill_gaussian(backend, seed, stream_id, o, offset);
  } else {
    rng::fill_uniform(backend, seed, stream_id, o, offset);
  }
}

}  // namespace

void bind_signal(nb::module_& m) {
  nb::class_<Mapper>(m, "Mapper")
      .def(nb::init<const std::string&, const std::string&>(), nb::arg("mod"), nb::arg("backend"))
      .def("run", &Mapper::run, nb::arg("bits"), nb::arg("symbols"), nb::arg("stream"))
      .def("run_float", &Mapper::run_float, nb::arg("bits"), nb::arg("bits_u8"),
           nb::arg("symbols"), nb::arg("stream"));
  nb::class_<Demapper>(m, "Demapper")
      .def(nb::init<const std::string&, bool, const std::string&>(), nb::arg("mod"),
           nb::arg("soft"), nb::arg("backend"))
      .def("run", &Demapper::run, nb::arg("symbols"), nb::arg("noise_var").none(),
           nb::arg("bits").none(), nb::arg("llrs").none(), nb::arg("stream"));
  nb::class_<Fading>(m, "Fading")
      .def(nb::init<int, int, double, double, const std::string&>(), nb::arg("nr"), nb::arg("nt"),
           nb::arg("rho_tx"), nb::arg("rho_rx"), nb::arg("backend"))
      .def("generate", &Fading::generate, nb::arg("seed"), nb::arg("first_channel"), nb::arg("h"),
           nb::arg("stream"));
  m.def("apply_channel", &apply_channel, nb::arg("backend"), nb::arg("h"), nb::arg("x"),
        nb::arg("noise_var"), nb::arg("seed"), nb::arg("first_vector"), nb::arg("y"),
        nb::arg("stream"));
  m.def("add_awgn", &add_awgn, nb::arg("backend"), nb::arg("x"), nb::arg("noise_var"),
        nb::arg("seed"), nb::arg("first"), nb::arg("y"), nb::arg("stream"));
  m.def("fill_random", &fill, nb::arg("gaussian"), nb::arg("backend"), nb::arg("seed"),
        nb::arg("stream_id"), nb::arg("out"), nb::arg("offset"));
  m.def("modulation_bits",
        [](const std::string& mod) { return bits_per_symbol(parse_modulation(mod)); });
  m.def("modulation_name", [](const std::string& mod) { return to_string(parse_modulation(mod)); });
}

}  // namespace mimorx::python

// MIMO detectors: every detector of the library behind the factory the simulator and the CLI
// use (sim::make_detector), so that the Python names are the CLI's ("mmse", "kbest:16", ...).
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <memory>

#include "arrays.hpp"
#include "bindings.hpp"
#include "mimorx/interop/layout.hpp"
#include "mimorx/sim/detector.hpp"

namespace mimorx::python {
namespace {

class Detector {
 public:
  Detector(const std::string& spec, int nt, int nr, const std::string& mod,
           const std::string& backend, bool soft, std::int64_t psd_node_cap, bool check_values)
      : shape_{nt, nr, parse_modulation(mod)},
        backend_(Backend::parse(backend)),
        soft_(soft),
        convert_(backend_) {
    sim::DetectorOptions o;
    o.soft = soft;
    o.psd_node_cap = psd_node_cap;
    o.check_device_values = check_values;
    det_ = sim::make_detector(spec, shape_, backend_, o);
  }

  // h: (C, nr, nt) column-major per matrix; y: (V, nr); noise_var: (V,) or (1,); bits and llrs
  // (V, nt, m). V = C * vectors_per_channel.
  void run(const In& h, const In& y, const In& noise_var, const Out& bits, const Out& llrs,
           std::uintptr_t stream) {
    const int m = bits_per_symbol(shape_.mod);
    if (y.ndim() != 2) {
      throw nb::value_error("y: must have shape (V, nr): one received vector per row");
    }
    if (h.ndim() != 3) {
      throw nb::value_error("h: must have shape (C, nr, nt): one channel matrix per entry");
    }
    const std::int64_t v = std::int64_t(y.shape(0)), c = std::int64_t(h.shape(0));
    if (c <= 0 || v % c != 0) {
      throw nb::value_error(("y: holds " + std::to_string(v) +
                             " vectors, not a positive multiple of the " + std::to_string(c) +
                             " channels of h")
                                .c_str());
    }
    detect::DetectInput in;
    in.h = matrices<const cf32>(h, c, shape_.nr, shape_.nt, backend_, "h");
    const auto yv = flat<const cf32>(y, {v, shape_.nr}, backend_, "y");
    in.y = ConstMatrixBatch<cf32>(yv.data, v, shape_.nr, 1, yv.where);
    if (noise_var.ndim() != 1 ||
        (noise_var.shape(0) != 1 && std::int64_t(noise_var.shape(0)) != v)) {
      throw nb::value_error(
          ("noise_var: must have shape (1,) or (" + std::to_string(v) + ",)").c_str());
    }
    in.noise_var = flat<const float>(noise_var, {-1}, backend_, "noise_var");
    in.vectors_per_channel = int(v / c);
    View<std::uint8_t> b;
    View<float> l;
    if (bits.is_valid()) b = flat<std::uint8_t>(bits, {v, shape_.nt, m}, backend_, "bits");
    if (llrs.is_valid()) {
      if (!soft_) throw nb::value_error("llrs: this detector was built with soft=False");
      l = flat<float>(llrs, {v, shape_.nt, m}, backend_, "llrs");
    }
    const Stream s = stream_of(stream);
    nb::gil_scoped_release unlocked;
    det_->run(in, b, l, s);
  }

  // Sionna's conventions in one call (mimorx.sionna's detectors): h (V, nr, nt) row-major per
  // matrix, y (V, nr), s (B, nr, nr) noise covariances (any strides; B = V, or 1 for one matrix
  // for all), whose diagonals' mean is N0 per vector. The workspaces h_cm (V, nr, nt) complex64,
  // n0 (V,) float32 and bits (V, nt, m) uint8 receive the column-major channels, N0 and the
  // decisions; llrs (V, nt, m) float32 the LLRs times llr_scale (-1: Sionna's log P(1)/P(0)).
  void run_sionna(const In& h, const In& y, const In& s, const Out& h_cm, const Out& n0,
                  const Out& bits, const Out& llrs, float llr_scale, std::uintptr_t stream) {
    const int m = bits_per_symbol(shape_.mod), nr = shape_.nr, nt = shape_.nt;
    if (y.ndim() != 2) throw nb::value_error("y: must have shape (V, nr)");
    const std::int64_t v = std::int64_t(y.shape(0));
    auto hv = flat<const cf32>(h, {v, nr, nt}, backend_, "h");
    auto yv = flat<const cf32>(y, {v, nr}, backend_, "y");
    require_dtype_shape(s, dtype_for<cf32>(), {-1, nr, nr}, "s");
    const std::int64_t sb = std::int64_t(s.shape(0));
    if (sb != v && sb != 1) {
      throw nb::value_error(("s: holds " + std::to_string(sb) +
                             " matrices; give 1 or one per "
                             "received vector (" +
                             std::to_string(v) + ")")
                                .c_str());
    }
    if (s.stride(0) < 0 || s.stride(1) < 0 || s.stride(2) < 0) {
      throw nb::value_error("s: negative strides are not supported");
    }
    const Place sp = place_of(s.device_type(), s.device_id(), "s");
    require_place(sp, backend_, "s");
    const std::int64_t batch_stride = sb == 1 ? 0 : std::int64_t(s.stride(0));
    const std::int64_t diag_stride = std::int64_t(s.stride(1)) + std::int64_t(s.stride(2));
    const std::int64_t extent = (sb - 1) * std::int64_t(s.stride(0)) + (nr - 1) * diag_stride + 1;
    const View<const cf32> sv(static_cast<const cf32*>(s.data()), extent, sp.where);
    auto hc = flat<cf32>(h_cm, {v, nr, nt}, backend_, "h_cm");
    auto nv = flat<float>(n0, {v}, backend_, "n0");
    auto b = flat<std::uint8_t>(bits, {v, nt, m}, backend_, "bits");
    if (!soft_) throw nb::value_error("llrs: this detector was built with soft=False");
    auto l = flat<float>(llrs, {v, nt, m}, backend_, "llrs");
    const Stream st = stream_of(stream);
    nb::gil_scoped_release unlocked;
    convert_.row_to_column_major(hv, v, nr, nt, hc, st);
    convert_.noise_from_covariance(sv, v, nr, batch_stride, diag_stride, nv, st);
    detect::DetectInput in;
    in.h = ConstMatrixBatch<cf32>(hc.data, v, nr, nt, hc.where);
    in.y = ConstMatrixBatch<cf32>(yv.data, v, nr, 1, yv.where);
    in.noise_var = nv;
    in.vectors_per_channel = 1;
    det_->run(in, b, l, st);
    if (llr_scale != 1.0f) convert_.scale(l, llr_scale, l, st);
  }

  int nt() const { return shape_.nt; }
  int nr() const { return shape_.nr; }
  int bits_per_symbol_() const { return bits_per_symbol(shape_.mod); }
  std::string modulation() const { return to_string(shape_.mod); }
  std::string backend() const { return backend_.name(); }
  bool soft() const { return soft_; }
  std::string name() const { return det_->name(); }
  std::int64_t capped_vectors() const { return det_->capped_vectors(); }

 private:
  detect::MimoShape shape_;
  Backend backend_;
  bool soft_;
  std::unique_ptr<sim::Detector> det_;
  interop::LayoutConverter convert_;
};

}  // namespace

void bind_detect(nb::module_& m) {
  m.def("detector_names", &sim::detector_names);
  nb::class_<Detector>(m, "Detector")
      .def(nb::init<const std::string&, int, int, const std::string&, const std::string&, bool,
                    std::int64_t, bool>(),
           nb::arg("spec"), nb::arg("nt"), nb::arg("nr"), nb::arg("mod"), nb::arg("backend"),
           nb::arg("soft"), nb::arg("psd_node_cap"), nb::arg("check_values"))
      .def("run", &Detector::run, nb::arg("h"), nb::arg("y"), nb::arg("noise_var"),
           nb::arg("bits").none(), nb::arg("llrs").none(), nb::arg("stream"))
      .def("run_sionna", &Detector::run_sionna, nb::arg("h"), nb::arg("y"), nb::arg("s"),
           nb::arg("h_cm"), nb::arg("n0"), nb::arg("bits"), nb::arg("llrs"), nb::arg("llr_scale"),
           nb::arg("stream"))
      .def_prop_ro("nt", &Detector::nt)
      .def_prop_ro("nr", &Detector::nr)
      .def_prop_ro("bits_per_symbol", &Detector::bits_per_symbol_)
      .def_prop_ro("modulation", &Detector::modulation)
      .def_prop_ro("backend", &Detector::backend)
      .def_prop_ro("soft", &Detector::soft)
      .def_prop_ro("name", &Detector::name)
      .def_prop_ro("capped_vectors", &Detector::capped_vectors);
}

}  // namespace mimorx::python

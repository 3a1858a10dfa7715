// MIMO detectors: every detector of the library behind the factory the simulator and the CLI
// use (sim::make_detector), so that the Python names are the CLI's ("mmse", "kbest:16", ...).
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <memory>

#include "arrays.hpp"
#include "bindings.hpp"
#include "mimorx/sim/detector.hpp"

namespace mimorx::python {
namespace {

class Detector {
 public:
  Detector(const std::string& spec, int nt, int nr, const std::string& mod,
           const std::string& backend, bool soft, std::int64_t psd_node_cap, bool check_values)
      : shape_{nt, nr, parse_modulation(mod)}, backend_(Backend::parse(backend)), soft_(soft) {
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

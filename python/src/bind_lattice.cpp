// LLL lattice reduction of batches of bases (float32 or float64), with T and per-basis status,
// and the independent quality check.
#include <nanobind/stl/string.h>

#include "arrays.hpp"
#include "bindings.hpp"
#include "mimorx/lattice/lll.hpp"
#include "mimorx/lattice/quality.hpp"

namespace mimorx::python {
namespace {

using namespace mimorx::lattice;

class Lll {
 public:
  Lll(int n, int m, double delta, const std::string& method, bool transform, int block,
      bool presort, bool lattice_check, long max_sweeps, const std::string& backend)
      : backend_(Backend::parse(backend)),
        plan_(config(n, m, delta, method, transform, block, presort, lattice_check, max_sweeps),
              backend_) {}
  // basis: (B, n, m) column-major per basis, reduced in place; transform: (B, m, m) int64
  // column-major; status: (B,) int32 (LllStatus values).
  void run(const Out& basis, const Out& transform, const Out& status, std::uintptr_t stream) {
    const auto& c = plan_.config();
    if (basis.ndim() != 3) throw nb::value_error("basis: must have shape (B, n, m)");
    const std::int64_t b = std::int64_t(basis.shape(0));
    MatrixBatch<std::int64_t> t;
    if (transform.is_valid()) {
      t = matrices<std::int64_t>(transform, b, c.m, c.m, backend_, "transform");
    }
    View<LllStatus> s;
    if (status.is_valid()) {
      auto sv = flat<std::int32_t>(status, {b}, backend_, "status");
      s = View<LllStatus>(reinterpret_cast<LllStatus*>(sv.data), sv.size, sv.where);
    }
    const Stream st = stream_of(stream);
    if (basis.dtype() == nb::dtype<float>()) {
      auto bv = matrices<float>(basis, b, c.n, c.m, backend_, "basis");
      nb::gil_scoped_release unlocked;
      plan_.run(bv, t, s, st);
    } else {
      auto bv = matrices<double>(basis, b, c.n, c.m, backend_, "basis");
      nb::gil_scoped_release unlocked;
      plan_.run(bv, t, s, st);
    }
  }
  std::string method() const { return to_string(plan_.method()); }
  int block() const { return plan_.block(); }
  bool transform() const { return plan_.config().transform; }

 private:
  static LllConfig config(int n, int m, double delta, const std::string& method, bool transform,
                          int block, bool presort, bool lattice_check, long max_sweeps) {
    LllConfig c;
    c.n = n;
    c.m = m;
    c.delta = delta;
    c.method = parse_lll_method(method);
    c.transform = transform;
    c.block = block;
    c.presort = presort;
    c.lattice_check = lattice_check;
    c.max_sweeps = max_sweeps;
    return c;
  }
  Backend backend_;
  LllPlan plan_;
};

nb::dict check(const In& basis, double delta, double eps_mu, double eps_delta, bool condition) {
  if (basis.ndim() != 2) throw nb::value_error("basis: must have shape (n, m)");
  const int n = int(basis.shape(0)), m = int(basis.shape(1));
  CheckOptions o{delta, eps_mu, eps_delta, condition};
  if ((m > 1 && basis.stride(1) != n) || (n > 1 && basis.stride(0) != 1)) {
    throw nb::value_error("basis: must be column-major (numpy order='F')");
  }
  require_place(place_of(basis.device_type(), basis.device_id(), "basis"), Backend::cpu(), "basis");
  QualityReport r;
  if (basis.dtype() == nb::dtype<float>()) {
    r = check_lll(n, m, static_cast<const float*>(basis.data()), o);
  } else if (basis.dtype() == nb::dtype<double>()) {
    r = check_lll(n, m, static_cast<const double*>(basis.data()), o);
  } else {
    throw nb::type_error(
        ("basis: has dtype " + dtype_name(basis.dtype()) + ", expected float32 or float64")
            .c_str());
  }
  nb::dict d;
  d["reduced"] = r.reduced();
  d["finite"] = r.finite;
  d["size_reduced"] = r.size_reduced;
  d["lovasz"] = r.lovasz;
  d["max_mu"] = r.max_mu;
  d["lovasz_ratio"] = r.lovasz_ratio;
  d["log_volume"] = r.log_volume;
  d["orthogonality_defect"] = r.orthogonality_defect;
  d["hermite_factor"] = r.hermite_factor;
  d["condition_number"] = r.condition_number;
  d["message"] = r.message;
  return d;
}

}  // namespace

void bind_lattice(nb::module_& m) {
  nb::class_<Lll>(m, "Lll")
      .def(nb::init<int, int, double, const std::string&, bool, int, bool, bool, long,
                    const std::string&>(),
           nb::arg("n"), nb::arg("m"), nb::arg("delta"), nb::arg("method"), nb::arg("transform"),
           nb::arg("block"), nb::arg("presort"), nb::arg("lattice_check"), nb::arg("max_sweeps"),
           nb::arg("backend"))
      .def("run", &Lll::run, nb::arg("basis"), nb::arg("transform").none(),
           nb::arg("status").none(), nb::arg("stream"))
      .def_prop_ro("method", &Lll::method)
      .def_prop_ro("block", &Lll::block)
      .def_prop_ro("transform", &Lll::transform);
  m.def("check_lll", &check, nb::arg("basis"), nb::arg("delta"), nb::arg("eps_mu"),
        nb::arg("eps_delta"), nb::arg("condition_number"));
}

}  // namespace mimorx::python

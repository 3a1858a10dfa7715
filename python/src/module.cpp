// The compiled part of the mimorx Python package (mimorx._core): thin bindings of the C++ plans.
// The Python modules of the package (python/mimorx/*.py) give them their Pythonic form.
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "bindings.hpp"
#include "mimorx/config.hpp"
#include "mimorx/core/backend.hpp"
#include "mimorx/core/error.hpp"

namespace nb = nanobind;

NB_MODULE(_core, m) {
  m.doc() = "mimorx C++ plans (use the mimorx package, not this module)";
  // The library's errors as Python's: a bad argument is a ValueError, a valid request this build
  // or device cannot serve a NotImplementedError; the message is the library's one line.
  nb::register_exception_translator([](const std::exception_ptr& p, void*) {
    try {
      std::rethrow_exception(p);
    } catch (const mimorx::InvalidArgument& e) {
      PyErr_SetString(PyExc_ValueError, e.what());
    } catch (const mimorx::Unsupported& e) {
      PyErr_SetString(PyExc_NotImplementedError, e.what());
    } catch (const mimorx::OutOfMemory& e) {
      PyErr_SetString(PyExc_MemoryError, e.what());
    } catch (const mimorx::Error& e) {
      PyErr_SetString(PyExc_RuntimeError, e.what());
    }
  });
  m.attr("version") = MIMORX_VERSION;
  m.attr("built_with_cuda") = bool(MIMORX_HAS_CUDA);
  m.def("cuda_available", &mimorx::cuda_available,
        "True when this build has the CUDA backend and a GPU is present.");
  m.def(
      "backend_name", [](const std::string& s) { return mimorx::Backend::parse(s).name(); },
      nb::arg("name"), "The backend 'auto', 'cpu' or 'cuda[:N]' resolves to, e.g. 'cuda:0'.");
  m.def("cuda_devices", [] {
    nb::list out;
    for (const auto& d : mimorx::cuda_devices()) {
      nb::dict e;
      e["index"] = d.index;
      e["name"] = d.name;
      e["sm_count"] = d.sm_count;
      e["compute_capability"] = nb::make_tuple(d.major, d.minor);
      e["global_memory_bytes"] = d.global_memory_bytes;
      out.append(e);
    }
    return out;
  });
  mimorx::python::bind_detect(m);
  mimorx::python::bind_signal(m);
  mimorx::python::bind_ldpc(m);
  mimorx::python::bind_lattice(m);
  mimorx::python::bind_sim(m);
}

#pragma once
#include <nanobind/nanobind.h>

namespace mimorx::python {
void bind_detect(nanobind::module_& m);
void bind_signal(nanobind::module_& m);  // modem, channel, rng
void bind_ldpc(nanobind::module_& m);
void bind_lattice(nanobind::module_& m);
void bind_sim(nanobind::module_& m);
}  // namespace mimorx::python

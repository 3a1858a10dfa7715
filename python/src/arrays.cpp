#include "arrays.hpp"

#include "mimorx/core/error.hpp"

namespace mimorx::python {

std::string dtype_name(nb::dlpack::dtype t) {
  std::string kind;
  switch (nb::dlpack::dtype_code(t.code)) {
    case nb::dlpack::dtype_code::Int:
      kind = "int";
      break;
    case nb::dlpack::dtype_code::UInt:
      kind = "uint";
      break;
    case nb::dlpack::dtype_code::Float:
      kind = "float";
      break;
    case nb::dlpack::dtype_code::Complex:
      kind = "complex";
      break;
    case nb::dlpack::dtype_code::Bool:
      return "bool";
    default:
      kind = "dtype" + std::to_string(int(t.code)) + "_";
      break;
  }
  return kind + std::to_string(int(t.bits)) + (t.lanes > 1 ? "x" + std::to_string(t.lanes) : "");
}

Place place_of(std::int32_t device_type, std::int32_t device_id, const std::string& name) {
  if (device_type == nb::device::cpu::value || device_type == nb::device::cuda_host::value) {
    return {Memory::host, -1};
  }
  if (device_type == nb::device::cuda::value || device_type == nb::device::cuda_managed::value) {
    return {Memory::device, device_id};
  }
  throw nb::type_error((name + ": lives on DLPack device type " + std::to_string(device_type) +
                        "; mimorx takes host (CPU) and CUDA arrays")
                           .c_str());
}

void require_place(const Place& p, const Backend& backend, const std::string& name) {
  if (backend.is_cpu() && p.where != Memory::host) {
    throw nb::value_error((name + ": is in CUDA memory but this plan runs on the cpu backend; "
                                  "pass host arrays, or use a plan on the cuda backend")
                              .c_str());
  }
  if (backend.is_cuda() && p.where != Memory::device) {
    throw nb::value_error((name + ": is in host memory but this plan runs on " + backend.name() +
                           "; pass arrays on that device (mimorx never copies them for you)")
                              .c_str());
  }
  if (backend.is_cuda() && p.device != backend.device()) {
    throw nb::value_error((name + ": is on cuda:" + std::to_string(p.device) +
                           " but this plan runs on " + backend.name())
                              .c_str());
  }
}

Backend backend_of(const std::string& name) { return Backend::parse(name); }

}  // namespace mimorx::python

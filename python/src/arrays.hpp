#pragma once
// Turning the arrays Python hands over (NumPy, or any DLPack producer such as PyTorch and CuPy)
// into mimorx views, without copies: the dtype, shape, layout and device are checked and a bad
// one raises TypeError (dtype, device kind) or ValueError (shape, layout, wrong memory for the
// plan) naming the argument.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>

#include <complex>
#include <cstdint>
#include <string>
#include <vector>

#include "mimorx/core/backend.hpp"
#include "mimorx/core/buffer.hpp"
#include "mimorx/core/complex.hpp"
#include "mimorx/core/tensor.hpp"

namespace mimorx::python {

namespace nb = nanobind;

// Inputs may be read-only (a NumPy view of a constant); outputs must be writable.
using In = nb::ndarray<nb::ro>;
using Out = nb::ndarray<>;

std::string dtype_name(nb::dlpack::dtype t);

template <class T>
nb::dlpack::dtype dtype_for() {
  if constexpr (std::is_same_v<std::remove_const_t<T>, cf32>) {
    return nb::dtype<std::complex<float>>();
  } else {
    return nb::dtype<std::remove_const_t<T>>();
  }
}

// Where an array lives: host (CPU or pinned memory) or a CUDA device (device >= 0).
struct Place {
  Memory where = Memory::host;
  int device = -1;
};
Place place_of(std::int32_t device_type, std::int32_t device_id, const std::string& name);

// The array must live where `backend` computes: host memory for the CPU backend, the plan's
// device for CUDA (ValueError otherwise, never a copy).
void require_place(const Place& p, const Backend& backend, const std::string& name);

// Shape entries -1 accept any size.
template <class A>
void require_dtype_shape(const A& a, nb::dlpack::dtype want, const std::vector<std::int64_t>& shape,
                         const std::string& name) {
  if (!(a.dtype() == want)) {
    throw nb::type_error(
        (name + ": has dtype " + dtype_name(a.dtype()) + ", expected " + dtype_name(want)).c_str());
  }
  bool ok = a.ndim() == shape.size();
  for (std::size_t i = 0; ok && i < shape.size(); ++i) {
    ok = shape[i] < 0 || std::int64_t(a.shape(i)) == shape[i];
  }
  if (!ok) {
    std::string got = "(", want_s = "(";
    for (std::size_t i = 0; i < a.ndim(); ++i) got += (i ? ", " : "") + std::to_string(a.shape(i));
    for (std::size_t i = 0; i < shape.size(); ++i) {
      want_s += (i ? ", " : "") + (shape[i] < 0 ? std::string("*") : std::to_string(shape[i]));
    }
    throw nb::value_error((name + ": has shape " + got + (a.ndim() == 1 ? ",)" : ")") +
                           ", expected " + want_s + (shape.size() == 1 ? ",)" : ")"))
                              .c_str());
  }
}

template <class A>
bool c_contiguous(const A& a) {
  std::int64_t expected = 1;
  for (std::size_t i = a.ndim(); i-- > 0;) {
    if (a.shape(i) != 1 && a.stride(i) != expected) return false;
    expected *= std::int64_t(a.shape(i));
  }
  return true;
}

template <class A>
void require_c_contiguous(const A& a, const std::string& name) {
  if (!c_contiguous(a)) {
    throw nb::value_error((name + ": must be C-contiguous (a dense row-major array); make it so "
                                  "with numpy.ascontiguousarray or tensor.contiguous()")
                              .c_str());
  }
}

// A flat view of a C-contiguous array of the given shape.
template <class T, class A>
View<T> flat(const A& a, const std::vector<std::int64_t>& shape, const Backend& backend,
             const std::string& name) {
  require_dtype_shape(a, dtype_for<T>(), shape, name);
  require_c_contiguous(a, name);
  const Place p = place_of(a.device_type(), a.device_id(), name);
  require_place(p, backend, name);
  return View<T>(static_cast<T*>(const_cast<void*>(static_cast<const void*>(a.data()))),
                 std::int64_t(a.size()), p.where);
}

// A batch of `batch` matrices rows x cols, column-major per matrix (stride 1 along rows,
// `rows` along columns), matrices at a constant stride >= rows * cols: shape (batch, rows, cols).
template <class T, class A>
MatrixBatch<T> matrices(const A& a, std::int64_t batch, int rows, int cols, const Backend& backend,
                        const std::string& name) {
  require_dtype_shape(a, dtype_for<T>(), {batch, rows, cols}, name);
  const bool inner = (rows == 1 || a.stride(1) == 1) && (cols == 1 || a.stride(2) == rows);
  const bool outer = batch == 1 || a.stride(0) >= std::int64_t(rows) * cols;
  if (!inner || !outer) {
    throw nb::value_error(
        (name + ": must be column-major per matrix (strides (>= rows*cols, 1, rows) in "
                "elements), i.e. the transpose view of a C-contiguous (batch, cols, rows) array; "
                "mimorx.column_major(x) makes such a copy")
            .c_str());
  }
  const Place p = place_of(a.device_type(), a.device_id(), name);
  require_place(p, backend, name);
  const std::int64_t stride = batch == 1 ? std::int64_t(rows) * cols : std::int64_t(a.stride(0));
  return MatrixBatch<T>(static_cast<T*>(const_cast<void*>(static_cast<const void*>(a.data()))),
                        batch, rows, cols, p.where, stride);
}

// A stream handle from Python (0: the legacy default stream); ignored on the CPU backend.
inline Stream stream_of(std::uintptr_t handle) {
  return Stream::borrow(reinterpret_cast<void*>(handle));
}

Backend backend_of(const std::string& name);

}  // namespace mimorx::python

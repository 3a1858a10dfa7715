"""Array plumbing shared by the mimorx modules: which library an array comes from, where it
lives, allocating outputs beside it, the CUDA stream to run on, and the plan for its device.

Nothing here copies an array between host and device: outputs are allocated by the library and
on the device of the reference input, and a plan only accepts arrays in its own memory.
"""

import numbers

import numpy as np

from . import _core

_DTYPES = ("uint8", "int8", "int32", "int64", "float32", "float64", "complex64")


def kind(x, name):
    """'numpy', 'torch', 'cupy' or 'dlpack' for an array argument, TypeError otherwise."""
    if isinstance(x, np.ndarray):
        return "numpy"
    module = type(x).__module__.split(".")[0]
    if module == "torch":
        return "torch"
    if module == "cupy":
        return "cupy"
    if hasattr(x, "__dlpack__"):
        return "dlpack"
    raise TypeError(
        f"{name}: expected a NumPy array or a DLPack array (PyTorch, CuPy), "
        f"got {type(x).__name__}"
    )


def device(x, name):
    """('cpu', -1) or ('cuda', index) for an array argument."""
    k = kind(x, name)
    if k == "numpy":
        return ("cpu", -1)
    if k == "torch":
        if x.requires_grad:
            raise ValueError(f"{name}: requires grad; pass tensor.detach() (mimorx has no autograd)")
        return ("cuda", x.device.index or 0) if x.device.type == "cuda" else ("cpu", -1)
    if k == "cupy":
        return ("cuda", x.device.id)
    dev_type, dev_id = x.__dlpack_device__()
    if int(dev_type) in (2, 13):  # kDLCUDA, kDLCUDAManaged
        return ("cuda", int(dev_id))
    return ("cpu", -1)


def backend_of(x, name):
    """The backend name that computes on the memory of `x`: 'cpu' or 'cuda:N'."""
    dev, index = device(x, name)
    return "cpu" if dev == "cpu" else f"cuda:{index}"


def empty(ref, name, shape, dtype):
    """A new array of `shape` and `dtype` from the library of `ref`, on the device of `ref`."""
    k = kind(ref, name)
    if k == "numpy":
        return np.empty(shape, dtype=dtype)
    if k == "torch":
        import torch

        return torch.empty(shape, dtype=getattr(torch, dtype), device=ref.device)
    if k == "cupy":
        import cupy

        with cupy.cuda.Device(ref.device.id):
            return cupy.empty(shape, dtype=dtype)
    raise TypeError(
        f"{name}: mimorx cannot allocate outputs beside a {type(ref).__name__}; pass the output "
        "arrays (out arguments)"
    )


def full(ref, name, shape, value, dtype):
    """Like empty(), filled with `value`."""
    out = empty(ref, name, shape, dtype)
    out[...] = value
    return out


def noise_array(noise_var, ref, name="noise_var"):
    """N0 as an array on the memory of `ref`: a Python number becomes a (1,) float32 array."""
    if isinstance(noise_var, numbers.Real):
        if not np.isfinite(noise_var) or noise_var <= 0:
            raise ValueError(f"{name}: is {noise_var}; N0 must be finite and > 0")
        return full(ref, name, (1,), float(noise_var), "float32")
    return noise_var


def stream_handle(stream, ref=None):
    """The cudaStream_t to run on, as an int.

    stream: None (the current stream of the library of `ref`: PyTorch's or CuPy's, else the
    legacy default stream 0), an int handle, or an object with .cuda_stream (torch.cuda.Stream)
    or .ptr (cupy.cuda.Stream).
    """
    if stream is None:
        if ref is None or device(ref, "array")[0] != "cuda":
            return 0
        k = kind(ref, "array")
        if k == "torch":
            import torch

            return int(torch.cuda.current_stream(ref.device).cuda_stream)
        if k == "cupy":
            import cupy

            return int(cupy.cuda.get_current_stream().ptr)
        return 0
    if isinstance(stream, numbers.Integral):
        return int(stream)
    for attr in ("cuda_stream", "ptr"):
        if hasattr(stream, attr):
            return int(getattr(stream, attr))
    raise TypeError(
        "stream: expected None, an int handle, or an object with .cuda_stream or .ptr, "
        f"got {type(stream).__name__}"
    )


def check_out(out, name, shape, dtype):
    """None, or `out` when it is an array; the plan checks its dtype, shape and device."""
    if out is None:
        return None
    kind(out, name)
    return out


def require_same_backend(arrays, backend):
    """All arrays (name -> array) live where `backend` computes (ValueError otherwise)."""
    for name, a in arrays.items():
        if a is None or isinstance(a, numbers.Number):
            continue
        b = backend_of(a, name)
        if b != backend:
            raise ValueError(
                f"{name}: lives on {b} but the other arguments on {backend}; mimorx never copies "
                "between devices"
            )


class PlanCache:
    """One plan per backend, built on first use: a plan object follows its arrays' device
    unless it was pinned to a backend."""

    def __init__(self, make, backend=None):
        self._make = make
        self._plans = {}
        self.pinned = None if backend is None else _core.backend_name(backend)
        if self.pinned is not None:
            self._plans[self.pinned] = make(self.pinned)

    def for_array(self, ref, name):
        backend = backend_of(ref, name)
        if self.pinned is not None:
            if backend != self.pinned:
                raise ValueError(
                    f"{name}: lives on {backend} but this plan runs on {self.pinned}; mimorx "
                    "never copies between host and device"
                )
            return self._plans[self.pinned], backend
        plan = self._plans.get(backend)
        if plan is None:
            plan = self._plans[backend] = self._make(backend)
        return plan, backend


def column_major(x):
    """A copy of a batch of matrices (..., rows, cols) stored column-major per matrix, the
    layout mimorx reads (an explicit copy, on the device of `x`)."""
    k = kind(x, "x")
    if k == "numpy":
        return np.ascontiguousarray(np.swapaxes(x, -1, -2)).swapaxes(-1, -2)
    if k == "torch":
        return x.transpose(-1, -2).contiguous().transpose(-1, -2)
    if k == "cupy":
        import cupy

        return cupy.ascontiguousarray(cupy.swapaxes(x, -1, -2)).swapaxes(-1, -2)
    raise TypeError(f"x: column_major() supports NumPy, PyTorch and CuPy arrays, got {type(x).__name__}")


def noise_array_nonneg(noise_var, ref, name="noise_var"):
    """As noise_array(), for channels, where N0 = 0 (no noise) is allowed."""
    if isinstance(noise_var, numbers.Real):
        if not np.isfinite(noise_var) or noise_var < 0:
            raise ValueError(f"{name}: is {noise_var}; N0 must be finite and >= 0")
        return full(ref, name, (1,), float(noise_var), "float32")
    return noise_var

"""LLL lattice reduction (columns are the basis vectors, column-major storage).

A batch of B bases n x m is an array (B, n, m), float32 (float32 arithmetic) or float64,
column-major per basis (``mimorx.column_major``); it is reduced in place to B' = B T with T
(B, m, m) int64 unimodular, column-major per matrix. status (B,) int32 per basis: see STATUS.
"""

import numpy as np

from . import _arrays, _core

__all__ = ["Lll", "lll", "check", "STATUS"]

STATUS = {0: "reduced", 1: "not_converged", 2: "precision_loss", 3: "singular"}


class Lll:
    """An LLL plan for bases of one shape n x m (1 <= m <= n).

    Args:
        delta: Lovasz parameter in [0.25, 1).
        method: "auto", "sequential", "all-swap" or "block".
        transform: also compute T.
        block: block size of the block method (0: automatic).
        presort: order the vectors by length first (a permutation, included in T).
        lattice_check: float32 outputs checked (and repaired) against the input lattice.
        max_sweeps: safety bound (0: automatic).
        backend: None follows the arrays.
    """

    def __init__(self, n, m, *, delta=0.75, method="auto", transform=True, block=0, presort=True,
                 lattice_check=True, max_sweeps=0, backend=None):
        self.n, self.m = int(n), int(m)
        self.transform = bool(transform)
        args = (self.n, self.m, float(delta), method, self.transform, int(block), bool(presort),
                bool(lattice_check), int(max_sweeps))
        make = lambda b: _core.Lll(*args, b)  # noqa: E731
        ref = make("cpu" if backend is None else _core.backend_name(backend))
        self.method = ref.method
        self._plans = _arrays.PlanCache(make, backend)

    def __call__(self, basis, *, transform=None, status=None, stream=None):
        """Reduces `basis` (B, n, m) in place; returns (basis, T or None, status)."""
        plan, backend = self._plans.for_array(basis, "basis")
        _arrays.require_same_backend({"transform": transform, "status": status}, backend)
        b = basis.shape[0]
        if self.transform and transform is None:
            t = _arrays.empty(basis, "basis", (b, self.m, self.m), "int64")
            transform = t.transpose(0, 2, 1) if _arrays.kind(basis, "basis") != "torch" else \
                t.transpose(1, 2)
        if status is None:
            status = _arrays.empty(basis, "basis", (b,), "int32")
        plan.run(basis, transform, status, _arrays.stream_handle(stream, basis))
        return basis, transform, status


def lll(basis, *, delta=0.75, method="sequential", presort=True):
    """One basis (n, m) on the CPU, any layout (copied): returns (B' (n, m) float64, T (m, m)
    int64, status name)."""
    b = np.array(basis, dtype=np.float64, order="F", copy=True)
    if b.ndim != 2:
        raise ValueError(f"basis: must have shape (n, m), got {b.shape}")
    n, m = b.shape
    batch = b.reshape(n, m, order="F")[None, :, :]
    reduced, t, status = Lll(n, m, delta=delta, method=method, presort=presort,
                             backend="cpu")(batch)
    return reduced[0], t[0], STATUS[int(status[0])]


def check(basis, *, delta=0.75, eps_mu=1e-6, eps_delta=1e-9, condition_number=True):
    """Independent quality check of a host basis (n, m) column-major (long double Gram-Schmidt):
    a dict with reduced, size_reduced, lovasz, max_mu, lovasz_ratio, orthogonality_defect,
    hermite_factor, condition_number, message. Use eps_mu=0.01, eps_delta=1e-3 for float32."""
    return dict(_core.check_lll(basis, float(delta), float(eps_mu), float(eps_delta),
                                bool(condition_number)))

"""MIMO detectors, as plans built once and called many times.

Model: y = H x + n with n ~ CN(0, N0 I), H nr x nt, x nt unit-energy symbols of one modulation.

Layouts (the library's, docs/design.md):
  h          (C, nr, nt) complex64, column-major per matrix: h[c, i, j] = H_ij with stride 1
             along i (``mimorx.column_major(h)`` makes such a copy of a row-major array).
  y          (V, nr) complex64, C-contiguous; vector v uses channel v // (V // C).
  noise_var  N0: a Python float, or float32 of shape (1,) or (V,).
  bits       (V, nt, m) uint8 0/1, bit k of stream t's symbol in TS 38.211 order (b0 first).
  llrs       (V, nt, m) float32 max-log LLRs, log P(b=0)/P(b=1): positive means bit 0.

NumPy arrays run on the CPU backend, CUDA arrays (PyTorch, CuPy) on their GPU, on the caller's
current stream (or `stream=`). A detector object keeps one plan per backend it has seen, unless
built with backend="cpu"/"cuda:N", which pins it.

Detector names are the CLI's: zf, mmse, ml, psd[:LANES], sts[:CLIP], nway:N, kbest:K, trellis,
lr-zf, lr-mmse, lr-mmse-sic (detector_names() lists this build's). psd and lr-* give hard bits only.
"""

from . import _arrays, _core

__all__ = [
    "Detector", "ZF", "MMSE", "ML", "PSD", "Nway", "KBest", "Trellis", "LrAided",
    "detector_names",
]


def detector_names():
    """The detector names this build offers ("nway:N", "kbest:K" take a parameter; "sts[:CLIP]"
    may)."""
    return list(_core.detector_names())


class Detector:
    """A MIMO detector plan.

    Args:
        name: detector name, e.g. "mmse", "kbest:16", "nway:4" (see detector_names()).
        nt, nr: transmit streams and receive antennas.
        mod: "bpsk", "qpsk", "16qam", "64qam" or "256qam".
        soft: compute max-log LLRs (calls return LLRs) instead of hard bits.
        backend: None (follow the arrays), "cpu", "cuda" or "cuda:N" (pinned).
        psd_node_cap: psd's node budget per vector (0: exact ML whatever it costs).
        check_values: scan device inputs for NaN/Inf (a kernel and a synchronisation); turn off
            for asynchronous calls on inputs known to be finite.

    Raises ValueError for bad shapes or names, NotImplementedError for what this build or
    detector cannot do (e.g. soft output from psd, CUDA without a GPU).
    """

    def __init__(self, name, nt, nr, mod, *, soft=False, backend=None, psd_node_cap=1_000_000,
                 check_values=True):
        self.name, self.nt, self.nr = name, int(nt), int(nr)
        self.mod = _core.modulation_name(mod)
        self.bits_per_symbol = _core.modulation_bits(mod)
        self.soft = bool(soft)

        def make(b):
            return _core.Detector(name, self.nt, self.nr, mod, b, self.soft, int(psd_node_cap),
                                  bool(check_values))

        # Built once on the CPU so that a bad configuration fails here, not at the first call.
        if backend is None:
            make("cpu")
        self._plans = _arrays.PlanCache(make, backend)

    def __call__(self, h, y, noise_var, *, bits=None, llrs=None, stream=None):
        """Detect every received vector.

        Returns the LLRs (V, nt, m) float32 when soft, else the hard bits (V, nt, m) uint8; the
        out arrays `bits`/`llrs` are written and returned when given (with soft=True, `bits`
        also receives the decisions where the detector gives them).
        """
        plan, backend = self._plans.for_array(y, "y")
        _arrays.require_same_backend({"h": h, "noise_var": noise_var, "bits": bits,
                                      "llrs": llrs}, backend)
        if len(y.shape) != 2:
            raise ValueError(f"y: must have shape (V, nr), got {tuple(y.shape)}")
        shape = (y.shape[0], self.nt, self.bits_per_symbol)
        if self.soft and llrs is None:
            llrs = _arrays.empty(y, "y", shape, "float32")
        if not self.soft and llrs is not None:
            raise ValueError("llrs: this detector was built with soft=False")
        if bits is None:  # some detectors write their decisions with the LLRs
            bits = _arrays.empty(y, "y", shape, "uint8")
        plan.run(h, y, _arrays.noise_array(noise_var, y), bits, llrs,
                 _arrays.stream_handle(stream, y))
        return llrs if self.soft else bits

    def __repr__(self):
        kind = "soft" if self.soft else "hard"
        return f"mimorx.detect.Detector({self.name!r}, {self.nt}x{self.nr} {self.mod}, {kind})"


def ZF(nt, nr, mod, **kw):
    """Zero-forcing detector (hard or max-log soft output). See Detector."""
    return Detector("zf", nt, nr, mod, **kw)


def MMSE(nt, nr, mod, **kw):
    """Linear MMSE detector, unbiased, max-log soft output per stream. See Detector."""
    return Detector("mmse", nt, nr, mod, **kw)


def ML(nt, nr, mod, **kw):
    """Exhaustive maximum-likelihood detector, exact max-log LLRs. See Detector."""
    return Detector("ml", nt, nr, mod, **kw)


def PSD(nt, nr, mod, lanes=None, **kw):
    """Parallel sphere decoder (exact ML hard decisions). See Detector."""
    return Detector("psd" if lanes is None else f"psd:{int(lanes)}", nt, nr, mod, **kw)


def Nway(nt, nr, mod, n=1, **kw):
    """N-way parallel SSFE detector, soft output, N in 1..nt. See Detector."""
    return Detector(f"nway:{int(n)}", nt, nr, mod, **kw)


def KBest(nt, nr, mod, k=16, **kw):
    """Soft-output K-best detector (real-valued tree, K paths per level). See Detector."""
    return Detector(f"kbest:{int(k)}", nt, nr, mod, **kw)


def Trellis(nt, nr, mod, **kw):
    """Trellis-based soft-output detector. See Detector."""
    return Detector("trellis", nt, nr, mod, **kw)


def LrAided(nt, nr, mod, kind="mmse", **kw):
    """Lattice-reduction-aided detector, kind "zf", "mmse" or "mmse-sic" (hard bits). See
    Detector."""
    return Detector(f"lr-{kind}", nt, nr, mod, **kw)

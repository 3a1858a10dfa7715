"""Philox-driven channels and noise, bit-identical on the CPU and the GPU for the same seed.

Fading: i.i.d. Rayleigh (entries CN(0, 1)) or Kronecker-correlated (exponential rho at each
end); channel c of a call with first_channel = f is channel f + c of the seed's sequence.
Noise: y = H x + n, n ~ CN(0, N0 I), vector v drawn at absolute index first_vector + v.
Layouts as in mimorx.detect: h (C, nr, nt) column-major per matrix, x (V, nt), y (V, nr).
SNR: Es = 1 per transmit antenna, N0 per receive antenna (noise_variance(snr_db)).
"""

import math

import numpy as np

from . import _arrays, _core

__all__ = [
    "Fading", "rayleigh", "apply", "awgn", "uniform", "gaussian", "noise_variance",
    "noise_variance_from_ebn0",
]


def noise_variance(snr_db):
    """N0 = 10^(-snr_db/10) for Es/N0 = snr_db (Es = 1), as float32 arithmetic does it."""
    return float(np.float32(math.pow(10.0, -snr_db / 10.0)))


def noise_variance_from_ebn0(ebn0_db, bits_per_symbol, code_rate=1.0):
    """N0 for Eb/N0 = ebn0_db: Es/N0 = Eb/N0 + 10 log10(bits_per_symbol * code_rate)."""
    return noise_variance(ebn0_db + 10.0 * math.log10(bits_per_symbol * code_rate))


def _column_major_empty(count, nr, nt):
    return np.empty((count, nt, nr), dtype=np.complex64).transpose(0, 2, 1)


class Fading:
    """Flat-fading nr x nt channels. backend: None follows the `out` array (NumPy when none)."""

    def __init__(self, nr, nt, *, rho_tx=0.0, rho_rx=0.0, backend=None):
        self.nr, self.nt = int(nr), int(nt)
        self._plans = _arrays.PlanCache(
            lambda b: _core.Fading(self.nr, self.nt, float(rho_tx), float(rho_rx), b), backend)
        if backend is None:
            self._plans.for_array(np.empty(0), "h")  # validates the configuration now

    def __call__(self, count=None, seed=1, *, first_channel=0, out=None, stream=None):
        """Channels first_channel .. first_channel + count - 1 of `seed`, as (count, nr, nt)
        complex64 column-major per matrix (written into `out` when given)."""
        if out is None:
            if count is None:
                raise ValueError("count: give the number of channels or an out array")
            out = _column_major_empty(int(count), self.nr, self.nt)
        plan, _ = self._plans.for_array(out, "out")
        plan.generate(int(seed), int(first_channel), out, _arrays.stream_handle(stream, out))
        return out


def rayleigh(count, nr, nt, seed=1, *, first_channel=0):
    """i.i.d. Rayleigh channels on the CPU: Fading(nr, nt)(count, seed)."""
    return Fading(nr, nt)(count, seed, first_channel=first_channel)


def apply(h, x, noise_var, seed, *, first_vector=0, out=None, stream=None):
    """y = H x + n for every vector: h (C, nr, nt), x (V, nt) complex64, V a multiple of C."""
    backend = _arrays.backend_of(x, "x")
    _arrays.require_same_backend({"h": h, "noise_var": noise_var, "out": out}, backend)
    if out is None:
        out = _arrays.empty(x, "x", (x.shape[0], h.shape[1]), "complex64")
    _core.apply_channel(backend, h, x, _arrays.noise_array_nonneg(noise_var, x), int(seed),
                        int(first_vector), out, _arrays.stream_handle(stream, x))
    return out


def awgn(x, noise_var, seed, *, first=0, out=None, stream=None):
    """y = x + n, n ~ CN(0, N0) per element of x (n,) complex64."""
    backend = _arrays.backend_of(x, "x")
    _arrays.require_same_backend({"noise_var": noise_var, "out": out}, backend)
    if out is None:
        out = _arrays.empty(x, "x", tuple(x.shape), "complex64")
    _core.add_awgn(backend, x, _arrays.noise_array_nonneg(noise_var, x), int(seed), int(first),
                   out, _arrays.stream_handle(stream, x))
    return out


def _fill(gaussian, count, seed, stream_id, offset, out):
    if out is None:
        out = np.empty(int(count), dtype=np.float32)
    _core.fill_random(gaussian, _arrays.backend_of(out, "out"), int(seed), int(stream_id), out,
                      int(offset))
    return out


def uniform(count=None, seed=1, stream_id=0, *, offset=0, out=None):
    """Elements offset .. offset + count - 1 of a Philox uniform stream, float32 in (0, 1)."""
    return _fill(False, count, seed, stream_id, offset, out)


def gaussian(count=None, seed=1, stream_id=0, *, offset=0, out=None):
    """Elements of a Philox standard normal stream (Box-Muller), float32."""
    return _fill(True, count, seed, stream_id, offset, out)

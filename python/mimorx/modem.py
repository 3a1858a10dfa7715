"""QAM mapping (TS 38.211 §5.1) and demapping (hard or max-log LLRs).

bits: uint8 0/1, symbol s carries bits [s*m, (s+1)*m) (b0 first); symbols: complex64, unit
average energy. LLRs: float32, log P(b=0)/P(b=1) (positive means bit 0), for y = x + n with
n ~ CN(0, N0). Arrays are flat (1-D): NumPy on the CPU, CUDA arrays on their GPU.
"""

from . import _arrays, _core

__all__ = ["Mapper", "Demapper", "bits_per_symbol", "qam_map", "demap"]


def bits_per_symbol(mod):
    """m of a modulation name ("qpsk" -> 2, "16qam" -> 4, ...)."""
    return _core.modulation_bits(mod)


class Mapper:
    """bits (n*m,) uint8 -> symbols (n,) complex64. backend: None follows the arrays."""

    def __init__(self, mod, *, backend=None):
        self.mod = _core.modulation_name(mod)
        self.bits_per_symbol = _core.modulation_bits(mod)
        self._plans = _arrays.PlanCache(lambda b: _core.Mapper(mod, b), backend)

    def __call__(self, bits, *, out=None, stream=None):
        plan, backend = self._plans.for_array(bits, "bits")
        _arrays.require_same_backend({"out": out}, backend)
        n = bits.shape[0] // self.bits_per_symbol if len(bits.shape) == 1 else -1
        if len(bits.shape) != 1 or bits.shape[0] % self.bits_per_symbol:
            raise ValueError(f"bits: must be one-dimensional with a multiple of "
                             f"{self.bits_per_symbol} bits, got shape {tuple(bits.shape)}")
        if out is None:
            out = _arrays.empty(bits, "bits", (n,), "complex64")
        plan.run(bits, out, _arrays.stream_handle(stream, bits))
        return out


class Demapper:
    """symbols (n,) complex64 -> hard bits (n*m,) uint8, or (soft=True) max-log LLRs (n*m,)
    float32 given N0 (a float, or float32 (1,) or (n,))."""

    def __init__(self, mod, *, soft=False, backend=None):
        self.mod = _core.modulation_name(mod)
        self.bits_per_symbol = _core.modulation_bits(mod)
        self.soft = bool(soft)
        self._plans = _arrays.PlanCache(lambda b: _core.Demapper(mod, self.soft, b), backend)

    def __call__(self, symbols, noise_var=None, *, bits=None, llrs=None, stream=None):
        plan, backend = self._plans.for_array(symbols, "symbols")
        _arrays.require_same_backend({"noise_var": noise_var, "bits": bits, "llrs": llrs}, backend)
        if len(symbols.shape) != 1:
            raise ValueError(f"symbols: must be one-dimensional, got shape {tuple(symbols.shape)}")
        size = symbols.shape[0] * self.bits_per_symbol
        if self.soft:
            if noise_var is None:
                raise ValueError("noise_var: soft demapping needs N0")
            if llrs is None:
                llrs = _arrays.empty(symbols, "symbols", (size,), "float32")
        elif bits is None:
            bits = _arrays.empty(symbols, "symbols", (size,), "uint8")
        nv = None if noise_var is None else _arrays.noise_array(noise_var, symbols)
        plan.run(symbols, nv, bits, llrs, _arrays.stream_handle(stream, symbols))
        return llrs if self.soft else bits


def qam_map(bits, mod):
    """One-shot Mapper(mod)(bits)."""
    return Mapper(mod)(bits)


def demap(symbols, mod, noise_var=None, soft=False):
    """One-shot Demapper(mod, soft=soft)(symbols, noise_var)."""
    return Demapper(mod, soft=soft)(symbols, noise_var)

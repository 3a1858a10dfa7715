"""mimorx: MIMO receiver processing on the CPU and on CUDA GPUs.

Modules: detect (MIMO detectors), modem (QAM mapping, max-log demapping), channel (Philox
fading channels and noise), ldpc (5G NR LDPC and the transport chain), lattice (LLL), sim (the
link simulator), sionna (drop-in blocks for Sionna users). docs/python.md is the reference.

Arrays: NumPy arrays run on the CPU backend, CUDA arrays (PyTorch, CuPy, any DLPack producer)
on the GPU they live on, without copies. LLRs are log P(b=0)/P(b=1): positive means bit 0
(mimorx.sionna converts to Sionna's log P(1)/P(0)).
"""

from . import _core
from ._arrays import column_major

__version__ = _core.version
built_with_cuda = _core.built_with_cuda


def cuda_available():
    """True when this build has the CUDA backend and a GPU is present."""
    return _core.cuda_available()


def cuda_devices():
    """The CUDA devices mimorx sees (a list of dicts; empty without CUDA or GPU)."""
    return _core.cuda_devices()


from . import channel, detect, lattice, ldpc, modem, sim  # noqa: E402

__all__ = [
    "channel", "column_major", "cuda_available", "cuda_devices", "detect", "lattice", "ldpc",
    "modem", "sim", "built_with_cuda",
]

"""5G NR LDPC (TS 38.212): encoder, decoders, rate matching, CRCs and the transport chain.

Bits are uint8 0/1; LLRs float32 (or int8 for the integer decoder), log P(b=0)/P(b=1):
positive means bit 0. Batched arrays are C-contiguous (num, length): NumPy on the CPU backend,
CUDA arrays (PyTorch, CuPy) on their GPU, on the caller's current stream or `stream=`.
"""

import numpy as np

from . import _arrays, _core

__all__ = [
    "Encoder", "Decoder", "Transport", "TransportBatch", "lifting_sizes", "segment",
    "select_base_graph", "selected_positions", "rate_match", "rate_recover",
    "circular_buffer_size", "rv_start", "code_block_e", "crc", "crc_attach", "crc_check",
    "crc_length", "FILLER_LLR",
]

FILLER_LLR = _core.filler_llr


def lifting_sizes():
    """The 51 lifting sizes Z of TS 38.212 Table 5.3.2-1, ascending."""
    return list(_core.lifting_sizes())


def select_base_graph(tbs, code_rate):
    """1 or 2 by §7.2.2 for a transport block of `tbs` bits at rate `code_rate`."""
    return _core.select_base_graph(int(tbs), float(code_rate))


def segment(tbs, bg):
    """Code-block segmentation (§5.2.2) of a transport block: a dict with c (code blocks),
    k_prime, zc, k, f (filler bits), l_tb, l_cb, ..."""
    return dict(_core.segment(int(tbs), int(bg)))


class Encoder:
    """LDPC encoder for base graph `bg` (1 or 2) lifted by `z`: info (num, k) uint8 ->
    codewords (num, n) uint8, the whole mother codeword (68Z or 52Z bits, the first k the info
    bits, the 2Z punctured columns included). backend: None follows the arrays."""

    def __init__(self, bg, z, *, backend=None):
        self.bg, self.z = int(bg), int(z)
        make = lambda b: _core.LdpcEncoder(self.bg, self.z, b)  # noqa: E731
        first = make(_core.backend_name(backend) if backend is not None else "cpu")
        self.k, self.n = first.k, first.n
        self._plans = _arrays.PlanCache(make, backend)

    def __call__(self, info, *, out=None, stream=None):
        plan, backend = self._plans.for_array(info, "info")
        _arrays.require_same_backend({"out": out}, backend)
        if out is None:
            out = _arrays.empty(info, "info", (info.shape[0], self.n), "uint8")
        plan.encode(info, out, _arrays.stream_handle(stream, info))
        return out


class Decoder:
    """Layered min-sum LDPC decoder (or flooding sum-product, CPU only).

    Args:
        bg, z: base graph and lifting size.
        algo: "nms" (normalized min-sum, alpha), "oms" (offset min-sum, beta) or "bp".
        max_iters: iterations at most; early_termination stops a word at a zero syndrome.
        alpha_last: NMS ramps alpha to this value over the iterations (0: constant alpha).
        int8: the 8-bit integer decoder (6-bit channel LLRs; nms and oms); it takes float32 or
            pre-quantised int8 LLRs (quantize()).
        half: the half-precision decoder (nms and oms; IEEE half pairs, two codewords per
            thread on CUDA, its bit-exact model on the CPU; docs/ldpc_half.md).
        rows: base rows decoded (4..all, 0 = all): rates above the mother rate.
        layer_order: "extension-first" or "natural".
        check_input: reject NaN/Inf LLRs (on CUDA a synchronisation).
        backend: None follows the arrays.

    Calls take llrs (num, n) of the whole mother codeword (the 2Z punctured columns carry 0).
    """

    def __init__(self, bg, z, *, algo="nms", max_iters=10, alpha=0.75, alpha_last=0.0, beta=0.5,
                 early_termination=True, int8=False, half=False, rows=0,
                 layer_order="extension-first", check_input=True, backend=None):
        args = (int(bg), int(z), algo, int(max_iters), float(alpha), float(alpha_last),
                float(beta), bool(early_termination), bool(int8), int(rows), layer_order,
                bool(check_input))
        make = lambda b: _core.LdpcDecoder(*args, b, bool(half))  # noqa: E731
        self._cpu = make("cpu") if backend is None else None
        self._plans = _arrays.PlanCache(make, backend)
        ref = self._cpu if self._cpu is not None else next(iter(self._plans._plans.values()))
        self.k, self.n, self.rows = ref.k, ref.n, ref.rows

    def __call__(self, llrs, *, out=None, iterations=None, stream=None):
        """Information bits (num, k) uint8 (k = 22Z or 10Z, filler positions included)."""
        return self._run(llrs, out, iterations, None, False, stream)[0]

    def decode_codeword(self, llrs, *, out=None, iterations=None, syndrome_ok=None,
                        stream=None):
        """Every decoded bit (num, n) uint8, and syndrome_ok (num,) uint8: 1 when the decision
        satisfies the decoded check rows."""
        return self._run(llrs, out, iterations, syndrome_ok, True, stream)

    def _run(self, llrs, out, iterations, syndrome_ok, codeword, stream):
        plan, backend = self._plans.for_array(llrs, "llrs")
        _arrays.require_same_backend({"out": out, "iterations": iterations,
                                      "syndrome_ok": syndrome_ok}, backend)
        num = llrs.shape[0]
        if out is None:
            out = _arrays.empty(llrs, "llrs", (num, self.n if codeword else self.k), "uint8")
        if codeword and syndrome_ok is None:
            syndrome_ok = _arrays.empty(llrs, "llrs", (num,), "uint8")
        plan.decode(llrs, out, iterations, syndrome_ok, codeword,
                    _arrays.stream_handle(stream, llrs))
        return out, syndrome_ok

    def quantize(self, llrs):
        """The integer decoder's channel quantiser on host LLRs: int8 of the same shape."""
        out = np.empty(llrs.shape, dtype=np.int8)
        (self._cpu or next(iter(self._plans._plans.values()))).quantize(llrs, out)
        return out


def _transport_config(tbs, rate, mod, layers, rv, lbrm, tbs_lbrm, g, algo, max_iters, alpha,
                      alpha_last, beta, int8, early_termination):
    return _core.transport_config(int(tbs), float(rate), mod, int(layers), int(rv), bool(lbrm),
                                  int(tbs_lbrm), int(g), algo, int(max_iters), float(alpha),
                                  float(alpha_last), float(beta), bool(int8),
                                  bool(early_termination))


_TRANSPORT_DOC = """
    Args:
        tbs: transport block size A (information bits).
        rate: target code rate R (selects the base graph, and G when g = 0).
        mod: modulation (sets Qm of the bit interleaver and the granularity of G).
        layers: MIMO layers; rv: default redundancy version (0..3).
        lbrm, tbs_lbrm: limited-buffer rate matching (TBS_LBRM; 0 = tbs).
        g: coded bits G (0: the smallest multiple of layers * Qm >= B' / rate).
        algo, max_iters, alpha, alpha_last, beta, int8, early_termination: the decoder (Decoder).
"""


class Transport:
    """The TS 38.212 chain for one transport block on the host: TB CRC, segmentation, CB CRCs,
    LDPC, rate matching and interleaving; and back, with HARQ soft combining.
    """ + _TRANSPORT_DOC

    def __init__(self, tbs, rate=0.5, mod="qpsk", *, layers=1, rv=0, lbrm=False, tbs_lbrm=0,
                 g=0, algo="nms", max_iters=10, alpha=0.75, alpha_last=0.0, beta=0.5, int8=False,
                 early_termination=True):
        self._plan = _core.Transport(_transport_config(
            tbs, rate, mod, layers, rv, lbrm, tbs_lbrm, g, algo, max_iters, alpha, alpha_last,
            beta, int8, early_termination))
        self.tbs, self.g, self.n = self._plan.tbs, self._plan.g, self._plan.n
        self.harq_size = self._plan.harq_size
        self.e = list(self._plan.e)
        self.ncb = self._plan.ncb
        self.segmentation = dict(self._plan.segmentation)

    def decoded_rows(self, rv=-1):
        """Base rows one transmission with redundancy version rv reaches."""
        return self._plan.decoded_rows(int(rv))

    def encode(self, tb, rv=-1):
        """tb (tbs,) uint8 -> coded bits (g,) uint8; rv < 0 uses the configured one."""
        out = np.empty(self.g, dtype=np.uint8)
        self._plan.encode(tb, out, int(rv))
        return out

    def new_harq(self):
        """A zeroed HARQ buffer (harq_size,) float32."""
        return np.zeros(self.harq_size, dtype=np.float32)

    def accumulate(self, llrs, harq, rv=-1):
        """Soft-combines one transmission's (g,) LLRs into `harq` (in place)."""
        self._plan.accumulate(llrs, harq, int(rv))
        return harq

    def decode(self, llrs, rv=-1):
        """One transmission: (tb bits (tbs,) uint8, result dict with tb_crc_ok, cb_crc_ok,
        iterations)."""
        tb = np.empty(self.tbs, dtype=np.uint8)
        return tb, dict(self._plan.decode(llrs, tb, int(rv), False))

    def decode_harq(self, harq):
        """Decodes a HARQ buffer: (tb bits, result dict) as decode()."""
        tb = np.empty(self.tbs, dtype=np.uint8)
        return tb, dict(self._plan.decode(harq, tb, -1, True))


class TransportBatch:
    """The transport chain for batches of transport blocks in the backend's memory, nothing
    crossing to the host: tb (num, tbs) uint8, coded/llrs (num, g), harq (num, harq_size).
    max_blocks: blocks per call at most; check_llrs: reject NaN/Inf LLRs (a synchronisation on
    CUDA). backend: None follows the arrays.
    """ + _TRANSPORT_DOC

    def __init__(self, tbs, rate=0.5, mod="qpsk", *, max_blocks=1, check_llrs=True,
                 backend=None, layers=1, rv=0, lbrm=False, tbs_lbrm=0, g=0, algo="nms",
                 max_iters=10, alpha=0.75, alpha_last=0.0, beta=0.5, int8=False,
                 early_termination=True):
        cfg = _transport_config(tbs, rate, mod, layers, rv, lbrm, tbs_lbrm, g, algo, max_iters,
                                alpha, alpha_last, beta, int8, early_termination)
        make = lambda b: _core.TransportBatch(cfg, b, int(max_blocks), bool(check_llrs))  # noqa: E731
        ref = make("cpu" if backend is None else _core.backend_name(backend))
        self._plans = _arrays.PlanCache(make, backend)
        self.tbs, self.g, self.n = ref.tbs, ref.g, ref.n
        self.harq_size, self.code_blocks = ref.harq_size, ref.code_blocks

    def encode(self, tb, rv=-1, *, out=None, stream=None):
        plan, backend = self._plans.for_array(tb, "tb")
        _arrays.require_same_backend({"out": out}, backend)
        if out is None:
            out = _arrays.empty(tb, "tb", (tb.shape[0], self.g), "uint8")
        plan.encode(tb, out, int(rv), _arrays.stream_handle(stream, tb))
        return out

    def accumulate(self, llrs, harq, rv=-1, *, stream=None):
        plan, backend = self._plans.for_array(llrs, "llrs")
        _arrays.require_same_backend({"harq": harq}, backend)
        plan.accumulate(llrs, harq, int(rv), _arrays.stream_handle(stream, llrs))
        return harq

    def decode(self, llrs, rv=-1, *, harq=False, stream=None):
        """(tb (num, tbs) uint8, tb_crc_ok (num,) uint8, cb_crc_ok (num, C) uint8, iterations
        (num, C) int32). harq=True: `llrs` are HARQ buffers (num, harq_size)."""
        plan, _ = self._plans.for_array(llrs, "llrs")
        num = llrs.shape[0]
        tb = _arrays.empty(llrs, "llrs", (num, self.tbs), "uint8")
        ok = _arrays.empty(llrs, "llrs", (num,), "uint8")
        cb = _arrays.empty(llrs, "llrs", (num, self.code_blocks), "uint8")
        it = _arrays.empty(llrs, "llrs", (num, self.code_blocks), "int32")
        plan.decode(llrs, tb, ok, cb, it, int(rv), bool(harq), _arrays.stream_handle(stream, llrs))
        return tb, ok, cb, it


def circular_buffer_size(bg, zc, c=1, lbrm=False, tbs_lbrm=0):
    """Ncb (§5.4.2.1)."""
    return _core.circular_buffer_size(int(bg), int(zc), int(c), bool(lbrm), int(tbs_lbrm))


def rv_start(bg, zc, ncb, rv):
    """k0 of Table 5.4.2.1-2."""
    return _core.rv_start(int(bg), int(zc), int(ncb), int(rv))


def code_block_e(g, c, layers, qm):
    """E of every code block (§5.4.2.1)."""
    return list(_core.code_block_e(int(g), int(c), int(layers), int(qm)))


def selected_positions(bg, zc, k_prime, ncb, e, qm=1, rv=0):
    """Circular-buffer positions (into d, the codeword without its first 2Zc bits) of the E
    selected bits, in selection order."""
    return np.asarray(_core.selected_positions(int(bg), int(zc), int(k_prime), int(ncb), int(e),
                                               int(qm), int(rv)), dtype=np.int64)


def rate_match(codeword, bg, zc, k_prime, ncb, e, qm=1, rv=0):
    """Mother codeword (68Zc or 52Zc,) uint8 -> the E transmitted bits after interleaving."""
    out = np.empty(int(e), dtype=np.uint8)
    _core.rate_match(int(bg), int(zc), int(k_prime), int(ncb), int(e), int(qm), int(rv),
                     codeword, out)
    return out


def rate_recover(llrs, bg, zc, k_prime, ncb, qm=1, rv=0, *, mother=None):
    """E received LLRs -> added into the mother-codeword buffer (a new zeroed one by default),
    filler positions set to FILLER_LLR."""
    if mother is None:
        mother = np.zeros((68 if int(bg) == 1 else 52) * int(zc), dtype=np.float32)
    _core.rate_recover(int(bg), int(zc), int(k_prime), int(ncb), int(llrs.shape[0]), int(qm),
                       int(rv), llrs, mother)
    return mother


def crc_length(crc_type):
    """L of "crc24a", "crc24b", "crc24c", "crc16", "crc11" or "crc6"."""
    return _core.crc_length(crc_type)


def crc(bits, crc_type):
    """The CRC remainder of `bits` (uint8 0/1) as an int (D^(L-1) coefficient in bit L-1)."""
    return _core.crc_compute(crc_type, bits)


def crc_attach(bits, crc_type):
    """bits followed by their L parity bits (uint8)."""
    return np.asarray(_core.crc_attach(crc_type, bits), dtype=np.uint8)


def crc_check(bits_with_crc, crc_type):
    """True when payload + parity has a zero remainder."""
    return bool(_core.crc_check(crc_type, bits_with_crc))

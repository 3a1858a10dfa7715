"""Blocks with the call signatures of Sionna 2.x's (sionna.phy), computed by mimorx.

    from mimorx.sionna import LinearDetector, KBestDetector, MaximumLikelihoodDetector
    from mimorx.sionna import LDPC5GEncoder, LDPC5GDecoder

replace the blocks of the same names in sionna.phy.mimo and sionna.phy.fec.ldpc. This module
imports without Sionna and without PyTorch; the blocks need PyTorch when called. Inputs and
outputs are torch tensors (CUDA tensors run on their GPU on the current torch stream, CPU
tensors on the CPU backend), with Sionna's shapes, dtypes and LLR sign: log P(1)/P(0), i.e.
the negative of mimorx's. docs/python.md, "mimorx.sionna", lists what differs from Sionna.
"""

import numpy as np

from . import _arrays, _core, detect, ldpc, modem

__all__ = [
    "LinearDetector", "KBestDetector", "MaximumLikelihoodDetector", "LDPC5GEncoder",
    "LDPC5GDecoder", "Mapper",
]

_MODS = {1: "bpsk", 2: "qpsk", 4: "16qam", 6: "64qam", 8: "256qam"}


def _torch():
    import torch

    return torch


def _qam(constellation_type, num_bits_per_symbol, constellation):
    if constellation is not None:
        raise NotImplementedError("constellation: mimorx blocks take constellation_type='qam' and "
                                  "num_bits_per_symbol (TS 38.211 QAM), not a Constellation object")
    if constellation_type not in (None, "qam"):
        raise NotImplementedError(f"constellation_type: {constellation_type!r}; mimorx has 'qam'")
    if num_bits_per_symbol not in (2, 4, 6, 8):
        raise ValueError(f"num_bits_per_symbol: {num_bits_per_symbol}; mimorx has 2, 4, 6, 8")
    return _MODS[num_bits_per_symbol]


def _noise_from_s(s, nr):
    """N0 per vector from the noise covariance s [..., M, M]: mimorx's detectors take white
    noise, so s must be N0 I (checked on the diagonal's mean; off-diagonal terms are ignored)."""
    torch = _torch()
    diag = torch.diagonal(s, dim1=-2, dim2=-1).real
    return diag.mean(dim=-1).reshape(-1).to(torch.float32).contiguous()


class _Detector:
    """Shared call path: y [..., M], h [..., M, S], s [..., M, M] -> [..., S, m]."""

    def __init__(self, name, output, num_streams, num_bits_per_symbol, constellation_type,
                 constellation, hard_out, llr_sign=True):
        if output != "bit":
            raise NotImplementedError("output: mimorx blocks give bits or LLRs ('bit'), not "
                                      "symbol logits")
        self._name, self._mod = name, _qam(constellation_type, num_bits_per_symbol, constellation)
        self._m = num_bits_per_symbol
        self._num_streams = num_streams
        self._hard_out = bool(hard_out)
        self._plans = {}

    def _plan(self, nt, nr):
        key = (nt, nr)
        if key not in self._plans:
            self._plans[key] = detect.Detector(self._name, nt, nr, self._mod,
                                               soft=not self._hard_out, check_values=False)
        return self._plans[key]

    def __call__(self, y, h, s):
        torch = _torch()
        batch = tuple(y.shape[:-1])
        nr, nt = h.shape[-2], h.shape[-1]
        if self._num_streams is not None and nt != self._num_streams:
            raise ValueError(f"h: has {nt} streams, the block was built for {self._num_streams}")
        yv = y.detach().reshape(-1, nr).to(torch.complex64).contiguous()
        hv = h.detach().reshape(-1, nr, nt).to(torch.complex64).contiguous()
        if hv.shape[0] != yv.shape[0]:
            raise ValueError("h: needs one channel matrix per received vector (shape [..., M, S] "
                             "with the batch dimensions of y)")
        if self._hard_out:
            # Sionna's h is row-major [..., M, S]; mimorx reads column-major matrices.
            hc = hv.transpose(1, 2).contiguous().transpose(1, 2)
            out = self._plan(nt, nr)(hc, yv, _noise_from_s(s.detach(), nr))
            return out.to(torch.float32).reshape(*batch, nt, self._m)
        # One library call: channel transposition, N0 from the covariance's diagonal, detection
        # and the sign flip to log P(1)/P(0).
        sv = s.detach().to(torch.complex64)
        sv = sv.reshape(-1, nr, nr) if sv.dim() > 2 else sv.reshape(1, nr, nr)
        if sv.shape[0] not in (1, yv.shape[0]):
            raise ValueError("s: needs one covariance matrix per received vector (shape "
                             "[..., M, M] with the batch dimensions of y)")
        v, dev = yv.shape[0], yv.device
        plan = self._plan(nt, nr)._plans.for_array(yv, "y")[0]
        llrs = torch.empty((v, nt, self._m), dtype=torch.float32, device=dev)
        plan.run_sionna(hv, yv, sv, torch.empty((v, nr, nt), dtype=torch.complex64, device=dev),
                        torch.empty((v,), dtype=torch.float32, device=dev),
                        torch.empty((v, nt, self._m), dtype=torch.uint8, device=dev), llrs, -1.0,
                        _arrays.stream_handle(None, yv))
        return llrs.reshape(*batch, nt, self._m)


class LinearDetector(_Detector):
    """sionna.phy.mimo.LinearDetector: equalizer "lmmse" or "zf" with "maxlog" demapping.

    Differences: "app" demapping is refused (NotImplementedError); "mf" and callables are not
    available; s must be N0 I (the mean of its diagonal is used per vector).
    """

    def __init__(self, equalizer, output, demapping_method, constellation_type=None,
                 num_bits_per_symbol=None, constellation=None, hard_out=False, precision=None,
                 device=None, **kwargs):
        names = {"lmmse": "mmse", "zf": "zf"}
        if equalizer not in names:
            raise NotImplementedError(f"equalizer: {equalizer!r}; mimorx has 'lmmse' and 'zf'")
        if demapping_method != "maxlog":
            raise NotImplementedError("demapping_method: mimorx computes max-log LLRs ('maxlog')")
        super().__init__(names[equalizer], output, None, num_bits_per_symbol, constellation_type,
                         constellation, hard_out)


class MaximumLikelihoodDetector(_Detector):
    """sionna.phy.mimo.MaximumLikelihoodDetector with demapping_method="maxlog" (exact max-log
    LLRs over all M^S hypotheses). No prior input; "app" refused (NotImplementedError)."""

    def __init__(self, output, demapping_method, num_streams, constellation_type=None,
                 num_bits_per_symbol=None, constellation=None, hard_out=False, precision=None,
                 device=None, **kwargs):
        if demapping_method != "maxlog":
            raise NotImplementedError("demapping_method: mimorx computes max-log LLRs ('maxlog')")
        super().__init__("ml", output, num_streams, num_bits_per_symbol, constellation_type,
                         constellation, hard_out)

    def __call__(self, y, h, s, prior=None):
        if prior is not None:
            raise NotImplementedError("prior: mimorx's ML detector takes no prior")
        return super().__call__(y, h, s)


class KBestDetector(_Detector):
    """sionna.phy.mimo.KBestDetector (output "bit"): mimorx's K-best searches the real-valued
    tree in natural column order (Sionna sorts columns by norm). A bit without a
    counter-hypothesis in the list takes the metric d' of the best path with that bit's
    coordinate moved to the nearest level with the other value, |LLR| = min(8, |d' - d_best| /
    N0) (Sionna's List2LLRSimple gives its clip constant), so LLRs differ where the list is
    incomplete. use_real_rep and list2llr are ignored."""

    def __init__(self, output, num_streams, k, constellation_type=None, num_bits_per_symbol=None,
                 constellation=None, hard_out=False, use_real_rep=False, list2llr=None,
                 precision=None, device=None, **kwargs):
        super().__init__(f"kbest:{int(k)}", output, num_streams, num_bits_per_symbol,
                         constellation_type, constellation, hard_out)


class Mapper:
    """sionna.phy.mapping.Mapper for QAM: bits [..., n] (float, 0/1) -> symbols [..., n/m]
    complex64, TS 38.211's mapping and unit average energy (Sionna's QAM). return_indices and
    Constellation objects are refused (NotImplementedError)."""

    def __init__(self, constellation_type=None, num_bits_per_symbol=None, constellation=None,
                 return_indices=False, precision=None, device=None, **kwargs):
        if return_indices:
            raise NotImplementedError("return_indices: mimorx's mapper returns symbols only")
        self._m = num_bits_per_symbol
        self._mapper = modem.Mapper(_qam(constellation_type, num_bits_per_symbol, constellation))

    def __call__(self, bits):
        torch = _torch()
        shape = tuple(bits.shape)
        if shape[-1] % self._m:
            raise ValueError(f"bits: last dimension {shape[-1]} is not a multiple of "
                             f"num_bits_per_symbol {self._m}")
        b = bits.detach().reshape(-1).to(torch.float32).contiguous()
        plan = self._mapper._plans.for_array(b, "bits")[0]
        out = torch.empty((b.shape[0] // self._m,), dtype=torch.complex64, device=b.device)
        plan.run_float(b, torch.empty(b.shape, dtype=torch.uint8, device=b.device), out,
                       _arrays.stream_handle(None, b))
        return out.reshape(*shape[:-1], shape[-1] // self._m)


def _lifting(k, bg):
    kb = 22 if bg == 1 else (10 if k > 640 else 9 if k > 560 else 8 if k > 192 else 6)
    for z in _core.lifting_sizes():
        if kb * z >= k:
            return z
    raise ValueError(f"k: {k} is too large for base graph {bg}")


class LDPC5GEncoder:
    """sionna.phy.fec.ldpc.LDPC5GEncoder: k information bits -> n rate-matched bits (RV 0, or
    the list `rv`), interleaved for num_bits_per_symbol when given. Input [..., k] float (or
    any dtype holding 0/1); output [..., n] (or [..., len(rv), n]) in the input's dtype.

    The LDPC encoding runs in mimorx (CPU or the tensor's GPU); rate matching is a gather with
    mimorx's selected positions (ldpc.selected_positions) on the same device.
    """

    def __init__(self, k, n, num_bits_per_symbol=None, bg=None, precision=None, device=None,
                 check_input=True, **kwargs):
        self.k, self.n = int(k), int(n)
        if not 12 <= self.k <= 8448:
            raise ValueError(f"k: {k}; allowed 12..8448")
        rate = self.k / self.n
        if rate > 0.95 or rate < 0.2:
            raise ValueError(f"n: rate k/n = {rate:.3f}; allowed 1/5..0.95")
        if bg is None:
            self.bg = _core.select_base_graph(self.k, rate)
        elif bg in ("bg1", "bg2"):
            self.bg = 1 if bg == "bg1" else 2
        else:
            raise ValueError(f"bg: {bg!r}; use 'bg1', 'bg2' or None")
        self.z = _lifting(self.k, self.bg)
        self.num_bits_per_symbol = num_bits_per_symbol
        self._qm = 1 if num_bits_per_symbol is None else int(num_bits_per_symbol)
        if self.n % self._qm:
            raise ValueError(f"n: {n} is not a multiple of num_bits_per_symbol {self._qm}")
        self._encoder = ldpc.Encoder(self.bg, self.z)
        self.k_ldpc, self.n_ldpc = self._encoder.k, self._encoder.n
        self._ncb = self.n_ldpc - 2 * self.z
        self._check_input = check_input
        self._gathers = {}

    @property
    def coderate(self):
        return self.k / self.n

    def gather(self, rv=0):
        """Mother-codeword index of each of the n output bits (NumPy int64)."""
        if rv not in self._gathers:
            pos = ldpc.selected_positions(self.bg, self.z, self.k, self._ncb, self.n, self._qm, rv)
            cols = self.n // self._qm
            idx = np.empty(self.n, dtype=np.int64)
            for i in range(self._qm):  # f[i + j qm] = e[i cols + j] (§5.4.2.2)
                idx[i::self._qm] = 2 * self.z + pos[i * cols:(i + 1) * cols]
            self._gathers[rv] = idx
        return self._gathers[rv]

    def _index(self, rvs, device):
        """The gather positions of the redundancy versions `rvs` (a tuple), concatenated, as an
        int32 array on `device` (cached)."""
        torch = _torch()
        key = (rvs, str(device))
        cache = self.__dict__.setdefault("_index_cache", {})
        if key not in cache:
            idx = np.concatenate([self.gather(r) for r in rvs]).astype(np.int32)
            cache[key] = torch.as_tensor(idx, device=device)
        return cache[key]

    def __call__(self, bits, rv=None):
        torch = _torch()
        shape = tuple(bits.shape)
        if shape[-1] != self.k:
            raise ValueError(f"bits: last dimension is {shape[-1]}, expected k = {self.k}")
        u = bits.detach().reshape(-1, self.k).to(torch.float32).contiguous()
        rvs = (0,) if rv is None else tuple(int(r) for r in rv)
        num, dev = u.shape[0], u.device
        plan = self._encoder._plans.for_array(u, "bits")[0]
        out = torch.empty((num, len(rvs) * self.n), dtype=torch.float32, device=dev)
        invalid = torch.empty((1,), dtype=torch.int32, device=dev) if self._check_input else None
        # One library call: float bits to the padded info block, encoding, and the rate-matching
        # gather of every redundancy version, back to floats.
        plan.encode_float(u, torch.empty((num, self.k_ldpc), dtype=torch.uint8, device=dev),
                          torch.empty((num, self.n_ldpc), dtype=torch.uint8, device=dev),
                          self._index(rvs, dev), out, invalid, _arrays.stream_handle(None, u))
        if invalid is not None and int(invalid.item()):
            raise ValueError("bits: must hold 0 and 1 only")
        out = out.to(bits.dtype)
        if rv is None:
            return out.reshape(*shape[:-1], self.n)
        return out.reshape(*shape[:-1], len(rvs), self.n)


class LDPC5GDecoder:
    """sionna.phy.fec.ldpc.LDPC5GDecoder: llr_ch [..., n] (log P(1)/P(0)) -> hard-decided info
    bits [..., k] (return_infobits) or codeword bits [..., n], float.

    Algorithm: mimorx's layered min-sum, not Sionna's flooding sum-product: cn_update
    "minsum" -> min-sum (normalisation 1), "offset-minsum" -> offset min-sum (beta 0.5),
    "boxplus-phi"/"boxplus" (Sionna's default) -> normalized min-sum (alpha 0.75); decoding stops
    per word at a zero syndrome; only the base rows the transmission reaches are decoded.
    hard_out=False (soft outputs), return_state, harq_mode and callbacks are refused
    (NotImplementedError); llr_max and cn_schedule are ignored.
    """

    def __init__(self, encoder, cn_update="boxplus-phi", vn_update="sum", cn_schedule="flooding",
                 hard_out=True, return_infobits=True, num_iter=20, llr_max=20.0,
                 v2c_callbacks=None, c2v_callbacks=None, prune_pcm=True, return_state=False,
                 harq_mode=False, precision=None, device=None, **kwargs):
        if not isinstance(encoder, LDPC5GEncoder):
            raise TypeError("encoder: must be a mimorx.sionna.LDPC5GEncoder")
        if not hard_out:
            raise NotImplementedError("hard_out: mimorx's decoders give hard decisions only")
        if return_state or harq_mode or v2c_callbacks or c2v_callbacks:
            raise NotImplementedError("return_state, harq_mode and callbacks are not available")
        algos = {"minsum": ("nms", 1.0), "offset-minsum": ("oms", 0.75),
                 "boxplus-phi": ("nms", 0.75), "boxplus": ("nms", 0.75)}
        if cn_update not in algos:
            raise NotImplementedError(f"cn_update: {cn_update!r}; mimorx has {sorted(algos)}")
        algo, alpha = algos[cn_update]
        self.encoder = encoder
        self._return_infobits = bool(return_infobits)
        gather = encoder.gather(0)
        info_cols = 22 if encoder.bg == 1 else 10
        rows = max(4, int(gather.max()) // encoder.z - info_cols + 1)
        self.rows = min(rows, 46 if encoder.bg == 1 else 42)
        self._decoder = ldpc.Decoder(encoder.bg, encoder.z, algo=algo, alpha=alpha,
                                     max_iters=int(num_iter), rows=self.rows, check_input=False)
        self._n_mother = self._decoder.n  # (info columns + rows) Z: the columns decoded
        self._table_cache = {}

    def _tables(self, device):
        """The gathers that build the mother codeword's LLRs from the n received ones (a round
        per repetition of a position), its base values (0, or the filler LLR on filler bits),
        and the output positions, on `device` (cached)."""
        torch = _torch()
        key = str(device)
        if key not in self._table_cache:
            enc, n = self.encoder, self._n_mother
            gather = enc.gather(0)
            sources = [[] for _ in range(n)]
            for j, p in enumerate(gather):
                sources[p].append(j)
            depth = max(1, max(len(x) for x in sources))
            rounds = np.full((depth, n), -1, dtype=np.int32)
            for p, js in enumerate(sources):
                rounds[:len(js), p] = js
            base = np.zeros(n, dtype=np.float32)
            base[enc.k:enc.k_ldpc] = ldpc.FILLER_LLR
            out_index = (np.arange(enc.k) if self._return_infobits else gather).astype(np.int32)
            self._table_cache[key] = (
                [torch.as_tensor(r, device=device) for r in rounds],
                torch.as_tensor(base, device=device), torch.as_tensor(out_index, device=device))
        return self._table_cache[key]

    def __call__(self, llr_ch, rv=None, msg_v2c=None):
        torch = _torch()
        if rv is not None or msg_v2c is not None:
            raise NotImplementedError("rv and msg_v2c: HARQ and decoder state are not available")
        shape = tuple(llr_ch.shape)
        enc = self.encoder
        if shape[-1] != enc.n:
            raise ValueError(f"llr_ch: last dimension is {shape[-1]}, expected n = {enc.n}")
        llr = llr_ch.detach().reshape(-1, enc.n).to(torch.float32).contiguous()
        num, dev = llr.shape[0], llr.device
        rounds, base, out_index = self._tables(dev)
        plan = self._decoder._plans.for_array(llr, "llr_ch")[0]
        bits_cols = self._decoder.k if self._return_infobits else self._n_mother
        out = torch.empty((num, out_index.shape[0]), dtype=torch.float32, device=dev)
        # One library call: the mother codeword's LLRs (Sionna's sign log P(1)/P(0) flipped to
        # mimorx's), decoding, and the decided bits back to floats.
        plan.decode_float(llr, rounds, base, -1.0,
                          torch.empty((num, self._n_mother), dtype=torch.float32, device=dev),
                          torch.empty((num, bits_cols), dtype=torch.uint8, device=dev),
                          out_index, out, not self._return_infobits,
                          _arrays.stream_handle(None, llr))
        return out.to(llr_ch.dtype).reshape(*shape[:-1], out_index.shape[0])

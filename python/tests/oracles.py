"""NumPy reference implementations the tests compare mimorx against (independent code)."""

import itertools

import numpy as np

M_OF = {"bpsk": 1, "qpsk": 2, "16qam": 4, "64qam": 6, "256qam": 8}


def qam_points(mod):
    """Constellation point of every index (b0 the most significant bit), TS 38.211 §5.1."""
    m = M_OF[mod]
    pts = []
    for idx in range(2 ** m):
        b = [(idx >> (m - 1 - k)) & 1 for k in range(m)]
        if mod == "bpsk":
            pts.append((1 - 2 * b[0]) * (1 + 1j) / np.sqrt(2))
            continue
        # 38.211 tables: nested (1-2b) structure on each axis.
        def axis(bits):
            r = 1
            for j in range(len(bits) - 1, 0, -1):
                r = 2 ** (len(bits) - j) - (1 - 2 * bits[j]) * r
            return (1 - 2 * bits[0]) * r
        norm = {2: 2, 4: 10, 6: 42, 8: 170}[m]
        pts.append((axis(b[0::2]) + 1j * axis(b[1::2])) / np.sqrt(norm))
    return np.array(pts, dtype=np.complex128)


def index_bits(mod):
    m = M_OF[mod]
    return np.array([[(i >> (m - 1 - k)) & 1 for k in range(m)] for i in range(2 ** m)], dtype=np.uint8)


def ml_maxlog(h, y, n0, mod):
    """Exhaustive max-log LLRs (positive = bit 0) and ML bits, per vector (vpc = V / C)."""
    pts, lab = qam_points(mod), index_bits(mod)
    c, nr, nt = h.shape
    v = y.shape[0]
    vpc = v // c
    m = lab.shape[1]
    combos = np.array(list(itertools.product(range(len(pts)), repeat=nt)))
    x = pts[combos]  # (H, nt)
    bits = lab[combos].reshape(len(combos), nt * m)
    llr = np.empty((v, nt * m))
    hard = np.empty((v, nt * m), dtype=np.uint8)
    n0 = np.broadcast_to(np.asarray(n0, dtype=np.float64).reshape(-1), (v,))
    for i in range(v):
        hh = h[i // vpc].astype(np.complex128)
        d = np.sum(np.abs(y[i][None, :] - x @ hh.T) ** 2, axis=1)
        best = np.argmin(d)
        hard[i] = bits[best]
        for b in range(nt * m):
            llr[i, b] = (d[bits[:, b] == 1].min() - d[bits[:, b] == 0].min()) / n0[i]
    return llr.reshape(v, nt, m), hard.reshape(v, nt, m)


def scalar_maxlog(z, nv, mod):
    pts, lab = qam_points(mod), index_bits(mod)
    d = np.abs(z[:, None] - pts[None, :]) ** 2
    out = np.empty((len(z), lab.shape[1]))
    for b in range(lab.shape[1]):
        out[:, b] = (d[:, lab[:, b] == 1].min(1) - d[:, lab[:, b] == 0].min(1)) / nv
    return out


def mmse_maxlog(h, y, n0, mod):
    """Unbiased LMMSE estimates and per-stream max-log LLRs (positive = bit 0)."""
    c, nr, nt = h.shape
    v = y.shape[0]
    vpc = v // c
    m = M_OF[mod]
    out = np.empty((v, nt, m))
    for i in range(v):
        hh = h[i // vpc].astype(np.complex128)
        a = hh.conj().T @ hh + n0 * np.eye(nt)
        w = np.linalg.solve(a, hh.conj().T)
        mu = np.real(np.diag(w @ hh))
        z = (w @ y[i]) / mu
        nv = (1 - mu) / mu
        for t in range(nt):
            out[i, t] = scalar_maxlog(np.array([z[t]]), nv[t], mod)[0]
    return out


CRC_POLY = {  # TS 38.212 §5.1, exponents of g(D) (without D^L).
    "crc24a": (24, [23, 18, 17, 14, 11, 10, 7, 6, 5, 4, 3, 1, 0]),
    "crc24b": (24, [23, 6, 5, 1, 0]),
    "crc24c": (24, [23, 21, 20, 17, 15, 13, 12, 8, 4, 2, 1, 0]),
    "crc16": (16, [12, 5, 0]),
    "crc11": (11, [10, 9, 5, 0]),
    "crc6": (6, [5, 0]),
}


def crc_remainder(bits, kind):
    """Polynomial long division of bits(D) D^L by g(D) over GF(2)."""
    length, exps = CRC_POLY[kind]
    g = np.zeros(length + 1, dtype=np.uint8)
    g[0] = 1  # D^L first (MSB-first order)
    for e in exps:
        g[length - e] = 1
    reg = np.concatenate([np.asarray(bits, dtype=np.uint8), np.zeros(length, dtype=np.uint8)])
    for i in range(len(bits)):
        if reg[i]:
            reg[i:i + length + 1] ^= g
    return reg[-length:]

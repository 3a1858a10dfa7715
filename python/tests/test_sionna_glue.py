"""The one-call paths behind mimorx.sionna's blocks (bits and LLRs as floats, Sionna's sign,
row-major channels, noise covariances), on NumPy arrays and the CPU backend: each equals the
composition of the package's public functions it replaces. The blocks themselves are tested with
PyTorch (and against Sionna) in test_sionna.py."""

import numpy as np
import pytest

from mimorx import _core, channel, detect, ldpc, modem


def test_encode_float_equals_encode_and_gather(rng):
    enc = ldpc.Encoder(2, 52)
    plan = enc._plans.for_array(np.zeros((1, 1), np.uint8), "info")[0]
    num, k_in = 3, enc.k - 17
    u = rng.integers(0, 2, (num, k_in)).astype(np.float32)
    index = rng.integers(0, enc.n, 300).astype(np.int32)
    info = np.empty((num, enc.k), np.uint8)
    cw = np.empty((num, enc.n), np.uint8)
    out = np.empty((num, index.size), np.float32)
    invalid = np.full(1, 7, np.int32)
    plan.encode_float(u, info, cw, index, out, invalid, 0)
    padded = np.zeros((num, enc.k), np.uint8)
    padded[:, :k_in] = u
    expected = enc(padded)
    np.testing.assert_array_equal(cw, expected)
    np.testing.assert_array_equal(out, expected[:, index].astype(np.float32))
    assert invalid[0] == 0
    u[1, 5] = 0.5
    plan.encode_float(u, info, cw, index, out, invalid, 0)
    assert invalid[0] == 1
    with pytest.raises(ValueError, match="index"):
        plan.encode_float(u, info, cw, np.array([enc.n], np.int32), np.empty((num, 1), np.float32),
                          None, 0)


def test_decode_float_equals_scatter_and_decode(rng):
    dec = ldpc.Decoder(2, 52, max_iters=8)
    plan = dec._plans.for_array(np.zeros((1, 1), np.float32), "llrs")[0]
    num, e, n = 4, 700, dec.n
    llr = rng.normal(0, 3, (num, e)).astype(np.float32)
    rounds = [rng.integers(-1, e, n).astype(np.int32) for _ in range(2)]
    base = rng.normal(0, 1, n).astype(np.float32)
    out_index = rng.integers(0, dec.k, 50).astype(np.int32)
    mother = np.empty((num, n), np.float32)
    bits = np.empty((num, dec.k), np.uint8)
    out = np.empty((num, 50), np.float32)
    plan.decode_float(llr, rounds, base, -1.0, mother, bits, out_index, out, False, 0)
    expected = np.tile(base, (num, 1))
    for r in rounds:
        expected = expected + np.where(r >= 0, -llr[:, np.maximum(r, 0)], 0).astype(np.float32)
    np.testing.assert_allclose(mother, expected, rtol=1e-6, atol=1e-6)
    np.testing.assert_array_equal(bits, dec(mother))
    np.testing.assert_array_equal(out, bits[:, out_index].astype(np.float32))


def test_run_sionna_equals_column_major_run_and_sign_flip(rng):
    nt, nr, v = 2, 4, 30
    det = detect.Detector("mmse", nt, nr, "16qam", soft=True, backend="cpu")
    plan = det._plans.for_array(np.zeros(1, np.complex64), "y")[0]
    h_rm = channel.rayleigh(v, nr, nt, seed=5).astype(np.complex64)
    h_rm = np.ascontiguousarray(h_rm)
    y = (rng.normal(size=(v, nr)) + 1j * rng.normal(size=(v, nr))).astype(np.complex64)
    n0 = rng.uniform(0.1, 1.0, v).astype(np.float32)
    s = (n0[:, None, None] * np.eye(nr)).astype(np.complex64)
    s[:, 0, 1] = 0.3  # off-diagonal terms are ignored
    llrs = np.empty((v, nt, 4), np.float32)
    plan.run_sionna(h_rm, y, s, np.empty((v, nr, nt), np.complex64), np.empty(v, np.float32),
                    np.empty((v, nt, 4), np.uint8), llrs, -1.0, 0)
    expected = det(np.ascontiguousarray(np.swapaxes(h_rm, 1, 2)).swapaxes(1, 2), y, n0)
    np.testing.assert_array_equal(llrs, -expected)
    # One covariance for every vector (a broadcast s: batch stride 0).
    one = np.broadcast_to(s[:1], s.shape)
    plan.run_sionna(h_rm, y, one[:1], np.empty((v, nr, nt), np.complex64),
                    np.empty(v, np.float32), np.empty((v, nt, 4), np.uint8), llrs, 1.0, 0)
    expected = det(np.ascontiguousarray(np.swapaxes(h_rm, 1, 2)).swapaxes(1, 2), y,
                   np.full(v, n0[0], np.float32))
    np.testing.assert_array_equal(llrs, expected)
    with pytest.raises(ValueError, match="s: holds"):
        plan.run_sionna(h_rm, y, s[:2], np.empty((v, nr, nt), np.complex64),
                        np.empty(v, np.float32), np.empty((v, nt, 4), np.uint8), llrs, 1.0, 0)


def test_map_float_equals_map(rng):
    mapper = modem.Mapper("64qam")
    plan = mapper._plans.for_array(np.zeros(1, np.uint8), "bits")[0]
    bits = rng.integers(0, 2, 6 * 40).astype(np.uint8)
    out = np.empty(40, np.complex64)
    plan.run_float(bits.astype(np.float32), np.empty(bits.size, np.uint8), out, 0)
    np.testing.assert_array_equal(out, mapper(bits))

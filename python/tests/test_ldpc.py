import numpy as np
import pytest

from mimorx import ldpc
from oracles import CRC_POLY, crc_remainder


def bpsk_llrs(rng, bits, snr_db):
    """Channel LLRs (positive = bit 0) of BPSK over AWGN."""
    sigma2 = 10 ** (-snr_db / 10)
    y = (1 - 2 * bits.astype(np.float64)) + rng.standard_normal(bits.shape) * np.sqrt(sigma2)
    return (2 * y / sigma2).astype(np.float32)


@pytest.mark.parametrize("kind", list(CRC_POLY))
def test_crc_matches_polynomial_division(rng, kind):
    bits = rng.integers(0, 2, int(rng.integers(1, 300)), dtype=np.uint8)
    rem = crc_remainder(bits, kind)
    value = ldpc.crc(bits, kind)
    assert value == int("".join(map(str, rem)), 2)
    attached = ldpc.crc_attach(bits, kind)
    np.testing.assert_array_equal(attached[-len(rem):], rem)
    assert ldpc.crc_check(attached, kind)
    attached[0] ^= 1
    assert not ldpc.crc_check(attached, kind)
    assert ldpc.crc_length(kind) == CRC_POLY[kind][0]


@pytest.mark.parametrize("bg,z", [(1, 16), (2, 52), (1, 384)])
def test_encoder_decoder_round_trip(rng, bg, z):
    enc = ldpc.Encoder(bg, z)
    dec = ldpc.Decoder(bg, z, max_iters=20)
    info = rng.integers(0, 2, (4, enc.k), dtype=np.uint8)
    cw = enc(info)
    assert cw.shape == (4, enc.n) and enc.n == (68 if bg == 1 else 52) * z
    np.testing.assert_array_equal(cw[:, :enc.k], info)
    bits, ok = dec.decode_codeword(((1 - 2 * cw.astype(np.float32)) * 5))
    np.testing.assert_array_equal(bits, cw)
    assert ok.all()
    llr = bpsk_llrs(rng, cw, 3.0)
    llr[:, :2 * z] = 0  # punctured
    np.testing.assert_array_equal(dec(llr), info)
    it = np.zeros(4, np.int32)
    dec(llr, iterations=it)
    assert (it >= 1).all() and (it <= 20).all()


def test_half_decoder(rng):
    enc = ldpc.Encoder(2, 20)
    info = rng.integers(0, 2, (3, enc.k), dtype=np.uint8)
    cw = enc(info)
    llr = bpsk_llrs(rng, cw, 2.5)
    llr[:, :40] = 0
    dec = ldpc.Decoder(2, 20, half=True)
    np.testing.assert_array_equal(dec(llr), info)
    with pytest.raises(ValueError, match="half"):
        ldpc.Decoder(2, 20, half=True, int8=True)


def test_int8_decoder_and_quantizer(rng):
    enc = ldpc.Encoder(2, 20)
    info = rng.integers(0, 2, (3, enc.k), dtype=np.uint8)
    cw = enc(info)
    llr = bpsk_llrs(rng, cw, 2.5)
    llr[:, :40] = 0
    dec = ldpc.Decoder(2, 20, int8=True)
    q = dec.quantize(llr)
    expect = np.clip(np.sign(llr) * np.floor(np.abs(llr) * 4 + 0.5), -31, 31).astype(np.int8)
    np.testing.assert_array_equal(q, expect)
    np.testing.assert_array_equal(dec(q), dec(llr))
    np.testing.assert_array_equal(dec(q), info)


def test_decoder_rejects_bad_input():
    dec = ldpc.Decoder(1, 16)
    with pytest.raises(ValueError, match="^llrs: "):
        dec(np.zeros((2, 10), np.float32))
    with pytest.raises(TypeError, match="^llrs: has dtype float64"):
        dec(np.zeros((2, dec.n)))
    bad = np.zeros((1, dec.n), np.float32)
    bad[0, 5] = np.nan
    with pytest.raises(ValueError):
        dec(bad)
    with pytest.raises(ValueError, match="z"):
        ldpc.Encoder(1, 17)
    with pytest.raises(ValueError, match="bg"):
        ldpc.Encoder(3, 16)
    with pytest.raises(ValueError, match="algo"):
        ldpc.Decoder(1, 16, algo="xyz")


def test_rate_match_and_recover_are_consistent(rng):
    s = ldpc.segment(1000, 2)
    bg, zc, kp = s["bg"], s["zc"], s["k_prime"]
    ncb = ldpc.circular_buffer_size(bg, zc)
    enc = ldpc.Encoder(bg, zc)
    info = np.zeros((1, enc.k), np.uint8)
    info[0, :kp] = rng.integers(0, 2, kp)
    cw = enc(info)[0]
    for rv in range(4):
        e = 1200
        out = ldpc.rate_match(cw, bg, zc, kp, ncb, e, qm=4, rv=rv)
        pos = ldpc.selected_positions(bg, zc, kp, ncb, e, 4, rv)
        assert pos[0] == ldpc.rv_start(bg, zc, ncb, rv)
        mother = ldpc.rate_recover((1 - 2 * out.astype(np.float32)), bg, zc, kp, ncb, qm=4, rv=rv)
        sent = mother != 0
        np.testing.assert_array_equal(mother[sent] < 0, cw[sent] == 1)
        assert (mother[kp:enc.k] == ldpc.FILLER_LLR).all()


def test_transport_round_trip_harq_and_batch(rng):
    t = ldpc.Transport(4000, 0.5, "16qam", rv=0)
    assert t.segmentation["c"] == 1 and t.g % 4 == 0 and sum(t.e) == t.g
    tb = rng.integers(0, 2, 4000, dtype=np.uint8)
    c0, c2 = t.encode(tb, rv=0), t.encode(tb, rv=2)
    out, res = t.decode(bpsk_llrs(rng, c0, 4.0), rv=0)
    np.testing.assert_array_equal(out, tb)
    assert res["tb_crc_ok"] and all(res["cb_crc_ok"])
    harq = t.new_harq()
    t.accumulate(bpsk_llrs(rng, c0, -3.0), harq, rv=0)
    t.accumulate(bpsk_llrs(rng, c2, -3.0), harq, rv=2)
    out, res = t.decode_harq(harq)
    assert res["tb_crc_ok"] == bool((out == tb).all())

    batch = ldpc.TransportBatch(4000, 0.5, "16qam", max_blocks=3)
    tbs = rng.integers(0, 2, (3, 4000), dtype=np.uint8)
    coded = batch.encode(tbs)
    for i in range(3):
        np.testing.assert_array_equal(coded[i], t.encode(tbs[i]))
    llrs = np.stack([bpsk_llrs(rng, coded[i], 1.0) for i in range(3)])
    dec_tb, ok, cb, it = batch.decode(llrs)
    for i in range(3):
        ref_tb, ref = t.decode(llrs[i])
        np.testing.assert_array_equal(dec_tb[i], ref_tb)
        assert bool(ok[i]) == ref["tb_crc_ok"] and list(it[i]) == ref["iterations"]


def test_segmentation_of_a_large_block():
    s = ldpc.segment(20496, ldpc.select_base_graph(20496, 0.7))
    assert s["bg"] == 1 and s["c"] == 3 and s["l_cb"] == 24 and s["l_tb"] == 24
    assert s["zc"] in ldpc.lifting_sizes() and s["k"] == 22 * s["zc"]

import numpy as np
import pytest

from mimorx import channel, modem
from oracles import M_OF, index_bits, qam_points, scalar_maxlog


@pytest.mark.parametrize("mod", list(M_OF))
def test_mapper_matches_38211_tables(mod):
    lab = index_bits(mod)
    sym = modem.qam_map(lab.reshape(-1).copy(), mod)
    np.testing.assert_allclose(sym, qam_points(mod), atol=1e-6)


@pytest.mark.parametrize("mod", ["qpsk", "16qam", "64qam", "256qam"])
def test_demapper_maxlog_and_hard(rng, mod):
    n = 200
    z = (rng.standard_normal(n) + 1j * rng.standard_normal(n)).astype(np.complex64) * 0.8
    nv = rng.uniform(0.05, 1.0, n).astype(np.float32)
    llr = modem.demap(z, mod, nv, soft=True).reshape(n, -1)
    np.testing.assert_allclose(llr, scalar_maxlog(z, nv, mod), rtol=1e-4, atol=1e-3)
    hard = modem.demap(z, mod).reshape(n, -1)
    nearest = np.argmin(np.abs(z[:, None] - qam_points(mod)[None, :]), axis=1)
    np.testing.assert_array_equal(hard, index_bits(mod)[nearest])


def test_map_demap_round_trip(rng):
    bits = rng.integers(0, 2, 6 * 1000, dtype=np.uint8)
    np.testing.assert_array_equal(modem.demap(modem.qam_map(bits, "64qam"), "64qam"), bits)


def test_modem_errors():
    with pytest.raises(ValueError, match="^bits: "):
        modem.qam_map(np.zeros(3, np.uint8), "16qam")
    with pytest.raises(TypeError, match="^bits: has dtype"):
        modem.qam_map(np.zeros(4, np.float32), "16qam")
    with pytest.raises(ValueError, match="^noise_var: "):
        modem.demap(np.zeros(4, np.complex64), "qpsk", soft=True)


def test_rayleigh_is_reproducible_and_split_independent():
    a = channel.rayleigh(10, 4, 2, seed=9)
    b = channel.rayleigh(4, 4, 2, seed=9, first_channel=6)
    np.testing.assert_array_equal(a[6:], b)
    assert a.shape == (10, 4, 2) and a.strides[1] == 8
    big = channel.rayleigh(4000, 2, 2, seed=3)
    assert abs(np.mean(np.abs(big) ** 2) - 1) < 0.03
    assert abs(np.mean(big)) < 0.03


def test_correlated_fading_follows_kronecker_model():
    h = channel.Fading(2, 2, rho_rx=0.8)(20000, seed=4)
    r = np.mean(h[:, 0, :] * h[:, 1, :].conj())
    assert abs(r.real - 0.8) < 0.03 and abs(r.imag) < 0.03


def test_apply_channel_noise_statistics(rng):
    c, vpc, nr, nt = 50, 40, 3, 2
    h = channel.rayleigh(c, nr, nt, seed=1)
    x = (rng.standard_normal((c * vpc, nt)) + 1j * rng.standard_normal((c * vpc, nt))).astype(np.complex64)
    clean = channel.apply(h, x, 0.0, seed=2)
    ref = np.einsum("vij,vj->vi", np.repeat(h, vpc, axis=0), x)
    np.testing.assert_allclose(clean, ref, rtol=1e-5, atol=1e-5)
    noisy = channel.apply(h, x, 0.25, seed=2)
    n = noisy - clean
    assert abs(np.mean(np.abs(n) ** 2) - 0.25) < 0.02
    np.testing.assert_array_equal(channel.apply(h, x, 0.25, seed=2), noisy)


def test_awgn_and_streams():
    x = np.zeros(20000, np.complex64)
    y = channel.awgn(x, 2.0, seed=5)
    assert abs(np.mean(np.abs(y) ** 2) - 2.0) < 0.1
    u = channel.uniform(10000, seed=3, stream_id=1)
    assert u.min() > 0 and u.max() < 1 and abs(u.mean() - 0.5) < 0.02
    g = channel.gaussian(10000, seed=3)
    assert abs(g.std() - 1) < 0.03
    np.testing.assert_array_equal(channel.gaussian(5, seed=3, offset=7), g[7:12])
    assert channel.noise_variance(10) == pytest.approx(0.1)
    assert channel.noise_variance_from_ebn0(0, 2, 0.5) == pytest.approx(1.0)

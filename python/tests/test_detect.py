import numpy as np
import pytest

import mimorx
from mimorx import channel, detect, modem
from oracles import M_OF, ml_maxlog, mmse_maxlog


def link(rng, nt, nr, mod, c, vpc, snr_db):
    m = M_OF[mod]
    v = c * vpc
    h = channel.rayleigh(c, nr, nt, seed=int(rng.integers(1 << 62)))
    bits = rng.integers(0, 2, v * nt * m, dtype=np.uint8)
    x = modem.qam_map(bits, mod).reshape(v, nt)
    n0 = channel.noise_variance(snr_db)
    y = channel.apply(h, x, n0, seed=int(rng.integers(1 << 62)))
    return h, y, n0, bits.reshape(v, nt, m)


@pytest.mark.parametrize("mod", ["qpsk", "16qam"])
def test_ml_llrs_equal_exhaustive_numpy(rng, mod):
    h, y, n0, _ = link(rng, 2, 3, mod, 6, 3, 8.0)
    llr = detect.ML(2, 3, mod, soft=True)(h, y, n0)
    ref, hard = ml_maxlog(h, y, n0, mod)
    np.testing.assert_allclose(llr, ref, rtol=1e-3, atol=1e-3 * np.abs(ref).max())
    np.testing.assert_array_equal(detect.ML(2, 3, mod)(h, y, n0), hard)


def test_psd_is_ml(rng):
    h, y, n0, _ = link(rng, 3, 3, "16qam", 10, 2, 5.0)
    _, hard = ml_maxlog(h, y, n0, "16qam")
    np.testing.assert_array_equal(detect.PSD(3, 3, "16qam")(h, y, n0), hard)


def test_mmse_llrs_equal_numpy(rng):
    h, y, _, _ = link(rng, 4, 4, "16qam", 16, 2, 12.0)
    n0 = rng.uniform(0.02, 0.1, y.shape[0]).astype(np.float32)
    llr = detect.MMSE(4, 4, "16qam", soft=True)(h, y, n0)
    ref = np.stack([mmse_maxlog(h[i // 2:i // 2 + 1], y[i:i + 1], float(n0[i]), "16qam")[0]
                    for i in range(y.shape[0])])
    np.testing.assert_allclose(llr, ref, rtol=2e-3, atol=2e-3 * np.abs(ref).max())


@pytest.mark.parametrize("name", ["zf", "mmse", "ml", "psd", "nway:4", "kbest:16", "trellis",
                                  "lr-zf", "lr-mmse", "lr-mmse-sic"])
def test_every_detector_recovers_bits_at_high_snr(rng, name):
    # Six receive antennas for four streams: no channel is near singular, so even ZF is exact.
    h, y, n0, bits = link(rng, 4, 6, "16qam", 32, 2, 40.0)
    np.testing.assert_array_equal(detect.Detector(name, 4, 6, "16qam")(h, y, n0), bits)


def test_nway_full_is_exact_maxlog_2x2(rng):
    h, y, n0, _ = link(rng, 2, 2, "16qam", 8, 1, 15.0)
    llr = detect.Nway(2, 2, "16qam", n=2, soft=True)(h, y, n0)
    ref, _ = ml_maxlog(h, y, n0, "16qam")
    ref = np.clip(ref, -8, 8)
    np.testing.assert_allclose(llr, ref, rtol=1e-3, atol=1e-2)


def test_out_arrays_are_written_and_returned(rng):
    # Against the same detector's own result: ZF on a random 2x2 channel may err at any SNR.
    h, y, n0, _ = link(rng, 2, 2, "qpsk", 4, 4, 30.0)
    d = detect.ZF(2, 2, "qpsk")
    expected = d(h, y, np.float32([n0]))
    out = np.full(expected.shape, 7, dtype=np.uint8)  # 7 is no bit: every element is written
    res = d(h, y, np.float32([n0]), bits=out)
    assert res is out
    np.testing.assert_array_equal(out, expected)


def test_bad_arguments_raise_named_errors(rng):
    h, y, n0, _ = link(rng, 2, 2, "qpsk", 4, 1, 10.0)
    d = detect.MMSE(2, 2, "qpsk")
    with pytest.raises(ValueError, match="^h: must be column-major"):
        d(np.ascontiguousarray(h), y, n0)
    with pytest.raises(TypeError, match="^y: has dtype complex128, expected complex64"):
        d(h, y.astype(np.complex128), n0)
    with pytest.raises(ValueError, match="^y: "):
        d(h, y[:, :1].copy(), n0)
    with pytest.raises(ValueError, match="^y: must be C-contiguous"):
        d(h, np.asfortranarray(np.repeat(y, 2, axis=0)[:4]), n0)
    with pytest.raises(ValueError, match="^y: must have shape"):
        d(h, y.reshape(-1), n0)
    with pytest.raises(ValueError, match="noise_var"):
        d(h, y, -1.0)
    with pytest.raises(ValueError, match="noise_var"):
        d(h, y, np.float32([1, 2, 3]))
    with pytest.raises(TypeError, match="^y: expected a NumPy array"):
        d(h, y.tolist(), n0)
    with pytest.raises(ValueError, match="not available"):
        detect.Detector("nope", 2, 2, "qpsk")
    with pytest.raises(ValueError, match="hard decisions only"):
        detect.PSD(2, 2, "qpsk", soft=True)
    with pytest.raises(ValueError, match="mod"):
        detect.MMSE(2, 2, "17qam")
    with pytest.raises(NotImplementedError):
        detect.ML(8, 8, "256qam")
    if not mimorx.cuda_available():
        with pytest.raises(NotImplementedError):
            detect.MMSE(2, 2, "qpsk", backend="cuda")


def test_pinned_cpu_plan_takes_numpy(rng):
    # Four receive antennas for two streams: no channel is near singular, MMSE is exact at 40 dB.
    h, y, n0, bits = link(rng, 2, 4, "qpsk", 4, 1, 40.0)
    np.testing.assert_array_equal(detect.MMSE(2, 4, "qpsk", backend="cpu")(h, y, n0), bits)

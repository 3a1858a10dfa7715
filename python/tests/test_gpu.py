"""CUDA arrays in and out (PyTorch, CuPy): no host copies (the outputs are the caller's arrays),
the caller's stream, results equal to the CPU backend. Skipped without a GPU."""

import numpy as np
import pytest

import mimorx
from mimorx import channel, detect, ldpc, modem

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.skipif(
    not (torch.cuda.is_available() and mimorx.cuda_available()),
    reason="needs a CUDA GPU and a mimorx build with CUDA")


def host_link(rng, nt=4, nr=4, mod="16qam", c=64, vpc=4, snr_db=12.0):
    h = channel.rayleigh(c, nr, nt, seed=int(rng.integers(1 << 62)))
    bits = rng.integers(0, 2, c * vpc * nt * modem.bits_per_symbol(mod), dtype=np.uint8)
    x = modem.qam_map(bits, mod).reshape(c * vpc, nt)
    n0 = channel.noise_variance(snr_db)
    return h, channel.apply(h, x, n0, seed=5), n0


def to_cuda(a):
    t = torch.from_numpy(np.ascontiguousarray(a)).cuda()
    return mimorx.column_major(t) if a.ndim == 3 else t


@pytest.mark.parametrize("name", ["mmse", "kbest:16", "nway:2", "ml", "trellis"])
def test_torch_detector_writes_callers_tensor_and_equals_cpu(rng, name):
    h, y, n0 = host_link(rng)
    det = detect.Detector(name, 4, 4, "16qam", soft=True)
    hd, yd = to_cuda(h), to_cuda(y)
    out = torch.full((y.shape[0], 4, 4), float("nan"), device="cuda")
    res = det(hd, yd, n0, llrs=out)
    assert res is out and res.data_ptr() == out.data_ptr()
    torch.cuda.synchronize()
    ref = det(h, y, n0)
    np.testing.assert_allclose(out.cpu().numpy(), ref, rtol=1e-3, atol=1e-4 * np.abs(ref).max())
    auto = det(hd, yd, torch.full((1,), n0, device="cuda"))
    assert auto.is_cuda and auto.dtype == torch.float32


def test_torch_runs_on_the_current_and_the_given_stream(rng):
    h, y, n0 = host_link(rng)
    det = detect.MMSE(4, 4, "16qam")
    ref = det(h, y, n0)
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        hd, yd = to_cuda(h), to_cuda(y)
        bits = det(hd, yd, n0)  # on s, ordered after the copies above
    s.synchronize()
    np.testing.assert_array_equal(bits.cpu().numpy(), ref)
    s2 = torch.cuda.Stream()
    s2.wait_stream(s)
    for stream in (s2, s2.cuda_stream):
        out = torch.empty_like(bits)
        det(hd, yd, n0, bits=out, stream=stream)
        s2.synchronize()
        np.testing.assert_array_equal(out.cpu().numpy(), ref)


def test_device_mismatches_raise_instead_of_copying(rng):
    h, y, n0 = host_link(rng, c=4, vpc=1)
    det = detect.MMSE(4, 4, "16qam")
    with pytest.raises(ValueError, match="^h: "):
        det(h, to_cuda(y), n0)
    with pytest.raises(ValueError, match="^bits: "):
        det(to_cuda(h), to_cuda(y), n0, bits=np.empty((4, 4, 4), np.uint8))
    pinned = detect.MMSE(4, 4, "16qam", backend="cuda")
    with pytest.raises(ValueError, match="^y: "):
        pinned(h, y, n0)


def test_torch_ldpc_equal_to_cpu(rng):
    enc, dec = ldpc.Encoder(1, 128), ldpc.Decoder(1, 128)
    info = rng.integers(0, 2, (64, enc.k), dtype=np.uint8)
    cw = enc(info)
    cwd = enc(torch.from_numpy(info).cuda())
    np.testing.assert_array_equal(cwd.cpu().numpy(), cw)
    llr = ((1 - 2 * cw.astype(np.float32)) + rng.standard_normal(cw.shape).astype(np.float32)) * 2
    llr[:, :256] = 0
    out = torch.empty((64, enc.k), dtype=torch.uint8, device="cuda")
    assert dec(torch.from_numpy(llr).cuda(), out=out) is out
    np.testing.assert_array_equal(out.cpu().numpy(), dec(llr))


def test_torch_half_decoder_equals_its_cpu_model(rng):
    enc, dec = ldpc.Encoder(1, 128), ldpc.Decoder(1, 128, half=True)
    info = rng.integers(0, 2, (64, enc.k), dtype=np.uint8)
    cw = enc(info)
    llr = ((1 - 2 * cw.astype(np.float32)) + rng.standard_normal(cw.shape).astype(np.float32)) * 2
    llr[:, :256] = 0
    out = dec(torch.from_numpy(llr).cuda())
    np.testing.assert_array_equal(out.cpu().numpy(), dec(llr))


def test_channel_and_modem_on_torch_bit_identical_to_cpu(rng):
    out = torch.empty((32, 2, 4), dtype=torch.complex64, device="cuda").transpose(1, 2)
    channel.Fading(4, 2)(seed=3, out=out)
    np.testing.assert_array_equal(out.cpu().numpy(), channel.rayleigh(32, 4, 2, seed=3))
    bits = rng.integers(0, 2, 4000, dtype=np.uint8)
    sym = modem.qam_map(torch.from_numpy(bits).cuda(), "16qam")
    np.testing.assert_array_equal(sym.cpu().numpy(), modem.qam_map(bits, "16qam"))


def test_cupy_arrays(rng):
    cupy = pytest.importorskip("cupy")
    h, y, n0 = host_link(rng)
    det = detect.MMSE(4, 4, "16qam", soft=True)
    hd = mimorx.column_major(cupy.asarray(np.ascontiguousarray(h)))
    yd = cupy.asarray(y)
    out = cupy.empty((y.shape[0], 4, 4), dtype=cupy.float32)
    assert det(hd, yd, n0, llrs=out) is out
    cupy.cuda.get_current_stream().synchronize()
    np.testing.assert_allclose(cupy.asnumpy(out), det(h, y, n0), rtol=1e-3, atol=1e-3)


def test_cupy_runs_on_the_current_and_the_given_stream(rng):
    cupy = pytest.importorskip("cupy")
    from mimorx import _arrays
    h, y, n0 = host_link(rng)
    det = detect.MMSE(4, 4, "16qam")
    ref = det(h, y, n0)
    s = cupy.cuda.Stream(non_blocking=True)
    with s:
        hd = mimorx.column_major(cupy.asarray(np.ascontiguousarray(h)))
        yd = cupy.asarray(y)
        assert _arrays.stream_handle(None, yd) == s.ptr
        bits = det(hd, yd, n0)  # on s, ordered after the copies above
    s.synchronize()
    assert isinstance(bits, cupy.ndarray)
    np.testing.assert_array_equal(cupy.asnumpy(bits), ref)
    s2 = cupy.cuda.Stream(non_blocking=True)
    for stream in (s2, s2.ptr):
        out = cupy.empty_like(bits)
        assert det(hd, yd, n0, bits=out, stream=stream) is out
        s2.synchronize()
        np.testing.assert_array_equal(cupy.asnumpy(out), ref)


def test_cupy_ldpc_channel_and_modem_equal_to_cpu(rng):
    cupy = pytest.importorskip("cupy")
    enc, dec = ldpc.Encoder(1, 128), ldpc.Decoder(1, 128)
    info = rng.integers(0, 2, (32, enc.k), dtype=np.uint8)
    cw = enc(info)
    cwd = enc(cupy.asarray(info))
    assert isinstance(cwd, cupy.ndarray)
    np.testing.assert_array_equal(cupy.asnumpy(cwd), cw)
    llr = ((1 - 2 * cw.astype(np.float32)) + rng.standard_normal(cw.shape).astype(np.float32)) * 2
    out = cupy.empty((32, enc.k), dtype=cupy.uint8)
    assert dec(cupy.asarray(llr), out=out) is out
    cupy.cuda.get_current_stream().synchronize()
    np.testing.assert_array_equal(cupy.asnumpy(out), dec(llr))
    col = cupy.empty((32, 2, 4), dtype=cupy.complex64).transpose(0, 2, 1)  # column-major 4x2
    channel.Fading(4, 2)(seed=3, out=col)
    cupy.cuda.get_current_stream().synchronize()
    np.testing.assert_array_equal(cupy.asnumpy(col), channel.rayleigh(32, 4, 2, seed=3))
    bits = rng.integers(0, 2, 4000, dtype=np.uint8)
    sym = modem.qam_map(cupy.asarray(bits), "16qam")
    np.testing.assert_array_equal(cupy.asnumpy(sym), modem.qam_map(bits, "16qam"))

import json
import subprocess

import pytest

from mimorx import sim


def cli_sim(cli, tmp_path, *args):
    out = tmp_path / "sim.json"
    subprocess.run([cli, "sim", *args, "--backend", "cpu", "--json", str(out)], check=True,
                   capture_output=True)
    return json.loads(out.read_text())


def same_document(py, ref):
    assert py["config"] == ref["config"]
    assert len(py["points"]) == len(ref["points"])
    for p, r in zip(py["points"], ref["points"]):
        p, r = dict(p), dict(r)
        p.pop("seconds"), r.pop("seconds")
        assert p == r


def test_uncoded_equals_cli(cli, tmp_path):
    ref = cli_sim(cli, tmp_path, "--mimo", "2x2", "--mod", "qpsk", "--detector", "mmse,ml",
                  "--snr", "0:4:8", "--max-frames", "3000", "--seed", "7", "--min-errors", "400")
    py = sim.run("2x2", "qpsk", "mmse,ml", "0:4:8", backend="cpu", max_frames=3000, seed=7,
                 min_errors=400)
    same_document(py, ref)


def test_coded_equals_cli(cli, tmp_path):
    ref = cli_sim(cli, tmp_path, "--ldpc", "--mimo", "2x2", "--mod", "16qam", "--detector", "mmse",
                  "--snr", "6,10", "--max-blocks", "20", "--tbs", "512", "--rate", "0.5",
                  "--iters", "8")
    py = sim.run("2x2", "16qam", "mmse", [6, 10], ldpc=True, backend="cpu", max_blocks=20,
                 tbs=512, rate=0.5, iters=8)
    same_document(py, ref)


def test_sim_errors():
    with pytest.raises(ValueError, match="mimo"):
        sim.run("2y2", "qpsk", "mmse", "0")
    with pytest.raises(ValueError, match="detector"):
        sim.run("2x2", "qpsk", "mmse,mmse", "0")
    with pytest.raises(ValueError):
        sim.run("2x2", "qpsk", "mmse", "0:x")


@pytest.mark.parametrize("kwargs, name", [
    ({"min_errors": -1}, "min_errors: "), ({"ldpc": True, "min_errors": -1}, "min_errors: "),
    ({"ldpc": True, "rate": 1.5}, "rate: 1.5"), ({"ldpc": True, "iters": 0}, "iters: 0"),
    ({"max_frames": 0}, "max_frames: 0"), ({"ldpc": True, "max_blocks": 0}, "max_blocks: 0"),
    ({"ldpc": True, "batch": -1}, "batch: -1"), ({"batch": -1}, "batch: -1")])
def test_sim_errors_name_the_parameter(kwargs, name):
    with pytest.raises(ValueError) as e:
        sim.run("2x2", "qpsk", "mmse", [5], backend="cpu", **kwargs)
    assert str(e.value).startswith(name), str(e.value)


def test_channel_options_equal_cli(cli, tmp_path):
    ref = cli_sim(cli, tmp_path, "--mimo", "2x2", "--mod", "qpsk", "--detector", "mmse",
                  "--snr", "0,6", "--max-frames", "2000", "--seed", "5", "--corr-tx", "0.5",
                  "--corr-rx", "0.3", "--vectors-per-channel", "4")
    py = sim.run("2x2", "qpsk", "mmse", [0, 6], backend="cpu", max_frames=2000, seed=5,
                 corr_tx=0.5, corr_rx=0.3, vectors_per_channel=4)
    same_document(py, ref)

"""The link simulator: the CLI's `mimorx sim` as a function returning its JSON document.

run(...) -> {"mimorx": {...}, "config": {...}, "points": [...]}, the fields and values of
`mimorx sim --json` (docs/cli.md) for the same options, one point per (detector, SNR).
"""

from . import _core

__all__ = ["run"]


def _channel_text(corr_tx, corr_rx, vectors_per_channel, coded):
    """The CLI's description of the channel model (config["channel"])."""
    text = "rayleigh"
    if corr_tx != 0.0 or corr_rx != 0.0:
        text += f", kronecker exponential corr_tx={corr_tx:g} corr_rx={corr_rx:g}"
    if vectors_per_channel == 1:
        return text + ", one realisation per received vector"
    return text + (f", one realisation per {vectors_per_channel} received vectors"
                   + (" within a transport block" if coded else ""))

_SNR_DEFINITION = ("Es/N0, Es=1 per transmit antenna, N0 per receive antenna; Eb/N0 per "
                   "information bit")


def _snr_list(snr):
    if isinstance(snr, str):
        return list(_core.parse_snr_list(snr))
    if isinstance(snr, (int, float)):
        return [float(snr)]
    return [float(s) for s in snr]


def _detectors(detector):
    names = [d.strip() for d in detector.split(",")] if isinstance(detector, str) else list(detector)
    if any(not d for d in names):
        raise ValueError(f"detector: empty entry in {detector!r}")
    if len(set(names)) != len(names):
        raise ValueError(f"detector: {detector!r} names a detector twice; give each once")
    return names


# Library fields -> the run() parameters that set them, in the messages of ValueError.
_PARAMETERS = {"min_bit_errors": "min_errors", "min_block_errors": "min_errors",
               "code_rate": "rate", "max_iters": "iters", "frames": "max_frames",
               "blocks": "max_blocks", "batch_blocks": "batch"}


def _named(fn, *args, **kwargs):
    """fn(*args, **kwargs); a ValueError from it names run()'s parameter, not the library field."""
    try:
        return fn(*args, **kwargs)
    except ValueError as e:
        field, sep, rest = str(e).partition(": ")
        if sep and field in _PARAMETERS:
            raise ValueError(_PARAMETERS[field] + ": " + rest) from None
        raise


def run(mimo="4x4", mod="16qam", detector=None, snr="0:2:20", *, ldpc=False, backend="auto",
        seed=1, min_errors=0, early_stop=False, max_frames=2_500_000, batch=0, tbs=1024,
        rate=0.5, decoder="nms", iters=10, alpha=0.75, alpha_last=0.0, beta=0.5, int8=False,
        half=False, early_termination=True, max_blocks=1000, batch_blocks=0, corr_tx=0.0, corr_rx=0.0,
        vectors_per_channel=1):
    """Simulates BER/SER (uncoded) or BER/BLER (ldpc=True) per SNR point and detector.

    Args mirror the CLI's options: mimo "<nt>x<nr>", mod, detector (a name, a comma-separated
    list or a list; default psd uncoded, mmse with ldpc), snr ("0:2:20", a number or a list,
    Es/N0 in dB), backend ("auto", "cpu", "cuda[:N]"), seed, min_errors (bit errors uncoded,
    block errors coded; 0 = never stop early), early_stop, batch (as the CLI's --batch:
    received vectors per call uncoded, transport blocks per call coded; 0 = automatic),
    max_frames (uncoded), tbs, rate, decoder, iters, alpha, alpha_last, beta, int8, half (the
    half-precision decoder, the CLI's --half), early_termination, max_blocks and batch_blocks
    (coded; batch_blocks, where not 0, is the coded batch in place of batch); corr_tx, corr_rx
    (Kronecker exponential correlation, [0, 1)) and vectors_per_channel (block fading), as the
    CLI's --corr-tx, --corr-rx, --vectors-per-channel.
    """
    nt, nr = _core.parse_mimo(mimo)
    snrs = _snr_list(snr)
    names = _detectors(detector if detector is not None else ("mmse" if ldpc else "psd"))
    mod_name = _core.modulation_name(mod)
    config = {
        "coding": "ldpc" if ldpc else "none", "mimo": mimo, "nt": nt, "nr": nr, "mod": mod_name,
        "detectors": names, "backend": _core.backend_name(backend), "seed": seed,
        "channel": _channel_text(corr_tx, corr_rx, vectors_per_channel, ldpc),
        "snr_definition": _SNR_DEFINITION, "snr_db": snrs, "min_errors": min_errors,
        "corr_tx": corr_tx, "corr_rx": corr_rx, "vectors_per_channel": vectors_per_channel,
    }
    channel = (corr_tx, corr_rx, vectors_per_channel)
    points = []
    if ldpc:
        config.update({"max_blocks": max_blocks, "early_stop": early_stop, "tbs": tbs,
                       "target_rate": rate, "g": None, "rate": None, "decoder": decoder,
                       "alpha": alpha, "alpha_last": alpha_last, "beta": beta, "int8": int8,
                       "half": half, "iters": iters, "early_termination": early_termination,
                       "batch": batch_blocks or batch})
        for d in names:
            pts, g, r = _named(_core.run_coded, nt, nr, mod, d, seed, tbs, rate, decoder, iters,
                               alpha, alpha_last, beta, int8, early_termination, max_blocks,
                               batch_blocks or batch, min_errors, early_stop, backend, snrs,
                               *channel, half=half)
            config["g"], config["rate"] = g, r
            points += [dict(p) for p in pts]
    else:
        config.update({"max_frames": max_frames, "early_stop": early_stop, "batch": batch})
        for d in names:
            points += [dict(p) for p in _named(_core.run_uncoded, nt, nr, mod, d, seed,
                                               max_frames, batch, min_errors, early_stop,
                                               backend, snrs, *channel)]
    return {"mimorx": {"version": _core.version, "command": "mimorx.sim.run"},
            "config": config, "points": points}

#!/usr/bin/env python3
"""Plot BER (and BLER for coded runs) against SNR from one or more `mimorx sim --json` files.

    tools/plot_sim.py run.json [more.json ...] -o curves.png [--x esn0|ebn0] [--title T]
                      [--label L ...] [--legend outside|inside] [--ci]

One curve per detector of each file, labelled by the detector (with several files, by the
file's name and the detector; --label, once per curve in drawing order, replaces them). Coded
(--ldpc) runs get a BLER panel beside the BER panel. Points without errors have no place on a
log axis and are left out. The format follows the output's extension: .png, .pdf or .svg.
Files of the earlier schema (one detector in config["detector"]) are read too.
"""
import argparse
import json
import math
import os
import sys

FORMATS = (".png", ".pdf", ".svg")
MARKERS = ["o", "s", "^", "D", "v", "P", "X", "*", "<", ">"]
LINESTYLES = ["-", "--", ":", "-."]


def fail(message):
    sys.exit(f"plot_sim.py: {message}")


def load_run(path):
    """(stem, config, {detector: [points]}) of one JSON file, detectors in the file's order."""
    try:
        with open(path) as f:
            data = json.load(f)
    except OSError as e:
        fail(f"cannot read {path}: {e.strerror}")
    except ValueError as e:
        fail(f"{path} is not JSON ({e})")
    if not isinstance(data, dict) or "config" not in data or not data.get("points"):
        fail(f"{path} has no 'config' and 'points': not from mimorx sim --json")
    cfg = data["config"]
    curves = {}
    for p in data["points"]:
        curves.setdefault(p.get("detector", cfg.get("detector", "?")), []).append(p)
    return os.path.splitext(os.path.basename(path))[0], cfg, curves


def wilson(errors, trials, z=1.96):
    """95 % Wilson score interval of an error rate."""
    if trials <= 0:
        return 0.0, 0.0
    p = errors / trials
    d = 1 + z * z / trials
    centre = (p + z * z / (2 * trials)) / d
    half = z * math.sqrt(p * (1 - p) / trials + z * z / (4 * trials * trials)) / d
    return max(centre - half, 0.0), centre + half


# metric -> (the count of errors, the count of trials) behind it, for the intervals
COUNTS = {"ber": ("bit_errors", "bits"), "bler": ("block_errors", "blocks")}


def curve_labels(runs, given):
    auto = []
    for stem, _, curves in runs:
        for det in curves:
            auto.append(det if len(runs) == 1 else f"{stem}: {det}")
    if given and len(given) != len(auto):
        fail(f"{len(given)} --label given for {len(auto)} curves ({', '.join(auto)})")
    return given or auto


def draw(ax, points, metric, key_x, label, style, ci):
    pts = sorted((p for p in points if p.get(metric, 0) > 0), key=lambda p: p[key_x])
    xs = [p[key_x] for p in pts]
    ys = [p[metric] for p in pts]
    if ci and pts and all(k in pts[0] for k in COUNTS[metric]):
        errs, trials = COUNTS[metric]
        lo_hi = [wilson(p[errs], p[trials]) for p in pts]
        yerr = [[y - lo for y, (lo, _) in zip(ys, lo_hi)], [hi - y for y, (_, hi) in zip(ys, lo_hi)]]
        ax.errorbar(xs, ys, yerr=yerr, label=label, capsize=2, **style)
    else:
        ax.plot(xs, ys, label=label, **style)


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("files", nargs="+", help="JSON files written by mimorx sim --json")
    ap.add_argument("-o", "--output", required=True, help="image file: .png, .pdf or .svg")
    ap.add_argument("--x", choices=["esn0", "ebn0", "snr"], default="esn0",
                    help="x axis: Es/N0 (esn0, default; 'snr' is the same) or Eb/N0 per "
                         "information bit (ebn0)")
    ap.add_argument("--title", default=None, help="figure title (default: the link, e.g. "
                    "'4x4 16qam, LDPC tbs=3824 R=0.50')")
    ap.add_argument("--label", action="append", default=[],
                    help="label of a curve, once per curve in drawing order (files in order, "
                         "detectors in each file's order)")
    ap.add_argument("--legend", choices=["outside", "inside"], default="outside",
                    help="legend to the right of the axes (default) or inside them")
    ap.add_argument("--ci", action="store_true", help="95 %% Wilson confidence intervals as "
                    "error bars (a point from few errors shows how uncertain it is)")
    args = ap.parse_args(argv)
    ext = os.path.splitext(args.output)[1].lower()
    if ext not in FORMATS:
        fail(f"{args.output}: the extension must be one of {', '.join(FORMATS)}")

    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        # Debian's python3-matplotlib lives in the system interpreter; another python3 first
        # on PATH (pyenv, a venv) does not see it.
        system = "/usr/bin/python3"
        if os.path.realpath(sys.executable) != os.path.realpath(system) and os.path.exists(system):
            os.execv(system, [system, os.path.abspath(__file__)] + argv)
        fail("matplotlib is missing; scripts/setup installs python3-matplotlib")

    runs = [load_run(path) for path in args.files]
    labels = iter(curve_labels(runs, args.label))
    coded = any(cfg.get("coding") == "ldpc" for _, cfg, _ in runs)
    metrics = ["ber", "bler"] if coded else ["ber"]
    fig, axes = plt.subplots(1, len(metrics), figsize=(5.2 * len(metrics) + 1.6, 4.2),
                             squeeze=False)
    axes = axes[0]
    key_x = "ebn0_db" if args.x == "ebn0" else "snr_db"
    n = 0  # curves drawn: each its own colour, a marker per detector, a line style per file
    for f, (_, cfg, curves) in enumerate(runs):
        for d, (det, points) in enumerate(curves.items()):
            style = {"marker": MARKERS[d % len(MARKERS)], "color": f"C{n % 10}",
                     "linestyle": LINESTYLES[f % len(LINESTYLES)], "markersize": 4}
            label = next(labels)
            n += 1
            for ax, metric in zip(axes, metrics):
                if metric in points[0]:
                    draw(ax, points, metric, key_x, label, style, args.ci)
    for ax, metric in zip(axes, metrics):
        ax.set_yscale("log")
        ax.set_xlabel("Eb/N0 [dB]" if key_x == "ebn0_db" else "Es/N0 [dB]")
        ax.set_ylabel(metric.upper())
        ax.grid(True, which="both", alpha=0.3)
    handles, names = axes[0].get_legend_handles_labels()
    if args.legend == "outside":
        fig.legend(handles, names, loc="center left", bbox_to_anchor=(1.0, 0.5), fontsize=8,
                   frameon=False)
    else:
        axes[-1].legend(handles, names, loc="best", fontsize=8)
    fig.suptitle(args.title if args.title is not None else default_title(runs))
    fig.tight_layout()
    fig.savefig(args.output, dpi=150, bbox_inches="tight")
    print(f"plot_sim.py: wrote {args.output}")


def default_title(runs):
    """The link of the first file, e.g. '4x4 16qam, LDPC tbs=3824 R=0.50, i.i.d. Rayleigh'."""
    cfg = runs[0][1]
    text = f"{cfg.get('nt', '?')}x{cfg.get('nr', '?')} {cfg.get('mod', '')}"
    if cfg.get("coding") == "ldpc":
        text += f", LDPC tbs={cfg.get('tbs')} R={cfg.get('rate', 0):.2f}"
    return text + ", i.i.d. Rayleigh"


if __name__ == "__main__":
    main(sys.argv[1:])

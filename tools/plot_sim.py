#!/usr/bin/env python3
"""Plot BER (and BLER for coded runs) against SNR from JSON of mimorx sim / sim --ldpc / ldpc ber.

    tools/plot_sim.py run.json [more.json ...] -o curves.png|.pdf|.svg [--x esn0|ebn0]
                      [--metric auto|ber|bler|ser] [--label L ...] [--title T] [--xlabel X]
                      [--ylabel Y ...] [--legend outside|inside|below] [--no-ci]

One curve per detector of each file. Labels are short: the detector, then only what differs
between the files (antennas, modulation, code rate, channel); what all curves share goes into
the title. --label (once per curve, in drawing order: files in order, detectors in each file's
order), --title, --xlabel and --ylabel (once per panel) replace them. Coded runs get a BLER
panel beside the BER panel. Each point carries a 95 % Wilson confidence interval as an error
bar (--no-ci: none), so a point from a few errors shows how uncertain it is. Points without
errors have no place on a log axis and are left out. The legend goes outside the axes by
default, where it cannot cover data. The format follows the output's extension: .png, .pdf,
.svg. Bad input: one line on stderr, exit status 2.
"""
import argparse
import json
import math
import os
import sys

FORMATS = (".png", ".pdf", ".svg")
MARKERS = ["o", "s", "^", "D", "v", "P", "X", "*", "<", ">"]
LINESTYLES = ["-", "--", ":", "-."]
# metric -> (the count of errors, the count of trials) behind it, for the intervals
COUNTS = {"ber": ("bit_errors", "bits"), "bler": ("block_errors", "blocks"),
          "ser": ("symbol_errors", "symbols")}


def fail(message):
    sys.stderr.write(f"plot_sim.py: error: {message}\n")
    sys.exit(2)


class Parser(argparse.ArgumentParser):
    def error(self, message):  # one line and status 2, as the mimorx CLI
        fail(f"{message} (see --help)")


def load_run(path):
    """(config, {detector: [points]}) of one JSON file, detectors in the file's order."""
    try:
        with open(path) as f:
            data = json.load(f)
    except OSError as e:
        fail(f"cannot read {path}: {e.strerror}")
    except ValueError as e:
        fail(f"{path} is not JSON ({str(e).splitlines()[0]})")
    if not isinstance(data, dict) or not isinstance(data.get("config"), dict) \
            or not isinstance(data.get("points"), list):
        fail(f"{path} has no 'config' and 'points': not from mimorx sim or ldpc ber --json")
    if not data["points"]:
        fail(f"{path} has no points yet")
    cfg = data["config"]
    curves = {}
    for p in data["points"]:
        if not isinstance(p, dict) or not isinstance(p.get("snr_db"), (int, float)):
            fail(f"{path}: a point without a numeric snr_db")
        curves.setdefault(p.get("detector", cfg.get("detector", "?")), []).append(p)
    return cfg, curves


def wilson(errors, trials, z=1.96):
    """95 % Wilson score interval of an error rate."""
    if trials <= 0:
        return 0.0, 0.0
    p = errors / trials
    d = 1 + z * z / trials
    centre = (p + z * z / (2 * trials)) / d
    half = z * math.sqrt(p * (1 - p) / trials + z * z / (4 * trials * trials)) / d
    return max(centre - half, 0.0), min(centre + half, 1.0)


def describe(cfg):
    """The link of a run as short parts: antennas, modulation, code, channel."""
    parts = {"mimo": f"{cfg.get('nt', '?')}x{cfg.get('nr', '?')}", "mod": str(cfg.get("mod", "?"))}
    if cfg.get("coding") == "ldpc":
        rate = cfg.get("rate")
        parts["code"] = f"LDPC R={rate:.2f}" if isinstance(rate, (int, float)) else "LDPC"
        if cfg.get("tbs"):
            parts["code"] += f" K={cfg['tbs']}"
    else:
        parts["code"] = "uncoded"
    channel = str(cfg.get("channel", "rayleigh"))
    parts["channel"] = "AWGN" if channel.startswith("awgn") else (
        "Rayleigh" if channel == "rayleigh, one realisation per received vector" else channel)
    if parts["channel"] == "AWGN" and parts["mimo"] == "1x1":
        parts["mimo"] = ""
    return parts


def curve_labels(runs, given):
    described = [describe(cfg) for cfg, _ in runs]
    keys = ["mimo", "mod", "code", "channel"]
    varying = [k for k in keys if len({d[k] for d in described}) > 1]
    auto = []
    for (cfg, curves), d in zip(runs, described):
        for det in curves:
            auto.append(", ".join([det] + [d[k] for k in varying if d[k]]))
    if given and len(given) != len(auto):
        fail(f"{len(given)} --label given for {len(auto)} curves ({'; '.join(auto)})")
    common = ", ".join(described[0][k] for k in keys if k not in varying and described[0][k])
    return given or auto, common


def draw(ax, points, metric, key_x, label, style, ci):
    pts = sorted((p for p in points if isinstance(p.get(metric), (int, float)) and p[metric] > 0),
                 key=lambda p: p[key_x])
    xs = [p[key_x] for p in pts]
    ys = [p[metric] for p in pts]
    errs, trials = COUNTS[metric]
    if ci and pts and all(isinstance(p.get(errs), int) and isinstance(p.get(trials), int)
                          for p in pts):
        lo_hi = [wilson(p[errs], p[trials]) for p in pts]
        yerr = [[max(y - lo, 0.0) for y, (lo, _) in zip(ys, lo_hi)],
                [max(hi - y, 0.0) for y, (_, hi) in zip(ys, lo_hi)]]
        ax.errorbar(xs, ys, yerr=yerr, label=label, capsize=2, elinewidth=0.8, **style)
    else:
        ax.plot(xs, ys, label=label, **style)


def main(argv):
    ap = Parser(description=__doc__.splitlines()[0])
    ap.add_argument("files", nargs="+", help="JSON files of mimorx sim, sim --ldpc or ldpc ber")
    ap.add_argument("-o", "--output", required=True, help="image file: .png, .pdf or .svg")
    ap.add_argument("--x", choices=["esn0", "ebn0", "snr"], default="esn0",
                    help="x axis: Es/N0 (esn0, default; 'snr' is the same) or Eb/N0 per "
                         "information bit (ebn0)")
    ap.add_argument("--metric", choices=["auto", "ber", "bler", "ser"], default="auto",
                    help="panels: auto (BER, and BLER beside it when a run is coded; default) "
                         "or one metric")
    ap.add_argument("--title", default=None,
                    help="figure title (default: what all curves share, e.g. '4x4, 16qam, LDPC "
                         "R=0.50 K=3824, Rayleigh'; '' for none)")
    ap.add_argument("--label", action="append", default=[],
                    help="label of a curve, once per curve in drawing order (files in order, "
                         "detectors in each file's order)")
    ap.add_argument("--xlabel", default=None, help="x axis label")
    ap.add_argument("--ylabel", action="append", default=[],
                    help="y axis label, once per panel (BER, BLER)")
    ap.add_argument("--legend", choices=["outside", "inside", "below"], default="outside",
                    help="legend to the right of the axes (default), below them, or inside "
                         "(placed where it covers the fewest points)")
    ap.add_argument("--ci", dest="ci", action="store_true", default=True,
                    help="95 %% Wilson confidence intervals as error bars (default)")
    ap.add_argument("--no-ci", dest="ci", action="store_false", help="no error bars")
    args = ap.parse_args(argv)
    ext = os.path.splitext(args.output)[1].lower()
    if ext not in FORMATS:
        fail(f"{args.output}: the extension must be one of {', '.join(FORMATS)}")

    runs = [load_run(path) for path in args.files]
    labels, common = curve_labels(runs, args.label)
    coded = any(cfg.get("coding") == "ldpc" for cfg, _ in runs)
    if args.metric == "auto":
        metrics = ["ber", "bler"] if coded else ["ber"]
    else:
        metrics = [args.metric]
        if not any(args.metric in p for _, curves in runs for pts in curves.values() for p in pts):
            fail(f"no point has '{args.metric}' (BLER needs coded runs, SER uncoded ones)")
    if args.ylabel and len(args.ylabel) != len(metrics):
        fail(f"{len(args.ylabel)} --ylabel given for {len(metrics)} panels "
             f"({', '.join(m.upper() for m in metrics)})")

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

    fig, axes = plt.subplots(1, len(metrics), figsize=(4.6 * len(metrics), 3.6), squeeze=False)
    axes = axes[0]
    key_x = "ebn0_db" if args.x == "ebn0" else "snr_db"
    label_iter = iter(labels)
    n = 0  # curves drawn: each its own colour, a marker per detector, a line style per file
    for f, (cfg, curves) in enumerate(runs):
        for d, (det, points) in enumerate(curves.items()):
            style = {"marker": MARKERS[d % len(MARKERS)], "color": f"C{n % 10}",
                     "linestyle": LINESTYLES[f % len(LINESTYLES)], "markersize": 4}
            label = next(label_iter)
            n += 1
            for ax, metric in zip(axes, metrics):
                draw(ax, points, metric, key_x, label, style, args.ci)
    for i, (ax, metric) in enumerate(zip(axes, metrics)):
        ax.set_yscale("log")
        ax.set_xlabel(args.xlabel if args.xlabel is not None else
                      ("$E_b/N_0$ [dB]" if key_x == "ebn0_db" else "$E_s/N_0$ [dB]"))
        ax.set_ylabel(args.ylabel[i] if args.ylabel else metric.upper())
        ax.grid(True, which="both", alpha=0.3)
    handles, names = axes[0].get_legend_handles_labels()
    if not handles:
        fail("no point with errors to draw")
    if args.legend == "outside":
        fig.legend(handles, names, loc="center left", bbox_to_anchor=(1.0, 0.5), fontsize=8,
                   frameon=False)
    elif args.legend == "below":
        fig.legend(handles, names, loc="upper center", bbox_to_anchor=(0.5, 0.0), fontsize=8,
                   frameon=False, ncol=min(len(handles), 4))
    else:
        axes[-1].legend(handles, names, loc="best", fontsize=8)
    title = args.title if args.title is not None else common
    if title:
        fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    try:
        fig.savefig(args.output, dpi=200, bbox_inches="tight")
    except OSError as e:
        fail(f"cannot write {args.output}: {e.strerror}")
    print(f"plot_sim.py: wrote {args.output}")


if __name__ == "__main__":
    main(sys.argv[1:])

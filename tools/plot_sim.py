#!/usr/bin/env python3
"""Plot BER (and BLER for coded runs) against SNR from one or more `mimorx sim --json` files.

    tools/plot_sim.py out1.json [out2.json ...] -o curves.png [--x ebn0]

Each file is one curve, labelled by its configuration (MIMO size, modulation, detector and, for
`--ldpc` runs, the code). Points with no errors are left out of the log-scale axes and counted
in the legend instead of being drawn at zero.
"""
import argparse
import json
import os
import sys


def label_of(cfg):
    text = f"{cfg['nt']}x{cfg['nr']} {cfg['mod']} {cfg['detector']}"
    if cfg.get("coding") == "ldpc":
        text += f", LDPC tbs={cfg['tbs']} R={cfg['rate']:.3f} {cfg['decoder']}"
    return text


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("files", nargs="+", help="JSON files written by mimorx sim --json")
    ap.add_argument("-o", "--output", required=True, help="image file (.png, .pdf, .svg)")
    ap.add_argument("--x", choices=["snr", "ebn0"], default="snr",
                    help="x axis: Es/N0 (snr, default) or Eb/N0 per information bit (ebn0)")
    args = ap.parse_args(argv)

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
        sys.exit("plot_sim.py: matplotlib is missing; scripts/setup installs python3-matplotlib")

    runs = []
    for path in args.files:
        try:
            with open(path) as f:
                data = json.load(f)
        except OSError as e:
            sys.exit(f"plot_sim.py: cannot read {path}: {e.strerror}")
        except ValueError as e:
            sys.exit(f"plot_sim.py: {path} is not JSON ({e})")
        if not isinstance(data, dict) or "config" not in data or not data.get("points"):
            sys.exit(f"plot_sim.py: {path} has no 'config' and 'points': not from mimorx sim --json")
        cfg, points = data["config"], data["points"]
        runs.append((cfg, points))
    coded = any(cfg.get("coding") == "ldpc" for cfg, _ in runs)

    fig, axes = plt.subplots(1, 2 if coded else 1, figsize=(12 if coded else 6.5, 4.5),
                             squeeze=False)
    key_x = "snr_db" if args.x == "snr" else "ebn0_db"
    for cfg, points in runs:
        for ax, metric in zip(axes[0], ["ber", "bler"] if coded else ["ber"]):
            if metric not in points[0]:
                continue
            xs = [p[key_x] for p in points if p[metric] > 0]
            ys = [p[metric] for p in points if p[metric] > 0]
            zero = sum(1 for p in points if p[metric] == 0)
            label = label_of(cfg) + (f" ({zero} points error-free)" if zero else "")
            ax.semilogy(xs, ys, marker="o", label=label)
    for ax, metric in zip(axes[0], ["BER", "BLER"] if coded else ["BER"]):
        ax.set_xlabel("Es/N0 [dB]" if args.x == "snr" else "Eb/N0 [dB]")
        ax.set_ylabel(metric)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
    fig.suptitle("mimorx sim, i.i.d. Rayleigh")
    fig.tight_layout()
    fig.savefig(args.output, dpi=120)
    print(f"plot_sim.py: wrote {args.output}")


if __name__ == "__main__":
    main(sys.argv[1:])

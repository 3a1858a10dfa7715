#!/usr/bin/env python3
"""Throughput curves of the TS 38.104 PUSCH requirements (data/nr/ts38104_pusch_requirements.json).

    tools/nr_reference.py run --mimorx PATH --out DIR [--backend B] [--slots N] [--rows 1,2]
                              [--csi ls-lmmse,perfect] [--below DB] [--above DB] [--step DB]
    tools/nr_reference.py report --dir DIR [--png FILE] [--json FILE] [--markdown FILE]

run: for every requirement row (or those of --rows) and receiver CSI, `mimorx sim --nr` with the
row's FRC (52 PRB, 15 kHz, MCS of table 1), antennas, channel and 4 HARQ transmissions, over
SNRs from the required SNR - below to + above, writing DIR/row<R>_<csi>.json. Rows with one
layer use MMSE (exact max-log for one stream); rows with two layers MMSE and sts (exact max-log).

SNR: TS 38.104 §8.1 defines it as the total signal energy on one receive antenna connector over
the noise: with unit-power channel entries and every layer at Es = 1 (the simulator's Es/N0 per
transmit antenna) that is layers x Es/N0, so a row with v layers runs at
Es/N0 = SNR - 10 log10(v), and the report gives SNRs in the spec's definition.

report: the SNR at which each curve first reaches 70 % of the maximum throughput (linear
interpolation between the two points around the crossing), beside the requirement: a summary
JSON, a markdown table and a PNG (one panel per row; matplotlib). Bad input: one line on
stderr, exit status 2.
"""
import argparse
import json
import math
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REQUIREMENTS = os.path.join(HERE, "..", "data", "nr", "ts38104_pusch_requirements.json")
TARGET = 0.7


def fail(message):
    sys.stderr.write(f"nr_reference.py: error: {message}\n")
    sys.exit(2)


class Parser(argparse.ArgumentParser):
    def error(self, message):
        fail(f"{message} (see --help)")


def load_json(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        fail(f"{path}: {e}")


def requirements():
    return load_json(REQUIREMENTS)


def selected_rows(spec, rows_text):
    rows = spec["requirements"]
    if not rows_text:
        return rows
    try:
        wanted = {int(r) for r in rows_text.split(",")}
    except ValueError:
        fail(f"--rows '{rows_text}': give row numbers, e.g. 1,2,10")
    known = {r["row"] for r in rows}
    if not wanted <= known:
        fail(f"--rows: unknown rows {sorted(wanted - known)}; the table has {sorted(known)}")
    return [r for r in rows if r["row"] in wanted]


def detectors_of(frc):
    return "mmse" if frc["layers"] == 1 else "mmse,sts"


def snr_grid(required, below, above, step):
    n = int(round((below + above) / step))
    return [round(required - below + i * step, 3) for i in range(n + 1)]


def spec_offset_db(layers):
    """SNR (TS 38.104) - Es/N0 per layer (mimorx sim)."""
    return 10.0 * math.log10(layers)


def run(args):
    spec = requirements()
    if not os.access(args.mimorx, os.X_OK):
        fail(f"--mimorx {args.mimorx}: not an executable")
    if args.step <= 0 or args.below < 0 or args.above < 0 or args.slots < 1:
        fail("--step, --slots must be > 0 and --below, --above >= 0")
    os.makedirs(args.out, exist_ok=True)
    for req in selected_rows(spec, args.rows):
        frc = spec["frc"][req["frc"]]
        if frc["layers"] != req["tx"]:
            fail(f"row {req['row']}: {req['frc']} has {frc['layers']} layers, {req['tx']} Tx")
        offset = spec_offset_db(frc["layers"])
        snrs = ",".join(f"{s - offset:.4g}" for s in snr_grid(req["snr_db"], args.below,
                                                               args.above, args.step))
        for csi in args.csi.split(","):
            out = os.path.join(args.out, f"row{req['row']}_{csi}.json")
            cmd = [args.mimorx, "sim", "--nr", "--backend", args.backend,
                   "--scs", str(frc["scs_khz"]), "--prb", str(frc["prb"]),
                   "--mcs-table", str(frc["mcs_table"]), "--mcs", str(frc["mcs"]),
                   "--layers", str(frc["layers"]), "--nrx", str(req["rx"]),
                   "--dmrs-type", "1", "--dmrs-add-pos", "1",
                   "--channel", req["channel"], "--csi", csi,
                   "--harq", str(spec["test_parameters"]["max_harq_transmissions"]),
                   "--detector", detectors_of(frc), "--snr", snrs,
                   "--slots", str(args.slots), "--seed", str(args.seed), "--json", out]
            print(" ".join(cmd), flush=True)
            done = subprocess.run(cmd, stdout=subprocess.DEVNULL)
            if done.returncode != 0:
                fail(f"row {req['row']} ({csi}): mimorx exited with {done.returncode}")
            got = load_json(out)["config"]
            want = frc["target_code_rate_x1024"] / 1024.0
            if abs(got.get("target_rate", -1.0) - want) > 1e-9 or got.get("mod") != frc["modulation"]:
                fail(f"row {req['row']}: MCS {frc['mcs']} gives {got.get('mod')} "
                     f"R={got.get('target_rate')}, the FRC {req['frc']} is {frc['modulation']} "
                     f"R={want}")


def crossing(points):
    """The SNR where the throughput fraction first reaches TARGET (None if never, or -inf if the
    first point already does)."""
    pts = sorted(points, key=lambda p: p["snr_db"])
    for i, p in enumerate(pts):
        if p["throughput_fraction"] >= TARGET:
            if i == 0:
                return -math.inf
            a, b = pts[i - 1], p
            fa, fb = a["throughput_fraction"], b["throughput_fraction"]
            return a["snr_db"] + (TARGET - fa) / (fb - fa) * (b["snr_db"] - a["snr_db"])
    return None


def curves(directory, req):
    """{(csi, detector): points} of one requirement row, SNR in the spec's definition."""
    out = {}
    prefix = f"row{req['row']}_"
    for name in sorted(os.listdir(directory)):
        if not (name.startswith(prefix) and name.endswith(".json")):
            continue
        data = load_json(os.path.join(directory, name))
        csi = data["config"].get("csi", name[len(prefix):-5])
        offset = spec_offset_db(int(data["config"].get("layers", 1)))
        for p in data.get("points", []):
            q = dict(p)
            q["snr_db"] = round(p["snr_db"] + offset, 3)
            out.setdefault((csi, p["detector"]), []).append(q)
    return out, (data["config"] if out else None)


def fmt_db(x):
    return f"{x:.1f}"


def report(args):
    spec = requirements()
    if not os.path.isdir(args.dir):
        fail(f"--dir {args.dir}: not a directory")
    rows = []
    for req in spec["requirements"]:
        cs, cfg = curves(args.dir, req)
        if not cs:
            continue
        for (csi, det), pts in sorted(cs.items()):
            snr70 = crossing(pts)
            finite = snr70 is not None and snr70 != -math.inf
            status = "reached" if finite else ("not reached" if snr70 is None else "below range")
            rows.append({"row": req["row"], "tx": req["tx"], "rx": req["rx"],
                         "channel": req["channel"], "frc": req["frc"], "tbs": cfg.get("tbs"),
                         "csi": csi, "detector": det, "required_snr_db": req["snr_db"],
                         "snr70_db": round(snr70, 2) if finite else None, "status": status,
                         "margin_db": round(req["snr_db"] - snr70, 2) if finite else None,
                         "slots_per_point": min(p["slots"] for p in pts),
                         "points": sorted(([p["snr_db"], p["throughput_fraction"]] for p in pts))})
    if not rows:
        fail(f"{args.dir}: no row<R>_<csi>.json files of mimorx sim --nr")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"source": spec["source"], "target_fraction": TARGET, "curves": rows}, f,
                      indent=1)
            f.write("\n")
    lines = ["| row | Tx x Rx | channel | FRC (TBS) | receiver | required SNR dB | "
             "ours at 70 % dB | margin dB |", "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        margin = "" if r["margin_db"] is None else f"{r['margin_db']:.1f}"
        lines.append(f"| {r['row']} | {r['tx']}x{r['rx']} | {r['channel']} | {r['frc']} "
                     f"({r['tbs']}) | {r['detector']}, {r['csi']} | {r['required_snr_db']:.1f} | "
                     f"{fmt_db(r['snr70_db']) if r['snr70_db'] is not None else r['status']} | "
                     f"{margin} |")
    table = "\n".join(lines) + "\n"
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(table)
    else:
        sys.stdout.write(table)
    if args.png:
        plot(rows, spec, args.png)


def plot(rows, spec, path):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        fail("--png needs matplotlib (pip install matplotlib)")
    reqs = [r for r in spec["requirements"] if any(c["row"] == r["row"] for c in rows)]
    cols = min(3, len(reqs))
    nrows = (len(reqs) + cols - 1) // cols
    fig, axes = plt.subplots(nrows, cols, figsize=(4.2 * cols, 3.3 * nrows), squeeze=False)
    styles = {"ls-lmmse": "-", "ls-linear": "-.", "perfect": "--"}
    for ax, req in zip(axes.flat, reqs):
        for c in (c for c in rows if c["row"] == req["row"]):
            xs, ys = zip(*c["points"])
            ax.plot(xs, ys, styles.get(c["csi"], ":"),
                    marker="o" if c["detector"] == "mmse" else "s", markersize=3,
                    label=f"{c['detector']}, {c['csi']}")
        ax.axvline(req["snr_db"], color="k", linewidth=1)
        ax.axhline(TARGET, color="grey", linewidth=0.8, linestyle=":")
        ax.set_title(f"row {req['row']}: {req['tx']}x{req['rx']} {req['channel']}\n"
                     f"{req['frc']}, required {req['snr_db']:g} dB", fontsize=9)
        ax.set_xlabel("SNR (dB)", fontsize=8)
        ax.set_ylabel("throughput fraction", fontsize=8)
        ax.set_ylim(0, 1.02)
        ax.grid(True, alpha=0.3)
        ax.tick_params(labelsize=8)
        ax.legend(fontsize=7, loc="lower right")
    for ax in list(axes.flat)[len(reqs):]:
        ax.axis("off")
    fig.tight_layout()
    try:
        fig.savefig(path, dpi=110)
    except OSError as e:
        fail(f"{path}: {e}")


def main():
    ap = Parser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True, parser_class=Parser)
    r = sub.add_parser("run")
    r.add_argument("--mimorx", required=True)
    r.add_argument("--out", required=True)
    r.add_argument("--backend", default="auto")
    r.add_argument("--slots", type=int, default=2000)
    r.add_argument("--seed", type=int, default=1)
    r.add_argument("--rows", default="")
    r.add_argument("--csi", default="ls-lmmse,perfect")
    r.add_argument("--below", type=float, default=6.0)
    r.add_argument("--above", type=float, default=1.0)
    r.add_argument("--step", type=float, default=0.5)
    p = sub.add_parser("report")
    p.add_argument("--dir", required=True)
    p.add_argument("--png")
    p.add_argument("--json")
    p.add_argument("--markdown")
    args = ap.parse_args()
    run(args) if args.cmd == "run" else report(args)


if __name__ == "__main__":
    main()

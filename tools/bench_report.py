#!/usr/bin/env python3
"""Turn the benchmarks' JSON lines into a Markdown report: one header (device, driver, commit,
date, command) and, per module, a table of workload, the paper's figure, the peer's figure, ours,
the floor and the fraction of the floor reached.

    tools/bench_report.py OUT/bench.jsonl [--cpu OUT/cpubench.jsonl] [--gpu-txt OUT/gpu.txt]
                          [--reference bench/reference_figures.json] [--commit SHA]
                          [--date DATE] [--command CMD] [-o BENCHMARKS.md]

Input: the lines the GPU benchmarks (bench/*/gpubench_*) append to the file named on their
command line, which `scripts/device-check` collects in $OUT/bench.jsonl; optionally the CPU
benchmarks' Google Benchmark documents ($OUT/cpubench.jsonl, one per line) and nvidia-smi's
CSV ($OUT/gpu.txt: name, driver_version, ...). Paper and peer figures come from the reference
file (bench/reference_figures.json), the only figures typed by hand: each names its module,
the record fields it applies to and its source.

Fractions: for a time, floor / ours; for a rate, ours / floor. Records of kinds the report does
not tabulate (sweeps, ceilings, quality runs) are counted at the end.
"""
import argparse
import json
import os
import sys
from collections import OrderedDict


def fail(message):
    sys.exit(f"bench_report.py: {message}")


# ---- reading -----------------------------------------------------------------------------------


def read_jsonl(path):
    records = []
    try:
        with open(path) as f:
            for number, line in enumerate(f, 1):
                line = line.strip()
                if not line:
                    continue
                try:
                    records.append(json.loads(line))
                except json.JSONDecodeError as e:
                    fail(f"{path}:{number}: not a JSON line ({e.msg})")
    except OSError as e:
        fail(f"{path}: {e.strerror}")
    return records


def read_gpu_txt(path):
    """(name, driver) from nvidia-smi's CSV: the header line, then one line per GPU."""
    try:
        lines = [l.strip() for l in open(path) if l.strip()]
    except OSError as e:
        fail(f"{path}: {e.strerror}")
    data = [l for l in lines if not l.startswith("name")]
    if not data:
        return None, None
    fields = [x.strip() for x in data[-1].split(",")]
    return fields[0], (fields[1] if len(fields) > 1 else None)


def read_reference(path):
    try:
        ref = json.load(open(path))
    except OSError as e:
        fail(f"{path}: {e.strerror}")
    except json.JSONDecodeError as e:
        fail(f"{path}: not JSON ({e.msg})")
    if not isinstance(ref, dict) or not isinstance(ref.get("figures", []), list):
        fail(f"{path}: expected an object with a list 'figures'")
    for i, fig in enumerate(ref.get("figures", [])):
        if "module" not in fig or not isinstance(fig.get("match", {}), dict):
            fail(f"{path}: figures[{i}] needs 'module' and an object 'match'")
        for side in ("paper", "peer"):
            if side in fig and ("value" not in fig[side] or "unit" not in fig[side]):
                fail(f"{path}: figures[{i}].{side} needs 'value' and 'unit'")
            src = fig.get(side, {}).get("source")
            if src is not None and src not in ref.get("sources", {}):
                fail(f"{path}: figures[{i}].{side}: source '{src}' is not in 'sources'")
    return ref


# ---- rows --------------------------------------------------------------------------------------

TIME_UNITS = {"us", "ms", "s", "us/basis", "ms/basis"}


class Row:
    def __init__(self, module, record, workload, ours, unit, floor=None, fraction=None,
                 paper=None, peer=None):
        self.module, self.record, self.workload = module, record, workload
        self.ours, self.unit, self.floor = ours, unit, floor
        # A paper or peer figure the benchmark records itself ({"value", "unit", "note"}), used
        # where the reference file has none for this row.
        self.paper, self.peer = paper, peer
        if fraction is None and floor is not None and ours:
            fraction = floor / ours if unit in TIME_UNITS else ours / floor
        self.fraction = fraction


def dram_bandwidth(ref, device):
    dev = ref.get("devices", {}).get(device or "", {})
    return dev.get("dram_bytes_per_s")


def rows_qr(r, ref):
    shape = f"{r['rows']}x{r['cols']}"
    w = f"{r['model']} {shape}{' sorted' if r.get('sorted') else ''}, {r['channels']} channels"
    return [Row("qr", r, w, r["us"], "us", r.get("bytes_floor_us"))]


def rows_linear(r, ref):
    w = (f"{r['kind']} {'soft' if r['soft'] else 'hard'} {r['nt']}x{r['nr']} {r['mod']}, "
         f"{r['channels']} x {r['vectors_per_channel']}"
         f"{', device NaN check' if r.get('device_check') else ''}")
    floor = None
    if r.get("bytes_floor_ms") and r.get("ms"):
        floor = r["gbit_per_s"] * r["ms"] / r["bytes_floor_ms"]
    return [Row("linear", r, w, r["gbit_per_s"], "Gbit/s", floor)]


def rows_ml(r, ref):
    w = f"{r['nt']}x{r['nr']} {r['mod']} {'soft' if r['soft'] else 'hard'}, {r['vectors']} vectors"
    return [Row("ml", r, w, r["gbit_per_s"], "Gbit/s", r.get("floor_gbit_per_s"))]


def rows_sphere(r, ref):
    if r["bench"] not in ("psd_auto", "psd_paper_setup"):
        return None
    setup = " (the paper's set-up)" if r["bench"] == "psd_paper_setup" else ""
    w = (f"{r['nt']}x{r['nr']} {r['mod']} {r['snr_db']:g} dB, "
         f"{r['channels']} x {r['vectors_per_channel']}{setup}")
    return [Row("sphere", r, w, r["gbit_per_s"], "Gbit/s")]


def rows_nway(r, ref):
    vpc = f", {r['vpc']} vectors a channel" if r.get("vpc", 1) != 1 else ""
    w = f"{r['nt']}x{r['nr']} {r['mod']} N={r['n_ways']}, {r['vectors']} vectors{vpc}"
    return [Row("nway", r, w, r["detect_gbps"], "Gbit/s")]


def rows_kbest(r, ref):
    kernel = f", {r['kernel']} kernel" if r.get("kernel") else ""
    w = f"{r['nt']}x{r['nr']} {r['mod']} K={r['k']}{kernel}, {r['vectors']} vectors"
    return [Row("kbest", r, w, r["detect_gbps"], "Gbit/s", r.get("select_floor_gbps"))]


def rows_sts(r, ref):
    clip = "exact" if not r["clip"] else f"clip {r['clip']:g}"
    sched = ", one thread per vector" if r.get("schedule") == "one_per_vector" else ""
    w = (f"{r['nt']}x{r['nr']} {r['mod']}, {r['snr_db']:g} dB, {clip}, {r['vectors']} vectors, "
         f"{r['vectors_per_channel']} a channel, {r['avg_nodes']:.0f} nodes a vector{sched}")
    return [Row("sts", r, w, r["gbit_per_s"], "Gbit/s")]


def rows_ldpc_decoder(r, ref):
    # The automatic block shape only (the benchmark also runs forced variants).
    if r.get("requested_max_block_threads", 0) != 0 or not r.get("packed", True):
        return None
    place = ""
    if "c2v_shared" in r:
        place = ", C2V smem" if r["c2v_shared"] else (
            ", C2V L2 records" if r.get("c2v_records") else ", C2V L2")
    w = f"{r['code']}, {r['path']}{place}, {r['iterations']} it"
    floor_ms = max(r.get("hbm_floor_ms") or 0, r.get("smem_floor_ms") or 0)
    floor = r["info_gbps"] * r["kernel_ms"] / floor_ms if floor_ms else None
    return [Row("ldpc_decoder", r, w, r["info_gbps"], "Gbit/s", floor)]


def rows_ldpc_ceiling(r, ref):
    # The row update's throughput ceilings per code and instruction mix (gpubench_ceiling_ldpc):
    # arithmetic alone, and the kernel's row code with its shared-memory work.
    w = f"{r['code']}, {r['mix']}, row code (arithmetic alone: {r['arith_ceiling_gbps']:.1f})"
    return [Row("ldpc_ceiling", r, w, r["row_ceiling_gbps"], "Gbit/s")]


def rows_ldpc_encoder(r, ref):
    w = f"BG{r['bg']} Z={r['z']} K={r['k']}, {r['words']} words"
    floor = r["info_gbit_s"] * r["kernel_ms"] / r["hbm_floor_ms"] if r.get("hbm_floor_ms") else None
    return [Row("ldpc_encoder", r, w, r["info_gbit_s"], "Gbit/s", floor)]


def rows_lll(r, ref):
    bw = dram_bandwidth(ref, r.get("device"))
    n = r["n"]
    # Each basis read and written once (float32 in the benchmark).
    floor_s = 2 * n * n * 4 / bw if bw else None
    if r.get("batch", 1) > 1:
        base = f"{r['kind']} {n}x{n}, {r['batch']} bases, {r['method']}"
        floor = floor_s * 1e6 if floor_s else None
        rows = [Row("lll", r, base + ", plan.run with the lattice check",
                    r["us_per_basis_plan"], "us/basis", floor)]
        if "us_per_basis_plan_no_lattice_check" in r:
            rows.append(Row("lll", r, base + ", plan.run without the check",
                            r["us_per_basis_plan_no_lattice_check"], "us/basis", floor))
        return rows
    opts = [f"l={r['block']}"]
    if r.get("transform"):
        opts.append("caller's T")
    opts.append("lattice check" if r.get("lattice_check") else "no check")
    if not r.get("presort", True):
        opts.append("input order")
    w = f"{r['kind']} {n}x{n}, {r['method']} ({', '.join(opts)})"
    return [Row("lll", r, w, r["ms_wall"], "ms", floor_s * 1e3 if floor_s else None)]


def rows_trellis(r, ref):
    case = r.get("case")
    if case == "paper":
        w = f"{r['nt']}x{r['nr']} {r['mod']}, {r['vectors']} vectors (the paper's set-up), kernels"
        paper = None
        if r.get("paper_mbps"):
            paper = {"value": r["paper_mbps"] / 1e3, "unit": "Gbit/s",
                     "note": "as recorded by the benchmark"}
        return [Row("trellis", r, w, r["kernels_mbps"] / 1e3, "Gbit/s", paper=paper)]
    if case == "fill":
        variant = r.get("variant", "default")
        w = (f"{r['nt']}x{r['nr']} {r['mod']}, {r['vectors']} vectors, search"
             f"{'' if variant == 'default' else ', ' + variant}")
        rows = [Row("trellis", r, w, r["search_gbps"], "Gbit/s", r.get("model_floor_gbps"))]
        if "kernels_gbps" in r:
            # What a user gets: the QR and the search (the targets are stated on this).
            w_all = w.replace(", search", ", QR + search")
            rows.append(Row("trellis", r, w_all, r["kernels_gbps"], "Gbit/s"))
        return rows
    return None


def rows_sim_link(r, ref):
    w = f"{r['case']}, TBS {r['tbs']}, rate {r['rate']:g}, {r['iters']} it"
    ours = r["info_mbps"] / 1e3
    return [Row("sim_link", r, w, ours, "Gbit/s", r.get("decoder_gbps"),
                r.get("fraction_of_decoder"))]


def rows_sim_nr_link(r, ref):
    """gpubench_nr_link_sim: simulated NR slots per second on each backend."""
    w = (f"{r['backend']} {r['detector']}, {r['prb']} PRB {r['scs_khz']} kHz, "
         f"{r['layers']}x{r['n_rx']}, MCS {r['mcs']} (table {r['mcs_table']}), {r['channel']}, "
         f"{r['csi']}, {r['snr_db']:g} dB")
    return [Row("sim_nr_link", r, w, r["slots_per_s"], "slots/s")]


def rows_python_sionna_link(r, ref):
    """examples/python/sionna_link.py: each block and the link, mimorx.sionna's beside Sionna's
    (the peer, measured in the same script)."""
    rows = []
    info = r["batch"] * r["k"]
    for blk in ("encoder", "mapper", "detector", "decoder", "link"):
        ts, tm = r["sionna_s"][blk], r["mimorx_s"][blk]
        w = (f"{blk}, {r['nt']}x{r['nr']} {r['mod']}, LDPC k={r['k']} n={r['n']}, "
             f"{r['batch']} codewords a call")
        peer = {"value": info / ts / 1e9, "unit": "Gbit/s",
                "note": f"Sionna 2.2's block in the same script, torch {r.get('torch', '?')}"}
        rows.append(Row("python_sionna_link", r, w, info / tm / 1e9, "Gbit/s", peer=peer))
    return rows


# module: (title, what the floor is, {bench kind: row function})
MODULES = OrderedDict([
    ("qr", ("Batched QR (`gpubench_qr_linalg`)",
            "bytes moved (H in; Q, R, permutation, status out) at the DRAM bandwidth",
            {"qr": rows_qr})),
    ("linear", ("Linear detectors (`gpubench_linear_detect`)",
                "bytes moved at the DRAM bandwidth, as Gbit/s", {"linear": rows_linear})),
    ("ml", ("Exhaustive ML (`gpubench_ml_detect`)",
            "one useful instruction per lane and cycle (docs/ml.md)", {"ml": rows_ml})),
    ("sphere", ("Parallel Sphere Detector (`gpubench_sphere_detect`)", "not stated",
                {"psd_auto": rows_sphere, "psd_paper_setup": rows_sphere})),
    ("nway", ("N-way detector (`gpubench_nway_detect`)", "not stated", {"nway": rows_nway})),
    ("kbest", ("K-best detector (`gpubench_kbest_detect`)",
               "warp kernel: its selection network at one warp instruction per scheduler and "
               "cycle (block kernel: not stated)", {"kbest": rows_kbest})),
    ("sts", ("Single-tree-search soft sphere decoder (`gpubench_sts_detect`)", "not stated",
             {"sts": rows_sts})),
    ("ldpc_decoder", ("5G NR LDPC decoder (`gpubench_decoder_ldpc`)",
                      "the larger of the DRAM and shared-memory instruction floors",
                      {"ldpc_decoder": rows_ldpc_decoder})),
    ("ldpc_ceiling", ("LDPC row-update ceilings per instruction mix (`gpubench_ceiling_ldpc`)",
                      "not stated (these are ceilings: docs/ldpc_decoder.md)",
                      {"ldpc_ceiling_code": rows_ldpc_ceiling})),
    ("ldpc_encoder", ("5G NR LDPC encoder (`gpubench_encoder_ldpc`)",
                      "bytes moved at the DRAM bandwidth", {"ldpc_encoder": rows_ldpc_encoder})),
    ("lll", ("LLL lattice reduction (`gpubench_lll_lattice`)",
             "each basis read and written once at the DRAM bandwidth "
             "(devices in the reference file)", {"lll": rows_lll})),
    ("trellis", ("Trellis detector (`gpubench_trellis_detect`)",
                 "the instruction model of the search at one instruction per lane and cycle",
                 {"trellis": rows_trellis})),
    ("python_sionna_link", ("The Sionna link with mimorx.sionna's blocks "
                            "(`examples/python/sionna_link.py --jsonl`)", "not stated",
                            {"python_sionna_link": rows_python_sionna_link})),
    ("sim_link", ("Coded link on the GPU (`gpubench_link_sim`)",
                  "the standalone decoder's throughput for the same code",
                  {"sim_link": rows_sim_link})),
    ("sim_nr_link", ("NR slot link (`gpubench_nr_link_sim`)", "not stated",
                     {"sim_nr_link": rows_sim_nr_link})),
])

KIND_TO_MODULE = {kind: module for module, (_, _, kinds) in MODULES.items() for kind in kinds}


def build_rows(records, ref):
    rows, skipped = [], OrderedDict()
    for r in records:
        kind = r.get("bench")
        if kind is None:  # a metadata line (source, date) of a stored file, not a measurement
            continue
        module = KIND_TO_MODULE.get(kind)
        made = None
        if module is not None:
            try:
                made = MODULES[module][2][kind](r, ref)
            except (KeyError, TypeError, ZeroDivisionError) as e:
                fail(f"a '{kind}' record lacks or mistypes a field ({e}): {json.dumps(r)[:120]}")
        if made is None:
            skipped[kind] = skipped.get(kind, 0) + 1
        else:
            rows.extend(made)
    return rows, skipped


def matches(fig, row):
    if fig["module"] != row.module:
        return False
    return all(row.record.get(k) == v for k, v in fig.get("match", {}).items())


def reference_for(ref, row):
    for fig in ref.get("figures", []):
        if matches(fig, row):
            return fig
    return None


# ---- writing -----------------------------------------------------------------------------------


def num(x):
    if x is None:
        return "-"
    if x == 0:
        return "0"
    a = abs(x)
    if a >= 100:
        return f"{x:.0f}"
    if a >= 10:
        return f"{x:.1f}"
    if a >= 0.01:
        return f"{x:.3g}"
    return f"{x:.2g}"


def cited(fig, side, notes, inline=None):
    entry = (fig or {}).get(side) or inline
    if not entry:
        return "-"
    text = f"{num(entry['value'])} {entry['unit']}"
    if entry.get("note"):
        text += f" ({entry['note']})"
    src = entry.get("source")
    if src:
        if src not in notes:
            notes.append(src)
        text += f" [{notes.index(src) + 1}]"
    return text


def fraction_text(f):
    if f is None:
        return "-"
    return f"{100 * f:.2g} %" if f < 0.1 else f"{100 * f:.0f} %"


def write_report(out, rows, skipped, ref, header, cpu_docs):
    notes = []
    out.write("# mimorx benchmarks\n\n")
    out.write("Generated by `tools/bench_report.py` from the benchmarks' JSON lines; the paper\n")
    out.write("and peer figures come from `bench/reference_figures.json`, with their sources.\n\n")
    for key in ("device", "driver", "commit", "date", "command"):
        out.write(f"- {key}: {header.get(key) or 'not recorded'}\n")
    for module, (title, floor_text, _) in MODULES.items():
        mine = [r for r in rows if r.module == module]
        if not mine:
            continue
        out.write(f"\n## {title}\n\nFloor: {floor_text}.\n\n")
        out.write("| workload | paper | peer | ours | floor | fraction |\n")
        out.write("|---|---|---|---|---|---|\n")
        for r in mine:
            fig = reference_for(ref, r)
            unit = r.unit
            paper = cited(fig, "paper", notes, r.paper)
            peer = cited(fig, "peer", notes, r.peer)
            floor = f"{num(r.floor)} {unit}" if r.floor else "-"
            out.write(f"| {r.workload} | {paper} | {peer} | {num(r.ours)} {unit} | {floor} "
                      f"| {fraction_text(r.fraction)} |\n")
    if cpu_docs:
        out.write("\n## CPU references (Google Benchmark)\n\n")
        ctx = cpu_docs[0].get("context", {})
        out.write(f"Host: {ctx.get('host_name', 'not recorded')}, {ctx.get('num_cpus', '?')} CPUs "
                  f"at {ctx.get('mhz_per_cpu', '?')} MHz.\n\n")
        out.write("| benchmark | real time | CPU time | items/s |\n|---|---|---|---|\n")
        for doc in cpu_docs:
            for b in doc.get("benchmarks", []):
                if b.get("run_type") == "aggregate":
                    continue
                unit = b.get("time_unit", "ns")
                ips = b.get("items_per_second")
                out.write(f"| {b.get('name')} | {num(b.get('real_time'))} {unit} "
                          f"| {num(b.get('cpu_time'))} {unit} | {num(ips) if ips else '-'} |\n")
    if skipped:
        kinds = ", ".join(f"{k} ({n})" for k, n in skipped.items())
        out.write(f"\nRecords not tabulated (sweeps, ceilings, quality runs, variants): {kinds}.\n")
    if notes:
        out.write("\n## Sources\n\n")
        for i, src in enumerate(notes, 1):
            out.write(f"{i}. {ref['sources'][src]}\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("bench", help="JSON lines of the GPU benchmarks (bench.jsonl)")
    ap.add_argument("--cpu", help="Google Benchmark documents, one per line (cpubench.jsonl)")
    ap.add_argument("--gpu-txt", help="nvidia-smi CSV (gpu.txt): device name and driver")
    here = os.path.dirname(os.path.abspath(__file__))
    ap.add_argument("--reference",
                    default=os.path.join(here, "..", "bench", "reference_figures.json"))
    ap.add_argument("--commit")
    ap.add_argument("--date")
    ap.add_argument("--command")
    ap.add_argument("-o", "--output", help="the Markdown file (default: standard output)")
    a = ap.parse_args()

    records = read_jsonl(a.bench)
    if not records:
        fail(f"{a.bench}: no benchmark records")
    ref = read_reference(a.reference)
    cpu_docs = read_jsonl(a.cpu) if a.cpu else []
    device = driver = None
    if a.gpu_txt:
        device, driver = read_gpu_txt(a.gpu_txt)
    if not device:
        devices = sorted({r["device"] for r in records if r.get("device")})
        device = ", ".join(devices) if devices else None
    header = {"device": device, "driver": driver, "commit": a.commit, "date": a.date,
              "command": f"`{a.command}`" if a.command else None}
    rows, skipped = build_rows(records, ref)
    if a.output:
        with open(a.output, "w") as out:
            write_report(out, rows, skipped, ref, header, cpu_docs)
    else:
        write_report(sys.stdout, rows, skipped, ref, header, cpu_docs)


if __name__ == "__main__":
    main()

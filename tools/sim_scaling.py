#!/usr/bin/env python3
"""The scaling of `mimorx sim` over MPI ranks (docs/sim_mpi.md, "Scaling").

Runs one `mimorx sim` command with 1, 2, ... ranks under an MPI launcher, checks that every run
writes the points of the one-rank run (all fields but `seconds`), and prints a Markdown table:
ranks, seconds (the sum of the points' seconds, rank 0's wall time of each point), the
simulated information throughput (the points' `bits`, or with --nr their delivered bits, over
those seconds), the speed-up over one rank and the parallel efficiency (speed-up / ranks).

Usage:
  tools/sim_scaling.py [--mimorx PATH] [--mpiexec mpirun] [--ranks 1,2,4] [--launcher-arg ARG]...
                       [--out table.md] -- SIM ARGUMENTS

SIM ARGUMENTS are those of `mimorx sim` (without --json, which the tool sets). Exit status 0 when
every run succeeded with the one-rank counts, 1 when counts differ or a run failed, 2 on bad
usage.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile


def fail(message, status=2):
    print(f"sim_scaling: {message}", file=sys.stderr)
    sys.exit(status)


def parse():
    p = argparse.ArgumentParser(prog="sim_scaling.py", add_help=True)
    p.add_argument("--mimorx", default="build/release/apps/mimorx/mimorx")
    p.add_argument("--mpiexec", default="mpirun")
    p.add_argument("--ranks", default="1,2,4")
    p.add_argument("--launcher-arg", action="append", default=[],
                   help="an argument for the launcher (repeat), e.g. --oversubscribe")
    p.add_argument("--out", help="also write the table to this file")
    p.add_argument("sim", nargs=argparse.REMAINDER)
    a = p.parse_args()
    if a.sim[:1] == ["--"]:
        a.sim = a.sim[1:]
    if not a.sim:
        fail("give the `mimorx sim` arguments after --")
    if "--json" in a.sim:
        fail("--json is set by the tool; leave it out of the sim arguments")
    try:
        a.ranks = [int(n) for n in a.ranks.split(",")]
    except ValueError:
        fail(f"--ranks: '{a.ranks}'; give a list like 1,2,4")
    if not a.ranks or a.ranks[0] != 1 or any(n < 1 for n in a.ranks):
        fail("--ranks must start with 1 (the reference run) and hold positive counts")
    return a


def counts(doc):
    return [{k: v for k, v in p.items() if k != "seconds"} for p in doc["points"]]


def information_bits(point):
    return point.get("bits", point.get("delivered_bits", 0)) or 0


def main():
    a = parse()
    rows, reference = [], None
    with tempfile.TemporaryDirectory(prefix="sim_scaling_") as tmp:
        for n in a.ranks:
            path = os.path.join(tmp, f"{n}.json")
            cmd = [a.mpiexec, "-n", str(n), *a.launcher_arg, a.mimorx, "sim", *a.sim, "--json",
                   path]
            r = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            if r.returncode != 0:
                sys.stderr.write(r.stderr)
                fail(f"{' '.join(cmd)} ended with exit status {r.returncode}", 1)
            with open(path) as f:
                doc = json.load(f)
            seconds = sum(p["seconds"] for p in doc["points"])
            bits = sum(information_bits(p) for p in doc["points"])
            if reference is None:
                reference = (counts(doc), bits / seconds if seconds else 0.0)
            same = counts(doc) == reference[0]
            rate = bits / seconds if seconds else 0.0
            speedup = rate / reference[1] if reference[1] else 0.0
            rows.append((n, seconds, rate, speedup, speedup / n, same))
    table = ["| ranks | seconds | Mbit/s | speed-up | efficiency | counts of 1 rank |",
             "|---:|---:|---:|---:|---:|---|"]
    for n, seconds, rate, speedup, eff, same in rows:
        table.append(f"| {n} | {seconds:.2f} | {rate / 1e6:.1f} | {speedup:.2f} | "
                     f"{100 * eff:.0f} % | {'yes' if same else 'NO'} |")
    text = "\n".join(table) + "\n"
    sys.stdout.write(text)
    if a.out:
        with open(a.out, "w") as f:
            f.write(text)
    if not all(row[5] for row in rows):
        fail("a run's counts differ from those of one rank", 1)


if __name__ == "__main__":
    main()

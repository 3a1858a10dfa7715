#!/usr/bin/env python3
"""`mimorx sim` as an MPI job (docs/sim_mpi.md) against one process, on the CPU.

Usage: sim_mpi.py MIMORX MPIEXEC

- Uncoded, --ldpc and --nr runs with stop rules (--min-errors cutting inside a round, at a rank
  other than 0 too; --early-stop; --max-frames/--max-blocks/--slots not a multiple of the
  rounds) give exactly the counts of one process with 2 and 3 ranks, and --resume of a partial
  one-process file by 3 ranks gives the full one-process file.
- Failures end the whole job with exit status 2 and one mimorx error line, never a hang: bad
  input on every rank, an output file rank 0 cannot write before the run, and one that rank 0
  cannot write after the first point while the other ranks simulate.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

MIMORX, MPIEXEC = sys.argv[1], sys.argv[2]
TIMEOUT = 120  # seconds a job may take before it counts as hung

ENV = dict(os.environ)
# CI runs as root; Open MPI refuses that without both variables.
ENV.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
# Ranks with one OpenMP thread each (2 cores in CI): their automatic batches then differ from
# the single process's, which the counts must not depend on.
RANK_ENV = dict(ENV, OMP_NUM_THREADS="1")

version = subprocess.run([MPIEXEC, "--version"], capture_output=True, text=True, env=ENV)
# Open MPI (its launcher calls itself OpenRTE) starts no more ranks than cores unless told.
OPEN_MPI = any(name in version.stdout + version.stderr for name in ("Open MPI", "OpenRTE"))
LAUNCH = [MPIEXEC] + (["--oversubscribe"] if OPEN_MPI else [])

failures = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what, flush=True)
    if not ok:
        failures.append(what)


def counts(path):
    """The points of a result file without their timing."""
    with open(path) as f:
        doc = json.load(f)
    return [{k: v for k, v in p.items() if k != "seconds"} for p in doc["points"]], doc["config"]


def run(args, ranks=0, timeout=TIMEOUT):
    cmd = ([*LAUNCH, "-n", str(ranks)] if ranks else []) + [MIMORX, *args]
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout,
                              env=RANK_ENV if ranks else ENV)
    except subprocess.TimeoutExpired:
        check(False, f"{' '.join(cmd)} ended within {timeout} s")
        return None


def error_lines(r):
    return [l for l in r.stderr.splitlines() if l.startswith("mimorx: ")]


tmp = tempfile.mkdtemp(prefix="mimorx_mpi_")
CASES = {
    # bit errors cut inside rounds of 3 x 97 frames; 40 dB has no error: the sweep ends there
    "uncoded": ["sim", "--mimo", "2x2", "--mod", "qpsk", "--detector", "mmse,zf", "--snr", "0,4,8,12,16,90,95",
                "--max-frames", "7777", "--batch", "97", "--min-errors", "300", "--early-stop"],
    "ldpc": ["sim", "--ldpc", "--mimo", "2x2", "--mod", "16qam", "--tbs", "256", "--detector", "mmse",
             "--snr", "4,6,8,10,12,30,32", "--max-blocks", "301", "--min-errors", "20",
             "--early-stop"],
    "nr": ["sim", "--nr", "--prb", "4", "--mcs", "10", "--harq", "2", "--detector", "mmse", "--snr",
           "0,2,4,6,8,10,40,42", "--slots", "121", "--batch", "5", "--min-errors", "9", "--early-stop"],
}
for name, args in CASES.items():
    args = [*args, "--backend", "cpu"]
    one = os.path.join(tmp, f"{name}_1.json")
    r = run([*args, "--json", one])
    check(r is not None and r.returncode == 0, f"{name}: one process")
    if r is None or r.returncode:
        print(r.stderr if r else "")
        continue
    base, _ = counts(one)
    # The stop rules took effect: a point cut by --min-errors before its maximum, and
    # --early-stop ending every sweep before its last SNR.
    errors, units = ("bit_errors", "frames") if name == "uncoded" else ("block_errors", "blocks")
    min_errors = int(args[args.index("--min-errors") + 1])
    check(any(p[errors] == min_errors and p[units] % 3 for p in base),
          f"{name}: --min-errors cut a point")
    detectors = args[args.index("--detector") + 1].split(",")
    snrs = len(args[args.index("--snr") + 1].split(","))
    for d in detectors:
        mine = [p for p in base if p["detector"] == d]
        check(len(mine) < snrs and mine[-1][errors] == 0, f"{name}: --early-stop ended {d}")
    for n in (2, 3):
        out = os.path.join(tmp, f"{name}_{n}.json")
        r = run([*args, "--json", out], ranks=n)
        ok = r is not None and r.returncode == 0
        check(ok, f"{name}: {n} ranks run")
        if not ok:
            print(r.stderr if r else "")
            continue
        got, config = counts(out)
        check(got == base, f"{name}: {n} ranks give the counts of one process")
        check(config.get("ranks") == n, f"{name}: the file records {n} ranks")
        check(r.stdout.count("\n") == len(base) + 1, f"{name}: one table (rank 0 alone prints)")

# --resume: 3 ranks complete a file one process began.
args = [*CASES["ldpc"], "--backend", "cpu"]
part = os.path.join(tmp, "resume.json")
snr_at = args.index("--snr") + 1
r = run([*args[:snr_at], "4,6,8", *args[snr_at + 1:], "--json", part])
check(r is not None and r.returncode == 0, "resume: the partial run")
r = run([*args, "--json", part, "--resume"], ranks=3)
check(r is not None and r.returncode == 0, "resume: 3 ranks complete it")
if r is not None and r.returncode == 0:
    check(counts(part)[0] == counts(os.path.join(tmp, "ldpc_1.json"))[0],
          "resume: the completed file has the counts of one full run")

# Failures: exit status 2, one mimorx line on stderr, within the timeout.
small = ["sim", "--mimo", "2x2", "--mod", "qpsk", "--snr", "0:4:12", "--max-frames", "2000",
         "--backend", "cpu"]
for what, args, says in [
        ("a detector no rank knows", [*small, "--detector", "nosuch"], "detector: 'nosuch'"),
        ("a --json file rank 0 cannot write", [*small, "--json", "/nonexistent/dir/x.json"],
         "json: cannot write"),
]:
    r = run(args, ranks=2)
    check(r is not None and r.returncode == 2 and len(error_lines(r)) == 1 and
          says in error_lines(r)[0],
          f"failure, {what}: exit status 2 and one error line")
    if r is not None:
        print("     " + " | ".join(error_lines(r)))

# Rank 0 fails while rank 1 is inside a round (its --json directory disappears after the first
# point): the job must end (MPI_Abort), not wait for rank 0 forever.
outdir = os.path.join(tmp, "vanishing")
os.mkdir(outdir)
doc = os.path.join(outdir, "x.json")
cmd = [*LAUNCH, "-n", "2", MIMORX, "sim", "--mimo", "4x4", "--mod", "16qam", "--detector", "mmse",
       "--snr", "0:1:60", "--max-frames", "100000", "--backend", "cpu", "--json", doc]
job = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                       env=RANK_ENV)
start = time.monotonic()
while time.monotonic() - start < TIMEOUT and job.poll() is None:
    try:
        with open(doc) as f:
            if json.load(f)["points"]:
                break
    except (OSError, ValueError, KeyError):
        pass
    time.sleep(0.05)
shutil.rmtree(outdir)
try:
    _, err = job.communicate(timeout=TIMEOUT)
    lines = [l for l in err.splitlines() if l.startswith("mimorx: ")]
    check(job.returncode == 2 and len(lines) == 1 and "rank 0: json: " in lines[0],
          "failure of rank 0 mid-run: the job ends with exit status 2 and rank 0's error line")
    print("     " + " | ".join(lines))
except subprocess.TimeoutExpired:
    job.kill()
    check(False, f"failure of rank 0 mid-run: the job ended within {TIMEOUT} s")

shutil.rmtree(tmp, ignore_errors=True)
print(f"{len(failures)} failure(s)")
sys.exit(1 if failures else 0)

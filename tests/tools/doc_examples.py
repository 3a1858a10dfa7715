#!/usr/bin/env python3
"""Runs every documented curve example (README.md, docs/*.md) at small sizes.

An example is a fenced shell code block (```sh) holding a `mimorx sim` or `mimorx ldpc ber`
command (a synopsis in a plain ``` block is not one). Each one
must follow a marker line
    <!-- example: OPTIONS -->
whose OPTIONS (small stop rules, e.g. `--max-blocks 40 --min-errors 5`) are appended to the
command for the test; an option given twice takes its last value. The command runs on the CPU
with its own --json; then every detector's first point must have errors (the sweep starts where
something happens), and the same command at an impossibly high SNR (--snr 100, the highest the CLI takes) must have none.
A block without a marker fails the test, so a new example is covered as soon as it is written.

Usage: doc_examples.py <mimorx binary> <source dir>
"""
import glob
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile

MARKER = re.compile(r"^<!--\s*example:(.*?)-->\s*$")
CURVE = re.compile(r"^mimorx (sim|ldpc ber)\b")
OUTPUT_OPTIONS = {"--json", "--csv", "--backend"}  # set by the test
SNR_OPTIONS = {"--snr", "--ebn0"}
FLAG_OPTIONS = {"--resume"}


def examples(path):
    """(line number, command, small options) of each curve example of a markdown file."""
    lines = open(path, encoding="utf-8").read().splitlines()
    out, marker, i = [], None, 0
    while i < len(lines):
        m = MARKER.match(lines[i].strip())
        if m:
            marker = m.group(1).strip()
            i += 1
            continue
        if lines[i].startswith("```"):
            shell = lines[i].strip() in ("```sh", "```bash", "```shell")
            start, body = i, []
            i += 1
            while i < len(lines) and not lines[i].startswith("```"):
                body.append(lines[i])
                i += 1
            text = "\n".join(body).replace("\\\n", " ")
            for cmd in text.splitlines():
                cmd = cmd.split("#")[0].strip() if cmd.lstrip().startswith("mimorx") else ""
                if shell and CURVE.match(cmd):
                    if marker is None:
                        sys.exit(f"{path}:{start + 1}: example '{cmd[:60]}...' has no "
                                 f"'<!-- example: OPTIONS -->' marker line before its block")
                    out.append((start + 1, cmd, marker))
            marker = None
        elif lines[i].strip():
            marker = marker if lines[i].strip().startswith("<!--") else None
        i += 1
    return out


def strip_options(args, value_options):
    """The arguments without `value_options` (and their values) and --resume."""
    out, skip = [], False
    for a in args:
        if skip:
            skip = False
            continue
        name = a.split("=")[0]
        if name in value_options:
            skip = "=" not in a
            continue
        if name in FLAG_OPTIONS:
            continue
        out.append(a)
    return out


def run(cli, args, where):
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "run.json")
        cmd = [cli] + args + ["--backend", "cpu", "--json", path]
        r = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        if r.returncode != 0:
            sys.exit(f"{where}: {' '.join(cmd)} failed ({r.returncode}): {r.stderr.strip()}")
        return json.load(open(path))


def errors(point):
    return point.get("block_errors", point.get("bit_errors"))


def main(cli, src):
    files = [os.path.join(src, "README.md")] + sorted(glob.glob(os.path.join(src, "docs", "*.md")))
    count = 0
    for path in files:
        for line, cmd, small in examples(path):
            where = f"{os.path.relpath(path, src)}:{line}"
            words = shlex.split(cmd)[1:]  # without "mimorx"
            small_args = shlex.split(small)
            doc = run(cli, strip_options(words, OUTPUT_OPTIONS) + small_args, where)
            first = {}
            for p in doc["points"]:
                first.setdefault(p["detector"], p)
            for det, p in first.items():
                if not errors(p):
                    sys.exit(f"{where}: {det} has no errors at its first point "
                             f"({p['snr_db']:.2f} dB): the example starts past the waterfall")
            high = run(cli, strip_options(words, OUTPUT_OPTIONS | SNR_OPTIONS) + small_args +
                       ["--snr", "100"], where)
            for p in high["points"]:
                if errors(p):
                    sys.exit(f"{where}: {p['detector']} has {errors(p)} errors at 100 dB")
            print(f"{where}: ok ({', '.join(first)}; first point {min(p['snr_db'] for p in first.values()):.2f} dB)")
            count += 1
    if count == 0:
        sys.exit("no documented example found")
    print(f"doc_examples: {count} examples ok")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])

#!/usr/bin/env bash
# tools/plot_sim.py on JSON written by the CLI (uncoded and --ldpc, several detectors, several
# files, the earlier one-detector schema): PNG, PDF and SVG come out, the options are taken,
# and bad input (not sim JSON, a wrong number of labels, an unknown extension) is refused with
# one line and a non-zero status.
# Usage: plot_sim.sh <mimorx binary> <source dir>. Exit 77 (skipped) without matplotlib.
set -euo pipefail
cli=$1 src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if ! /usr/bin/python3 -c 'import matplotlib' 2>/dev/null && ! python3 -c 'import matplotlib' 2>/dev/null; then
  echo "matplotlib not installed: skipped"; exit 77
fi
plot=$src/tools/plot_sim.py
"$cli" sim --mimo 2x2 --mod qpsk --detector mmse,zf --snr 0:5:20 --max-frames 2000 --backend cpu \
  --json "$tmp/uncoded.json" >/dev/null 2>&1
"$cli" sim --ldpc --mimo 2x2 --mod qpsk --tbs 256 --detector mmse,kbest:4 --snr 0,2,25 \
  --max-blocks 10 --backend cpu --json "$tmp/coded.json" >/dev/null 2>&1
# The earlier schema: one detector in the config, points without a detector field.
/usr/bin/python3 - "$tmp/coded.json" "$tmp/old.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["config"]["detector"] = "mmse"
d["points"] = [{k: v for k, v in p.items() if k != "detector"} for p in d["points"] if p["detector"] == "mmse"]
json.dump(d, open(sys.argv[2], "w"))
PY
"$plot" "$tmp/uncoded.json" "$tmp/coded.json" -o "$tmp/curves.png" --x ebn0
head -c 8 "$tmp/curves.png" | od -An -c | grep -q 'P   N   G'
"$plot" "$tmp/coded.json" -o "$tmp/curves.pdf" --title "a title" --label MMSE --label "K-best 4" \
  --legend inside --ci --x esn0
head -c 5 "$tmp/curves.pdf" | grep -q '%PDF-'
"$plot" "$tmp/old.json" "$tmp/coded.json" -o "$tmp/curves.svg" --x snr
grep -q '<svg' "$tmp/curves.svg"
refused() {  # the command must fail with exactly one line on stderr
  if "$@" 2>"$tmp/err" >/dev/null; then echo "accepted: $*"; exit 1; fi
  test "$(wc -l <"$tmp/err")" -eq 1 || { echo "not one line: $*"; cat "$tmp/err"; exit 1; }
}
echo '{"a": 1}' >"$tmp/bad.json"
refused "$plot" "$tmp/bad.json" -o "$tmp/x.png"
refused "$plot" "$tmp/coded.json" -o "$tmp/x.png" --label only-one
refused "$plot" "$tmp/coded.json" -o "$tmp/x.jpeg"
echo "plot_sim: ok"

#!/usr/bin/env bash
# tools/plot_sim.py on JSON written by the CLI (sim uncoded and --ldpc with several detectors,
# ldpc ber, several files, the earlier one-detector schema): PNG, PDF and SVG come out, the
# options are taken, and bad input (not curve JSON, a wrong number of labels or y labels, an
# unknown extension, an unknown option) is refused with one line on stderr and exit status 2.
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
"$cli" ldpc ber --bg 2 --z 16 --max-blocks 30 --min-errors 10 --backend cpu \
  --json "$tmp/ber.json" >/dev/null 2>&1
# The earlier schema: one detector in the config, points without a detector field.
/usr/bin/python3 - "$tmp/coded.json" "$tmp/old.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["config"]["detector"] = "mmse"
d["points"] = [{k: v for k, v in p.items() if k != "detector"} for p in d["points"] if p["detector"] == "mmse"]
json.dump(d, open(sys.argv[2], "w"))
PY
"$plot" "$tmp/uncoded.json" "$tmp/coded.json" "$tmp/ber.json" -o "$tmp/curves.png" --x ebn0
head -c 8 "$tmp/curves.png" | od -An -c | grep -q 'P   N   G'
"$plot" "$tmp/coded.json" -o "$tmp/curves.pdf" --title "a title" --label MMSE --label "K-best 4" \
  --legend inside --x esn0 --xlabel "SNR [dB]" --ylabel "bit error rate" --ylabel "block error rate"
head -c 5 "$tmp/curves.pdf" | grep -q '%PDF-'
"$plot" "$tmp/old.json" "$tmp/coded.json" -o "$tmp/curves.svg" --x snr --no-ci --legend below
grep -q '<svg' "$tmp/curves.svg"
# Short labels: the detector, then only what differs between the files; error bars by default.
"$plot" "$tmp/uncoded.json" "$tmp/ber.json" -o "$tmp/labels.svg" --metric ber
grep -q 'mmse, 2x2, qpsk, uncoded, Rayleigh' "$tmp/labels.svg" || { echo "long label missing"; exit 1; }
grep -q 'maxlog, bpsk, LDPC R=0.20 K=160, AWGN' "$tmp/labels.svg" || { echo "ber label missing"; exit 1; }
# One file: the detectors label the curves, the shared link is the title.
"$plot" "$tmp/coded.json" -o "$tmp/one.svg"
grep -q '2x2, qpsk, LDPC R=0\.[0-9][0-9] K=256, Rayleigh' "$tmp/one.svg" || { echo "title missing"; exit 1; }
refused() {  # the command must fail with status 2 and exactly one line on stderr
  local rc=0
  "$@" 2>"$tmp/err" >/dev/null || rc=$?
  test "$rc" -eq 2 || { echo "status $rc, not 2: $*"; cat "$tmp/err"; exit 1; }
  test "$(wc -l <"$tmp/err")" -eq 1 || { echo "not one line: $*"; cat "$tmp/err"; exit 1; }
}
echo '{"a": 1}' >"$tmp/bad.json"
echo 'not json' >"$tmp/text.json"
refused "$plot" "$tmp/bad.json" -o "$tmp/x.png"
refused "$plot" "$tmp/text.json" -o "$tmp/x.png"
refused "$plot" "$tmp/missing.json" -o "$tmp/x.png"
refused "$plot" "$tmp/coded.json" -o "$tmp/x.png" --label only-one
refused "$plot" "$tmp/coded.json" -o "$tmp/x.png" --ylabel only-one
refused "$plot" "$tmp/coded.json" -o "$tmp/x.jpeg"
refused "$plot" "$tmp/coded.json" -o "$tmp/x.png" --legend nowhere
refused "$plot" "$tmp/uncoded.json" -o "$tmp/x.png" --metric bler
refused "$plot" "$tmp/coded.json"
echo "plot_sim: ok"

#!/usr/bin/env bash
# tools/plot_sim.py on JSON written by the CLI (uncoded and --ldpc): an image comes out, and a
# file that is not sim JSON is refused with one line and a non-zero status.
# Usage: plot_sim.sh <mimorx binary> <source dir>. Exit 77 (skipped) without matplotlib.
set -euo pipefail
cli=$1 src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if ! /usr/bin/python3 -c 'import matplotlib' 2>/dev/null && ! python3 -c 'import matplotlib' 2>/dev/null; then
  echo "matplotlib not installed: skipped"; exit 77
fi
"$cli" sim --mimo 2x2 --mod qpsk --detector mmse --snr 0:5:20 --frames 2000 --backend cpu \
  --json "$tmp/uncoded.json" >/dev/null
"$cli" sim --ldpc --mimo 2x2 --mod qpsk --tbs 256 --snr 0,4,25 --blocks 10 --backend cpu \
  --json "$tmp/coded.json" >/dev/null
"$src/tools/plot_sim.py" "$tmp/uncoded.json" "$tmp/coded.json" -o "$tmp/curves.png" --x ebn0
test -s "$tmp/curves.png"
head -c 8 "$tmp/curves.png" | od -An -c | grep -q 'P   N   G'
echo '{"a": 1}' >"$tmp/bad.json"
if "$src/tools/plot_sim.py" "$tmp/bad.json" -o "$tmp/x.png" 2>"$tmp/err"; then
  echo "a file that is not sim JSON was accepted"; exit 1
fi
test "$(wc -l <"$tmp/err")" -eq 1
echo "plot_sim: ok"

#!/usr/bin/env bash
# tools/bench_report.py on a small committed sample of benchmark JSON lines (tests/tools/data):
# the report equals the expected Markdown (header, one table per module, paper and peer figures
# matched from a reference file, floors and fractions, the CPU table, the records left out, the
# sources); the repository's bench/reference_figures.json is read without error; bad input (a
# line that is not JSON, an empty file, a figure citing an unknown source) is refused with one
# line on stderr and a non-zero status.
# Usage: bench_report.sh <source dir>. Exit 77 (skipped) without python3.
set -euo pipefail
src=$1
py=$(command -v python3 || true)
[ -n "$py" ] || { echo "python3 not installed: skipped"; exit 77; }
tool=$src/tools/bench_report.py
data=$src/tests/tools/data
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$py" "$tool" "$data/bench_sample.jsonl" --cpu "$data/cpubench_sample.jsonl" \
  --gpu-txt "$data/gpu_sample.txt" --reference "$data/reference_sample.json" --commit abc1234 \
  --date 2026-01-01 --command scripts/device-check -o "$tmp/report.md"
diff -u "$data/bench_report_expected.md" "$tmp/report.md"
"$py" "$tool" "$data/bench_sample.jsonl" --reference "$src/bench/reference_figures.json" >"$tmp/full.md"
grep -q '0.116 Gbit/s' "$tmp/full.md"  # a Sionna 2.2 figure of issue 34
refused() {  # the command must fail with exactly one line on stderr
  if "$@" 2>"$tmp/err" >/dev/null; then echo "accepted: $*"; exit 1; fi
  test "$(wc -l <"$tmp/err")" -eq 1 || { echo "not one line: $*"; cat "$tmp/err"; exit 1; }
}
printf '{"bench":"qr"}\nnot json\n' >"$tmp/bad.jsonl"
refused "$py" "$tool" "$tmp/bad.jsonl" --reference "$data/reference_sample.json"
: >"$tmp/empty.jsonl"
refused "$py" "$tool" "$tmp/empty.jsonl" --reference "$data/reference_sample.json"
echo '{"sources": {}, "figures": [{"module": "qr", "match": {}, "paper": {"value": 1, "unit": "us", "source": "nowhere"}}]}' >"$tmp/ref.json"
refused "$py" "$tool" "$data/bench_sample.jsonl" --reference "$tmp/ref.json"
echo '{"bench":"qr","device":"x"}' >"$tmp/short.jsonl"
refused "$py" "$tool" "$tmp/short.jsonl" --reference "$data/reference_sample.json"
echo "bench_report: ok"

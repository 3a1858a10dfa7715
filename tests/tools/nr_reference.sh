#!/usr/bin/env bash
# tools/nr_reference.py: runs the CLI on requirement rows of TS 38.104 (a few slots), checks that
# each file holds the FRC's TBS and the SNRs shifted to Es/N0 per layer, that the report finds
# the 70 % crossing by interpolation on hand-made points, and that bad input is refused with one
# line on stderr and exit status 2.
# Usage: nr_reference.sh <mimorx binary> <source dir>.
set -euo pipefail
cli=$1 src=$2
tool=$src/tools/nr_reference.py
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
python3 "$tool" run --mimorx "$cli" --out "$tmp/run" --backend cpu --slots 4 --rows 1,10 \
  --csi perfect --below 1 --above 0 --step 1 >/dev/null 2>&1
python3 - "$tmp/run" <<'PY'
import json, os, sys
d = sys.argv[1]
one = json.load(open(os.path.join(d, "row1_perfect.json")))
two = json.load(open(os.path.join(d, "row10_perfect.json")))
assert one["config"]["tbs"] == 2856 and one["config"]["mod"] == "qpsk", one["config"]
assert one["config"]["channel"] == "tdlb100-400:low" and one["config"]["harq"] == 4
assert one["config"]["snr_db"] == [-3.5, -2.5], one["config"]["snr_db"]
assert two["config"]["layers"] == 2 and two["config"]["detectors"] == ["mmse", "sts"]
# 1.7 dB for 2 layers is Es/N0 1.7 - 3.0103 per layer.
assert [round(s, 3) for s in two["config"]["snr_db"]] == [-2.31, -1.31], two["config"]["snr_db"]
PY
# The report on known points: 0.5 at 0 dB and 0.9 at 1 dB (layers 1) cross 0.7 at 0.5 dB.
mkdir "$tmp/known"
python3 - "$tmp/known/row1_perfect.json" <<'PY'
import json, sys
pts = [{"detector": "mmse", "snr_db": s, "throughput_fraction": f, "slots": 10}
       for s, f in ((-1.0, 0.2), (0.0, 0.5), (1.0, 0.9), (2.0, 0.95))]
json.dump({"config": {"csi": "perfect", "layers": 1, "tbs": 2856}, "points": pts},
          open(sys.argv[1], "w"))
PY
python3 "$tool" report --dir "$tmp/known" --json "$tmp/s.json" --markdown "$tmp/t.md"
python3 - "$tmp/s.json" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))["curves"]
assert len(c) == 1 and abs(c[0]["snr70_db"] - 0.5) < 1e-9, c
assert abs(c[0]["margin_db"] - (-2.5 - 0.5)) < 1e-9, c
PY
grep -q '| 1 | 1x2 | tdlb100-400:low | G-FR1-A3-9 (2856) | mmse, perfect | -2.5 | 0.5 | -3.0 |' "$tmp/t.md"
refused() {
  local err
  if err=$(python3 "$tool" "$@" 2>&1 >/dev/null); then echo "accepted: $*"; exit 1; fi
  [[ $(printf '%s\n' "$err" | wc -l) -eq 1 && $err == nr_reference.py:\ error:* ]] ||
    { echo "not one error line for $*: $err"; exit 1; }
}
refused run --mimorx "$tmp/none" --out "$tmp/x"
refused run --mimorx "$cli" --out "$tmp/x" --rows 99
refused run --mimorx "$cli" --out "$tmp/x" --rows a
refused report --dir "$tmp/none"
refused report --dir "$tmp/run/.."
refused frobnicate
echo ok

#!/usr/bin/env bash
# tools/sim_scaling.py on the CPU with 1 and 2 ranks: a table row per rank count whose counts are
# those of one rank, and bad usage refused with exit status 2.
# Usage: sim_scaling.sh <mimorx binary> <mpiexec> <source dir>
set -euo pipefail
cli=$1 mpiexec=$2 src=$3
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=1
launcher=()
if "$mpiexec" --version 2>&1 | grep -qE 'Open MPI|OpenRTE'; then launcher=(--launcher-arg=--oversubscribe); fi
out=$("$src/tools/sim_scaling.py" --mimorx "$cli" --mpiexec "$mpiexec" --ranks 1,2 "${launcher[@]}" \
  -- --ldpc --mimo 2x2 --mod 16qam --tbs 256 --detector mmse --snr 4,8 --max-blocks 300 \
  --min-errors 20 --backend cpu)
echo "$out"
[ "$(echo "$out" | grep -cE '^\| [12] \| .* \| yes \|$')" = 2 ] || { echo "expected two rows with the counts of one rank"; exit 1; }
set +e
"$src/tools/sim_scaling.py" --ranks 2 -- --snr 1 2>/dev/null; [ $? = 2 ] || { echo "--ranks without 1 accepted"; exit 1; }
"$src/tools/sim_scaling.py" --ranks 1 -- --json x.json 2>/dev/null; [ $? = 2 ] || { echo "--json accepted"; exit 1; }
exit 0

#!/usr/bin/env bash
# Every GPU check of the project in one run, sized for one lease of a GPU machine (about 15
# minutes of device time, a minute or two of it starting the machine): run it from the repo root
# on the GPU machine, with that machine's own torch, as
#
#     OUT=/some/dir bash benchmarks/gpu_round.sh          # (the device tool sets OUT itself)
#
# Parts, each under its own time limit so one that hangs cannot eat the others' time:
#   0. cli                      the README's options parse with the machine's typer
#   1. benchmarks/gpu_check.py  the quickstart, an independent CUDA-event timing beside bench's,
#                               a transformer stream over several strategies with --replay
#                               (strategies kept apart on a torch without isolate_recompiles)
#   2. pytest -m gpu            the gpu-marked tests (tests/integration)
#   3. benchmarks/gpu_modes.py  compile modes x strategies on resnet18, beside CUDA events
#   4. tests/data/make_cudagraphs.py  a fresh CUDA-graph log and trace from this torch
#                               (only when GPU_ROUND_PARTS names it)
# Everything lands in $OUT/results.tar.gz (one file: the device tool brings back few files) and
# each part's last lines in $OUT/summary.txt. A part that fails or runs out of time says so there
# and the next part still runs; the script's exit status is the number of parts that failed.
# Limits are seconds; GPU_ROUND_SCALE (default 1) multiplies them. GPU_ROUND_PARTS (default
# "cli gpu_check gpu_tests gpu_modes") picks parts, in that order, so a lease can take them in
# two calls of at most 600 s each while the machine is warm.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:?set OUT to the directory the results go to}
export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH} PYTHONUNBUFFERED=1
PY=${PYTHON:-python3}
SCALE=${GPU_ROUND_SCALE:-1}
work=$(mktemp -d)
failed=0

note() { printf '%s\n' "$*" | tee -a "$work/summary.txt"; }

# part NAME LIMIT_S COMMAND...: run COMMAND with its output in NAME.txt, under LIMIT_S*SCALE.
PARTS=" ${GPU_ROUND_PARTS:-cli gpu_check gpu_tests gpu_modes} "
part() {
  local name=$1 limit=$2 rc=0 start
  shift 2
  case "$PARTS" in *" $name "*) ;; *) return 0 ;; esac
  limit=$(awk -v l="$limit" -v s="$SCALE" 'BEGIN { printf "%d", l * s }')
  start=$(date +%s)
  note "== $name (limit ${limit}s): $*"
  timeout --kill-after=5 "$limit" "$@" >"$work/$name.txt" 2>&1 || rc=$?
  note "-- $name: exit $rc after $(( $(date +%s) - start ))s$([ "$rc" -eq 124 ] && echo ' (ran out of time)')"
  tail -n 40 "$work/$name.txt" >>"$work/summary.txt"
  [ "$rc" -eq 0 ] || failed=$((failed + 1))
}

{
  date -u '+%Y-%m-%d %H:%M UTC'
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm --format=csv,noheader 2>&1
  "$PY" - <<'EOF'
import platform, torch
from importlib.metadata import version
names = ("typer", "rich", "numpy", "scipy", "transformers", "timm", "torchvision", "triton")
got = {}
for n in names:
    try:
        got[n] = version(n)
    except Exception:
        got[n] = "-"
print("python", platform.python_version(), "torch", torch.__version__,
      "cuda", torch.version.cuda, torch.cuda.get_device_name(0) if torch.cuda.is_available() else "no cuda")
print(" ".join(f"{k} {v}" for k, v in got.items()))
EOF
  nproc; cat /proc/loadavg
} >"$work/machine.txt" 2>&1
cat "$work/machine.txt" | tee -a "$work/summary.txt"

# The README's options parse with the typer this machine has (issue #32: typer 0.27.2 showed
# --DEVICE where --device should be).
part cli 20 bash -c '"$0" -m dyncli bench --help && "$0" -m dyncli bench --help | grep -q -- "--device"' "$PY"
if [ -f benchmarks/gpu_check.py ]; then
  part gpu_check 330 "$PY" benchmarks/gpu_check.py --out "$work/check"
else
  note "== gpu_check: benchmarks/gpu_check.py is missing; not run"; failed=$((failed + 1))
fi
part gpu_tests 120 "$PY" -m pytest -m gpu tests/integration -q -p no:cacheprovider \
  --continue-on-collection-errors -o addopts='' --junitxml="$work/gpu_tests.xml"
if [ -f benchmarks/gpu_modes.py ]; then
  part gpu_modes 190 "$PY" benchmarks/gpu_modes.py --out "$work/modes" --budget-s 180
else
  note "== gpu_modes: benchmarks/gpu_modes.py is missing; not run"; failed=$((failed + 1))
fi
# A fresh CUDA-graph log and trace only when GPU_ROUND_PARTS names `cudagraphs`: the
# gpu-marked tests already record one and compare its counts with torch's own.
part cudagraphs 70 "$PY" tests/data/make_cudagraphs.py --out "$work/cudagraphs"

note "== done: $failed part(s) failed"
cp "$work/summary.txt" "$OUT/summary.txt"
tar -czf "$OUT/results.tar.gz" -C "$work" .
exit "$failed"

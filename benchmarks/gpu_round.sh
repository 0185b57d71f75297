#!/usr/bin/env bash
# Every GPU check of the project in one run, sized for one lease of a GPU machine (about 15
# minutes of device time, a minute or two of it starting the machine): run it from the repo root
# on the GPU machine, with that machine's own torch, as
#
#     OUT=/some/dir bash benchmarks/gpu_round.sh          # (the device tool sets OUT itself)
#
# Parts, each under its own time limit so one that hangs cannot eat the others' time:
#   cli         the README's options parse with the machine's typer
#   gpu_tests   pytest -m gpu (tests/integration), a worker per test (they check counts, not
#               times), each test's result printed as it ends (-v), each under --timeout
#   stream      benchmarks/gpu_check.py --parts stream: a transformer stream over four
#               strategies with --replay, predicted vs replayed (strategies kept apart on a
#               torch without isolate_recompiles)
#   quickstart  benchmarks/gpu_check.py --parts quickstart: the quickstart beside an
#               independent CUDA-event timing (before and after bench's run, one call and
#               calls back to back)
#   gpu_modes   benchmarks/gpu_modes.py: compile modes x strategies on resnet18, beside CUDA
#               events (GPU_MODES_ROWS picks rows, e.g. "static,automatic@reduce-overhead")
#   cudagraphs  tests/data/make_cudagraphs.py: a fresh CUDA-graph log and trace from this torch
#               (only when GPU_ROUND_PARTS names it)
# Everything lands in $OUT/results.tar.gz (one file: the device tool brings back few files) and
# each part's last lines in $OUT/summary.txt. A part that fails or runs out of time says so there
# and the next part still runs; the script's exit status is the number of parts that failed.
# Limits are seconds; GPU_ROUND_SCALE (default 1) multiplies them. GPU_ROUND_PARTS (default
# "cli gpu_tests stream quickstart gpu_modes") picks parts, in that order, so a lease can take
# them in two calls of at most 600 s each while the machine is warm (the first call
# "cli gpu_tests stream", about 500 s at most; the second "quickstart gpu_modes").
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
PARTS=" ${GPU_ROUND_PARTS:-cli gpu_tests stream quickstart gpu_modes} "
part() {
  local name=$1 limit=$2 rc=0 start
  shift 2
  case "$PARTS" in *" $name "*) ;; *) return 0 ;; esac
  limit=$(awk -v l="$limit" -v s="$SCALE" 'BEGIN { printf "%d", l * s }')
  start=$(date +%s)
  note "== $name (limit ${limit}s, $(date -u +%H:%M:%S) UTC): $*"
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

# The GPU's clocks, power and temperature every 250 ms, from a process of its own (no thread in
# the measured ones) for the whole round: on the H200 every GPU timing of bench and of the
# independent one ran ~1.45x slower for seconds at a time (eager and compiled alike), and
# whether that is the SM clock is what this log says. The event reasons go to a file of their
# own: a driver that does not know the field fails only that one.
if command -v nvidia-smi >/dev/null; then
  nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,utilization.gpu,pstate \
    --format=csv -lms 250 >"$work/gpu_clocks.csv" 2>&1 &
  clocks_pid=$!
  nvidia-smi --query-gpu=timestamp,clocks_event_reasons.active --format=csv -lms 250 \
    >"$work/gpu_clock_reasons.csv" 2>&1 &
  reasons_pid=$!
fi
# and which processes were busy, every 250 ms (benchmarks/cpu_sampler.py: about 1 % of a core)
"$PY" benchmarks/cpu_sampler.py "$work/cpu_samples.csv" >/dev/null 2>&1 &
sampler_pid=$!
stop_loggers() { kill "$sampler_pid" ${clocks_pid:-} ${reasons_pid:-} 2>/dev/null; }
trap stop_loggers EXIT

# The README's options parse with the typer this machine has (issue #32: typer 0.27.2 showed
# --DEVICE where --device should be).
part cli 20 bash -c '"$0" -m dyncli bench --help && "$0" -m dyncli bench --help | grep -q -- "--device"' "$PY"
# only the files holding gpu-marked tests are collected (every worker imports what it collects)
mapfile -t gpu_files < <(grep -l "mark\.gpu" tests/integration/*.py)
per_test=()  # each test under its own limit where pytest-timeout is there (the GPU image has it)
"$PY" -c 'import pytest_timeout' 2>/dev/null && per_test=(--timeout 90)
part gpu_tests 100 "$PY" -m pytest -m gpu "${gpu_files[@]}" -v -p no:cacheprovider \
  --continue-on-collection-errors -o addopts='' -n 6 "${per_test[@]}" --tb=short \
  --junitxml="$work/gpu_tests.xml"
part stream 380 "$PY" benchmarks/gpu_check.py --parts stream --out "$work/stream"
part quickstart 130 "$PY" benchmarks/gpu_check.py --parts quickstart --out "$work/quickstart"
part gpu_modes "${GPU_MODES_LIMIT:-190}" "$PY" benchmarks/gpu_modes.py --out "$work/modes" \
  --budget-s "$(( ${GPU_MODES_LIMIT:-190} - 10 ))" ${GPU_MODES_ROWS:+--rows "$GPU_MODES_ROWS"}
# A fresh CUDA-graph log and trace only when GPU_ROUND_PARTS names `cudagraphs`: the
# gpu-marked tests already record one and compare its counts with torch's own.
part cudagraphs 70 "$PY" tests/data/make_cudagraphs.py --out "$work/cudagraphs"

note "== done: $failed part(s) failed"
stop_loggers
cp "$work/summary.txt" "$OUT/summary.txt"
tar -czf "$OUT/results.tar.gz" -C "$work" .
exit "$failed"

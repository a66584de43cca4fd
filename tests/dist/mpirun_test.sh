#!/usr/bin/env bash
# Distributed training under mpirun on this machine (docs/distributed.md): 2 processes x 2 CPU
# devices with the hierarchical allreduce give the losses of one process on 4 devices and of one
# device; processes that disagree about the run fail with a clear error; a process that dies makes
# the run end with an error within a bounded time instead of hanging.
# Usage: mpirun_test.sh LAZYGRAD WORKDIR. Exit 77 (skipped) when mpirun is absent.
set -uo pipefail
lazygrad=$1
work=$2
command -v mpirun >/dev/null || { echo "mpirun not found: skipped"; exit 77; }
mkdir -p "$work"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
model=(--config tiny --set vocab=512 --set layers=1 --set dim=64 --set ffn_dim=128 --synthetic --dtype fp32
       --batch 4 --seq 16 --lr 3e-3 --warmup 2)
fail=0

# 1. Same losses: one device, one process on 4 devices, 2 processes x 2 devices (hierarchical).
"$lazygrad" train "${model[@]}" --steps 10 --metrics "$work/one.jsonl" >/dev/null || { echo "FAIL: single-device run"; exit 1; }
"$lazygrad" train "${model[@]}" --steps 10 --devices CPU:0-3 --metrics "$work/four.jsonl" >/dev/null || { echo "FAIL: 4-device run"; exit 1; }
ALLREDUCE_NODE_NDEVS=2 DEBUG=2 timeout 600 mpirun -np 2 "$lazygrad" train "${model[@]}" --steps 10 --devices CPU:0-1 \
    --metrics "$work/mpi.jsonl" >"$work/mpi.out" 2>"$work/mpi.err" || { echo "FAIL: mpirun run"; tail -20 "$work/mpi.err"; exit 1; }
grep -q "allreduce: hierarchical over 4 devices" "$work/mpi.err" || { echo "FAIL: the hierarchical allreduce did not run"; fail=1; }
python3 - "$work/one.jsonl" "$work/four.jsonl" "$work/mpi.jsonl" <<'PY' || fail=1
import json, sys
def losses(p): return [e["loss"] for e in map(json.loads, open(p)) if e.get("event") == "step"]
one, four, mpi = (losses(p) for p in sys.argv[1:])
assert len(one) == len(four) == len(mpi) == 10, (len(one), len(four), len(mpi))
for name, other in (("4 devices", four), ("2 processes x 2 devices", mpi)):
    for s, (a, b) in enumerate(zip(one, other)):
        if abs(a - b) / abs(a) >= 1e-5:
            sys.exit(f"FAIL: {name}: step {s + 1} loss {b} vs single-device {a}")
print("losses agree:", " ".join(f"{x:.5f}" for x in mpi))
PY

# 2. Processes started with different step counts: a clear error, no hang.
timeout 300 mpirun -np 1 "$lazygrad" train "${model[@]}" --steps 10 --devices CPU:0-1 : \
    -np 1 "$lazygrad" train "${model[@]}" --steps 11 --devices CPU:0-1 >"$work/disagree.out" 2>&1
rc=$?
if [ $rc -eq 0 ] || [ $rc -eq 124 ] || ! grep -q "disagree about the run" "$work/disagree.out"; then
  echo "FAIL: disagreeing processes (exit $rc)"; tail -20 "$work/disagree.out"; fail=1
fi

# 3. Process 1 is killed mid-run: the run ends with an error well before the outer timeout. Its
# kernels are in the cache from step 1 (the same model and devices), so 8 seconds are well inside
# the training steps.
start=$(date +%s)
LAZYGRAD_DIST_TIMEOUT=10 timeout 240 mpirun -np 1 "$lazygrad" train "${model[@]}" --steps 100000 --devices CPU:0-1 : \
    -np 1 timeout -s KILL 8 "$lazygrad" train "${model[@]}" --steps 100000 --devices CPU:0-1 >"$work/dead.out" 2>&1
rc=$?
took=$(( $(date +%s) - start ))
if [ $rc -eq 0 ] || [ $rc -eq 124 ]; then
  echo "FAIL: a dead process left the run hanging or 'succeeding' (exit $rc after ${took}s)"; tail -20 "$work/dead.out"; fail=1
else
  echo "dead process: the run ended with exit $rc after ${took}s"
fi
[ $fail -eq 0 ] && echo "mpirun tests passed"
exit $fail

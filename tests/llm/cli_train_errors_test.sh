#!/usr/bin/env bash
# `lazygrad train` with options (and environment knobs) out of range: each run must exit non-zero
# before building a model, with one error line that names the option (and the value given), never an
# abort. Also `preprocess --workers 0` and `bench` options, which must fail before any output, and a
# model too large for the host's memory.
# usage: cli_train_errors_test.sh LAZYGRAD
set -uo pipefail
lazygrad=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

# expect MESSAGE ARGS...: the run fails, its output holds MESSAGE and no step or abort.
expect() {
  local message=$1
  shift
  "$lazygrad" train --model tiny --synthetic --steps 2 "$@" >"$tmp/out" 2>&1
  local rc=$?
  [ "$rc" -ne 0 ] || fail "train $* exited 0: $(cat "$tmp/out")"
  [ "$rc" -lt 128 ] || fail "train $* died of a signal (exit $rc): $(cat "$tmp/out")"
  grep -qF -- "$message" "$tmp/out" || fail "train $*: expected \"$message\", got: $(cat "$tmp/out")"
  grep -qE '^(model |step |terminate)' "$tmp/out" && fail "train $* got past the checks: $(cat "$tmp/out")"
  echo "ok: train $* -> $message"
}

expect '--steps: must be a positive whole number, got 0' --steps 0
expect '--steps: must be a positive whole number, got "abc"' --steps abc
expect '--batch: must be a positive whole number, got -2' --batch -2
expect '--log-every: must be a positive whole number, got 0' --log-every 0
expect '--end-lr: must be 0 or more, got -1' --end-lr -1
expect 'lazygrad: error: train: --warmup must be 0 or more steps, got -3' --warmup -3
expect '--loss-chunk must be 0 (one chunk) or positive, got -5' --loss-chunk -5
expect '--eval-every must be 0 (at the end only) or positive, got -1' --eval-every -1
expect '--keep must be at least 1 checkpoint, got 0' --keep 0
expect '--clip must be 0 (no clipping) or positive, got -1' --clip -1
expect '--weight-decay must be 0 or more, got -0.5' --weight-decay -0.5
expect '(--bucket-mb) must be positive' --bucket-mb 0
expect '--peak-tflops must be positive, got -1' --peak-tflops -1
expect 'drop it to use --train-data/--eval-data' --train-data "$tmp/data"
expect 'unknown optimizer "lion"' --optimizer lion
expect '--model excludes --init-from' --init-from "$tmp"  # the checkpoint's config.json is the model
"$lazygrad" train --model tiny --train-data "$tmp/none" --steps 1 >"$tmp/out" 2>&1 && fail "a missing dataset was accepted"
grep -qF -- "--train-data $tmp/none: no file $tmp/none.idx" "$tmp/out" || fail "missing dataset: $(cat "$tmp/out")"
grep -q '^model ' "$tmp/out" && fail "a model was built before the missing dataset was found: $(cat "$tmp/out")"
echo "a file" >"$tmp/file"
expect "cannot create --checkpoint-dir $tmp/file/ckpt: Not a directory; give a directory you can write" \
  --checkpoint-dir "$tmp/file/ckpt"
expect "cannot create --save-hf $tmp/file/hf: Not a directory" --save-hf "$tmp/file/hf"
[ "$(cat "$tmp/file")" = "a file" ] || fail "the file in the way was changed"
"$lazygrad" preprocess --workers 0 --input x --tokenizer y --output-prefix z >"$tmp/out" 2>&1 && fail "preprocess --workers 0 exited 0"
grep -qF -- '--workers: must be a positive whole number, got 0' "$tmp/out" || fail "preprocess --workers 0: $(cat "$tmp/out")"
# environment knobs out of range (base/config.h): refused before anything runs; THREADS=100000 hung
THREADS=100000 expect 'environment variable THREADS=100000 is out of range'
NOOPT=2 expect 'environment variable NOOPT=2 is not 0 or 1'
SPEC=9 expect 'SPEC is the graph checks (0 none, 1 at stage boundaries, 2 after every rewrite), from 0 to 2'
# bench options out of range: refused before the table starts (a zero-size allreduce was an internal error)
bench_expect() {
  local message=$1
  shift
  "$lazygrad" bench "$@" >"$tmp/out" 2>&1 && fail "bench $* exited 0: $(cat "$tmp/out")"
  grep -qF -- "$message" "$tmp/out" || fail "bench $*: expected \"$message\", got: $(cat "$tmp/out")"
  grep -q '^algorithm' "$tmp/out" && fail "bench $* printed its table before the error: $(cat "$tmp/out")"
  echo "ok: bench $* -> $message"
}
bench_expect '--mib 0 must hold at least one float32 per device (2 devices)' allreduce --mib 0
bench_expect 'unknown algorithm foo' allreduce --algos foo
bench_expect '--budget must be positive seconds, got -1' kernels --quick --budget -1
bench_expect '--budget must be positive seconds, got 0' optimizer --budget 0
# OpenBLAS would silently detect a core instead of one it does not have (libopenblas from setup.sh)
if /sbin/ldconfig -p 2>/dev/null | grep -q 'libopenblas.so.0'; then
  bench_expect '--blas-core Bogus: this OpenBLAS (' kernels --quick --blas-core Bogus
fi
# A model whose weights and AdamW state exceed the host's memory is refused before it is built (no
# OOM kill part way through initialization): llama3.1-8b needs 134.6 GiB at 18 bytes a parameter.
avail_kb=$(awk '/^MemAvailable:/ { print $2 }' /proc/meminfo 2>/dev/null)
if [[ -n $avail_kb && $avail_kb -lt $((134 * 1024 * 1024)) ]]; then
  "$lazygrad" train --model llama3.1-8b --synthetic --steps 1 >"$tmp/out" 2>&1
  rc=$?
  [[ $rc == 1 ]] || fail "llama3.1-8b on a $((avail_kb / 1024 / 1024)) GiB machine: exit $rc: $(cat "$tmp/out")"
  grep -qF "needs at least 134.6 GiB of host memory on" "$tmp/out" || fail "host memory: $(cat "$tmp/out")"
  grep -qF -- "--set layers=N" "$tmp/out" || fail "host memory, what to do: $(cat "$tmp/out")"
  grep -qE '^(model |step )' "$tmp/out" && fail "host memory: got past the check: $(cat "$tmp/out")"
  echo "ok: train --model llama3.1-8b -> refused: needs more host memory than there is"
fi
echo "cli train error checks passed"

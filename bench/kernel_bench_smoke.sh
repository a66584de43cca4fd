#!/usr/bin/env bash
# Smoke test of `lazygrad bench kernels --quick`: it exits 0, prints a ratio line for matmul, add and
# softmax, names the OpenBLAS core it compared against, and rejects a bad flag value with a clear error.
# usage: kernel_bench_smoke.sh LAZYGRAD
set -uo pipefail
lazygrad=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; cat "$tmp/out" "$tmp/err" 2>/dev/null; exit 1; }

"$lazygrad" bench kernels --quick >"$tmp/out" 2>"$tmp/err" || fail "bench kernels --quick exited $?"
cat "$tmp/out"
for name in matmul add softmax; do
  grep -Eq "^$name .* [0-9]+\.[0-9]+x  ok$" "$tmp/out" || fail "no ratio line for $name"
done
grep -Eq "^triad .* GB/s" "$tmp/out" || fail "no triad baseline line"
grep -q "OpenBLAS core " "$tmp/out" || fail "OpenBLAS core not printed"

"$lazygrad" bench kernels --quick --only conv >"$tmp/out" 2>"$tmp/err" && fail "--only conv accepted"
grep -q "takes matmul, add or softmax" "$tmp/err" || fail "--only error message: $(cat "$tmp/err")"
"$lazygrad" bench kernels --quick --sizes 64x0 >"$tmp/out" 2>"$tmp/err" && fail "--sizes 64x0 accepted"
grep -q "bad matmul size '64x0'" "$tmp/err" || fail "--sizes error message: $(cat "$tmp/err")"
echo "bench kernels smoke: ok"

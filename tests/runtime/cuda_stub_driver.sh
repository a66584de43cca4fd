#!/usr/bin/env bash
# The CUDA device against the toolkit's stub driver (lib64/stubs/libcuda.so, which exports every
# driver entry point and fails cuInit): every symbol lazygrad binds must resolve, and the failing
# cuInit must be a user error that names the status. Exit 77 (skipped) without the stub, or when
# a real driver is installed (it would be found first).
#   cuda_stub_driver.sh <lazygrad> <stub libcuda.so>
set -u
lazygrad=$1 stub=$2
[[ -f $stub ]] || { echo "skipped: no stub driver at $stub"; exit 77; }
if ldconfig -p | grep -q 'libcuda\.so\.1 '; then echo "skipped: a real libcuda.so.1 is installed"; exit 77; fi
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
ln -s "$stub" "$dir/libcuda.so.1"
out=$(LD_LIBRARY_PATH=$dir DEVICE=CUDA "$lazygrad" devices 2>&1)
rc=$?
echo "$out"
[[ $rc != 0 ]] || { echo "FAIL: the stub driver's cuInit should fail"; exit 1; }
grep -q 'CUDA: cuInit failed (CUDA_ERROR_STUB_LIBRARY' <<<"$out" || { echo "FAIL: expected a user error naming cuInit's status"; exit 1; }

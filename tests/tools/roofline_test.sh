#!/usr/bin/env bash
# tools/roofline.py on PROFILE_CSV files written by hand: the bound, the MFU ceiling, --minus and
# --divide, the launches of a GPU run's file and those too small to fill a GPU, and clear errors
# for a file that is not one; then (given lazygrad) on the file a tiny
# model's training step writes: its LM head's product is 2 x 32 tokens x 256 x 128256 FLOPs.
#   bash roofline_test.sh tools/roofline.py [build/lazygrad]
set -uo pipefail
roofline=$1 lazygrad=${2:-}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
header=device,kernel,launches,seconds,flops_per_launch,bytes_per_launch
# mm: 989 GFLOP and 1 GB per launch: 1 ms at 989 TFLOP/s (the bytes take 0.21 ms at 4800 GB/s).
# add: no FLOPs, 4.8 GB: 1 ms at 4800 GB/s.
printf '%s\nCUDA,mm,2,0.004,989e9,1e9\nCUDA,add,1,0.002,0,4.8e9\n' "$header" >"$dir/run.csv"
out=$(python3 "$roofline" "$dir/run.csv") || fail "exit $?: $out"
grep -q 'least kernel time 3.000 ms (2.000 ms in compute-bound kernels, 1.000 ms in memory-bound ones); MFU at most 66.7%' <<<"$out" ||
  fail "bound of run.csv: $out"
grep -q 'measured kernel time 6.000 ms: 50.0% of it is the bound' <<<"$out" || fail "measured: $out"
grep -qE '^ +4\.000 +2\.000 +50\.0% +2 +989 +1  compute   mm$' <<<"$out" || fail "mm row: $out"
grep -qE '^ +2\.000 +1\.000 +50\.0% +1 +0 +4\.8  memory    add$' <<<"$out" || fail "add row: $out"
# Without times (CUDANULL): by bound, no measured columns.
printf '%s\nCUDANULL,mm,2,0,989e9,1e9\nCUDANULL,add,1,0,0,4.8e9\n' "$header" >"$dir/null.csv"
out=$(python3 "$roofline" "$dir/null.csv" --top 1) || fail "exit $?: $out"
grep -qE '^ +2\.000 +2 +989 +1  compute   mm$' <<<"$out" || fail "mm row without times: $out"
grep -q '  ... 1 more kernels: bound 1.000 ms$' <<<"$out" || fail "rest without times: $out"
grep -q 'measured' <<<"$out" && fail "a measured time without one: $out"
# One step: 3 launches of mm minus the 1 of the base, over 2.
printf '%s\nCUDA,mm,3,0.006,989e9,1e9\n' "$header" >"$dir/three.csv"
printf '%s\nCUDA,mm,1,0.002,989e9,1e9\n' "$header" >"$dir/one.csv"
out=$(python3 "$roofline" "$dir/three.csv" --minus "$dir/one.csv" --divide 2 --tflops 494.5) || fail "exit $?: $out"
grep -q 'least kernel time 2.000 ms (2.000 ms in compute-bound' <<<"$out" || fail "minus/divide at half the peak: $out"
# A GPU run's file gives launches: listed, and "!" on one that cannot fill the GPU (16 blocks; or
# bound by memory, 264 blocks of 64 threads: 128 threads an SM), summed on the last line. A
# compute-bound matmul of 264 blocks of 128 threads is not marked.
gheader=$header,blocks,threads
printf '%s\nCUDANULL,mm,1,0,989e9,1e9,264,128\nCUDANULL,colsum,1,0,0,4.8e9,16,256\nCUDANULL,thin,1,0,0,2.4e9,264,64\n' "$gheader" >"$dir/gpu.csv"
out=$(python3 "$roofline" "$dir/gpu.csv") || fail "exit $?: $out"
grep -qE '^ +1\.000 +1 +989 +1 +264 x 128   compute   mm$' <<<"$out" || fail "mm row with its launch: $out"
grep -qE '^ +1\.000 +1 +0 +4\.8 +16 x 256!  memory    colsum$' <<<"$out" || fail "colsum row: $out"
grep -qE '^ +0\.500 +1 +0 +2\.4 +264 x 64!  memory    thin$' <<<"$out" || fail "thin row: $out"
grep -q '^! launches that cannot fill a GPU of 132 SMs .*: 2 kernels, bound 1.500 ms$' <<<"$out" || fail "small launches line: $out"
out=$(python3 "$roofline" "$dir/gpu.csv" --sms 8) || fail "exit $?: $out"
grep -q ': 0 kernels, bound 0.000 ms$' <<<"$out" || fail "--sms 8: $out"
grep -q '!' <<<"$(grep colsum <<<"$out")" && fail "colsum flagged on 8 SMs: $out"
# Errors name the file and say what is wrong.
printf 'a,b\n1,2\n' >"$dir/bad.csv"
out=$(python3 "$roofline" "$dir/bad.csv" 2>&1) && fail "a file that is not a PROFILE_CSV was accepted"
grep -q "bad.csv is not a PROFILE_CSV file" <<<"$out" || fail "header error: $out"
printf '%s\nCUDA,mm,x,0,1,1\n' "$header" >"$dir/nan.csv"
out=$(python3 "$roofline" "$dir/nan.csv" 2>&1) && fail "a non-number was accepted"
grep -q "nan.csv line 2" <<<"$out" || fail "number error: $out"
out=$(python3 "$roofline" "$dir/one.csv" --minus "$dir/three.csv" 2>&1) && fail "a negative launch count was accepted"
grep -q "mm ran fewer times" <<<"$out" || fail "minus error: $out"
out=$(python3 "$roofline" "$dir/missing.csv" 2>&1) && fail "a missing file was accepted"
grep -q "cannot read .*missing.csv" <<<"$out" || fail "missing file: $out"
if [[ -n $lazygrad ]]; then
  PROFILE_CSV=$dir/tiny.csv DEVICE=CPU "$lazygrad" train --model tiny --synthetic --steps 1 --seq 32 --batch 1 \
    --eval-samples 1 >"$dir/train.txt" 2>&1 || fail "train: $(tail -5 "$dir/train.txt")"
  grep -q "PROFILE_CSV: [0-9]* kernels written to $dir/tiny.csv" "$dir/train.txt" || fail "no PROFILE_CSV line: $(tail -5 "$dir/train.txt")"
  head -1 "$dir/tiny.csv" | grep -qx "$gheader" || fail "header: $(head -1 "$dir/tiny.csv")"
  grep -qE '^CPU,r_[0-9_]+,[1-9][0-9]*,[0-9.e+-]+,2101346304,' "$dir/tiny.csv" || fail "no LM head row of 2101346304 FLOPs: $(cat "$dir/tiny.csv")"
  out=$(python3 "$roofline" "$dir/tiny.csv" --tflops 1 --gbs 100) || fail "exit $?: $out"
  grep -q "MFU at most" <<<"$out" || fail "tiny.csv: $out"
  PROFILE_CSV=$dir/no/such/dir/x.csv DEVICE=CPU "$lazygrad" train --model tiny --synthetic --steps 1 --seq 32 --batch 1 \
    --eval-samples 1 >"$dir/train2.txt" 2>&1 || fail "train with an unwritable PROFILE_CSV: exit $?"
  grep -q "PROFILE_CSV: cannot write $dir/no/such/dir/x.csv.tmp" "$dir/train2.txt" || fail "unwritable path: $(tail -3 "$dir/train2.txt")"
fi
echo "roofline.py: all checks passed"

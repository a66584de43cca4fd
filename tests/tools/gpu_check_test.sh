#!/usr/bin/env bash
# tools/gpu_check.sh without a GPU: nvidia-smi, lazygrad and the tensor tests are stubs that print
# what the real ones print (the GPU's line of `lazygrad devices`, runtime/gpu_peaks.h's
# describe_gpu, whose text tests/runtime/gpu_peaks_test.cpp pins; bench and train lines), so the
# script's own logic is checked: the peaks it reads (and passes to train), the table's values and ratios, the
# fallback to a shorter sequence when the longest runs out of memory, values whose check failed left
# out, --budget skipping stages that would not end in time, the table file written as stages end,
# and option errors.
#   bash gpu_check_test.sh tools/gpu_check.sh
set -uo pipefail
script=$(realpath "$1")
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

# nvidia-smi: the GPU named by $STUB_GPU; lazygrad devices prints $STUB_GPU_LINE
mkdir -p "$dir/bin" "$dir/build/tests"
cat >"$dir/bin/nvidia-smi" <<'EOF'
#!/usr/bin/env bash
case "$*" in
  -L) echo "GPU 0: $STUB_GPU (UUID: GPU-0)" ;;
  *query-gpu=name*) echo "$STUB_GPU" ;;
  *query-gpu=memory.total*) echo "81559 MiB" ;;
  *) exit 1 ;;
esac
EOF
# lazygrad: 8192 runs out of memory in train (unless STUB_FIT_8192=1); every call is logged, with
# the settings the script varies. BLOCK_MMA=0 doubles the matmuls' TFLOP/s and the step's speed
# and moves its loss by 0.1% (by far more, to nan, with STUB_BAD_LOSS=1); the 8192 a^T @ b check
# fails unless STUB_AT_OK=1.
cat >"$dir/build/lazygrad" <<'EOF'
#!/usr/bin/env bash
echo "$* [BLOCK_MMA=${BLOCK_MMA:-} FLASH_ATTENTION=${FLASH_ATTENTION:-}]" >>"$STUB_CALLS"
case "$1 ${2:-}" in
  "devices ") echo "default: CUDA (set DEVICE= to change)"; [[ -n ${STUB_GPU_LINE:-} ]] && echo "$STUB_GPU_LINE"; exit 0 ;;
  "bench matmul")
    if [[ " $* " == *" --probe "* ]]; then echo "probe lines of $* [BLOCK_MMA_TILE=${BLOCK_MMA_TILE:-}]"; exit 0; fi
    t=""; for a in "$@"; do [[ $a == --bt ]] && t=" b=W^T"; [[ $a == --at ]] && t=" a=X^T"; done
    scale=1; [[ ${BLOCK_MMA:-} == 0 ]] && scale=2
    # BLOCK_MMA_TILE=16 hangs (timeout's status), 15 aborts after its first size, 14 fails its
    # 4096 a @ b check (exiting 1 after the FAIL line, as lazygrad does)
    [[ ${BLOCK_MMA_TILE:-} == 16 ]] && exit 124
    check=ok; [[ ${BLOCK_MMA_TILE:-} == 14 && -z $t ]] && check=FAIL
    echo "matmul CUDA bf16 N=4096$t ms=1 tflops=$((100 * scale)).50 tensor_cores=yes kernel=no check=$check max_rel_err=1e-3"
    [[ $check == FAIL ]] && exit 1
    [[ ${BLOCK_MMA_TILE:-} == 15 ]] && { echo "lazygrad internal error: cuStreamSynchronize failed" >&2; exit 134; }
    # the 8192 a^T @ b value fails its check: it must not be reported
    check=ok; [[ $t == " a=X^T" && ${STUB_AT_OK:-0} != 1 ]] && check=FAIL
    echo "matmul CUDA bf16 N=8192$t ms=1 tflops=$((200 * scale)).25 tensor_cores=yes kernel=no check=$check max_rel_err=1e-3"
    if [[ $check == FAIL ]]; then exit 1; fi ;;
  "bench optimizer")
    echo "optimizer CUDA params=1486901248 outputs=fused kernels=1 ms=10 gbs=3000.0"
    echo "optimizer CUDA params=1486901248 outputs=apart kernels=4 ms=20 gbs=1500.0" ;;
  "bench attention")
    echo "attention CUDA bf16 B=1 H=32 KV=8 S=8192 D=128 causal=yes path=fused fwd_ms=1 fwd_tflops=300 step_ms=4 step_tflops=250.5 check=ok max_rel_err=1e-3"
    echo "attention CUDA bf16 B=1 H=32 KV=8 S=8192 D=128 causal=yes path=matmul fwd_ms=2 fwd_tflops=150 step_ms=8 step_tflops=120.5 check=ok max_rel_err=1e-3" ;;
  "train --model")
    if [[ "$*" == *"--seq 8192"* && ${STUB_FIT_8192:-0} != 1 ]]; then
      echo "lazygrad: error: CUDA: out of memory allocating 8 GiB"; exit 1
    fi
    echo "step 4 | loss 11.7"
    if [[ ${BLOCK_MMA:-} == 0 ]]; then
      loss=11.7117; [[ ${STUB_BAD_LOSS:-0} == 1 ]] && loss=nan
      printf 'done: 4 steps (completed), loss 11.8000 -> %s, eval loss 11.7\n' "$loss"
      printf '\nsteady state: median step 0.250 s, 8192 tokens/s, MFU 24.68%% of 989000 GFLOP/s\n'
    else
      echo "done: 4 steps (completed), loss 11.8000 -> 11.7000, eval loss 11.7"
      printf '\nsteady state: median step 0.500 s, 4096 tokens/s, MFU 12.34%% of 989000 GFLOP/s\n'
    fi ;;
  *) echo "stub lazygrad: unexpected call: $*" >&2; exit 3 ;;
esac
EOF
printf '#!/usr/bin/env bash\necho "[  PASSED  ] 2 tests."\n' >"$dir/build/tests/lg_tensor_tests"
chmod +x "$dir/bin/nvidia-smi" "$dir/build/lazygrad" "$dir/build/tests/lg_tensor_tests"
# python3 without torch (a CUDA PyTorch would add the cuBLAS column; the test wants none)
cat >"$dir/bin/python3" <<EOF
#!/usr/bin/env bash
[[ "\$*" == *"import torch"* ]] && exit 1
exec $(command -v python3) "\$@"
EOF
chmod +x "$dir/bin/python3"
export STUB_CALLS=$dir/calls PATH=$dir/bin:$PATH

run() { : >"$STUB_CALLS"; bash "$script" --no-build --build-dir "$dir/build" "$@" 2>&1; }

# An H100 SXM: its peaks, the default matmuls, 8192 out of memory, 2048 measured.
h100="gpu: NVIDIA H100 80GB HBM3, H100 SXM peaks: 989 TFLOP/s bf16, 67.0 TFLOP/s fp32, 3350 GB/s"
out=$(STUB_GPU="NVIDIA H100 80GB HBM3" STUB_GPU_LINE=$h100 run --also BLOCK_MMA=0 --optimizer --flash) || fail "exit $?: $out"
grep -qF "GPU: NVIDIA H100 80GB HBM3 (81559 MiB); peaks 989 TFLOP/s dense bf16, 3350 GB/s (lazygrad's, for the H100 SXM)" <<<"$out" ||
  fail "H100 peaks: $out"
grep -qF "| op harness on CUDA | pass | | |" <<<"$out" || fail "harness row: $out"
grep -qF "| bf16 matmul 4096, a @ b (TFLOP/s) | 100.50 | n/a | n/a |" <<<"$out" || fail "4096 row: $out"
grep -qF "| bf16 matmul 8192, a @ W^T (TFLOP/s) | 200.25 |" <<<"$out" || fail "8192 a @ W^T row: $out"
grep -qF "| bf16 matmul 8192, a^T @ b (TFLOP/s) | check FAIL (see the log) | n/a | n/a |" <<<"$out" || fail "a failed check was reported: $out"
grep -qF "| bf16 matmul 8192, a @ b, BLOCK_MMA=0 (TFLOP/s) | 400.25 |" <<<"$out" || fail "--also row: $out"
grep -qF "| AdamW update, 1.49 B parameters, one kernel (GB/s at 30 B per parameter) | 3000.0 | 1500.0 (lazygrad, a kernel per output) | 2.00x |" <<<"$out" ||
  fail "optimizer row: $out"
grep -qF "| llama3.1-8b, 2 layers, seq 2048, bf16, matmul+softmax attention: tokens/s | 4096 |" <<<"$out" || fail "step row: $out"
grep -qF "| same: MFU (peak 989 TFLOP/s) | 12.34% |" <<<"$out" || fail "MFU row: $out"
grep -qF "(runs that did not complete: seq 8192: out of GPU memory)" <<<"$out" || fail "the 8192 run's reason: $out"
grep -qF "| attention fwd+bwd, seq 8192, fused (TFLOP/s) | 250.5 |" <<<"$out" || fail "attention row: $out"
grep -qF "| llama3.1-8b, 2 layers, seq 8192, bf16, FLASH_ATTENTION=1: tokens/s | n/a (out of GPU memory) |" <<<"$out" ||
  fail "flash step row: $out"
grep -qF "(PyTorch with CUDA not importable: no cuBLAS column)" <<<"$out" || fail "torch note: $out"
grep -q -- "--peak-tflops 989" "$STUB_CALLS" || fail "train was not given the peak: $(cat "$STUB_CALLS")"
# the table file is the printed table
[[ -f $dir/build/gpu_check_table.md ]] || fail "no table file"
diff <(sed -n '/^GPU: /,/^(stages ended/p' <<<"$out") "$dir/build/gpu_check_table.md" >/dev/null ||
  fail "the table file differs from the printed table: $(cat "$dir/build/gpu_check_table.md")"
grep -qE '^\(stages ended, seconds from the start: harness [0-9]+ s, matmul [0-9]+ s, llama [0-9]+ s, also BLOCK_MMA=0 [0-9]+ s, optimizer [0-9]+ s, flash [0-9]+ s\)$' \
  "$dir/build/gpu_check_table.md" || fail "stages line: $(cat "$dir/build/gpu_check_table.md")"
# stage order: the default matmuls and the step before the --also matmuls
order=$(grep -oE '^(bench matmul|train|bench optimizer|bench attention)' "$STUB_CALLS" | uniq | tr '\n' ,)
[[ $order == "bench matmul,train,bench matmul,bench optimizer,bench attention,train," ]] || fail "stage order: $order"

# --best: BLOCK_MMA=0's matmuls are the fastest (all three 8192 layouts checked), so the fused
# attention's step runs again with it; its loss agrees with the default settings' within 1%.
out=$(STUB_GPU="NVIDIA H200" STUB_GPU_LINE=$h100 STUB_FIT_8192=1 STUB_AT_OK=1 run --also TC_RUN=0 --also BLOCK_MMA=0 --best --flash) ||
  fail "exit $?: $out"
grep -qF "| llama3.1-8b, 2 layers, seq 8192, bf16, FLASH_ATTENTION=1, BLOCK_MMA=0 (the fastest matmuls): tokens/s | 8192 | | |" <<<"$out" ||
  fail "best step row: $out"
grep -qF "| same: MFU (peak 989 TFLOP/s) | 24.68% | | |" <<<"$out" || fail "best MFU row: $out"
grep -qF "| same: loss after the steps | 11.7117 against 11.7000 with the default settings: agree | | |" <<<"$out" ||
  fail "best loss row: $out"
[[ $(grep -c '^train .*\[BLOCK_MMA=0 FLASH_ATTENTION=1\]' "$STUB_CALLS") == 1 ]] ||
  fail "the best step's settings: $(cat "$STUB_CALLS")"
grep -qE 'flash [0-9]+ s, best [0-9]+ s\)$' <<<"$out" || fail "best stage: $out"
# a loss that is not a number differs
out=$(STUB_GPU="NVIDIA H200" STUB_GPU_LINE=$h100 STUB_FIT_8192=1 STUB_AT_OK=1 STUB_BAD_LOSS=1 run --also BLOCK_MMA=0 --best) ||
  fail "exit $?: $out"
grep -qF "| llama3.1-8b, 2 layers, seq 8192, bf16, BLOCK_MMA=0 (the fastest matmuls): tokens/s | 8192 | | |" <<<"$out" ||
  fail "best step row without --flash: $out"
grep -qF "| same: loss after the steps | nan against 11.7000 with the default settings: DIFFER by more than 1% (a wrong kernel?) | | |" <<<"$out" ||
  fail "a nan loss: $out"
# no run with all three layouts checked (the 8192 a^T @ b check fails), or the default the fastest:
# no second step
out=$(STUB_GPU="NVIDIA H200" STUB_GPU_LINE=$h100 STUB_FIT_8192=1 run --also BLOCK_MMA=0 --best) || fail "exit $?: $out"
grep -qF "settings: tokens/s | n/a (no matmul run had all three 8192 layouts measured and checked) |" <<<"$out" ||
  fail "best without a checked run: $out"
[[ $(grep -c '^train' "$STUB_CALLS") == 1 ]] || fail "a second step without a checked run: $(cat "$STUB_CALLS")"
out=$(STUB_GPU="NVIDIA H200" STUB_GPU_LINE=$h100 STUB_FIT_8192=1 STUB_AT_OK=1 run --also TC_RUN=0 --best) || fail "exit $?: $out"
grep -qF "settings: tokens/s | n/a (the default settings' matmuls were the fastest) |" <<<"$out" || fail "best is the default: $out"
[[ $(grep -c '^train' "$STUB_CALLS") == 1 ]] || fail "a second step with the default the fastest: $(cat "$STUB_CALLS")"

# A setting whose first layout hangs or crashes: the rows say why, and its later layouts are not
# run (each would spend its time limit the same way); the next setting runs all three. A failed
# check (exit 1) skips nothing. Each failed or crashed layout (not a hung one) is probed at 512 and
# 4096 under its setting.
out=$(STUB_GPU="NVIDIA H200" STUB_GPU_LINE=$h100 STUB_FIT_8192=1 run --also BLOCK_MMA_TILE=16 --also BLOCK_MMA_TILE=15 \
  --also BLOCK_MMA_TILE=14 --also BLOCK_MMA=0) || fail "exit $?: $out"
grep -qF "| bf16 matmul 4096, a @ b, BLOCK_MMA_TILE=16 (TFLOP/s) | timeout after 30 s |" <<<"$out" || fail "hung row: $out"
grep -qF "| bf16 matmul 8192, a^T @ b, BLOCK_MMA_TILE=16 (TFLOP/s) | skipped (an earlier layout failed) |" <<<"$out" ||
  fail "skipped row after a hang: $out"
grep -qF "| bf16 matmul 4096, a @ b, BLOCK_MMA_TILE=15 (TFLOP/s) | 100.50 |" <<<"$out" || fail "row before a crash: $out"
grep -qF "| bf16 matmul 8192, a @ b, BLOCK_MMA_TILE=15 (TFLOP/s) | exit 134 (see the log) |" <<<"$out" || fail "crashed row: $out"
grep -qF "| bf16 matmul 4096, a @ W^T, BLOCK_MMA_TILE=15 (TFLOP/s) | skipped (an earlier layout failed) |" <<<"$out" ||
  fail "skipped row after a crash: $out"
grep -qF "| bf16 matmul 8192, a^T @ b, BLOCK_MMA=0 (TFLOP/s) | check FAIL (see the log) |" <<<"$out" || fail "next setting: $out"
grep -qF "| bf16 matmul 4096, a @ b, BLOCK_MMA_TILE=14 (TFLOP/s) | check FAIL (see the log) |" <<<"$out" || fail "failed check row: $out"
grep -qF "| bf16 matmul 8192, a @ b, BLOCK_MMA_TILE=14 (TFLOP/s) | not run (exit 1: a failed check or an error, see the log) |" <<<"$out" ||
  fail "row after a failed check: $out"
grep -qF "| bf16 matmul 8192, a @ W^T, BLOCK_MMA_TILE=14 (TFLOP/s) | 200.25 |" <<<"$out" || fail "layout after a failed check: $out"
# the default's 3 layouts (a^T @ b fails its 8192 check), one of tiling 16, one of tiling 15, tiling
# 14's 3, BLOCK_MMA=0's 3 (a^T @ b fails at 8192)
[[ $(grep -v -- --probe "$STUB_CALLS" | grep -c '^bench matmul') == 11 ]] || fail "matmul runs: $(cat "$STUB_CALLS")"
# the probes: each failed layout at 512 and 4096, under its setting
probes=$(grep -- '--probe' "$STUB_CALLS" | sed -E 's/ --device CUDA --dtype bf16//; s/ \[BLOCK_MMA=.*//' | tr '\n' ';')
# (the default's a^T @ b; tiling 15's a @ b; 14's a @ b and a^T @ b; BLOCK_MMA=0's a^T @ b; not
# tiling 16's hung a @ b)
p="bench matmul --probe --sizes"
[[ $probes == "$p 512 --at;$p 4096 --at;$p 512;$p 4096;$p 512;$p 4096;$p 512 --at;$p 4096 --at;$p 512 --at;$p 4096 --at;" ]] ||
  fail "probe runs: $probes"
grep -qF "probe lines of bench matmul --probe --device CUDA --dtype bf16 --sizes 4096 [BLOCK_MMA_TILE=14]" "$dir/build/gpu_check_probe.txt" ||
  fail "probe file: $(cat "$dir/build/gpu_check_probe.txt")"
grep -qF "== probe, BLOCK_MMA_TILE=15  N=512" "$dir/build/gpu_check_probe.txt" || fail "probe file headers: $(cat "$dir/build/gpu_check_probe.txt")"
grep -qF "BLOCK_MMA_TILE=16" "$dir/build/gpu_check_probe.txt" && fail "a hung layout was probed: $(cat "$dir/build/gpu_check_probe.txt")"
grep -qF "(how the failed matmuls are wrong, by bench matmul --probe: $dir/build/gpu_check_probe.txt)" <<<"$out" || fail "probe note: $out"

# --out: the log and the table go there, not into the build folder
rm -f "$dir/build/gpu_check_table.md" "$dir/build/gpu_check.log"
out=$(STUB_GPU="NVIDIA H200" STUB_GPU_LINE=$h100 STUB_FIT_8192=1 run --out "$dir/out") || fail "exit $?: $out"
[[ -f $dir/out/gpu_check_table.md && -f $dir/out/gpu_check.log ]] || fail "--out: $(ls "$dir/out")"
[[ -e $dir/build/gpu_check_table.md || -e $dir/build/gpu_check.log ]] && fail "--out: written into the build folder"
grep -qF "full log: $dir/out/gpu_check.log; the table: $dir/out/gpu_check_table.md" <<<"$out" || fail "--out paths: $out"

# An H100 PCIe: a lower peak, passed to train; 8192 fits.
pcie="gpu: NVIDIA H100 PCIe, H100 PCIe peaks: 756 TFLOP/s bf16, 51.0 TFLOP/s fp32, 2000 GB/s"
out=$(STUB_GPU="NVIDIA H100 PCIe" STUB_GPU_LINE=$pcie STUB_FIT_8192=1 run) || fail "exit $?: $out"
grep -qF "peaks 756 TFLOP/s dense bf16, 2000 GB/s" <<<"$out" || fail "H100 PCIe peaks: $out"
grep -q -- "--seq 8192 .*--peak-tflops 756" "$STUB_CALLS" || fail "train peak on the PCIe card: $(cat "$STUB_CALLS")"
grep -qF "| llama3.1-8b, 2 layers, seq 8192, bf16, matmul+softmax attention: tokens/s | 4096 |" <<<"$out" || fail "8192 step row: $out"
grep -q "runs that did not complete" <<<"$out" && fail "a run reported as incomplete: $out"

# An unknown GPU: the H200's peaks with a warning; --peak-tflops and --peak-gbs override.
future="gpu: NVIDIA Future GPU, peaks not known (MFU assumes an H200's; give train --peak-tflops)"
out=$(STUB_GPU="NVIDIA Future GPU" STUB_GPU_LINE=$future STUB_FIT_8192=1 run) || fail "exit $?: $out"
grep -qF "warning: peaks not known for 'NVIDIA Future GPU'" <<<"$out" || fail "unknown GPU warning: $out"
grep -qF "GPU: NVIDIA Future GPU (81559 MiB); peaks 989 TFLOP/s dense bf16, 4800 GB/s" <<<"$out" || fail "unknown GPU peaks: $out"
# lazygrad devices without a GPU line (it failed): the same, saying so
out=$(STUB_GPU="NVIDIA H200" STUB_FIT_8192=1 run) || fail "exit $?: $out"
grep -qF "warning: peaks not known for 'the GPU (lazygrad devices failed, see the log)'" <<<"$out" || fail "no GPU line: $out"
out=$(STUB_GPU="NVIDIA Future GPU" STUB_GPU_LINE=$future STUB_FIT_8192=1 run --peak-tflops 500 --peak-gbs 1000) || fail "exit $?: $out"
grep -q "warning" <<<"$out" && fail "a warning with both peaks given: $out"
grep -qF "peaks 500 TFLOP/s dense bf16, 1000 GB/s (given)" <<<"$out" || fail "given peaks: $out"
grep -qF "| same: MFU (peak 500 TFLOP/s) |" <<<"$out" || fail "MFU row with a given peak: $out"

# --budget 100: the harness (120 s) does not fit, the matmuls (3 x 30 s) do, the step (120 s) not.
out=$(STUB_GPU="NVIDIA H200" STUB_GPU_LINE=$h100 run --budget 100) || fail "exit $?: $out"
grep -qF "| op harness on CUDA | skipped (budget) | | |" <<<"$out" || fail "budget harness row: $out"
grep -qF "| bf16 matmul 4096, a @ b (TFLOP/s) | 100.50 |" <<<"$out" || fail "budget matmul row: $out"
grep -qF "| llama3.1-8b, 2 layers, seq 8192, bf16, matmul+softmax attention: tokens/s | n/a (skipped (budget)) |" <<<"$out" ||
  fail "budget step row: $out"
grep -q "^train" "$STUB_CALLS" && fail "train ran past the budget: $(cat "$STUB_CALLS")"

# Option errors: exit 2 with what the option takes.
for bad in "--out" "--layers" "--budget x" "--peak-tflops 0" "--peak-gbs -3" "--also lower=1" "--layers 0"; do
  # shellcheck disable=SC2086
  out=$(STUB_GPU="NVIDIA H200" run $bad); rc=$?
  [[ $rc == 2 ]] || fail "'$bad' exited $rc: $out"
  grep -q "^gpu_check.sh: " <<<"$out" || fail "'$bad' error: $out"
done
# No GPU: exit 1, saying so.
out=$(PATH=/usr/bin:/bin bash "$script" --no-build --build-dir "$dir/build" 2>&1); rc=$?
[[ $rc == 1 ]] && grep -qF "no NVIDIA GPU visible" <<<"$out" || fail "without nvidia-smi: exit $rc: $out"
echo "all checks passed"

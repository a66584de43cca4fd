#!/usr/bin/env bash
# One command for a machine with an NVIDIA GPU (written for an H200) and the CUDA toolkit, without
# network access: builds lazygrad, runs the op harness on the GPU, times bf16 matmuls against
# cuBLAS and a cut Llama 3.1 8B training step, and prints a table. Planned to finish within 8
# minutes on an H200 (each stage has a time limit; a stage that runs out is reported, not fatal).
#
#   bash tools/gpu_check.sh [--build-dir DIR] [--layers N] [--seq N[,N...]] [--no-build] [--beam W]
#                           [--also VAR=VALUE[,VAR=VALUE...]]... [--best] [--flash] [--profile]
#                           [--optimizer] [--budget SECONDS] [--peak-tflops T] [--peak-gbs G] [--out DIR]
#
#   --out DIR   where the log, the table and the runs' outputs go (default: the build folder)
#
#   peaks       the GPU's dense bf16 peak and memory bandwidth as `lazygrad devices` prints them
#               (runtime/gpu_peaks.h, by the GPU's name: H200 989 TFLOP/s and 4800 GB/s, H100 SXM
#               989 and 3350, H100 PCIe 756 and 2000, ...: the peak the trainer's MFU uses); a GPU
#               not in that table gets the H200's with a warning. --peak-tflops and --peak-gbs
#               override them. The peak is the MFU's denominator, both are tools/roofline.py's
#               (--profile); the table's first line names the GPU.
#
#   build       cmake + ninja into DIR (default build-gpu), RelWithDebInfo; with --no-build, DIR must hold
#               lazygrad and tests/lg_tensor_tests built elsewhere (their kernel cache: DIR/kernel-cache)
#   harness     the op harness and the fused-attention tests (FlashAttention.*: values and gradients
#               against matmul + softmax) with DEVICE=CUDA (tests/runtime/cuda_harness.sh; the ctest
#               cuda_op_harness also runs the gradient tests)
#   matmul      lazygrad bench matmul --dtype bf16 --sizes 4096,8192 on CUDA, a @ b, a @ W^T (--bt, a
#               layer's forward) and a^T @ b (--at, a weight gradient: both operands strided along k),
#               each value only when its sampled float64 check passes; cuBLAS through PyTorch
#               (torch.matmul, bf16) when python3 can import torch with CUDA, else "n/a"; with
#               --beam W also the three layouts with BEAM=W (runtime/beam.h: the search over the GPU
#               heuristic's knobs, tensor cores on and off; the search is in the first, untimed run);
#               each --also VAR=VALUE[,VAR=VALUE...] times the three layouts again with those
#               environment variables set (e.g. --also BLOCK_MMA=0: Opt TC's kernels instead of the
#               block-tiled default, measured beside it in the same run; --also BLOCK_MMA=0,TC_RUN=0:
#               two knobs at once, the kernel before lane runs)
#   best        with --best and --also: the matmul run (the default or an --also setting) whose
#               three 8192 layouts all passed their checks and take the least time together (the
#               harmonic mean of their TFLOP/s: a step runs each layout about as often); when it is
#               an --also setting, the Llama step again with that setting (with --flash the fused
#               attention's step at the first --seq, else the step that completed), its tokens/s and
#               MFU, and its loss after the 4 steps against the same step's with the default
#               settings (same seed and data: they agree within 1% unless a kernel is wrong), 120 s
#   optimizer   with --optimizer: lazygrad bench optimizer --device CUDA --params 1486901248 (the cut
#               step's parameter count): one AdamW update as one kernel of four outputs, and as one
#               kernel per output (MULTI_OUTPUT=0) in the same run, GB/s at 30 bytes per parameter, 30 s
#   llama       lazygrad train --model llama3.1-8b --set layers=N (default 2) --seq S --batch 1
#               --dtype bf16 --synthetic --steps 4 on CUDA, S the first of --seq (default 8192,2048)
#               whose run completes (the issue's "8192 or the largest that fits"; the table says
#               why a longer one did not): tokens/s and MFU against the
#               H200's dense bf16 peak, 989 TFLOP/s; the same step in PyTorch when available
#               (tools/gpu_check_torch_step.py, the PyTorch twin's model on the GPU); with --flash
#               also the step with FLASH_ATTENTION=1 (fused attention, docs/gpu.md) at the first
#               --seq, 120 s, and one attention layer of llama3.1-8b at that sequence: lazygrad bench
#               attention (fused, and matmul + softmax) against PyTorch's
#               scaled_dot_product_attention (60 + 30 s); with --profile, after the table, the
#               step (at the sequence that completed) again for 2 steps with PROFILE=20: the 20
#               kernels that took the most time, each with its GFLOP/s and GB/s (runtime/profile.h;
#               every launch timed alone, so the step itself is slower there), and from its
#               PROFILE_CSV tools/roofline.py's least time for those launches at the peaks, 90 s
# Time limits: build 240 s (skipped with --no-build), harness 120, matmul 3 x 30 + 30, lazygrad step
# 120 for the first sequence and 60 for a shorter one, PyTorch step 60: at most 8 minutes after the
# build; --beam adds 3 x 60, each --also 3 x 30, --flash 210, --best 120, --profile 90, --optimizer 30.
# Order: harness, the default matmuls and cuBLAS, the Llama step and PyTorch's, then the extras
# (--beam, each --also, --optimizer, --flash, --best, --profile), so a short lease measures the
# targets first.
# --budget SECONDS: a stage starts only if its time limit still fits in SECONDS after the script's
# start (so the script ends within it; a stage that does not fit is "skipped (budget)" in the table).
# The table is rewritten after every stage to gpu_check_table.md in --out (atomically): a script killed
# from outside still leaves what it measured there.
#
# Environment: CUDA_PATH (default /usr/local/cuda), CUDA_ARCH (default: the GPU's), FLASH_ATTENTION=1
# (the llama step with fused attention, docs/gpu.md; the table's step row names which it ran).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2

build=build-gpu layers=2 seqs=8192,2048 do_build=1 beam=0 also=() flash=0 profile=0 optimizer=0 best=0
budget=0 peak="" gbs="" outdir=""
while [[ $# -gt 0 ]]; do
  # every option but the flags takes a value
  [[ $1 =~ ^--(build-dir|out|layers|seq|beam|budget|peak-tflops|peak-gbs|also)$ && $# -lt 2 ]] &&
    { echo "gpu_check.sh: $1 needs a value (--help lists the options)" >&2; exit 2; }
  case $1 in
    --build-dir) build=$2; shift 2 ;;
    --out) outdir=$2; shift 2 ;;
    --layers) layers=$2; shift 2 ;;
    --seq) seqs=$2; shift 2 ;;
    --no-build) do_build=0; shift ;;
    --flash) flash=1; shift ;;
    --profile) profile=1; shift ;;
    --optimizer) optimizer=1; shift ;;
    --best) best=1; shift ;;
    --beam) beam=$2; shift 2 ;;
    --budget) budget=$2; shift 2 ;;
    --peak-tflops) peak=$2; shift 2 ;;
    --peak-gbs) gbs=$2; shift 2 ;;
    --also)
      [[ ${2:-} =~ ^[A-Z_][A-Z0-9_]*=[^[:space:],]+(,[A-Z_][A-Z0-9_]*=[^[:space:],]+)*$ ]] ||
        { echo "gpu_check.sh: --also takes VAR=VALUE[,VAR=VALUE...] (e.g. TC_RUN=0), got '${2:-}'" >&2; exit 2; }
      also+=("$2"); shift 2 ;;
    -h|--help) sed -n '2,/^set -uo/{/^#/p}' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "gpu_check.sh: unknown option '$1'" >&2; exit 2 ;;
  esac
done
[[ $layers =~ ^[1-9][0-9]*$ && $seqs =~ ^[1-9][0-9]*(,[1-9][0-9]*)*$ && $beam =~ ^[0-9]+$ ]] ||
  { echo "gpu_check.sh: --layers takes a positive integer, --seq a list of them (8192,2048), --beam a width (0: off)" >&2; exit 2; }
[[ $budget =~ ^[0-9]+$ ]] || { echo "gpu_check.sh: --budget takes whole seconds (0: no budget), got '$budget'" >&2; exit 2; }
for v in "$peak" "$gbs"; do
  [[ -z $v || $v =~ ^[0-9]+(\.[0-9]+)?$ && ! $v =~ ^0+(\.0+)?$ ]] ||
    { echo "gpu_check.sh: --peak-tflops and --peak-gbs take a positive number, got '$v'" >&2; exit 2; }
done

build=$(realpath -m "$build")
outdir=$(realpath -m "${outdir:-$build}")
log=$outdir/gpu_check.log
table_file=$outdir/gpu_check_table.md
mkdir -p "$build" "$outdir"; : >"$log"
declare -A result
say() { echo "== $*" | tee -a "$log"; }

if ! command -v nvidia-smi >/dev/null || ! nvidia-smi -L >>"$log" 2>&1; then
  echo "gpu_check.sh: no NVIDIA GPU visible (nvidia-smi -L failed); this check needs one" >&2
  exit 1
fi
nvidia-smi -L | head -1 | tee -a "$log"
gpu_mem=$(nvidia-smi --query-gpu=memory.total --format=csv,noheader 2>>"$log" | head -1)

# --budget: a stage of at most $1 seconds starts only if it ends within the budget.
t0=$SECONDS
fits() { [[ $budget == 0 ]] || (( SECONDS - t0 + $1 <= budget )); }
finished=()
stage_done() { finished+=("$1 $((SECONDS - t0)) s"); write_table; }

if [[ $do_build == 1 ]]; then
  say "build ($build)"
  if ! { cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >>"$log" 2>&1 &&
         timeout 240 ninja -C "$build" lazygrad lg_tensor_tests >>"$log" 2>&1; }; then
    echo "gpu_check.sh: build failed, see $log" >&2
    exit 1
  fi
fi
lazygrad=$build/lazygrad
export LAZYGRAD_CACHE_DIR=${LAZYGRAD_CACHE_DIR:-$build/kernel-cache}
# a folder from tools/gpu_bundle.sh carries the shared libraries the binaries were built against
[[ -d $build/lib ]] && export LD_LIBRARY_PATH=$build/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}

# The GPU's name and datasheet peaks as lazygrad knows them (runtime/gpu_peaks.h), the same the
# trainer's MFU uses: "gpu: NAME, MODEL peaks: X TFLOP/s bf16, Y TFLOP/s fp32, Z GB/s".
gpu_line=$(DEVICE=CUDA "$lazygrad" devices 2>>"$log" | grep '^gpu: ')
gpu_name=${gpu_line#gpu: }; gpu_name=${gpu_name%%, *}
if [[ $gpu_line =~ ,\ (.+)\ peaks:\ ([0-9.]+)\ TFLOP/s\ bf16,\ [0-9.]+\ TFLOP/s\ fp32,\ ([0-9.]+)\ GB/s ]]; then
  peaks_from="lazygrad's, for the ${BASH_REMATCH[1]}" known_peak=${BASH_REMATCH[2]} known_gbs=${BASH_REMATCH[3]}
else
  known_peak=989 known_gbs=4800
  peaks_from="not known for '${gpu_name:-the GPU (lazygrad devices failed, see the log)}': an H200's assumed (give --peak-tflops and --peak-gbs)"
  [[ -z $peak || -z $gbs ]] && echo "gpu_check.sh: warning: peaks $peaks_from" | tee -a "$log" >&2
fi
[[ -n $peak || -n $gbs ]] && peaks_from="given"
peak=${peak:-$known_peak} gbs=${gbs:-$known_gbs}

have_torch=0
python3 -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null && have_torch=1

declare -A lg_tflops lg_why check_failed torch_tflops opt_gbs attn
seq="" tok_s="" mfu="" loss="" train_why="not run" longer=""
torch_tok_s="not measured" torch_mfu=""
flash_seq=${seqs%%,*} flash_tok_s="" flash_mfu="" flash_loss="" flash_why="not run"
best_setting="" best_seq="" best_attention="" best_tok_s="" best_mfu="" best_loss="" best_why="not run"
profile_out=$outdir/gpu_check_profile.txt
probe_file=$outdir/gpu_check_probe.txt
rm -f "$probe_file"

ratio() { [[ -n ${1:-} && -n ${2:-} ]] && awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2fx", a / b }' || echo n/a; }

# The table of what is measured so far (n/a: not measured; "skipped (budget)": not started).
print_table() {
  echo "GPU: ${gpu_name:-?} (${gpu_mem:-?}); peaks $peak TFLOP/s dense bf16, $gbs GB/s ($peaks_from)"
  echo
  echo "| check | lazygrad | cuBLAS (PyTorch) | ratio |"
  echo "|---|---|---|---|"
  echo "| op harness on CUDA | ${result[harness]:-n/a} | | |"
  # one row per size, layout and run (the default, BEAM=W, each --also)
  local labels=("") suffixes=("") r n t what k v
  [[ $beam -gt 0 ]] && { labels+=(", BEAM=$beam"); suffixes+=(b); }
  for i in "${!also[@]}"; do labels+=(", ${also[$i]}"); suffixes+=("x$((i + 1))"); done
  for r in "${!labels[@]}"; do
    for n in 4096 8192; do
      for t in "" t a; do
        what="a @ b"; [[ $t == t ]] && what="a @ W^T"; [[ $t == a ]] && what="a^T @ b"
        k=$n$t${suffixes[$r]}
        # measured and checked, measured but wrong (no value), or why it was not measured
        v=${lg_tflops[$k]:-${lg_why[$k]:-${result[matmul${suffixes[$r]}]:-n/a}}}
        [[ -n ${check_failed[$k]:-} ]] && v="check FAIL (see the log)"
        echo "| bf16 matmul $n, $what${labels[$r]} (TFLOP/s) | $v | ${torch_tflops[$n]:-n/a} | $(ratio "${lg_tflops[$k]:-}" "${torch_tflops[$n]:-}") |"
      done
    done
  done
  [[ $optimizer == 1 ]] &&
    echo "| AdamW update, 1.49 B parameters, one kernel (GB/s at 30 B per parameter) | ${opt_gbs[fused]:-${result[optimizer]:-n/a}} | ${opt_gbs[apart]:-n/a} (lazygrad, a kernel per output) | $(ratio "${opt_gbs[fused]:-}" "${opt_gbs[apart]:-}") |"
  local attention="matmul+softmax attention"; [[ ${FLASH_ATTENTION:-0} != 0 ]] && attention="fused attention"
  echo "| llama3.1-8b, $layers layers, seq ${seq:-${seqs%%,*}}, bf16, $attention: tokens/s | ${tok_s:-n/a ($train_why)} | $torch_tok_s (PyTorch) | $(ratio "${tok_s:-}" "${torch_tok_s//[^0-9.]/}") |"
  echo "| same: MFU (peak $peak TFLOP/s) | ${mfu:-n/a} | ${torch_mfu:-} | |"
  if [[ $flash == 1 ]]; then
    echo "| attention fwd+bwd, seq $flash_seq, fused (TFLOP/s) | ${attn[fused]:-${result[attention]:-n/a}} | ${attn[torch]:-n/a} (SDPA) | $(ratio "${attn[fused]:-}" "${attn[torch]:-}") |"
    echo "| attention fwd+bwd, seq $flash_seq, matmul + softmax (TFLOP/s) | ${attn[matmul]:-${result[attention]:-n/a}} | ${attn[torch]:-n/a} (SDPA) | $(ratio "${attn[matmul]:-}" "${attn[torch]:-}") |"
    echo "| llama3.1-8b, $layers layers, seq $flash_seq, bf16, FLASH_ATTENTION=1: tokens/s | ${flash_tok_s:-n/a ($flash_why)} | | |"
    echo "| same: MFU (peak $peak TFLOP/s) | ${flash_mfu:-n/a} | | |"
  fi
  if [[ $best == 1 ]]; then
    local best_what="the fastest matmul run's settings"
    [[ -n $best_setting ]] && best_what="$best_setting (the fastest matmuls)"
    echo "| llama3.1-8b, $layers layers, seq ${best_seq:-${seq:-${seqs%%,*}}}, bf16, ${best_attention:+$best_attention, }$best_what: tokens/s | ${best_tok_s:-n/a ($best_why)} | | |"
    echo "| same: MFU (peak $peak TFLOP/s) | ${best_mfu:-n/a} | | |"
    [[ -n $best_tok_s ]] && echo "| same: loss after the steps | $best_loss | | |"
  fi
  [[ -n $longer ]] && echo "(runs that did not complete: ${longer%; })"
  [[ -f $probe_file ]] && echo "(how the failed matmuls are wrong, by bench matmul --probe: $probe_file)"
  [[ $have_torch == 0 ]] && echo "(PyTorch with CUDA not importable: no cuBLAS column)"
  local ended="none yet"
  [[ ${#finished[@]} -gt 0 ]] && { printf -v ended '%s, ' "${finished[@]}"; ended=${ended%, }; }
  echo "(stages ended, seconds from the start: $ended)"
}
write_table() { print_table >"$table_file.tmp" && mv -f "$table_file.tmp" "$table_file"; }
write_table

# --- harness -----------------------------------------------------------------------------------
if fits 120; then
  say "op harness on CUDA"
  # The op harness only (ctest's cuda_op_harness adds the gradient tests; too long for this budget).
  timeout 120 bash tests/runtime/cuda_harness.sh "$lazygrad" "$build/tests/lg_tensor_tests" 'Ops/OpHarness.*:FlashAttention.*' >>"$log" 2>&1
  case $? in
    0) result[harness]=pass ;;
    77) result[harness]="skipped: no usable CUDA device (see $log)" ;;
    124) result[harness]="timeout after 120 s (see $log)" ;;
    *) result[harness]="FAIL (see $log)" ;;
  esac
else
  result[harness]="skipped (budget)"
fi
stage_done harness

# --- matmuls -----------------------------------------------------------------------------------
# a @ b, a @ W^T (b transposed, as a Linear layer multiplies), a^T @ b (a weight gradient: dY^T X);
# each line also says whether 64 sampled entries matched a float64 reference (check=ok), else the
# value is not reported. A run: BEAM width, time limit per layout, environment setting (- for
# none), key suffix (BEAM=W: "b"; the --also settings: "x1", "x2", ...).
matmul_run() {
  local width=$1 limit=$2 setting=$3 suffix=$4 env_set=() layout line label=""
  [[ $setting != - ]] && label=", $setting"
  [[ $width -gt 0 ]] && label=", BEAM=$width"
  if ! fits $((3 * limit)); then result[matmul$suffix]="skipped (budget)"; return; fi
  say "bf16 matmul$label"
  [[ $setting != - ]] && IFS=, read -ra env_set <<<"$setting"
  local out=$outdir/gpu_check_matmul.out rc n why="" bad=()
  for layout in "" --bt --at; do
    local t=""; [[ $layout == --bt ]] && t=t; [[ $layout == --at ]] && t=a
    # a layout that hung or crashed: the setting's later layouts would most likely too (the same
    # kernels' hand-over), so they are skipped rather than spending the budget on timeouts (a
    # failed check exits 1 and does not skip them)
    if [[ -n $why ]]; then
      for n in 4096 8192; do lg_why[$n$t$suffix]="skipped (an earlier layout failed)"; done
      continue
    fi
    env "${env_set[@]}" BEAM="$width" DEVICE=CUDA timeout "$limit" "$lazygrad" bench matmul --device CUDA --dtype bf16 \
      --sizes 4096,8192 --repeats 10 $layout >"$out" 2>>"$log"
    rc=$?
    while read -r line; do
      echo "$line" >>"$log"
      [[ $line =~ N=([0-9]+)(\ a=X\^T)?(\ b=W\^T)?\ .*tflops=([0-9.]+).*check=(ok|FAIL) ]] || continue
      local key=${BASH_REMATCH[1]}${BASH_REMATCH[2]:+a}${BASH_REMATCH[3]:+t}$suffix
      if [[ ${BASH_REMATCH[5]} == ok ]]; then lg_tflops[$key]=${BASH_REMATCH[4]}; else check_failed[$key]=1; fi
    done <"$out"
    # probed below: a wrong or crashed layout (a hung one would hang its probes as well)
    [[ $rc != 0 && $rc != 124 && $rc != 137 ]] && bad+=("$layout")
    local missing
    case $rc in
      0) continue ;;
      124 | 137) why="timeout after $limit s" missing=$why ;;
      1) missing="not run (exit 1: a failed check or an error, see the log)" ;;
      *) why="exit $rc (see the log)" missing=$why ;;
    esac
    echo "bench matmul $layout: exit $rc" >>"$log"
    for n in 4096 8192; do
      [[ -z ${lg_tflops[$n$t$suffix]:-} && -z ${check_failed[$n$t$suffix]:-} ]] && lg_why[$n$t$suffix]=$missing
    done
  done
  [[ ${#bad[@]} -gt 0 ]] && probe_run "$width" "$label" "${bad[@]}"
}
# How a setting's failed layouts are wrong: lazygrad bench matmul --probe (bench/matmul_probe.h) at
# 512 and 4096 under the same settings (env_set, from matmul_run), each size its own process (a
# kernel that traps at 4096 leaves the 512 lines), appended to gpu_check_probe.txt in --out.
probe_run() {
  local width=$1 label=$2 layout n
  shift 2
  for layout in "$@"; do
    for n in 512 4096; do
      if ! fits 30; then echo "== probe${label} $layout N=$n: skipped (budget)" >>"$probe_file"; continue; fi
      echo "== probe${label} $layout N=$n" >>"$probe_file"
      env "${env_set[@]}" BEAM="$width" DEVICE=CUDA timeout 30 "$lazygrad" bench matmul --probe --device CUDA --dtype bf16 \
        --sizes "$n" $layout >>"$probe_file" 2>&1
      echo "(exit $?)" >>"$probe_file"
    done
  done
}
matmul_run 0 30 - ""
if [[ $have_torch == 1 ]] && fits 30; then
  while read -r n t; do torch_tflops[$n]=$t; done < <(timeout 30 python3 - <<'PY' 2>>"$log"
import torch
for n in (4096, 8192):
    a = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
    for _ in range(3): a @ b
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    s.record()
    for _ in range(20): a @ b
    e.record(); torch.cuda.synchronize()
    print(n, f"{2 * n**3 / (s.elapsed_time(e) / 20 / 1e3) / 1e12:.2f}")
PY
)
fi
stage_done matmul

# --- the Llama step ------------------------------------------------------------------------------
# The first sequence length of --seq whose run completes; the summary line (llm trainer: "steady
# state: ... tokens/s, MFU ...") is what counts, not a step line of a run that failed later.
train_out=$outdir/gpu_check_train.txt
# One run of the step: run_step LIMIT SEQ [VAR=VALUE...] (the settings for this run). Sets step_tok_s
# and step_mfu (from the summary line; empty unless the run completed), step_loss (after the last
# step, from the "done:" line), step_why (why there is no value) and step_rc; the output goes to
# $train_out and the log.
run_step() {
  local limit=$1 s=$2 summary
  shift 2
  env "$@" DEVICE=CUDA timeout "$limit" "$lazygrad" train --model llama3.1-8b --set layers="$layers" --seq "$s" --batch 1 \
    --dtype bf16 --synthetic --steps 4 --eval-samples 2 --peak-tflops "$peak" >"$train_out" 2>&1
  step_rc=$?
  cat "$train_out" >>"$log"
  summary=$(grep '^steady state:' "$train_out" | tail -1)
  step_tok_s=$(grep -oE '[0-9.]+ tokens/s' <<<"$summary" | grep -oE '^[0-9.]+')
  step_mfu=$(grep -oE 'MFU [0-9.]+%' <<<"$summary" | grep -oE '[0-9.]+%')
  step_loss=$(sed -nE 's/^done: .* -> ([^,]+),.*/\1/p' "$train_out" | tail -1)
  step_why=""
  if [[ $step_rc != 0 || -z $step_tok_s ]]; then
    step_tok_s="" step_mfu="" step_why="exit $step_rc"
    [[ $step_rc == 124 ]] && step_why="timeout after $limit s"
    grep -q 'out of memory' "$train_out" && step_why="out of GPU memory"
  fi
}
limit=120
for s in ${seqs//,/ }; do
  if ! fits $limit; then train_why="skipped (budget)"; break; fi
  say "llama3.1-8b training step, $layers layers, seq $s, bf16"
  run_step "$limit" "$s"
  seq=$s tok_s=$step_tok_s mfu=$step_mfu loss=$step_loss
  [[ -n $tok_s ]] && break
  train_why=$step_why
  longer+="seq $s: $train_why; "
  limit=60
done
if [[ $have_torch == 1 && -n $seq ]]; then
  if fits 60; then
    say "the same step in PyTorch"
    if tj=$(timeout 60 python3 tools/gpu_check_torch_step.py --layers "$layers" --seq "$seq" --peak-tflops "$peak" 2>>"$log" | tail -1); then
      echo "$tj" >>"$log"
      torch_tok_s=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["tokens_per_s"])' "$tj")
      torch_mfu=$(python3 -c 'import json,sys; print("%.2f%%" % (100 * json.loads(sys.argv[1])["mfu"]))' "$tj")
    else
      torch_tok_s="failed (see $log)"
    fi
  else
    torch_tok_s="skipped (budget)"
  fi
fi
stage_done llama

# --- extras --------------------------------------------------------------------------------------
if [[ $beam -gt 0 ]]; then matmul_run "$beam" 60 - b; stage_done beam; fi
for i in "${!also[@]}"; do matmul_run 0 30 "${also[$i]}" "x$((i + 1))"; stage_done "also ${also[$i]}"; done

# One AdamW update of the cut step's parameters (2 layers: 1.49 B), m, v, parameters and bf16 copy:
# one kernel of four outputs against one kernel each (schedule/multi_output.h), GB/s counting the
# 30 bytes per parameter one pass moves; both must leave the same parameters (else no value).
if [[ $optimizer == 1 ]]; then
  if fits 30; then
    say "AdamW update, 1486901248 parameters: one kernel of four outputs, one kernel each"
    while read -r line; do
      echo "$line" >>"$log"
      [[ $line =~ outputs=(fused|apart)\ .*gbs=([0-9.]+) ]] && opt_gbs[${BASH_REMATCH[1]}]=${BASH_REMATCH[2]}
      [[ $line == *check=FAIL* ]] && { opt_gbs=(); result[optimizer]="check FAIL (see $log)"; }
    done < <(DEVICE=CUDA timeout 30 "$lazygrad" bench optimizer --device CUDA --params 1486901248 --repeats 5 2>>"$log")
  else
    result[optimizer]="skipped (budget)"
  fi
  stage_done optimizer
fi

# The same step with the fused attention, at the first sequence of --seq (it stores no S x S scores).
if [[ $flash == 1 ]]; then
  if fits 90; then
    say "attention layer (llama3.1-8b heads), seq $flash_seq, bf16: fused, matmul + softmax, PyTorch SDPA"
    while read -r line; do
      echo "$line" >>"$log"
      [[ $line =~ path=([a-z]+)\ .*step_tflops=([0-9.]+)\ check=(ok|none) ]] && attn[${BASH_REMATCH[1]}]=${BASH_REMATCH[2]}
    done < <(DEVICE=CUDA timeout 60 "$lazygrad" bench attention --device CUDA --dtype bf16 --seq "$flash_seq" 2>>"$log")
    if [[ $have_torch == 1 ]]; then
      attn[torch]=$(timeout 30 python3 - "$flash_seq" <<'PY' 2>>"$log"
import sys, torch
import torch.nn.functional as F
B, H, KV, S, D = 1, 32, 8, int(sys.argv[1]), 128
q = torch.randn(B, H, S, D, device="cuda", dtype=torch.bfloat16, requires_grad=True)
k = torch.randn(B, KV, S, D, device="cuda", dtype=torch.bfloat16, requires_grad=True)
v = torch.randn(B, KV, S, D, device="cuda", dtype=torch.bfloat16, requires_grad=True)
def step():
    try:
        o = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)
    except TypeError:  # before PyTorch 2.5: repeat the kv heads
        o = F.scaled_dot_product_attention(q, k.repeat_interleave(H // KV, 1), v.repeat_interleave(H // KV, 1), is_causal=True)
    o.float().sum().backward()
for _ in range(2): step()
s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
s.record()
for _ in range(5): step()
e.record(); torch.cuda.synchronize()
print(f"{3.5 * 4 * B * H * S * S * D * 0.5 / (s.elapsed_time(e) / 5 / 1e3) / 1e12:.2f}")
PY
)
    fi
  else
    result[attention]="skipped (budget)"
  fi
  if fits 120; then
    say "llama3.1-8b training step, $layers layers, seq $flash_seq, bf16, FLASH_ATTENTION=1"
    run_step 120 "$flash_seq" FLASH_ATTENTION=1
    flash_tok_s=$step_tok_s flash_mfu=$step_mfu flash_loss=$step_loss flash_why=$step_why
  else
    flash_why="skipped (budget)"
  fi
  stage_done flash
fi

# The step again with the fastest matmul run's settings, when that is an --also setting: the run
# whose three 8192 layouts all passed their checks with the highest harmonic mean of their TFLOP/s
# (the time of one product of each). Its loss after the steps must agree with the same step's under
# the default settings (same seed and data; matmuls summed in another order differ in the last bits).
if [[ $best == 1 ]]; then
  best_suffix="" best_score=""
  suffixes=(""); for i in "${!also[@]}"; do suffixes+=("x$((i + 1))"); done
  for suffix in "${suffixes[@]}"; do
    a=${lg_tflops[8192$suffix]:-} b=${lg_tflops[8192t$suffix]:-} c=${lg_tflops[8192a$suffix]:-}
    [[ -n $a && -n $b && -n $c ]] || continue
    score=$(awk -v a="$a" -v b="$b" -v c="$c" 'BEGIN { printf "%.4f", 3 / (1 / a + 1 / b + 1 / c) }')
    if [[ -z $best_score ]] || awk -v x="$score" -v y="$best_score" 'BEGIN { exit !(x > y) }'; then
      best_suffix=$suffix best_score=$score
    fi
  done
  if [[ -z $best_score ]]; then
    best_why="no matmul run had all three 8192 layouts measured and checked"
  elif [[ -z $best_suffix ]]; then
    best_why="the default settings' matmuls were the fastest"
  else
    best_setting=${also[$((${best_suffix#x} - 1))]}
    IFS=, read -ra best_env <<<"$best_setting"
    if [[ $flash == 1 ]]; then
      best_seq=$flash_seq best_attention="FLASH_ATTENTION=1" default_loss=$flash_loss best_env+=(FLASH_ATTENTION=1)
    else
      best_seq=${seq:-${seqs%%,*}} best_attention="" default_loss=$loss
    fi
    if fits 120; then
      say "llama3.1-8b training step, $layers layers, seq $best_seq, bf16, ${best_attention:+$best_attention, }$best_setting (the fastest matmuls)"
      run_step 120 "$best_seq" "${best_env[@]}"
      best_tok_s=$step_tok_s best_mfu=$step_mfu best_loss=$step_loss best_why=$step_why
      if [[ -n $best_tok_s ]]; then
        best_loss="$best_loss against ${default_loss:-n/a} with the default settings"
        if [[ -n $default_loss ]]; then
          # a loss that is not a finite number (nan, inf) differs
          [[ $step_loss =~ ^-?[0-9]+(\.[0-9]+)?$ ]] &&
            awk -v x="$step_loss" -v y="$default_loss" 'BEGIN { d = x - y; if (d < 0) d = -d; exit !(d <= 0.01 * (y < 0 ? -y : y)) }' &&
            best_loss+=": agree" || best_loss+=": DIFFER by more than 1% (a wrong kernel?)"
        fi
      fi
    else
      best_why="skipped (budget)"
    fi
  fi
  stage_done best
fi

# Where the step's kernel time goes: the same step, every launch timed alone (runtime/profile.h).
profile_note=""
if [[ $profile == 1 ]]; then
  if [[ -z $tok_s ]]; then
    profile_note="(PROFILE run: not run, no step completed)"
  elif fits 90; then
    say "llama3.1-8b training step, $layers layers, seq $seq, bf16, PROFILE=20"
    PROFILE=20 PROFILE_CSV=$outdir/gpu_check_profile.csv DEVICE=CUDA timeout 90 "$lazygrad" train --model llama3.1-8b --set layers="$layers" --seq "$seq" --batch 1 \
      --dtype bf16 --synthetic --steps 2 --eval-samples 2 --peak-tflops "$peak" >"$profile_out" 2>&1
    echo "(exit $?)" >>"$profile_out"
    cat "$profile_out" >>"$log"
  else
    profile_note="(PROFILE run: skipped (budget))"
  fi
  stage_done profile
fi

echo
print_table
if [[ $profile == 1 ]]; then
  echo
  if [[ -n $profile_note ]]; then
    echo "$profile_note"
  elif grep -q '^PROFILE:' "$profile_out" 2>/dev/null; then
    echo "PROFILE=20 of the step (seq $seq; 2 steps and the evaluation, each launch timed alone):"
    sed -n '/^PROFILE:/,/^  total:/p' "$profile_out"
    # the same launches' least time at the peaks, what share of the measured time that is, and
    # the launches too small to fill the GPU (tools/roofline.py marks them "!")
    python3 tools/roofline.py "$outdir/gpu_check_profile.csv" --tflops "$peak" --gbs "$gbs" --top 100000 2>&1 |
      grep -E '^(total|measured|! |roofline)|bound by|[0-9] x [0-9]+!'
  else
    echo "(PROFILE run: no table; $(tail -1 "$profile_out" 2>/dev/null || echo "the step did not complete"))"
  fi
fi
echo "full log: $log; the table: $table_file"

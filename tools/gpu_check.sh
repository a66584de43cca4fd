#!/usr/bin/env bash
# One command for a machine with an NVIDIA GPU (written for an H200) and the CUDA toolkit, without
# network access: builds lazygrad, runs the op harness on the GPU, times bf16 matmuls against
# cuBLAS and a cut Llama 3.1 8B training step, and prints a table. Planned to finish within 8
# minutes on an H200 (each stage has a time limit; a stage that runs out is reported, not fatal).
#
#   bash tools/gpu_check.sh [--build-dir DIR] [--layers N] [--seq N[,N...]] [--no-build] [--beam W]
#                           [--also VAR=VALUE[,VAR=VALUE...]]... [--flash] [--profile] [--optimizer]
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
# build; --beam adds 3 x 60, each --also 3 x 30, --flash 210, --profile 90, --optimizer 30.
#
# Environment: CUDA_PATH (default /usr/local/cuda), CUDA_ARCH (default: the GPU's), FLASH_ATTENTION=1
# (the llama step with fused attention, docs/gpu.md; the table's step row names which it ran).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2

build=build-gpu layers=2 seqs=8192,2048 do_build=1 peak=989 beam=0 also=() flash=0 profile=0 optimizer=0
while [[ $# -gt 0 ]]; do
  case $1 in
    --build-dir) build=$2; shift 2 ;;
    --layers) layers=$2; shift 2 ;;
    --seq) seqs=$2; shift 2 ;;
    --no-build) do_build=0; shift ;;
    --flash) flash=1; shift ;;
    --profile) profile=1; shift ;;
    --optimizer) optimizer=1; shift ;;
    --beam) beam=$2; shift 2 ;;
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

build=$(realpath -m "$build")
log=$build/gpu_check.log
mkdir -p "$build"; : >"$log"
declare -A result
say() { echo "== $*" | tee -a "$log"; }

if ! command -v nvidia-smi >/dev/null || ! nvidia-smi -L >>"$log" 2>&1; then
  echo "gpu_check.sh: no NVIDIA GPU visible (nvidia-smi -L failed); this check needs one" >&2
  exit 1
fi
nvidia-smi -L | head -1 | tee -a "$log"

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

say "op harness on CUDA"
# The op harness only (ctest's cuda_op_harness adds the gradient tests; too long for this budget).
timeout 120 bash tests/runtime/cuda_harness.sh "$lazygrad" "$build/tests/lg_tensor_tests" 'Ops/OpHarness.*:FlashAttention.*' >>"$log" 2>&1
case $? in
  0) result[harness]=pass ;;
  77) result[harness]="skipped: no usable CUDA device (see $log)" ;;
  124) result[harness]="timeout after 120 s (see $log)" ;;
  *) result[harness]="FAIL (see $log)" ;;
esac

say "bf16 matmul"
declare -A lg_tflops torch_tflops
# a @ b, a @ W^T (b transposed, as a Linear layer multiplies), a^T @ b (a weight gradient: dY^T X);
# each line also says whether 64
# sampled entries matched a float64 reference (check=ok), else the value is not reported
# (with --beam W, again with BEAM=W: keys gain a "b"; with --also, again with each setting: keys
# gain "x1", "x2", ...). A run: BEAM width, time limit, environment setting (- for none), key suffix.
runs=("0 30 - ")
[[ $beam -gt 0 ]] && runs+=("$beam 60 - b")
for i in "${!also[@]}"; do runs+=("0 30 ${also[$i]} x$((i + 1))"); done
for run in "${runs[@]}"; do
  read -r width limit setting suffix <<<"$run"
  env_set=(); [[ $setting != - ]] && IFS=, read -ra env_set <<<"$setting"
  for layout in "" --bt --at; do
    while read -r line; do
      echo "$line" >>"$log"
      [[ $line =~ N=([0-9]+)(\ a=X\^T)?(\ b=W\^T)?\ .*tflops=([0-9.]+).*check=ok ]] &&
        lg_tflops[${BASH_REMATCH[1]}${BASH_REMATCH[2]:+a}${BASH_REMATCH[3]:+t}$suffix]=${BASH_REMATCH[4]}
    done < <(env "${env_set[@]}" BEAM=$width DEVICE=CUDA timeout "$limit" "$lazygrad" bench matmul --device CUDA --dtype bf16 --sizes 4096,8192 --repeats 10 $layout 2>>"$log")
  done
done
have_torch=0
if python3 -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null; then
  have_torch=1
  while read -r n t; do torch_tflops[$n]=$t; done < <(timeout 30 python3 - <<'EOF' 2>>"$log"
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
EOF
)
fi

# One AdamW update of the cut step's parameters (2 layers: 1.49 B), m, v, parameters and bf16 copy:
# one kernel of four outputs against one kernel each (schedule/multi_output.h), GB/s counting the
# 30 bytes per parameter one pass moves; both must leave the same parameters (else no value).
declare -A opt_gbs
if [[ $optimizer == 1 ]]; then
  say "AdamW update, 1486901248 parameters: one kernel of four outputs, one kernel each"
  while read -r line; do
    echo "$line" >>"$log"
    [[ $line =~ outputs=(fused|apart)\ .*gbs=([0-9.]+) ]] && opt_gbs[${BASH_REMATCH[1]}]=${BASH_REMATCH[2]}
    [[ $line == *check=FAIL* ]] && opt_gbs=()
  done < <(DEVICE=CUDA timeout 30 "$lazygrad" bench optimizer --device CUDA --params 1486901248 --repeats 5 2>>"$log")
fi

# The first sequence length of --seq whose run completes; the summary line (llm trainer: "steady
# state: ... tokens/s, MFU ...") is what counts, not a step line of a run that failed later.
train_out=$build/gpu_check_train.txt
seq="" tok_s="" mfu="" train_rc=0 longer=""
limit=120
for s in ${seqs//,/ }; do
  say "llama3.1-8b training step, $layers layers, seq $s, bf16"
  DEVICE=CUDA timeout "$limit" "$lazygrad" train --model llama3.1-8b --set layers="$layers" --seq "$s" --batch 1 \
    --dtype bf16 --synthetic --steps 4 --eval-samples 2 --peak-tflops "$peak" >"$train_out" 2>&1
  train_rc=$?
  cat "$train_out" >>"$log"
  seq=$s
  summary=$(grep '^steady state:' "$train_out" | tail -1)
  tok_s=$(grep -oE '[0-9.]+ tokens/s' <<<"$summary" | grep -oE '^[0-9.]+')
  mfu=$(grep -oE 'MFU [0-9.]+%' <<<"$summary" | grep -oE '[0-9.]+%')
  [[ $train_rc == 0 && -n $tok_s ]] && break
  why="exit $train_rc"
  [[ $train_rc == 124 ]] && why="timeout after $limit s"
  grep -q 'out of memory' "$train_out" && why="out of GPU memory"
  longer+="seq $s: $why; "
  limit=60
done

# The same step with the fused attention, at the first sequence of --seq (it stores no S x S scores).
flash_seq=${seqs%%,*} flash_tok_s="" flash_mfu="" flash_why=""
declare -A attn
if [[ $flash == 1 ]]; then
  say "attention layer (llama3.1-8b heads), seq $flash_seq, bf16: fused, matmul + softmax, PyTorch SDPA"
  while read -r line; do
    echo "$line" >>"$log"
    [[ $line =~ path=([a-z]+)\ .*step_tflops=([0-9.]+)\ check=(ok|none) ]] && attn[${BASH_REMATCH[1]}]=${BASH_REMATCH[2]}
  done < <(DEVICE=CUDA timeout 60 "$lazygrad" bench attention --device CUDA --dtype bf16 --seq "$flash_seq" 2>>"$log")
  if python3 -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null; then
    attn[torch]=$(timeout 30 python3 - "$flash_seq" <<'EOF' 2>>"$log"
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
EOF
)
  fi
  say "llama3.1-8b training step, $layers layers, seq $flash_seq, bf16, FLASH_ATTENTION=1"
  FLASH_ATTENTION=1 DEVICE=CUDA timeout 120 "$lazygrad" train --model llama3.1-8b --set layers="$layers" --seq "$flash_seq" \
    --batch 1 --dtype bf16 --synthetic --steps 4 --eval-samples 2 --peak-tflops "$peak" >"$train_out" 2>&1
  rc=$?
  cat "$train_out" >>"$log"
  summary=$(grep '^steady state:' "$train_out" | tail -1)
  flash_tok_s=$(grep -oE '[0-9.]+ tokens/s' <<<"$summary" | grep -oE '^[0-9.]+')
  flash_mfu=$(grep -oE 'MFU [0-9.]+%' <<<"$summary" | grep -oE '[0-9.]+%')
  [[ $rc == 0 && -n $flash_tok_s ]] || flash_why="exit $rc"
  [[ $rc == 124 ]] && flash_why="timeout after 120 s"
  grep -q 'out of memory' "$train_out" && flash_why="out of GPU memory"
fi

# Where the step's kernel time goes: the same step, every launch timed alone (runtime/profile.h).
profile_out=$build/gpu_check_profile.txt
if [[ $profile == 1 && -n $tok_s ]]; then
  say "llama3.1-8b training step, $layers layers, seq $seq, bf16, PROFILE=20"
  PROFILE=20 PROFILE_CSV=$build/gpu_check_profile.csv DEVICE=CUDA timeout 90 "$lazygrad" train --model llama3.1-8b --set layers="$layers" --seq "$seq" --batch 1 \
    --dtype bf16 --synthetic --steps 2 --eval-samples 2 --peak-tflops "$peak" >"$profile_out" 2>&1
  echo "(exit $?)" >>"$profile_out"
  cat "$profile_out" >>"$log"
fi

torch_tok_s="not measured" torch_mfu=""
if [[ $have_torch == 1 ]]; then
  say "the same step in PyTorch"
  if tj=$(timeout 60 python3 tools/gpu_check_torch_step.py --layers "$layers" --seq "$seq" --peak-tflops "$peak" 2>>"$log" | tail -1); then
    echo "$tj" >>"$log"
    torch_tok_s=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["tokens_per_s"])' "$tj")
    torch_mfu=$(python3 -c 'import json,sys; print("%.2f%%" % (100 * json.loads(sys.argv[1])["mfu"]))' "$tj")
  else
    torch_tok_s="failed (see $log)"
  fi
fi

ratio() { [[ -n ${1:-} && -n ${2:-} ]] && awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2fx", a / b }' || echo n/a; }
echo
echo "| check | lazygrad | cuBLAS (PyTorch) | ratio |"
echo "|---|---|---|---|"
echo "| op harness on CUDA | ${result[harness]} | | |"
# one row per size, layout and run (the default, BEAM=W, each --also)
labels=(""); suffixes=("")
[[ $beam -gt 0 ]] && { labels+=(", BEAM=$beam"); suffixes+=(b); }
for i in "${!also[@]}"; do labels+=(", ${also[$i]}"); suffixes+=("x$((i + 1))"); done
for r in "${!labels[@]}"; do
  for n in 4096 8192; do
    for t in "" t a; do
      what="a @ b"; [[ $t == t ]] && what="a @ W^T"; [[ $t == a ]] && what="a^T @ b"
      k=$n$t${suffixes[$r]}
      echo "| bf16 matmul $n, $what${labels[$r]} (TFLOP/s) | ${lg_tflops[$k]:-n/a} | ${torch_tflops[$n]:-n/a} | $(ratio "${lg_tflops[$k]:-}" "${torch_tflops[$n]:-}") |"
    done
  done
done
[[ $optimizer == 1 ]] &&
  echo "| AdamW update, 1.49 B parameters, one kernel (GB/s at 30 B per parameter) | ${opt_gbs[fused]:-n/a} | ${opt_gbs[apart]:-n/a} (lazygrad, a kernel per output) | $(ratio "${opt_gbs[fused]:-}" "${opt_gbs[apart]:-}") |"
attention="matmul+softmax attention"; [[ ${FLASH_ATTENTION:-0} != 0 ]] && attention="fused attention"
echo "| llama3.1-8b, $layers layers, seq $seq, bf16, $attention: tokens/s | ${tok_s:-n/a (rc $train_rc)} | $torch_tok_s (PyTorch) | $(ratio "${tok_s:-}" "${torch_tok_s//[^0-9.]/}") |"
echo "| same: MFU (peak $peak TFLOP/s) | ${mfu:-n/a} | ${torch_mfu:-} | |"
if [[ $flash == 1 ]]; then
  echo "| attention fwd+bwd, seq $flash_seq, fused (TFLOP/s) | ${attn[fused]:-n/a} | ${attn[torch]:-n/a} (SDPA) | $(ratio "${attn[fused]:-}" "${attn[torch]:-}") |"
  echo "| attention fwd+bwd, seq $flash_seq, matmul + softmax (TFLOP/s) | ${attn[matmul]:-n/a} | ${attn[torch]:-n/a} (SDPA) | $(ratio "${attn[matmul]:-}" "${attn[torch]:-}") |"
  echo "| llama3.1-8b, $layers layers, seq $flash_seq, bf16, FLASH_ATTENTION=1: tokens/s | ${flash_tok_s:-n/a ($flash_why)} | | |"
  echo "| same: MFU (peak $peak TFLOP/s) | ${flash_mfu:-n/a} | | |"
fi
[[ -n $longer ]] && echo "(runs that did not complete: ${longer%; })"
if [[ $profile == 1 ]]; then
  echo
  if grep -q '^PROFILE:' "$profile_out" 2>/dev/null; then
    echo "PROFILE=20 of the step (seq $seq; 2 steps and the evaluation, each launch timed alone):"
    sed -n '/^PROFILE:/,/^  total:/p' "$profile_out"
    # the same launches' least time at the peaks, and what share of the measured time that is
    python3 tools/roofline.py "$build/gpu_check_profile.csv" --tflops "$peak" --top 0 2>&1 | tail -2
  else
    echo "(PROFILE run: no table; $(tail -1 "$profile_out" 2>/dev/null || echo "the step did not complete"))"
  fi
fi
[[ $have_torch == 0 ]] && echo "(PyTorch with CUDA not importable: no cuBLAS column)"
echo "full log: $log"

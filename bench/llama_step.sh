#!/usr/bin/env bash
# Training-step throughput of lazygrad against its PyTorch twin on the configurations of
# shared/bench/BASELINE.md (one step = forward + cross-entropy + backward + clip + AdamW), both
# measured in this one invocation so the ratio is fair on a shared machine.
#
#   bash bench/llama_step.sh [--configs A,B,C] [--dtypes fp32,bf16] [--steps N] [--warmup W]
#                            [--lazygrad PATH] [--no-torch] [--no-lazygrad] [--omp-wait POLICY]
#
#   A  d 256, 4 layers, 8/2 heads, ffn 768,  vocab 8192,   seq 256, batch 8  (lazygrad: --model tiny)
#   B  d 512, 8 layers, 8/2 heads, ffn 1536, vocab 32000,  seq 512, batch 4  (lazygrad: --model small)
#   C  B with vocab 128256
#
# PyTorch: Debian's python3-torch (/usr/bin/python3), 2 threads, OPENBLAS_L2_SIZE removed and
# OPENBLAS_CORETYPE set from the CPU flags (below), OMP_WAIT_POLICY=PASSIVE (--omp-wait; BASELINE.md
# "Traps" gives it for fp32; on a loaded machine it also made bf16 2-4x faster than the default or
# ACTIVE, whose threads spin); W untimed steps, then the median of N. lazygrad: `lazygrad train
# --synthetic` with N+2 steps; its summary leaves out the first two (compile and capture).
# PyTorch's config C takes several seconds a step: keep N small.
set -euo pipefail
cd "$(dirname "$0")/.."

configs=A,B,C dtypes=fp32,bf16 steps=3 warmup=1 lazygrad=build/lazygrad run_torch=1 run_lg=1 omp_wait=PASSIVE
usage() { sed -n '2,18p' "$0" | sed 's/^# \{0,1\}//'; exit "${1:-0}"; }
while [[ $# -gt 0 ]]; do
  case $1 in
    --configs) configs=$2; shift 2 ;;
    --dtypes) dtypes=$2; shift 2 ;;
    --steps) steps=$2; shift 2 ;;
    --warmup) warmup=$2; shift 2 ;;
    --lazygrad) lazygrad=$2; shift 2 ;;
    --no-torch) run_torch=0; shift ;;
    --no-lazygrad) run_lg=0; shift ;;
    --omp-wait) omp_wait=$2; shift 2 ;;
    -h|--help) usage 0 ;;
    *) echo "llama_step.sh: unknown option '$1'" >&2; usage 2 >&2 ;;
  esac
done
die() { echo "llama_step.sh: $*" >&2; exit 2; }
[[ $steps =~ ^[1-9][0-9]*$ ]] || die "--steps must be a positive integer, got '$steps'"
[[ $warmup =~ ^[0-9]+$ ]] || die "--warmup must be a non-negative integer, got '$warmup'"
[[ $omp_wait == PASSIVE || $omp_wait == ACTIVE ]] || die "--omp-wait must be PASSIVE or ACTIVE, got '$omp_wait'"
IFS=, read -ra config_list <<<"$configs"
IFS=, read -ra dtype_list <<<"$dtypes"
for c in "${config_list[@]}"; do
  [[ $c == A || $c == B || $c == C ]] || die "unknown config '$c' (A, B or C)"
done
for d in "${dtype_list[@]}"; do
  [[ $d == fp32 || $d == bf16 ]] || die "unknown dtype '$d' (fp32 or bf16)"
done

python=/usr/bin/python3
if [[ $run_torch == 1 ]] && ! $python -c 'import torch' 2>/dev/null; then
  echo "llama_step.sh: $python cannot import torch (apt-get install python3-torch): PyTorch skipped" >&2
  run_torch=0
fi
if [[ $run_lg == 1 ]] && ! { [[ -x $lazygrad ]] && "$lazygrad" train --help >/dev/null 2>&1; }; then
  echo "llama_step.sh: '$lazygrad train' is not available (build it: cmake --build build): lazygrad skipped" >&2
  run_lg=0
fi

# OpenBLAS kernels for the reference: OpenBLAS 0.3.21 detects AMD Zen 5 as Cooperlake, but not every
# CPU it runs on (on an Intel Xeon of family 6 model 207 it falls back to SSE3 "Prescott" kernels,
# ~20 GFLOP/s a core instead of ~100), and the environment may force Haswell (BASELINE.md). So the
# core is chosen from the CPU flags: AVX512-BF16 -> Cooperlake, AVX-512 -> SkylakeX, AVX2 -> Haswell.
flags=$(grep -m1 '^flags' /proc/cpuinfo 2>/dev/null || true)
openblas_core=
if [[ $flags == *" avx512_bf16"* ]]; then openblas_core=Cooperlake
elif [[ $flags == *" avx512f"* ]]; then openblas_core=SkylakeX
elif [[ $flags == *" avx2"* ]]; then openblas_core=Haswell
fi
openblas_env=(-u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE)
[[ -n $openblas_core ]] && openblas_env+=(OPENBLAS_CORETYPE=$openblas_core)
[[ $run_torch == 1 ]] &&
  echo "PyTorch: OpenBLAS core ${openblas_core:-auto-detected}, OMP_WAIT_POLICY=$omp_wait, 2 threads" >&2

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The tokens_per_s field of a JSON line.
tokens_per_s() { $python -c 'import json,sys; print("%.1f" % json.loads(sys.argv[1])["tokens_per_s"])' "$1"; }

torch_step() {  # config dtype -> tokens/s
  local line
  line=$(env "${openblas_env[@]}" OMP_WAIT_POLICY="$omp_wait" \
         $python tools/llama_reference.py step --config "$1" --dtype "$2" --steps "$steps" --warmup "$warmup" | tail -1)
  echo "  torch    $1 $2: $line" >&2
  tokens_per_s "$line"
}

lazygrad_step() {  # config dtype -> tokens/s
  local model
  case $1 in
    A) model=(--model tiny --set vocab=8192 --seq 256 --batch 8) ;;
    B) model=(--model small --set vocab=32000 --seq 512 --batch 4) ;;
    C) model=(--model small --set vocab=128256 --seq 512 --batch 4) ;;
  esac
  local metrics=$tmp/metrics_$1_$2.jsonl
  if ! "$lazygrad" train "${model[@]}" --synthetic --steps $((steps + 2)) --dtype "$2" --metrics "$metrics" \
       >"$tmp/lazygrad.log" 2>&1; then
    echo "  lazygrad $1 $2: failed:" >&2
    tail -5 "$tmp/lazygrad.log" >&2
    echo "-"
    return
  fi
  local line
  line=$(tail -1 "$metrics")
  echo "  lazygrad $1 $2: $line" >&2
  tokens_per_s "$line"
}

declare -A torch_tps lg_tps
for c in "${config_list[@]}"; do
  for d in "${dtype_list[@]}"; do
    torch_tps[$c$d]=-
    lg_tps[$c$d]=-
    [[ $run_torch == 1 ]] && torch_tps[$c$d]=$(torch_step "$c" "$d")
    [[ $run_lg == 1 ]] && lg_tps[$c$d]=$(lazygrad_step "$c" "$d")
  done
done

echo
printf "%-6s %-5s %16s %17s %8s\n" config dtype "pytorch tok/s" "lazygrad tok/s" ratio
for c in "${config_list[@]}"; do
  for d in "${dtype_list[@]}"; do
    t=${torch_tps[$c$d]} l=${lg_tps[$c$d]} ratio=-
    [[ $t != - && $l != - ]] && ratio=$(awk -v l="$l" -v t="$t" 'BEGIN { printf "%.2fx", l / t }')
    printf "%-6s %-5s %16s %17s %8s\n" "$c" "$d" "$t" "$l" "$ratio"
  done
done
echo "(ratio = lazygrad / PyTorch tokens per second; steps $steps, PyTorch warm-up $warmup)"

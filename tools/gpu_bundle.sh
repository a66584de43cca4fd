#!/usr/bin/env bash
# Prepares a folder to carry to a machine with an NVIDIA GPU that should not (or cannot) build:
# lazygrad and the tensor tests built here, the shared libraries they need beyond glibc, and a
# kernel cache filled by compiling on CUDANULL every kernel tools/gpu_check.sh will run (cubins
# are keyed by the NVRTC version, options and source, not the device: a cache filled here for
# sm_90a is hit by an H100 or H200 (compute capability 9.0: sm_90a) whose NVRTC has the same
# version). On the GPU machine:
#   bash tools/gpu_check.sh --no-build --build-dir DIR [the same --layers/--seq/--also]
#
#   bash tools/gpu_bundle.sh DIR [--build-dir B] [--layers N] [--seq N[,N...]] [--also VAR=VALUE[,...]]... [--flash] [--best]
#
#   B (default build) is configured and built first (Release with debug info); DIR gets lazygrad,
#   tests/lg_tensor_tests (stripped), lib/ and kernel-cache/. The cache holds the bf16 matmuls of
#   gpu_check.sh (4096 and 8192; a @ b, a @ W^T, a^T @ b; the default and each --also setting; and
#   the probes gpu_check.sh runs for a layout that fails, bench matmul --probe at 512 and 4096) and
#   the llama3.1-8b step cut to --layers (default 2) at each --seq length (default 8192,2048), with
#   --flash also the step with FLASH_ATTENTION=1 and the attention bench at the first --seq
#   (gpu_check.sh --flash), and with --best the step gpu_check.sh --best may run again (the fused
#   attention's with --flash, else the first --seq's) under each --also setting. The
#   op harness is not pre-compiled (its kernels are small; NVRTC compiles them on the GPU machine).
#   CUDA_ARCH (default sm_90a) is the target. DIR/ptxas_report.txt gets what ptxas said of each
#   kernel as it compiled (PTXAS=1: registers, spills, serialized wgmmas), a line each under the
#   setting that compiled it; the kernels it warns of are printed at the end.
set -euo pipefail
cd "$(dirname "$0")/.."

[[ $# -ge 1 && $1 != -* ]] || { echo "usage: bash tools/gpu_bundle.sh DIR [--build-dir B] [--layers N] [--seq N,...] [--also VAR=VALUE[,...]]... [--flash] [--best]" >&2; exit 2; }
out=$1; shift
build=build layers=2 seqs=8192,2048 also=() flash=0 best=0
while [[ $# -gt 0 ]]; do
  case $1 in
    --build-dir) build=$2; shift 2 ;;
    --layers) layers=$2; shift 2 ;;
    --seq) seqs=$2; shift 2 ;;
    --flash) flash=1; shift ;;
    --best) best=1; shift ;;
    --also)
      [[ ${2:-} =~ ^[A-Z_][A-Z0-9_]*=[^[:space:],]+(,[A-Z_][A-Z0-9_]*=[^[:space:],]+)*$ ]] ||
        { echo "gpu_bundle.sh: --also takes VAR=VALUE[,VAR=VALUE...], got '${2:-}'" >&2; exit 2; }
      also+=("$2"); shift 2 ;;
    *) echo "gpu_bundle.sh: unknown option '$1'" >&2; exit 2 ;;
  esac
done
[[ $layers =~ ^[1-9][0-9]*$ && $seqs =~ ^[1-9][0-9]*(,[1-9][0-9]*)*$ ]] ||
  { echo "gpu_bundle.sh: --layers takes a positive integer, --seq a list of them (8192,2048)" >&2; exit 2; }

out=$(realpath -m "$out")
echo "== build ($build)"
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$build" --target lazygrad lg_tensor_tests

echo "== binaries and libraries ($out)"
mkdir -p "$out/tests" "$out/lib" "$out/kernel-cache"
strip -o "$out/lazygrad" "$build/lazygrad"
strip -o "$out/tests/lg_tensor_tests" "$build/tests/lg_tensor_tests"
# every shared library they load except glibc's own (the GPU machine has its glibc and libcuda)
for bin in "$out/lazygrad" "$out/tests/lg_tensor_tests"; do
  ldd "$bin" | awk '/=> \// { print $3 }' | while read -r lib; do
    case $(basename "$lib") in
      libc.so*|libm.so*|libpthread.so*|libdl.so*|librt.so*|ld-linux*) ;;
      *) cp -L "$lib" "$out/lib/" ;;
    esac
  done
done

echo "== kernel cache: every kernel of the GPU check, compiled on CUDANULL"
export LAZYGRAD_CACHE_DIR=$out/kernel-cache
# What ptxas says of each kernel (PTXAS=1, docs/debugging.md "What ptxas says of a kernel"): kept as
# the kernels compile, a line each in $report under the setting that compiled it; the commands'
# other stderr lines are shown as before.
report=$out/ptxas_report.txt
: >"$report.raw"
with_ptxas() {  # with_ptxas LABEL COMMAND...
  local label=$1 err rc=0; shift
  err=$(mktemp)
  PTXAS=1 "$@" 2>"$err" || rc=$?
  grep '^ptxas ' "$err" | sed "s|^|[$label] |" >>"$report.raw" || true
  grep -v '^ptxas ' "$err" >&2 || true
  rm -f "$err"
  return $rc
}
settings=("-")
settings+=("${also[@]}")
for setting in "${settings[@]}"; do
  env_set=(); [[ $setting != - ]] && IFS=, read -ra env_set <<<"$setting"
  for layout in "" --bt --at; do
    with_ptxas "$setting" env "${env_set[@]}" "$out/lazygrad" bench matmul --device CUDANULL --dtype bf16 --sizes 4096,8192 \
      --repeats 1 $layout >/dev/null
    # gpu_check.sh's probes of a layout that fails (bench matmul --probe at 512 and 4096)
    with_ptxas "$setting" env "${env_set[@]}" "$out/lazygrad" bench matmul --probe --device CUDANULL --dtype bf16 \
      --sizes 512,4096 $layout >/dev/null
  done
  echo "matmuls ($setting): done"
done
with_ptxas - "$out/lazygrad" bench optimizer --device CUDANULL --params 1486901248 --repeats 1 >/dev/null
echo "AdamW update (gpu_check.sh --optimizer): done"
for s in ${seqs//,/ }; do
  with_ptxas - env DEVICE=CUDANULL "$out/lazygrad" train --model llama3.1-8b --set layers="$layers" --seq "$s" --batch 1 \
    --dtype bf16 --synthetic --steps 2 --eval-samples 1 >/dev/null
  echo "llama3.1-8b step, $layers layers, seq $s: done"
done
if [[ $flash == 1 ]]; then
  with_ptxas FLASH_ATTENTION=1 env FLASH_ATTENTION=1 DEVICE=CUDANULL "$out/lazygrad" train --model llama3.1-8b \
    --set layers="$layers" --seq "${seqs%%,*}" --batch 1 --dtype bf16 --synthetic --steps 2 --eval-samples 1 >/dev/null
  echo "llama3.1-8b step, $layers layers, seq ${seqs%%,*}, FLASH_ATTENTION=1: done"
  with_ptxas - "$out/lazygrad" bench attention --device CUDANULL --dtype bf16 --seq "${seqs%%,*}" --repeats 1 >/dev/null
  echo "attention layer, seq ${seqs%%,*}: done"
fi
if [[ $best == 1 ]]; then
  for setting in "${also[@]}"; do
    IFS=, read -ra env_set <<<"$setting"
    [[ $flash == 1 ]] && env_set+=(FLASH_ATTENTION=1)
    with_ptxas "$(IFS=,; echo "${env_set[*]}")" env "${env_set[@]}" DEVICE=CUDANULL "$out/lazygrad" train --model llama3.1-8b \
      --set layers="$layers" --seq "${seqs%%,*}" --batch 1 --dtype bf16 --synthetic --steps 2 --eval-samples 1 >/dev/null
    echo "llama3.1-8b step, $layers layers, seq ${seqs%%,*}, ${env_set[*]} (gpu_check.sh --best): done"
  done
fi
sort -u "$report.raw" >"$report" && rm -f "$report.raw"
echo "ptxas: $(wc -l <"$report") kernel reports, $(grep -c WARNING "$report" || true) with a WARNING (spills, serialized wgmmas) in $report"
grep WARNING "$report" | cut -c1-200 || true
echo "$(find "$out/kernel-cache/kernels" -type f | wc -l) cached kernels, $(du -sh "$out" | cut -f1) in $out"

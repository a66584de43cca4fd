#!/usr/bin/env bash
# Prints a JSON description of this machine in the spirit of an MLPerf systems/<name>.json: CPU,
# cores, memory, OS, compilers, accelerators. Used by run_and_time.sh; systems/ keeps the ones we
# report numbers from.
set -euo pipefail
cpu=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')
cores=$(nproc)
mem_gib=$(awk '/MemTotal/ {printf "%.1f", $2 / 1048576}' /proc/meminfo)
os=$(. /etc/os-release && echo "$PRETTY_NAME")
flags=$(grep -m1 '^flags' /proc/cpuinfo | tr ' ' '\n' | grep -E '^(avx2|avx512f|avx512_bf16|amx_bf16|amx_tile)$' | paste -sd, -)
clang_v=$(clang --version 2>/dev/null | head -1 || echo none)
gpu=none
gpus=0
if command -v nvidia-smi >/dev/null && nvidia-smi -L >/dev/null 2>&1; then
  gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | sort -u | paste -sd, -)
  gpus=$(nvidia-smi -L | wc -l)
fi
cat <<JSON
{
  "system_name": "$(hostname)",
  "submitter": "lazygrad",
  "division": "closed",
  "status": "onprem",
  "system_type": "research",
  "number_of_nodes": 1,
  "host_processor_model_name": "$cpu",
  "host_processor_core_count": $cores,
  "host_processor_vector_extensions": "$flags",
  "host_memory_capacity": "$mem_gib GiB",
  "accelerator_model_name": "$gpu",
  "accelerators_per_node": $gpus,
  "operating_system": "$os",
  "framework": "lazygrad (CPU device: generated C compiled by $clang_v)"
}
JSON

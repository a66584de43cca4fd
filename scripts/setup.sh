#!/usr/bin/env bash
# Installs the Debian packages lazygrad builds and tests with, when any is missing.
# Safe to run again: it installs nothing when everything is there.
set -euo pipefail

packages=(cmake ninja-build g++ clang libgtest-dev libgmock-dev libbenchmark-dev libcli11-dev
          pkg-config libpcre2-dev nlohmann-json3-dev zlib1g-dev  # llm: tokenizer, data pipeline
          libopenblas-dev  # bench kernels: the OpenBLAS sgemm baseline (loaded at run time)
          openmpi-bin libopenmpi-dev  # dist: the processes of a distributed run (mpirun)
          hipcc  # the HIP compile checks (HIPRECORD: every op-harness and training-step kernel, gfx90a + gfx940)
          python3)  # test scripts compare metrics files
# Commands installed from Debian only when missing (a machine may have them from elsewhere, e.g.
# nodesource's nodejs bundles npm): scripts/fetch_data.sh runs npm; the tokenizer reference runs node.
declare -A command_packages=([node]=nodejs [npm]=npm)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
for c in "${!command_packages[@]}"; do
  command -v "$c" >/dev/null || missing+=("${command_packages[$c]}")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

echo "setup: installing ${missing[*]}"
sudo=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "setup: need root (or sudo) to install: ${missing[*]}" >&2; exit 1; }
  sudo="sudo"
fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -q
$sudo apt-get install -y -q "${missing[@]}"

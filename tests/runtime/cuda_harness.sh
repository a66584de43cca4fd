#!/usr/bin/env bash
# The op harness and the gradient tests on a real NVIDIA GPU (DEVICE=CUDA), against the same host
# references as on INTERP and CPU. Exit 77 (ctest: skipped) when this machine has no usable CUDA
# device, saying why.
#   cuda_harness.sh <lazygrad> <lg_tensor_tests> <gtest filter>
set -u
lazygrad=$1 tests=$2 filter=$3
if ! why=$(DEVICE=CUDA "$lazygrad" devices 2>&1 >/dev/null); then
  echo "skipped: no usable CUDA device: ${why}"
  exit 77
fi
DEVICE=CUDA exec "$tests" --gtest_filter="$filter" --gtest_brief=1

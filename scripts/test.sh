#!/usr/bin/env bash
# The README's test command: installs what is missing, configures, builds, and runs every test.
#   bash scripts/test.sh            all tests
#   bash scripts/test.sh -R Tensor  only tests whose name matches (extra arguments go to ctest)
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo
cmake --build build
ctest --test-dir build --output-on-failure -j "$(nproc)" "$@"

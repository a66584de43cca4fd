#pragma once
// Subcommands of build/lazygrad; each add_*_command registers one on the app.
#include <CLI/CLI.hpp>

namespace lg::apps {

void add_ops_command(CLI::App& app);      // lazygrad ops: the IR's op list with each op's meaning
void add_devices_command(CLI::App& app);  // lazygrad devices: devices this build can run on
void add_tokenize_command(CLI::App& app);  // lazygrad tokenize: text <-> Llama 3.1 token ids
void add_preprocess_command(CLI::App& app);  // lazygrad preprocess: JSON lines -> Megatron .bin/.idx
void add_bench_command(CLI::App& app);
void add_train_command(CLI::App& app);  // lazygrad train: trains a Llama model
void add_mlperf_command(CLI::App& app);  // lazygrad mlperf: the MLPerf llama31_8b benchmark, timed  // lazygrad bench kernels: CPU kernels vs OpenBLAS and bandwidth

}  // namespace lg::apps

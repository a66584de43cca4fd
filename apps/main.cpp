// build/lazygrad: the one command line. Each subcommand lives in its own file and registers here.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <exception>

#include "apps/commands.h"
#include "base/config.h"
#include "base/error.h"
#include "dist/launch.h"

int main(int argc, char** argv) {
  CLI::App app{"lazygrad: trains Llama 3.1 models from scratch; runs the MLPerf llama31_8b benchmark"};
  app.require_subcommand(1);
  app.footer("Environment: DEBUG=1..5, SPEC=1|2, DEVICE=CPU|INTERP, BEAM=n, NOOPT=1, THREADS=n (see docs/debugging.md).");
  lg::apps::add_ops_command(app);
  lg::apps::add_devices_command(app);
  lg::apps::add_tokenize_command(app);
  lg::apps::add_preprocess_command(app);
  lg::apps::add_bench_command(app);
  lg::apps::add_train_command(app);
  lg::apps::add_mlperf_command(app);
  // The environment's knobs are checked once the command line is, before any subcommand prints.
  app.parse_complete_callback([] { lg::config(); });
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const lg::Error& e) {
    std::fprintf(stderr, "lazygrad: error: %s\n", e.what());
    lg::dist::finish(false);  // a distributed run: the other processes stop too
    return 1;
  } catch (const std::exception& e) {  // a library's (filesystem, JSON, allocation): reported, not an abort
    std::fprintf(stderr, "lazygrad: error: %s\n", e.what());
    lg::dist::finish(false);
    return 1;
  }
  lg::dist::finish(true);
  return 0;
}

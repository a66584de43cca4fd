// lazygrad preprocess: C4-style JSON lines -> Megatron .bin/.idx (Llama 3.1 token ids).
#include <unistd.h>

#include <cstdio>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "apps/cli_validators.h"
#include "apps/commands.h"
#include "llm/indexed_dataset.h"
#include "llm/preprocess.h"
#include "llm/tokenizer.h"

namespace lg::apps {
namespace {

struct PreprocessArgs {
  llm::PreprocessOptions options;
  std::string tokenizer;
};

void print_progress(const llm::PreprocessStats& s) {
  std::fprintf(stderr, "\rpreprocess: %.1f MB, %llu documents, %llu tokens, %.1f MB/s   ", s.bytes / 1e6,
               static_cast<unsigned long long>(s.documents), static_cast<unsigned long long>(s.tokens),
               s.seconds > 0 ? s.bytes / 1e6 / s.seconds : 0.0);
}

void run_preprocess(const PreprocessArgs& a) {
  llm::Tokenizer tok = llm::Tokenizer::load(a.tokenizer);
  bool terminal = isatty(fileno(stderr));
  llm::PreprocessStats s = llm::preprocess(a.options, tok, terminal ? print_progress : nullptr);
  if (terminal) std::fprintf(stderr, "\n");
  for (const std::string& e : s.bad_examples) std::fprintf(stderr, "preprocess: skipped %s\n", e.c_str());
  if (s.bad > s.bad_examples.size())
    std::fprintf(stderr, "preprocess: ... and %llu more bad lines\n",
                 static_cast<unsigned long long>(s.bad - s.bad_examples.size()));
  std::string prefix = llm::document_prefix(a.options.output_prefix);
  std::printf("wrote %s and %s: %llu documents, %llu tokens (%llu empty and %llu bad lines skipped); "
              "%.1f MB of JSON in %.2f s (%.2f MB/s)\n",
              llm::bin_path(prefix).c_str(), llm::idx_path(prefix).c_str(),
              static_cast<unsigned long long>(s.documents), static_cast<unsigned long long>(s.tokens),
              static_cast<unsigned long long>(s.empty), static_cast<unsigned long long>(s.bad), s.bytes / 1e6,
              s.seconds, s.seconds > 0 ? s.bytes / 1e6 / s.seconds : 0.0);
}

}  // namespace

void add_preprocess_command(CLI::App& app) {
  auto a = std::make_shared<PreprocessArgs>();
  a->options.workers = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  auto* cmd = app.add_subcommand("preprocess",
                                 "tokenize C4-style JSON lines ({\"text\": ...}, plain or .gz) into a "
                                 "Megatron dataset PREFIX_text_document.bin/.idx");
  cmd->add_option("--input", a->options.inputs, "JSON-lines files, read in order")->required()->expected(1, -1);
  cmd->add_option("--tokenizer", a->tokenizer, "tokenizer.json, or a directory holding one")->required();
  cmd->add_option("--output-prefix", a->options.output_prefix, "writes PREFIX_text_document.bin and .idx")->required();
  cmd->add_flag("--append-eod", a->options.append_eod, "end every document with <|end_of_text|>");
  cmd->add_option("--workers", a->options.workers, "tokenizer threads (default: all cores)")
      ->check(at_least(1, "a positive whole number"));
  cmd->add_flag("--strict", a->options.strict, "stop at the first bad line instead of skipping it");
  cmd->callback([a] { run_preprocess(*a); });
}

}  // namespace lg::apps

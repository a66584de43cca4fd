#pragma once
// C4-style JSON lines -> a Megatron indexed dataset (indexed_dataset.h), as Megatron's
// tools/preprocess_data.py does for the MLPerf C4 files: one document per line, the "text" field
// tokenized with no BOS/EOS (an EOD token, <|end_of_text|>, appended with append_eod), empty
// documents skipped, documents in input order. Tokenization runs on `workers` threads.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "llm/tokenizer.h"

namespace lg::llm {

struct PreprocessOptions {
  std::vector<std::string> inputs;  // .jsonl or .jsonl.gz (compression detected from content)
  std::string output_prefix;        // writes <prefix>_text_document.bin/.idx
  bool append_eod = false;
  int workers = 1;
  bool strict = false;  // a bad line (invalid JSON, no string "text") is fatal instead of skipped
};

struct PreprocessStats {
  uint64_t lines = 0, documents = 0, empty = 0, bad = 0, tokens = 0;
  uint64_t bytes = 0;  // uncompressed JSON bytes read
  double seconds = 0;
  std::vector<std::string> bad_examples;  // "file:line: reason" of the first 20 bad lines
};

// The dataset prefix preprocess writes for an output prefix P: "P_text_document".
std::string document_prefix(const std::string& output_prefix);

// Runs the conversion; progress (if set) is called after each chunk of lines. Output files appear
// only when complete; the output prefix's directory is created. User errors name the file and line;
// inputs without a single document are an error (nothing is written).
PreprocessStats preprocess(const PreprocessOptions& options, const Tokenizer& tokenizer,
                           const std::function<void(const PreprocessStats&)>& progress = {});

}  // namespace lg::llm

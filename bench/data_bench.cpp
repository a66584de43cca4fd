// lg_data_bench: throughput of the data pipeline on the bundled Brown corpus (scripts/fetch_data.sh).
//   tokenizer   MB/s of text, one thread: a cold pass (empty piece cache) and the median of 3 warm passes
//   preprocess  MB/s of JSON lines -> .bin/.idx with 1 and with all workers (4 copies of the corpus)
//   sampler     seconds to build one training epoch's index of 40M windows
// usage: build/bench/lg_data_bench [DATA_DIR]   (default: <source>/data)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <thread>
#include <unistd.h>

#include "base/error.h"
#include "llm/indexed_dataset.h"
#include "llm/preprocess.h"
#include "llm/sampler.h"
#include "llm/tokenizer.h"

namespace fs = std::filesystem;
using namespace lg::llm;

namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

std::vector<std::string> read_texts(const fs::path& jsonl) {
  std::vector<std::string> texts;
  std::ifstream in(jsonl, std::ios::binary);
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) texts.push_back(nlohmann::json::parse(line).at("text").get<std::string>());
  return texts;
}

// MB/s of encoding all texts once, on a fresh thread (so its piece cache starts empty when cold).
double encode_pass(const Tokenizer& tok, const std::vector<std::string>& texts, bool warm_up_first) {
  double mbps = 0;
  std::thread t([&] {
    std::vector<int32_t> ids;
    if (warm_up_first)
      for (const std::string& s : texts) tok.encode_into(s, ids);
    size_t bytes = 0;
    auto start = std::chrono::steady_clock::now();
    for (const std::string& s : texts) {
      ids.clear();
      tok.encode_into(s, ids);
      bytes += s.size();
    }
    mbps = bytes / 1e6 / seconds_since(start);
  });
  t.join();
  return mbps;
}

void bench_tokenizer(const Tokenizer& tok, const std::vector<std::string>& texts) {
  size_t bytes = 0;
  for (const std::string& s : texts) bytes += s.size();
  double cold = encode_pass(tok, texts, false);
  std::vector<double> warm;
  for (int i = 0; i < 3; ++i) warm.push_back(encode_pass(tok, texts, true));
  std::sort(warm.begin(), warm.end());
  std::printf("tokenizer   %zu documents, %.2f MB, 1 thread: cold %.2f MB/s, warm %.2f MB/s (median of 3)\n",
              texts.size(), bytes / 1e6, cold, warm[1]);
}

// On 4 copies of the corpus (23 MB), so the per-thread piece caches reach their steady state as on C4.
void bench_preprocess(const Tokenizer& tok, const fs::path& jsonl, const fs::path& tmp) {
  fs::path input = tmp / "input.jsonl";
  {
    std::ifstream in(jsonl, std::ios::binary);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::ofstream out(input, std::ios::binary);
    for (int i = 0; i < 4; ++i) out << text;
  }
  int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  for (int workers : {1, cores}) {
    PreprocessOptions o;
    o.inputs = {input.string()};
    o.output_prefix = (tmp / "bench").string();
    o.workers = workers;
    PreprocessStats s = preprocess(o, tok);
    std::printf("preprocess  %.2f MB of JSON, %d worker(s): %.2f MB/s (%llu tokens)\n", s.bytes / 1e6, workers,
                s.bytes / 1e6 / s.seconds, static_cast<unsigned long long>(s.tokens));
    if (workers == cores) break;
  }
}

// 40M windows: a uint8 dataset of 400,000 documents x 100 tokens at sequence length 1.
void bench_sampler(const fs::path& tmp) {
  std::string prefix = (tmp / "windows").string();
  {
    IndexedDatasetWriter w(prefix, TokenDtype::U8);
    std::vector<int32_t> doc(100, 1);
    for (int d = 0; d < 400000; ++d) w.add_document(doc);
    w.add_document(std::vector<int32_t>{1});
    w.finish();
  }
  auto data = std::make_shared<const IndexedDataset>(prefix);
  TrainSampler train(data, 1, 1234);
  auto start = std::chrono::steady_clock::now();
  auto epoch = train.epoch(0);
  std::printf("sampler     one epoch index: %llu windows over %zu documents in %.2f s\n",
              static_cast<unsigned long long>(epoch->windows.size()), epoch->documents.size(), seconds_since(start));
}

}  // namespace

int main(int argc, char** argv) {
  fs::path data = argc > 1 ? fs::path(argv[1]) : fs::path(LG_SOURCE_DIR) / "data";
  fs::path jsonl = data / "brown" / "brown-train.jsonl";
  if (!fs::exists(jsonl) || !fs::exists(data / "tokenizer" / "tokenizer.json")) {
    std::fprintf(stderr, "lg_data_bench: %s or the tokenizer is missing: run scripts/fetch_data.sh\n", jsonl.c_str());
    return 1;
  }
  try {
    Tokenizer tok = Tokenizer::load((data / "tokenizer").string());
    fs::path tmp = fs::temp_directory_path() / ("lg_data_bench_" + std::to_string(getpid()));
    fs::create_directories(tmp);
    bench_tokenizer(tok, read_texts(jsonl));
    bench_preprocess(tok, jsonl, tmp);
    bench_sampler(tmp);
    fs::remove_all(tmp);
  } catch (const lg::Error& e) {
    std::fprintf(stderr, "lg_data_bench: %s\n", e.what());
    return 1;
  }
  return 0;
}

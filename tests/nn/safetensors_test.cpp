// safetensors: files from an independent writer (tools/safetensors_tool.py, json + struct only) load
// correctly, lazygrad's files read back in that script, and malformed files give errors that name
// the tensor and the problem.
#include <gtest/gtest.h>

#include "common/user_error.h"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "base/error.h"
#include "nn/file_io.h"
#include "nn/safetensors.h"

namespace lg::nn {
namespace {

using json = nlohmann::json;
namespace fs = std::filesystem;

const fs::path kTool =
    fs::path(__FILE__).parent_path().parent_path().parent_path() / "tools" / "safetensors_tool.py";

bool have_python() { return std::system("python3 -c 'import json, struct' > /dev/null 2>&1") == 0; }

fs::path temp_root() {
  return fs::temp_directory_path() / ("lg_safetensors_test_" + std::to_string(::getpid()));
}
// Removes this process's temporary files when the tests end.
struct TempCleanup {
  ~TempCleanup() { fs::remove_all(temp_root()); }
} temp_cleanup;

fs::path temp_path(const std::string& name) {
  fs::create_directories(temp_root());
  return temp_root() / name;
}

using testing_util::error_of;

TEST(Safetensors, LoadsEveryDtypeFromTheIndependentWriter) {
  if (!have_python()) GTEST_SKIP() << "python3 not found";
  fs::path file = temp_path("python_written.safetensors");
  ASSERT_EQ(std::system(("python3 " + kTool.string() + " write " + file.string()).c_str()), 0);
  fs::path dump = temp_path("python_read.json");
  ASSERT_EQ(
      std::system(("python3 " + kTool.string() + " read " + file.string() + " > " + dump.string()).c_str()),
      0);
  json want = json::parse(read_file(dump.string()));
  SafeTensorsFile f = SafeTensorsFile::open(file.string());
  EXPECT_EQ(f.metadata().at("written_by"), "safetensors_tool.py");
  ASSERT_EQ(f.tensors().size(), want["tensors"].size());
  for (auto& [name, w] : want["tensors"].items()) {
    const SafeTensorInfo& info = f.info(name);
    EXPECT_EQ(safetensors_dtype(info.dtype), w["dtype"].get<std::string>()) << name;
    EXPECT_EQ(info.shape, w["shape"].get<Shape>()) << name;
    if (info.shape.size() == 2 && info.shape[0] == 0) continue;  // empty: header only
    std::vector<double> got = f.load(name).to_doubles();
    EXPECT_EQ(got, w["values"].get<std::vector<double>>()) << name;
  }
  EXPECT_EQ(f.tensors()[0].name, "model.embed_tokens.weight");  // header order kept
}

ParamList sample() {
  ParamList p;
  p.add("f32", Tensor::from_vector<float>({1.5f, -2, 0.1f, 3e30f}, {2, 2}));
  p.add("bf16", Tensor::from_doubles({1, -2.5, 0.0078125, 384}, {4}, dtypes::bfloat16));
  p.add("f16", Tensor::from_doubles({0.1, -1, 65504}, {3}, dtypes::float16));
  p.add("f64", Tensor::from_vector<double>({0.1, -1e300}, {2}));
  p.add("i64", Tensor::from_vector<int64_t>({-(int64_t{1} << 40), 7}, {2}));
  p.add("i32", Tensor::from_vector<int32_t>({-7, 0, 1 << 30}, {3, 1}));
  p.add("u8", Tensor::from_vector<uint8_t>({0, 200, 255}, {3}));
  p.add("bool", Tensor::from_vector<bool>({true, false}, {2}));
  p.add("scalar", Tensor::from_vector<float>({42}, {}));
  return p;
}

TEST(Safetensors, OwnFilesReadBackInTheIndependentReader) {
  if (!have_python()) GTEST_SKIP() << "python3 not found";
  fs::path file = temp_path("lazygrad_written.safetensors");
  ParamList p = sample();
  save_safetensors(file.string(), p, {{"step", "12"}});
  fs::path dump = temp_path("lazygrad_read.json");
  ASSERT_EQ(
      std::system(("python3 " + kTool.string() + " read " + file.string() + " > " + dump.string()).c_str()),
      0);
  json got = json::parse(read_file(dump.string()));
  EXPECT_EQ(got["metadata"]["step"], "12");
  for (const auto& [name, t] : p) {
    const json& g = got["tensors"][name];
    EXPECT_EQ(g["dtype"].get<std::string>(), safetensors_dtype(t.dtype())) << name;
    EXPECT_EQ(g["shape"].get<Shape>(), t.shape()) << name;
    EXPECT_EQ(g["values"].get<std::vector<double>>(), t.to_doubles()) << name;
  }
}

TEST(Safetensors, RoundTripKeepsBitsDtypesAndMetadata) {
  fs::path file = temp_path("roundtrip.safetensors");
  ParamList p = sample();
  save_safetensors(file.string(), p, {{"a", "b"}});
  SafeTensorsFile f = SafeTensorsFile::open(file.string());
  EXPECT_EQ(f.metadata().at("a"), "b");
  for (const auto& [name, t] : p) {
    EXPECT_EQ(f.load(name).to_host(), t.to_host()) << name;
    EXPECT_EQ(f.info(name).dtype, t.dtype()) << name;
  }
  EXPECT_EQ((f.tensors()[1].begin + 8 + 0) % 1, 0u);
  Tensor dst = Tensor::zeros({2, 2}).contiguous().realize();
  f.load_into("f32", dst);
  EXPECT_EQ(dst.to_host(), p.at("f32").to_host());
}

// A file with this header (and data bytes), written raw.
std::string raw_file(const std::string& header, size_t data_bytes, int64_t claimed_len = -1) {
  std::string out(8, '\0');
  uint64_t n = claimed_len < 0 ? header.size() : static_cast<uint64_t>(claimed_len);
  for (int i = 0; i < 8; i++) out[i] = static_cast<char>((n >> (8 * i)) & 0xff);
  return out + header + std::string(data_bytes, '\x01');
}
std::string open_error(const std::string& bytes) {
  fs::path file = temp_path("bad.safetensors");
  write_file_atomic(file.string(), bytes);
  return error_of([&] { SafeTensorsFile::open(file.string()); });
}
#define EXPECT_HAS(s, part) EXPECT_NE((s).find(part), std::string::npos) << (s)

TEST(SafetensorsErrors, TooShortForTheHeaderLength) { EXPECT_HAS(open_error("abc"), "too short"); }

TEST(SafetensorsErrors, BadHeaderLength) {
  EXPECT_HAS(open_error(raw_file("{}", 0, 1 << 20)), "bad header length");
}

TEST(SafetensorsErrors, InvalidJson) { EXPECT_HAS(open_error(raw_file("{\"w\": [1,", 0)), "not valid JSON"); }

TEST(SafetensorsErrors, OffsetsOutOfRangeNameTheTensor) {
  std::string e =
      open_error(raw_file(R"({"w": {"dtype": "F32", "shape": [2], "data_offsets": [0, 16]}})", 8));
  EXPECT_HAS(e, "\"w\"");
  EXPECT_HAS(e, "out of range");
}

TEST(SafetensorsErrors, DtypeShapeMismatch) {
  std::string e =
      open_error(raw_file(R"({"w": {"dtype": "BF16", "shape": [3], "data_offsets": [0, 8]}})", 8));
  EXPECT_HAS(e, "\"w\"");
  EXPECT_HAS(e, "dtype/shape mismatch: BF16 [3] needs 6 bytes");
}

TEST(SafetensorsErrors, TruncatedData) {
  std::string good = safetensors_bytes(sample());
  std::string e = open_error(good.substr(0, good.size() - 3));
  EXPECT_HAS(e, "\"scalar\"");
  EXPECT_HAS(e, "truncated");
}

TEST(SafetensorsErrors, UnknownDtypeMissingFieldsAndOverlap) {
  EXPECT_HAS(open_error(raw_file(R"({"w": {"dtype": "F8", "shape": [1], "data_offsets": [0, 1]}})", 1)),
             "unsupported dtype \"F8\"");
  EXPECT_HAS(open_error(raw_file(R"({"w": {"dtype": "F32", "data_offsets": [0, 4]}})", 4)), "\"shape\"");
  EXPECT_HAS(open_error(raw_file(R"({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]},
                                    "b": {"dtype": "F32", "shape": [1], "data_offsets": [4, 8]}})",
                                 8)),
             "overlaps");
}

TEST(SafetensorsErrors, LoadIntoWrongShapeNamesTheTensor) {
  fs::path file = temp_path("shape.safetensors");
  save_safetensors(file.string(), sample());
  SafeTensorsFile f = SafeTensorsFile::open(file.string());
  Tensor dst = Tensor::zeros({3}).contiguous().realize();
  std::string e = error_of([&] { f.load_into("f32", dst); });
  EXPECT_HAS(e, "\"f32\" is F32 [2, 2] but the destination is F32 [3]");
  EXPECT_HAS(error_of([&] { f.info("missing"); }), "no tensor named \"missing\"");
}

}  // namespace
}  // namespace lg::nn

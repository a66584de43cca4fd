#pragma once
// safetensors files (https://huggingface.co/docs/safetensors): an 8-byte little-endian header length
// N, N bytes of JSON {"name": {"dtype": "F32", "shape": [..], "data_offsets": [begin, end]}, ...,
// "__metadata__": {"key": "value"}}, then the data section; offsets are relative to its start and
// each tensor's bytes are its row-major elements, little-endian.
//
// Reading memory-maps the file and validates the whole header when it opens: every problem (bad
// header length, JSON errors, unknown dtype, offsets out of range or overlapping, a byte count that
// does not match dtype and shape, truncated data) is a user error naming the file, the tensor and
// the problem. Dtypes: F64 F32 F16 BF16 I64 I32 I16 I8 U64 U32 U16 U8 BOOL.
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "nn/params.h"

namespace lg::nn {

struct SafeTensorInfo {
  std::string name;
  DType dtype;
  Shape shape;
  uint64_t begin, end;  // byte offsets into the data section
};

class SafeTensorsFile {
 public:
  static SafeTensorsFile open(const std::string& path);

  const std::string& path() const { return path_; }
  const std::vector<SafeTensorInfo>& tensors() const { return infos_; }  // in header order
  const std::map<std::string, std::string>& metadata() const { return metadata_; }
  bool contains(const std::string& name) const;
  const SafeTensorInfo& info(const std::string& name) const;      // a user error if absent
  std::span<const uint8_t> bytes(const std::string& name) const;  // views the mapping
  // A new tensor holding the stored values.
  Tensor load(const std::string& name, const std::string& device = "") const;
  // Writes the stored values into dst (same dtype and shape, else a user error) with assign; lazy.
  void load_into(const std::string& name, Tensor& dst) const;

 private:
  struct Mapping;
  std::string path_;
  std::shared_ptr<Mapping> map_;
  const uint8_t* data_ = nullptr;  // the data section
  uint64_t data_size_ = 0;
  std::vector<SafeTensorInfo> infos_;
  std::map<std::string, std::string> metadata_;
};

// The safetensors dtype string ("F32", "BF16", ...) of a dtype; a user error for dtypes it lacks.
std::string safetensors_dtype(DType t);
// Serializes tensors (realizing them) in the order given; the header is padded with spaces to a
// multiple of 8 bytes so the data section is aligned.
std::string safetensors_bytes(const ParamList& tensors,
                              const std::map<std::string, std::string>& metadata = {});
// safetensors_bytes written atomically (file_io.h).
void save_safetensors(const std::string& path, const ParamList& tensors,
                      const std::map<std::string, std::string>& metadata = {});

}  // namespace lg::nn

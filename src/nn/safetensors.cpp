#include "nn/safetensors.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <nlohmann/json.hpp>

#include "base/error.h"
#include "nn/file_io.h"

namespace lg::nn {

using json = nlohmann::ordered_json;  // keeps the header's order

namespace {

const std::pair<const char*, DType> kDtypes[] = {
    {"F64", dtypes::float64},  {"F32", dtypes::float32}, {"F16", dtypes::float16}, {"BF16", dtypes::bfloat16},
    {"I64", dtypes::int64},    {"I32", dtypes::int32},   {"I16", dtypes::int16},   {"I8", dtypes::int8},
    {"U64", dtypes::uint64},   {"U32", dtypes::uint32},  {"U16", dtypes::uint16},  {"U8", dtypes::uint8},
    {"BOOL", dtypes::boolean},
};

std::string shape_str(const Shape& s) {
  std::string r = "[";
  for (size_t i = 0; i < s.size(); i++) r += (i ? ", " : "") + std::to_string(s[i]);
  return r + "]";
}

uint64_t read_le64(const uint8_t* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; i--) v = (v << 8) | p[i];
  return v;
}

}  // namespace

std::string safetensors_dtype(DType t) {
  for (auto& [n, d] : kDtypes)
    if (d == t) return n;
  user_error("safetensors: dtype ", name(t), " has no safetensors name");
}

// The read-only mapping of a whole file; unmapped when the last SafeTensorsFile copy goes.
struct SafeTensorsFile::Mapping {
  void* addr = nullptr;
  size_t size = 0;
  ~Mapping() {
    if (addr && size) ::munmap(addr, size);
  }
};

namespace {

// One header entry, validated against the data section of data_size bytes.
SafeTensorInfo parse_entry(const std::string& path, const std::string& name, const json& e,
                           uint64_t data_size) {
  auto fail = [&](const auto&... why) {
    user_error("safetensors ", path, ": tensor \"", name, "\": ", why...);
  };
  if (!e.is_object()) fail("entry is not a JSON object");
  if (!e.contains("dtype") || !e["dtype"].is_string()) fail("missing string field \"dtype\"");
  if (!e.contains("shape") || !e["shape"].is_array()) fail("missing array field \"shape\"");
  if (!e.contains("data_offsets") || !e["data_offsets"].is_array() || e["data_offsets"].size() != 2)
    fail("field \"data_offsets\" must be [begin, end]");
  SafeTensorInfo info{name, dtypes::void_, {}, 0, 0};
  std::string dt = e["dtype"];
  for (auto& [n, d] : kDtypes)
    if (dt == n) info.dtype = d;
  if (info.dtype == dtypes::void_) fail("unsupported dtype \"", dt, "\"");
  uint64_t numel = 1;
  for (const json& d : e["shape"]) {
    if (!d.is_number_unsigned()) fail("shape entries must be non-negative integers, got ", d.dump());
    info.shape.push_back(d.get<int64_t>());
    numel *= d.get<uint64_t>();
  }
  for (const json& o : e["data_offsets"])
    if (!o.is_number_unsigned())
      fail("data_offsets must be non-negative integers, got ", e["data_offsets"].dump());
  info.begin = e["data_offsets"][0];
  info.end = e["data_offsets"][1];
  if (info.begin > info.end) fail("data_offsets [", info.begin, ", ", info.end, ") end before they begin");
  if (info.end > data_size)
    fail("data_offsets [", info.begin, ", ", info.end, ") out of range: the data section has only ",
         data_size, " bytes (file truncated or offsets wrong)");
  uint64_t want = numel * static_cast<uint64_t>(itemsize(info.dtype));
  if (info.end - info.begin != want)
    fail("dtype/shape mismatch: ", dt, " ", shape_str(info.shape), " needs ", want,
         " bytes, data_offsets span ", info.end - info.begin);
  return info;
}

void check_no_overlap(const std::string& path, std::vector<SafeTensorInfo> infos) {
  std::sort(infos.begin(), infos.end(), [](auto& a, auto& b) { return a.begin < b.begin; });
  for (size_t i = 1; i < infos.size(); i++)
    LG_USER_CHECK(infos[i].begin >= infos[i - 1].end, "safetensors ", path, ": tensor \"", infos[i].name,
                  "\" overlaps tensor \"", infos[i - 1].name, "\"");
}

}  // namespace

SafeTensorsFile SafeTensorsFile::open(const std::string& path) {
  SafeTensorsFile f;
  f.path_ = path;
  f.map_ = std::make_shared<Mapping>();
  int fd = ::open(path.c_str(), O_RDONLY);
  LG_USER_CHECK(fd >= 0, "safetensors ", path, ": cannot open: ", std::strerror(errno));
  struct stat st {};
  ::fstat(fd, &st);
  f.map_->size = static_cast<size_t>(st.st_size);
  if (f.map_->size > 0) f.map_->addr = ::mmap(nullptr, f.map_->size, PROT_READ, MAP_PRIVATE, fd, 0);
  ::close(fd);
  LG_USER_CHECK(f.map_->addr != MAP_FAILED, "safetensors ", path, ": mmap failed: ", std::strerror(errno));
  const auto* base = static_cast<const uint8_t*>(f.map_->addr);
  uint64_t size = f.map_->size;
  LG_USER_CHECK(size >= 8, "safetensors ", path, ": file is ", size,
                " bytes, too short for the 8-byte header length (truncated?)");
  uint64_t n = read_le64(base);
  LG_USER_CHECK(n <= size - 8, "safetensors ", path, ": bad header length ", n, ": the file has only ",
                size - 8, " bytes after the length field");
  json header;
  try {
    header = json::parse(base + 8, base + 8 + n);
  } catch (const json::exception& e) {
    user_error("safetensors ", path, ": header is not valid JSON: ", e.what());
  }
  LG_USER_CHECK(header.is_object(), "safetensors ", path, ": header must be a JSON object");
  f.data_ = base + 8 + n;
  f.data_size_ = size - 8 - n;
  for (auto it = header.begin(); it != header.end(); ++it) {
    if (it.key() == "__metadata__") {
      LG_USER_CHECK(it->is_object(), "safetensors ", path, ": __metadata__ must be an object of strings");
      for (auto m = it->begin(); m != it->end(); ++m) {
        LG_USER_CHECK(m->is_string(), "safetensors ", path, ": __metadata__ value of \"", m.key(),
                      "\" is not a string");
        f.metadata_[m.key()] = m->get<std::string>();
      }
      continue;
    }
    f.infos_.push_back(parse_entry(path, it.key(), *it, f.data_size_));
  }
  check_no_overlap(path, f.infos_);
  return f;
}

bool SafeTensorsFile::contains(const std::string& name) const {
  return std::any_of(infos_.begin(), infos_.end(), [&](auto& i) { return i.name == name; });
}

const SafeTensorInfo& SafeTensorsFile::info(const std::string& name) const {
  for (const SafeTensorInfo& i : infos_)
    if (i.name == name) return i;
  user_error("safetensors ", path_, ": no tensor named \"", name, "\"");
}

std::span<const uint8_t> SafeTensorsFile::bytes(const std::string& name) const {
  const SafeTensorInfo& i = info(name);
  return {data_ + i.begin, static_cast<size_t>(i.end - i.begin)};
}

Tensor SafeTensorsFile::load(const std::string& name, const std::string& device) const {
  const SafeTensorInfo& i = info(name);
  std::span<const uint8_t> b = bytes(name);
  return Tensor::from_bytes(b.data(), b.size(), i.shape, i.dtype, device);
}

void SafeTensorsFile::load_into(const std::string& name, Tensor& dst) const {
  const SafeTensorInfo& i = info(name);
  LG_USER_CHECK(i.dtype == dst.dtype() && i.shape == dst.shape(), "safetensors ", path_, ": tensor \"", name,
                "\" is ", safetensors_dtype(i.dtype), " ", shape_str(i.shape), " but the destination is ",
                safetensors_dtype(dst.dtype()), " ", shape_str(dst.shape()));
  dst.assign(load(name, dst.device()));
}

std::string safetensors_bytes(const ParamList& tensors, const std::map<std::string, std::string>& metadata) {
  json header = json::object();
  if (!metadata.empty()) header["__metadata__"] = metadata;
  std::vector<std::vector<uint8_t>> datas;
  uint64_t offset = 0;
  for (const auto& [name, t] : tensors) {
    datas.push_back(t.to_host());
    uint64_t n = datas.back().size();
    header[name] = {{"dtype", safetensors_dtype(t.dtype())},
                    {"shape", t.shape()},
                    {"data_offsets", {offset, offset + n}}};
    offset += n;
  }
  std::string h = header.dump();
  h.append((8 - h.size() % 8) % 8, ' ');
  std::string out(8, '\0');
  for (int i = 0; i < 8; i++) out[i] = static_cast<char>((h.size() >> (8 * i)) & 0xff);
  out += h;
  for (const auto& d : datas) out.append(reinterpret_cast<const char*>(d.data()), d.size());
  return out;
}

void save_safetensors(const std::string& path, const ParamList& tensors,
                      const std::map<std::string, std::string>& metadata) {
  write_file_atomic(path, safetensors_bytes(tensors, metadata));
}

}  // namespace lg::nn

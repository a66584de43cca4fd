#include "runtime/host_cpu.h"

#include <cstdio>
#include <map>

#include "base/hash.h"
#include "runtime/file_text.h"

namespace lg {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

// The "name<tabs>: value" lines of the first processor's block (blocks end at an empty line).
std::map<std::string, std::string, std::less<>> first_block(std::string_view cpuinfo) {
  std::map<std::string, std::string, std::less<>> fields;
  while (!cpuinfo.empty()) {
    size_t eol = cpuinfo.find('\n');
    std::string_view line = cpuinfo.substr(0, eol);
    cpuinfo.remove_prefix(eol == std::string_view::npos ? cpuinfo.size() : eol + 1);
    if (trim(line).empty()) {
      if (!fields.empty()) break;
      continue;
    }
    size_t colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    fields.emplace(std::string(trim(line.substr(0, colon))), std::string(trim(line.substr(colon + 1))));
  }
  return fields;
}

const std::string& cpuinfo_text() {
  static const std::string text = read_file_text("/proc/cpuinfo");
  return text;
}

}  // namespace

std::string cpu_signature_of(std::string_view cpuinfo) {
  auto fields = first_block(cpuinfo);
  auto field = [&](std::string_view x86, std::string_view arm) -> std::string {
    if (auto it = fields.find(x86); it != fields.end()) return it->second;
    if (auto it = fields.find(arm); it != fields.end()) return it->second;
    return "?";
  };
  std::string flags = field("flags", "Features");
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(hash_bytes(flags)));
  return field("vendor_id", "CPU implementer") + " " + field("cpu family", "CPU architecture") + "/" +
         field("model", "CPU part") + " flags " + (flags == "?" ? std::string("?") : std::string(hex));
}

std::string cpu_model_of(std::string_view cpuinfo) {
  auto fields = first_block(cpuinfo);
  for (const char* name : {"model name", "Model", "Hardware"})
    if (auto it = fields.find(name); it != fields.end() && !it->second.empty()) return it->second;
  return "unknown processor";
}

const std::string& host_cpu_signature() {
  static const std::string signature =
      cpuinfo_text().empty() ? "unknown cpu" : cpu_signature_of(cpuinfo_text());
  return signature;
}

const std::string& host_cpu_model() {
  static const std::string model = cpu_model_of(cpuinfo_text());
  return model;
}

}  // namespace lg

#include "runtime/ptxas_report.h"

#include <map>
#include <regex>

#include "base/error.h"

namespace lg {

namespace {

PtxasFunction& function_named(PtxasReport& r, const std::string& name) {
  for (PtxasFunction& f : r.functions)
    if (f.name == name) return f;
  r.functions.push_back({});
  r.functions.back().name = name;
  return r.functions.back();
}

bool spills(const PtxasFunction& f) { return f.spill_store_bytes > 0 || f.spill_load_bytes > 0; }

// The remark's code ("(C7511)"), or the whole text where it has none.
std::string remark_code(const std::string& remark) {
  static const std::regex code(R"(\(C\d+\))");
  std::smatch m;
  return std::regex_search(remark, m, code) ? m.str() : remark;
}

}  // namespace

PtxasReport parse_ptxas_log(std::string_view log) {
  static const std::regex entry(R"(Compiling entry function '([^']+)')"),
      properties(R"(Function properties for (\S+))"),
      frame(R"((\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads)"),
      used(R"(Used (\d+) registers)"), barriers(R"(used (\d+) barriers)"), smem(R"((\d+) bytes smem)"),
      remark(R"(\(C\d+\).*)"), named(R"(function '([^']+)')");
  PtxasReport r;
  std::string current;  // the function the last header named
  size_t begin = 0;
  while (begin < log.size()) {
    size_t end = log.find('\n', begin);
    if (end == std::string_view::npos) end = log.size();
    const std::string line(log.substr(begin, end - begin));
    begin = end + 1;
    std::smatch m;
    if (std::regex_search(line, m, entry) || std::regex_search(line, m, properties)) {
      current = m[1].str();
      function_named(r, current);
    } else if (std::regex_search(line, m, frame)) {
      PtxasFunction& f = function_named(r, current);
      f.stack_bytes = std::stoll(m[1].str());
      f.spill_store_bytes = std::stoll(m[2].str());
      f.spill_load_bytes = std::stoll(m[3].str());
    } else if (std::regex_search(line, m, used)) {
      PtxasFunction& f = function_named(r, current);
      f.registers = std::stoi(m[1].str());
      if (std::regex_search(line, m, barriers)) f.barriers = std::stoi(m[1].str());
      if (std::regex_search(line, m, smem)) f.shared_bytes = std::stoll(m[1].str());
    } else if (std::regex_search(line, m, remark) &&
               (line.find("GMMA") != std::string::npos || line.find("wgmma") != std::string::npos)) {
      const std::string text = m.str();
      std::smatch n;
      function_named(r, std::regex_search(text, n, named) ? n[1].str() : current)
          .wgmma_remarks.push_back(text);
    }
  }
  return r;
}

std::string ptxas_lines(std::string_view log) {
  std::string out;
  for (size_t begin = 0; begin < log.size();) {
    size_t end = log.find('\n', begin);
    end = end == std::string_view::npos ? log.size() : end + 1;
    if (log.substr(begin, 5) == "ptxas") out += log.substr(begin, end - begin);
    begin = end;
  }
  if (!out.empty() && out.back() != '\n') out += '\n';
  return out;
}

bool slower_than_written(const PtxasReport& r) {
  for (const PtxasFunction& f : r.functions)
    if (spills(f) || !f.wgmma_remarks.empty()) return true;
  return false;
}

std::string describe(const PtxasReport& r) {
  std::string out, warnings;
  for (const PtxasFunction& f : r.functions) {
    // a device function ptxas kept apart says only its frame: named when it spills
    if (f.registers < 0 && !spills(f) && f.wgmma_remarks.empty()) continue;
    if (!out.empty()) out += "; ";
    out += f.name + ":";
    if (f.registers >= 0) out += str(" ", f.registers, " registers");
    out +=
        spills(f) ? str(", ", f.spill_store_bytes + f.spill_load_bytes, " bytes of spills") : ", no spills";
    if (f.stack_bytes > 0) out += str(", ", f.stack_bytes, " bytes of stack");
    if (f.shared_bytes > 0) out += str(", ", f.shared_bytes, " bytes of static shared memory");
    if (spills(f))
      warnings += str(" ", f.name, " spills registers (", f.spill_store_bytes, " bytes stored, ",
                      f.spill_load_bytes, " loaded).");
    // the remarks by code: ptxas repeats one per place it injected a wait or arrive
    std::map<std::string, std::pair<std::string, int>> by_code;
    for (const std::string& text : f.wgmma_remarks) {
      auto [it, fresh] = by_code.try_emplace(remark_code(text), text, 0);
      it->second.second++;
    }
    for (const auto& [code, first] : by_code)
      warnings +=
          str(" ptxas: ", first.first, first.second > 1 ? str(" (", first.second, " places)") : "", ".");
  }
  if (out.empty()) return "no ptxas report";
  return warnings.empty() ? out : out + ". WARNING (slower than written):" + warnings;
}

}  // namespace lg

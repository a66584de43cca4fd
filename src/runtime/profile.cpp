#include "runtime/profile.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>

#include "base/config.h"
#include "base/error.h"
#include "codegen/gpu_launch.h"

namespace lg {
namespace {

struct Rows {
  std::mutex mu;
  std::map<std::pair<std::string, const Node*>, ProfileRow> rows;
};

Rows& rows() {
  static Rows* r = new Rows;  // never destroyed: the table prints from atexit
  return *r;
}

void print_at_exit() {
  if (rows().rows.empty()) return;
  size_t top = config().profile > 1 ? static_cast<size_t>(config().profile) : 25;
  if (config().profile > 0) std::fputs(profile_table(top).c_str(), stderr);
  if (!config().profile_csv.empty()) {
    // At exit nothing can be thrown: a failed write is said on stderr.
    std::string why = write_profile_csv(config().profile_csv);
    if (why.empty())
      std::fprintf(stderr, "PROFILE_CSV: %zu kernels written to %s\n", rows().rows.size(),
                   config().profile_csv.c_str());
    else
      std::fprintf(stderr, "PROFILE_CSV: %s\n", why.c_str());
  }
}

// A rate in G per second ("612345", "12.3", "0.042"), or "-" when there is no work of that kind.
std::string rate(double amount, double seconds) {
  if (amount <= 0 || seconds <= 0) return "-";
  double g = amount / seconds / 1e9;
  char s[32];
  std::snprintf(s, sizeof s, g >= 100 ? "%.0f" : g >= 1 ? "%.1f" : "%.2g", g);
  return s;
}

}  // namespace

void run_program(Program& p, const KernelArgs& args, const std::string& device, const std::string& name,
                 const NodeRef& ast) {
  if (config().profile <= 0 && config().profile_csv.empty()) return p.run(args);
  double seconds = p.timed_run(args);
  Rows& r = rows();
  std::lock_guard lock(r.mu);
  static bool registered = (std::atexit(print_at_exit), true);
  (void)registered;
  std::string dev = canonical_device(device);
  auto [it, fresh] = r.rows.try_emplace({dev, ast.get()});
  ProfileRow& row = it->second;
  if (fresh) {
    row.device = dev;
    row.name = name;
    row.ast = ast;
    row.cost = kernel_cost(ast, args.sizes);
    if (const LaunchDims* d = p.launch_dims()) {
      row.blocks = d->blocks;
      row.threads = d->threads;
    }
  }
  row.launches++;
  row.seconds += seconds;
}

std::vector<ProfileRow> profile_rows() {
  Rows& r = rows();
  std::lock_guard lock(r.mu);
  std::vector<ProfileRow> out;
  for (const auto& [key, row] : r.rows) out.push_back(row);
  std::stable_sort(out.begin(), out.end(), [](const ProfileRow& a, const ProfileRow& b) {
    // Ties (every time 0 on CUDANULL): the most work first.
    return a.seconds != b.seconds ? a.seconds > b.seconds
                                  : a.cost.flops + a.cost.bytes > b.cost.flops + b.cost.bytes;
  });
  return out;
}

void clear_profile() {
  Rows& r = rows();
  std::lock_guard lock(r.mu);
  r.rows.clear();
}

std::string profile_table(size_t top) {
  std::vector<ProfileRow> all = profile_rows();
  double seconds = 0, flops = 0, bytes = 0;
  size_t launches = 0;
  for (const ProfileRow& r : all) {
    seconds += r.seconds;
    flops += r.cost.flops * static_cast<double>(r.launches);
    bytes += r.cost.bytes * static_cast<double>(r.launches);
    launches += r.launches;
  }
  std::string out =
      "PROFILE: kernel time, each launch timed alone on its device (schedule/kernel_cost.h: FLOPs and "
      "bytes)\n";
  char line[512];
  std::snprintf(line, sizeof line, "  %-9s %8s %10s %6s %11s %10s %9s  %s\n", "device", "launches",
                "total ms", "%", "mean us", "GFLOP/s", "GB/s", "kernel");
  out += line;
  auto share = [&](double s) { return seconds > 0 ? 100 * s / seconds : 0.0; };
  for (size_t i = 0; i < all.size() && i < top; i++) {
    const ProfileRow& r = all[i];
    double n = static_cast<double>(r.launches);
    std::snprintf(line, sizeof line, "  %-9s %8zu %10.3f %6.1f %11.1f %10s %9s  %s\n", r.device.c_str(),
                  r.launches, r.seconds * 1e3, share(r.seconds), r.seconds / n * 1e6,
                  rate(r.cost.flops * n, r.seconds).c_str(), rate(r.cost.bytes * n, r.seconds).c_str(),
                  r.name.c_str());
    out += line;
  }
  if (all.size() > top) {
    double rest = 0;
    size_t rest_launches = 0;
    for (size_t i = top; i < all.size(); i++) rest += all[i].seconds, rest_launches += all[i].launches;
    std::snprintf(line, sizeof line, "  ... %zu more kernels: %zu launches, %.3f ms (%.1f%%)\n",
                  all.size() - top, rest_launches, rest * 1e3, share(rest));
    out += line;
  }
  std::snprintf(
      line, sizeof line,
      "  total: %zu kernels, %zu launches, %.3f ms, %.4g GFLOP and %.4g GB of work: %s GFLOP/s, %s GB/s\n",
      all.size(), launches, seconds * 1e3, flops / 1e9, bytes / 1e9, rate(flops, seconds).c_str(),
      rate(bytes, seconds).c_str());
  out += line;
  return out;
}

std::string profile_csv() {
  std::string out = "device,kernel,launches,seconds,flops_per_launch,bytes_per_launch,blocks,threads\n";
  char line[512];
  for (const ProfileRow& r : profile_rows()) {
    std::snprintf(line, sizeof line, "%s,%s,%zu,%.9g,%.17g,%.17g,%lld,%lld\n", r.device.c_str(),
                  r.name.c_str(), r.launches, r.seconds, r.cost.flops, r.cost.bytes,
                  static_cast<long long>(r.blocks), static_cast<long long>(r.threads));
    out += line;
  }
  return out;
}

std::string write_profile_csv(const std::string& path) {
  std::string tmp = path + ".tmp";
  std::FILE* f = std::fopen(tmp.c_str(), "wb");
  if (!f)
    return str("cannot write ", tmp, " (", std::strerror(errno), "): set PROFILE_CSV to a writable path");
  std::string text = profile_csv();
  bool ok = std::fwrite(text.data(), 1, text.size(), f) == text.size();
  ok = std::fclose(f) == 0 && ok;
  if (!ok || std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::string why = str("cannot write ", path, " (", std::strerror(errno), ")");
    std::remove(tmp.c_str());
    return why;
  }
  return "";
}

}  // namespace lg

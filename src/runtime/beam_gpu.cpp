// The GPU BEAM space (runtime/beam.h): the GPU heuristic's lists for other knob settings.
#include <map>

#include "codegen/block_mma.h"
#include "codegen/gpu_launch.h"
#include "codegen/heuristic_gpu.h"
#include "runtime/beam.h"

namespace lg {
namespace {

// Bounds of the knobs (powers of two): tiles per warp (accumulator registers: 4 per tile and
// lane), warps per block, threads per block, register tile.
constexpr int kMostTilesPerWarp = 32, kMostWarpsPerBlock = 8, kLeastBlock = 32, kMostRegisterTile = 8;

class GpuSpace : public BeamSpace {
 public:
  GpuSpace(NodeRef ast, const GpuKnobs& defaults) : ast_(std::move(ast)), defaults_(defaults), tc_(defaults.tensor_cores) {}

  std::vector<std::vector<Opt>> starts() override {
    std::vector<GpuKnobs> ks{defaults_};
    if (tc_) {
      GpuKnobs off = defaults_, small = defaults_;
      off.tensor_cores = false;
      small.tc = TcTiling{1, 1, 1, 1, false, defaults_.tc.run_bytes, false};
      ks.push_back(off);
      ks.push_back(small);
    }
    std::vector<std::vector<Opt>> out;
    for (const GpuKnobs& k : ks) out.push_back(opts_of(k));
    return out;
  }

  std::vector<std::vector<Opt>> next(const std::vector<Opt>& opts) override {
    auto it = knobs_.find(to_string(opts));
    if (it == knobs_.end()) return {};
    std::vector<std::vector<Opt>> out;
    for (const GpuKnobs& k : gpu_knob_steps(it->second, tc_)) {
      std::vector<Opt> o = opts_of(k);
      if (o != opts) out.push_back(std::move(o));
    }
    return out;
  }

 private:
  // The heuristic's list for k; the first knobs that gave a list are the ones its steps start from.
  std::vector<Opt> opts_of(const GpuKnobs& k) {
    std::vector<Opt> o = gpu_heuristic_opts(ast_, k);
    knobs_.emplace(to_string(o), k);
    return o;
  }

  NodeRef ast_;
  GpuKnobs defaults_;
  bool tc_;
  std::map<std::string, GpuKnobs> knobs_;
};

// x doubled and halved, where the result stays in [least, most].
std::vector<int> doubled_and_halved(int x, int least, int most) {
  std::vector<int> out;
  if (x * 2 <= most) out.push_back(x * 2);
  if (x / 2 >= least) out.push_back(x / 2);
  return out;
}

}  // namespace

std::vector<GpuKnobs> gpu_knob_steps(const GpuKnobs& k, bool tensor_cores_allowed) {
  std::vector<GpuKnobs> out;
  auto with = [&](auto change) {
    GpuKnobs s = k;
    change(s);
    out.push_back(s);
  };
  if (tensor_cores_allowed) with([](GpuKnobs& s) { s.tensor_cores = !s.tensor_cores; });
  if (k.tensor_cores) {
    const TcTiling& t = k.tc;
    for (int m : doubled_and_halved(t.warp_m, 1, kMostTilesPerWarp / t.warp_n)) with([&](GpuKnobs& s) { s.tc.warp_m = m; });
    for (int n : doubled_and_halved(t.warp_n, 1, kMostTilesPerWarp / t.warp_m)) with([&](GpuKnobs& s) { s.tc.warp_n = n; });
    for (int m : doubled_and_halved(t.block_m, 1, kMostWarpsPerBlock / t.block_n)) with([&](GpuKnobs& s) { s.tc.block_m = m; });
    for (int n : doubled_and_halved(t.block_n, 1, kMostWarpsPerBlock / t.block_m)) with([&](GpuKnobs& s) { s.tc.block_n = n; });
    with([](GpuKnobs& s) { s.tc.smem = !s.tc.smem; });
    with([](GpuKnobs& s) { s.tc.block = !s.tc.block; });
    if (t.block)
      for (int b = 0; b < static_cast<int>(block_mma_tilings().size()); b++)
        if (b != t.block_tiling && block_mma_shared_bytes(block_mma_tilings()[b]) <= k.shared_limit &&
            (t.wgmma || !block_mma_tilings()[b].wgmma))
          with([&](GpuKnobs& s) { s.tc.block_tiling = b; });
    for (int run : {0, 8, 16, 32})
      if (run != t.run_bytes) with([&](GpuKnobs& s) { s.tc.run_bytes = run; });
  }
  for (int b : doubled_and_halved(k.block_threads, kLeastBlock, static_cast<int>(kGpuMaxThreads)))
    with([&](GpuKnobs& s) { s.block_threads = b; });
  for (int r : doubled_and_halved(k.register_tile, 1, kMostRegisterTile)) with([&](GpuKnobs& s) { s.register_tile = r; });
  with([](GpuKnobs& s) { s.vector = !s.vector; });
  return out;
}

std::unique_ptr<BeamSpace> gpu_beam_space(const NodeRef& ast, const GpuKnobs& defaults) {
  return std::make_unique<GpuSpace>(ast, defaults);
}

}  // namespace lg

#include "topology/gemm_model.hpp"

#include <algorithm>
#include <limits>

namespace paratwin::topology {

namespace {

int64_t ceil_div(int64_t a, int64_t b) {
  return (a + b - 1) / b;
}

// Relative main-loop rate of a tile against the largest one (see GemmModel::operand_reuse).
double reuse_factor(const GemmTile& t, const GemmTile& largest, double r) {
  const auto loads = [r](const GemmTile& x) {
    return 1 + r * (1.0 / static_cast<double>(x.m) + 1.0 / static_cast<double>(x.n));
  };
  return loads(largest) / loads(t);
}

// Split-K (guide §3.2's remedy for too few tiles): partial tiles over K/s each, reduced in fp32.
constexpr int64_t kSplits[] = {1, 2, 4, 8, 16};
constexpr int64_t kMinSplitK = 128;  // no library splits K below a few main-loop steps per block
constexpr double kPartialBytes = 4;  // fp32 partial sums, written and read once each

// The share of an operand of `bytes` that does not fit in a cache of `cache` bytes.
double spill(double bytes, double cache) {
  return bytes > cache ? 1 - cache / bytes : 0;
}

}  // namespace

CpuTraffic cpu_traffic(const GemmShape& s, const GemmDevice& d) {
  const double e = d.bytes_per_element, batch = static_cast<double>(std::max<int64_t>(s.batch, 1));
  const double a = e * static_cast<double>(s.m * s.k), b = e * static_cast<double>(s.k * s.n);
  const double c = e * static_cast<double>(s.m * s.n);
  if (d.cache_bytes <= 0 || d.memory_bandwidth <= 0) return {(a + b) * batch, 0};
  const double cache = d.cache_bytes;
  CpuTraffic t;
  const double fa = spill(a, cache), fb = spill(b, cache), fc = spill(c, cache);
  const double c_passes = d.block_k > 0 ? static_cast<double>(ceil_div(std::max<int64_t>(s.k, 1), d.block_k)) : 1;
  const double a_passes = d.block_n > 0 ? static_cast<double>(ceil_div(std::max<int64_t>(s.n, 1), d.block_n)) : 0;
  t.packed_from_cache = (a * (1 - fa) + b * (1 - fb)) * batch;
  t.memory_seconds = (2 * (a * fa + b * fb) + 2 * c * fc * c_passes + a * fa * a_passes) * batch / d.memory_bandwidth;
  return t;
}

const std::vector<GemmTile>& default_gemm_tiles() {
  static const std::vector<GemmTile> tiles = {{256, 128}, {128, 256}, {128, 128}, {256, 64},
                                              {64, 256},  {128, 64},  {64, 128},  {64, 64}};
  return tiles;
}

GemmTiming gemm_timing(const GemmShape& s, const GemmDevice& d, const GemmModel& g) {
  const auto& tiles = d.tiles.empty() ? default_gemm_tiles() : d.tiles;
  const GemmTile largest =
      *std::max_element(tiles.begin(), tiles.end(), [](const auto& a, const auto& b) { return a.m * a.n < b.m * b.n; });
  const int64_t units = std::max<int64_t>(d.compute_units, 1);
  const int64_t m = std::max<int64_t>(s.m, 1), n = std::max<int64_t>(s.n, 1), k = std::max<int64_t>(s.k, 1);
  const int64_t batch = std::max<int64_t>(s.batch, 1);
  const double unit_rate = d.peak_flops * std::max(g.max_efficiency, 1e-6) / static_cast<double>(units);

  GemmTiming best;
  best.seconds = std::numeric_limits<double>::infinity();
  for (const auto& t : tiles) {
    const int64_t output_tiles = ceil_div(m, t.m) * ceil_div(n, t.n) * batch;
    const double rate = unit_rate * reuse_factor(t, largest, g.operand_reuse);
    for (const int64_t split : kSplits) {
      if (split > 1 && (output_tiles >= units || ceil_div(k, split) < kMinSplitK)) break;
      const int64_t waves = ceil_div(output_tiles * split, units);
      const double steps = static_cast<double>(ceil_div(k, split)) + g.tile_overhead_k;
      const double main = static_cast<double>(waves) * 2.0 * static_cast<double>(t.m * t.n) * steps / rate;
      double seconds = main;
      if (split > 1 && d.memory_bandwidth > 0)
        seconds += 2 * kPartialBytes * static_cast<double>(split * m * n * batch) / d.memory_bandwidth;
      if (seconds < best.seconds) best = {seconds, main, t, split, waves, false};
    }
  }
  best.seconds += g.fixed_seconds;
  const CpuTraffic traffic = cpu_traffic(s, d);
  if (g.packing_bandwidth > 0) best.seconds += traffic.packed_from_cache / g.packing_bandwidth;
  best.seconds += traffic.memory_seconds;
  if (d.memory_bandwidth > 0) {
    const double bytes = d.bytes_per_element * static_cast<double>(m * k + k * n + m * n) * static_cast<double>(batch);
    if (const double memory = bytes / d.memory_bandwidth + g.fixed_seconds; memory > best.seconds) {
      best.seconds = memory;
      best.main_seconds = 0;
      best.memory_bound = true;
    }
  }
  return best;
}

}  // namespace paratwin::topology

// The GEMM shape model (topology/gemm_model.hpp): the quantization effects of NVIDIA's "Matrix
// Multiplication Background User's Guide" (DU-09799-001, §3) on hand-checkable shapes, and the
// shipped machines against published GEMM rates.
#include "topology/gemm_model.hpp"

#include <gtest/gtest.h>

#include "topology/machine.hpp"

namespace pt = paratwin::topology;

namespace {

// An A100-like device with one tile size, so the arithmetic below is the model's alone.
pt::GemmDevice one_tile_device() {
  pt::GemmDevice d;
  d.peak_flops = 312e12;
  d.compute_units = 108;
  d.memory_bandwidth = 0;  // no memory bound
  d.tiles = {{256, 128}};
  return d;
}

double flops(const pt::GemmShape& s) {
  return 2.0 * static_cast<double>(s.m) * static_cast<double>(s.n) * static_cast<double>(s.k) *
         static_cast<double>(s.batch);
}

double rate(const pt::GemmShape& s, const pt::GemmDevice& d, const pt::GemmModel& g) {
  return flops(s) / pt::gemm_timing(s, d, g).seconds;
}

// One fp32 core: 100 GFLOP/s, 25 GB/s, a 16x4 micro-kernel, a 1 MiB cache.
pt::GemmDevice cpu_core() {
  pt::GemmDevice d;
  d.peak_flops = 100e9;
  d.memory_bandwidth = 25e9;
  d.bytes_per_element = 4;
  d.tiles = {{16, 4}};
  d.cache_bytes = 1 << 20;
  return d;
}

}  // namespace

// Guide §3.2: 108 tiles fill one wave of 108 SMs; 109 tiles need a second wave for one tile, and the
// kernel takes twice as long for 1 % more work.
TEST(GemmModel, WaveQuantization) {
  const auto d = one_tile_device();
  const pt::GemmModel g{0.9, 0, 0, 0};
  const pt::GemmShape full{256 * 12, 128 * 9, 4096, 1};  // 12 x 9 = 108 tiles
  const pt::GemmShape over{256 * 109, 128, 4096, 1};     // 109 tiles
  const auto a = pt::gemm_timing(full, d, g), b = pt::gemm_timing(over, d, g);
  EXPECT_EQ(a.waves, 1);
  EXPECT_EQ(b.waves, 2);
  EXPECT_DOUBLE_EQ(b.seconds, 2 * a.seconds);
  // One wave of 108 tiles of 256x128x4096 at 0.9 of peak: exactly the FLOPs at 0.9 of peak.
  EXPECT_NEAR(a.seconds, flops(full) / (0.9 * 312e12), 1e-15);
}

// Guide §3.1: a 257-row output needs a second row of tiles that computes mostly padding.
TEST(GemmModel, TileQuantization) {
  auto d = one_tile_device();
  d.compute_units = 1;  // one unit: every tile is its own wave, so only the padding counts
  const pt::GemmModel g{1.0, 0, 0, 0};
  const double t256 = pt::gemm_timing({256, 128, 1024, 1}, d, g).seconds;
  const double t257 = pt::gemm_timing({257, 128, 1024, 1}, d, g).seconds;
  EXPECT_DOUBLE_EQ(t257, 2 * t256);
}

// A tile's prologue and epilogue cost tile_overhead_k steps of K: a large square GEMM runs at
// max_efficiency · K / (K + tile_overhead_k) once the waves are full.
TEST(GemmModel, TileOverheadInStepsOfK) {
  const auto d = one_tile_device();
  const pt::GemmModel g{0.9, 256, 0, 0};
  const pt::GemmShape s{256 * 108, 128 * 10, 2048, 1};  // 1,080 tiles: 10 full waves
  EXPECT_NEAR(rate(s, d, g) / 312e12, 0.9 * 2048 / (2048 + 256), 1e-12);
}

// Smaller tiles reuse each operand over fewer FLOPs: with operand_reuse r, a 64x64 tile runs at
// (1 + r(1/256 + 1/128)) / (1 + r(1/64 + 1/64)) of the largest tile's rate.
TEST(GemmModel, SmallTilesRunSlowerByOperandReuse) {
  auto d = one_tile_device();
  d.tiles = {{256, 128}, {64, 64}};
  const pt::GemmModel g{1.0, 0, 16, 0};
  // 64x64 output: one small tile, or one big tile that is 7/8 padding; the small tile wins. (K = 128 is
  // too short to split.)
  const auto t = pt::gemm_timing({64, 64, 128, 1}, d, g);
  EXPECT_EQ(t.tile, (pt::GemmTile{64, 64}));
  EXPECT_EQ(t.split_k, 1);
  const double factor = (1 + 16 * (1.0 / 256 + 1.0 / 128)) / (1 + 16 * (1.0 / 64 + 1.0 / 64));
  EXPECT_NEAR(t.seconds, 2.0 * 64 * 64 * 128 / (312e12 / 108 * factor), 1e-15);
}

// Too few tiles for the device and a long K: the library splits K over several blocks (guide §3.2's
// remedy), and pays for writing and reading the fp32 partial sums.
TEST(GemmModel, SplitKWhenTooFewTiles) {
  auto d = one_tile_device();
  d.memory_bandwidth = 2e12;
  const pt::GemmModel g{0.9, 0, 0, 0};
  const pt::GemmShape s{256, 128, 65536, 1};  // one tile, 65,536 steps of K
  const auto t = pt::gemm_timing(s, d, g);
  EXPECT_GT(t.split_k, 1);
  const double unsplit = 2.0 * 256 * 128 * 65536 / (0.9 * 312e12 / 108);
  EXPECT_LT(t.seconds, unsplit / 4);
}

// Low arithmetic intensity (guide §2): a matrix-vector product is bound by reading the matrix.
TEST(GemmModel, MemoryBoundBelowTheMachineBalance) {
  auto d = one_tile_device();
  d.tiles = {{64, 64}};
  d.memory_bandwidth = 2e12;
  d.bytes_per_element = 2;
  const pt::GemmModel g{0.9, 0, 0, 3e-6};
  const pt::GemmShape gemv{8192, 1, 8192, 1};
  const auto t = pt::gemm_timing(gemv, d, g);
  EXPECT_TRUE(t.memory_bound);
  EXPECT_NEAR(t.seconds, 2.0 * (8192.0 * 8192 + 8192 + 8192) / 2e12 + 3e-6, 1e-12);
}

// The entries of a batched GEMM share the waves (K = 128: too short to split).
TEST(GemmModel, BatchEntriesShareWaves) {
  const auto d = one_tile_device();
  const pt::GemmModel g{0.9, 0, 0, 0};
  const auto one = pt::gemm_timing({256, 128, 128, 1}, d, g);
  const auto many = pt::gemm_timing({256, 128, 128, 108}, d, g);
  EXPECT_EQ(many.waves, 1);
  EXPECT_DOUBLE_EQ(many.seconds, one.seconds);
}

// A CPU core (Goto and van de Geijn §5-6): operands that fit in its cache are packed from it at the
// packing bandwidth; the share of one beyond the cache is packed from memory (read and written back),
// and an output beyond it is loaded and stored around the K loop, both at memory bandwidth and added.
TEST(GemmModel, CpuOperandsBeyondTheCacheMoveAtMemorySpeed) {
  auto d = cpu_core();
  // 256 x 256 x 256 fp32: every operand 256 KiB, in the cache.
  auto t = pt::cpu_traffic({256, 256, 256, 1}, d);
  EXPECT_DOUBLE_EQ(t.packed_from_cache, 2 * 256.0 * 256 * 4);
  EXPECT_DOUBLE_EQ(t.memory_seconds, 0);
  // 1024 x 8 x 1024: A is 4 MiB, three quarters of it beyond the cache; B and C (32 KiB) fit.
  t = pt::cpu_traffic({1024, 8, 1024, 1}, d);
  const double a = 1024.0 * 1024 * 4, b = 1024.0 * 8 * 4;
  EXPECT_DOUBLE_EQ(t.packed_from_cache, a / 4 + b);
  EXPECT_DOUBLE_EQ(t.memory_seconds, 2 * a * 0.75 / 25e9);
  // 1024 x 1024 x 32, 8 entries: the 4 MiB output of each entry spills; the operands (128 KiB) fit.
  t = pt::cpu_traffic({1024, 1024, 32, 8}, d);
  EXPECT_DOUBLE_EQ(t.memory_seconds, 8 * 2 * (1024.0 * 1024 * 4) * 0.75 / 25e9);
  const pt::GemmModel g{1.0, 0, 0, 0, 10e9};
  const auto with = pt::gemm_timing({1024, 8, 1024, 1}, d, g);
  d.cache_bytes = 0;  // no cache model: every byte packed at the packing bandwidth, nothing more
  const auto without = pt::gemm_timing({1024, 8, 1024, 1}, d, g);
  EXPECT_NEAR(with.seconds - without.seconds, (a / 4 + b) / 10e9 + 2 * a * 0.75 / 25e9 - (a + b) / 10e9, 1e-12);
}

// Goto's loops re-read what does not stay in the cache: C is loaded and stored once per block of K
// (OpenBLAS's GEMM_Q) and the packed A streamed once per block of C's columns (GEMM_P of the
// transposed, column-major call). 1536 x 1536 x 1536 fp32 in 448-wide blocks: four passes of each.
TEST(GemmModel, CpuBlocksReReadCAndPackedA) {
  auto d = cpu_core();
  const pt::GemmShape s{1536, 1536, 1536, 1};
  const double x = 1536.0 * 1536 * 4, f = 1 - (1 << 20) / x;  // every operand, its share beyond the cache
  const double one_pass = pt::cpu_traffic(s, d).memory_seconds;
  EXPECT_NEAR(one_pass, 2 * 3 * x * f / 25e9, 1e-12);  // no blocks: A and B packed, C loaded and stored once
  d.block_k = 448;
  d.block_n = 448;
  EXPECT_NEAR(pt::cpu_traffic(s, d).memory_seconds, (2 * 2 * x * f + 2 * x * f * 4 + x * f * 4) / 25e9, 1e-12);
  // K and n within one block: C once, A streamed once more than packed.
  const pt::GemmShape small{1536, 448, 448, 1};
  const double a = 1536.0 * 448 * 4, b = 448.0 * 448 * 4, c = 1536.0 * 448 * 4;
  const auto beyond = [](double bytes) { return bytes > (1 << 20) ? bytes - (1 << 20) : 0.0; };
  EXPECT_NEAR(pt::cpu_traffic(small, d).memory_seconds,
              (2 * (beyond(a) + beyond(b)) + 2 * beyond(c) + beyond(a)) / 25e9, 1e-12);
  // Nothing changes for a device without a cache model (a GPU).
  d.cache_bytes = 0;
  EXPECT_EQ(pt::cpu_traffic(s, d).memory_seconds, 0);
}

// The shipped machines against published large-GEMM rates (the kernel alone, as benchmarks report it):
// - A100 (Perlmutter, 40 GB; Selene, 80 GB): cuBLAS bf16 32768² at 280 TFLOP/s, and AMD MI250X (one
//   Frontier GCD): rocBLAS bf16 32768² at 125 TFLOP/s — "Optimizing Communication in Parallel Deep
//   Learning on Exascale-Class Machines" §5.2.3;
// - H100 of a GH200 (Alps): 813 TFLOP/s sustained, the same section citing NVIDIA's GH200 benchmark guide;
// - V100 (Summit): cuBLAS mixed-precision GEMM up to 83 TFLOP/s — Markidis et al., "NVIDIA Tensor Core
//   Programmability, Performance & Precision" (IPDPSW 2018).
TEST(GemmModel, ShippedMachinesReachThePublishedRates) {
  struct Case {
    const char* machine;
    const char* dtype;
    int64_t n;
    double tflops;
  };
  for (const Case& c :
       {Case{"perlmutter", "bf16", 32768, 280}, Case{"selene", "bf16", 32768, 280}, Case{"selene", "fp16", 32768, 280},
        Case{"frontier", "bf16", 32768, 125}, Case{"alps", "bf16", 32768, 813}, Case{"summit", "fp16", 8192, 83}}) {
    SCOPED_TRACE(std::string(c.machine) + " " + c.dtype);
    const auto m = pt::resolve_machine(c.machine);
    pt::GemmDevice d;
    d.peak_flops = m.node.device.peak_flops.at(c.dtype);
    d.compute_units = m.node.device.compute_units;
    d.memory_bandwidth = m.node.device.hbm_bandwidth;
    d.tiles = m.node.device.gemm_tiles;
    EXPECT_GT(d.compute_units, 1) << "a GPU's SMs or CUs, from its whitepaper";
    const pt::GemmShape s{c.n, c.n, c.n, 1};
    EXPECT_NEAR(rate(s, d, m.profile.gemm.at(c.dtype)) / 1e12, c.tflops, 0.03 * c.tflops);
  }
}

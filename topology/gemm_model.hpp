#pragma once
// How long one GEMM kernel runs on a device, from its shape rather than from its FLOPs alone.
// After NVIDIA, "Matrix Multiplication Background User's Guide" (DU-09799-001, 2023), §2-3: a GEMM
// library cuts each m×n output (per batch entry) into tiles of one thread block each (§2.3: 256×128,
// 128×256, 128×128, 256×64, 64×256, 128×64, 64×128, 64×64 in cuBLAS); the blocks run in waves of one
// block per compute unit (SM, CU), so a partly filled last wave costs a whole one (§3.2, wave
// quantization) and a tile that overhangs the matrix computes its padding (§3.1, tile quantization);
// each block walks K in steps after a fixed prologue and before an epilogue; larger tiles reuse each
// loaded operand over more FLOPs; and a GEMM of low arithmetic intensity is bound by memory, not math
// (§2: intensity = FLOPs / bytes against the device's FLOP:byte ratio). The library picks the tile (and
// the split of K over blocks, when too few tiles fill the device) that runs fastest; so does the model.
// CPU BLAS libraries first copy A and B into buffers in the kernel's tile order ("packing", Goto and
// van de Geijn, "Anatomy of High-Performance Matrix Multiplication", ACM TOMS 34(3), 2008, §5-6), a
// pass over both operands that does not overlap the main loop; GPU libraries load operands straight
// into shared memory, overlapped (no packing). On a CPU core the blocks are sized to its cache (§6:
// packed A in the L2): an operand larger than the cache is packed from memory, not from the cache
// (read, and the packed copy written back), and an output larger than it is loaded and stored by the
// micro-kernel around each K loop at memory speed, not overlapped with the FMAs (§5) — what makes
// skinny products (a few columns, or a K of a few dozen) memory-bound on a CPU.
#include <cstdint>
#include <vector>

namespace paratwin::topology {

struct GemmTile {
  int64_t m = 0, n = 0;
  bool operator==(const GemmTile&) const = default;
};

// The tiles of cuBLAS (guide §2.3); rocBLAS's Tensile macro tiles span the same range.
const std::vector<GemmTile>& default_gemm_tiles();

// Per dtype, what a machine's GEMM library reaches (fitted by `paratwin calibrate micro`, or sourced).
struct GemmModel {
  // Main-loop rate of a full wave of the largest tiles, as a fraction of the dtype's peak (a large
  // square GEMM runs at max_efficiency · K / (K + tile_overhead_k)).
  double max_efficiency = 1.0;
  // A tile's prologue (first operand loads) and epilogue (writing the tile), in steps of K it costs.
  double tile_overhead_k = 0;
  // Operand reuse: a Tm×Tn tile's main loop runs at (1 + r(1/Tm₀ + 1/Tn₀)) / (1 + r(1/Tm + 1/Tn)) of the
  // largest tile's (Tm₀×Tn₀) rate, r this value in elements: loads per FLOP grow as tiles shrink.
  double operand_reuse = 0;
  // A kernel's own fixed time beyond its waves (grid start, the first loads' latency, the drain),
  // seconds; the call's launch overhead is the profile's, apart.
  double fixed_seconds = 0;
  // Bytes/s at which the library packs A and B before the main loop (m·k + k·n elements per batch
  // entry, serially); 0: operands are not packed.
  double packing_bandwidth = 0;
};

// The device as the GEMM model sees it.
struct GemmDevice {
  double peak_flops = 0;         // of the dtype
  int64_t compute_units = 1;     // SMs, CUs; 1 for a CPU rank's core
  double memory_bandwidth = 0;   // bytes/s
  double bytes_per_element = 2;  // of the dtype
  std::vector<GemmTile> tiles;   // empty: default_gemm_tiles()
  double cache_bytes = 0;        // a CPU core's cache its GEMM blocks live in (L2); 0: no cache model
  int64_t block_k = 0;           // CPU: K of one pass of the micro-kernel over C; 0: one pass
  int64_t block_n = 0;           // CPU: columns of C per pass over packed A; 0: A is not re-read
};

struct GemmShape {
  int64_t m = 0, n = 0, k = 0, batch = 1;
};

struct GemmTiming {
  double seconds = 0;       // the kernel alone: launch overhead not included
  double main_seconds = 0;  // of which the waves of tiles, inversely proportional to max_efficiency
  GemmTile tile;            // the tile chosen
  int64_t split_k = 1;      // blocks sharing one tile's K
  int64_t waves = 0;
  bool memory_bound = false;
};

GemmTiming gemm_timing(const GemmShape& shape, const GemmDevice& device, const GemmModel& model);

// A CPU core's operand traffic around the main loop (device.cache_bytes > 0): the bytes of A and B it
// packs from its cache (at the model's packing bandwidth), and the seconds of the rest at memory
// bandwidth — the parts of A and B beyond the cache packed from memory (read and written back), and
// of an output beyond the cache loaded and stored. Goto's loops (§4-5) walk K in blocks of block_k,
// loading and storing C once per block, and the columns of C in blocks of block_n, streaming the
// packed A once per block (OpenBLAS 0.3.21's param.h: GEMM_Q and GEMM_P, 320 and 640 for Cooper Lake's
// SGEMM; a row-major call is the column-major product of the transposes, so P blocks our n): a 1536³
// fp32 product loads and stores its 9 MiB C five times and streams A three times. Without a cache
// model: every packed byte, no memory time.
struct CpuTraffic {
  double packed_from_cache = 0;  // bytes
  double memory_seconds = 0;
};
CpuTraffic cpu_traffic(const GemmShape& shape, const GemmDevice& device);

}  // namespace paratwin::topology

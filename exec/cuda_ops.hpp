#pragma once
// What each op kind enqueues on its stream, and the device buffer it needs. Buffers are per stream:
// ops of one stream run one after the other, so they share one buffer sized for the stream's largest,
// while ops of different streams, which may run at once, never share one. Each buffer has an input
// region (at its start: GEMM operands, what a copy or collective reads), filled once with non-zero
// values, and an output region after it that every op writes to: inputs never change, so every run
// of an op sees the same data, and it is not zeros (on zeros an H100 draws less power and ran GEMMs up
// to 15 % faster).
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <array>
#include <cstddef>
#include <cstdint>

#include "exec/cuda_comms.hpp"
#include "exec/cuda_support.hpp"
#include "workloads/program.hpp"

namespace paratwin::exec::gpu {

// The device resources of one rank, indexed by workloads::Stream.
struct OpContext {
  workloads::Grid grid;
  std::array<cudaStream_t, workloads::kStreams> streams{};
  std::array<cublasHandle_t, workloads::kStreams> blas{};   // one per stream with GEMMs: a handle's
                                                            // workspace must not serve two streams at once
  std::array<void*, workloads::kStreams> gemm_workspace{};  // cuBLASLt's, where a stream has fp8 GEMMs
  std::array<void*, workloads::kStreams> arenas{};
  std::array<size_t, workloads::kStreams> outputs{};  // where each arena's output region begins
  void* host = nullptr;                               // pinned, for host_transfer
  const Communicators* comms = nullptr;
};

// Bytes op reads from its stream's input region and writes to its output region (aligned; 0: none).
struct Footprint {
  size_t inputs = 0, outputs = 0;
};
Footprint footprint(const workloads::Op& op, const workloads::Grid& grid);

// Enqueues op on its stream. Compute: a GEMM of op.gemm; element-wise and optimizer work as a device
// copy that reads and writes op.bytes in all; host_transfer a copy of op.bytes to or from pinned host
// memory; memory events nothing. Communication: the NCCL call with nccl-tests' buffer sizes.
void enqueue(const OpContext& c, const workloads::Op& op, const Where& where);

}  // namespace paratwin::exec::gpu

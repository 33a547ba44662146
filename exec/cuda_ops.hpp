#pragma once
// What each op kind enqueues on its stream, and the device buffer it needs. Buffers are per stream:
// ops of one stream run one after the other, so they share one buffer sized for the stream's largest,
// while ops of different streams, which may run at once, never share one.
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
  std::array<cublasHandle_t, workloads::kStreams> blas{};  // one per stream with GEMMs: a handle's
                                                           // workspace must not serve two streams at once
  std::array<void*, workloads::kStreams> arenas{};
  void* host = nullptr;  // pinned, for host_transfer
  const Communicators* comms = nullptr;
};

// Bytes of op's buffer on its stream (0: it needs none).
size_t device_bytes(const workloads::Op& op, const workloads::Grid& grid);

// Enqueues op on its stream. Compute: a GEMM of op.gemm; element-wise and optimizer work as a device
// copy that reads and writes op.bytes in all; host_transfer a copy of op.bytes to or from pinned host
// memory; memory events nothing. Communication: the NCCL call with nccl-tests' buffer sizes.
void enqueue(const OpContext& c, const workloads::Op& op, const Where& where);

}  // namespace paratwin::exec::gpu

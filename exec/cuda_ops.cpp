#include "exec/cuda_ops.hpp"

#include <nccl.h>

#include <stdexcept>
#include <string>
#include <string_view>

namespace paratwin::exec::gpu {

using workloads::Op;
using workloads::OpKind;

namespace {

// Element counts and buffer bytes of a communication op. Op::bytes is the buffer nccl-tests counts:
// all-gather's output, reduce-scatter's input, all-to-all's whole send buffer.
struct CommSizes {
  size_t count = 0;  // the NCCL call's count (per rank for reduce-scatter and all-gather, per peer for
                     // all-to-all)
  size_t send = 0, recv = 0;
};

CommSizes comm_sizes(const Op& op, size_t members) {
  const size_t e = element_bytes(op.dtype);
  const size_t total = static_cast<size_t>(op.bytes) / e;
  const size_t part = total / members;
  switch (op.kind) {
    case OpKind::reduce_scatter:
      return {part, part * members * e, part * e};
    case OpKind::all_gather:
      return {part, part * e, part * members * e};
    case OpKind::all_to_all:
      return {part, part * members * e, part * members * e};
    case OpKind::send:
      return {total, total * e, 0};
    case OpKind::recv:
      return {total, 0, total * e};
    default:  // all_reduce, broadcast, reduce: out of place, as nccl-tests times them
      return {total, total * e, total * e};
  }
}

size_t members_of(const Op& op, const workloads::Grid& grid) {
  return workloads::is_collective(op.kind) ? static_cast<size_t>(grid.group_size(op.group)) : 1;
}

// The Program tells a host transfer's direction by the label only ("optimizer.d2h", "optimizer.h2d").
bool to_host(const Op& op) {
  return std::string_view(op.name).ends_with("d2h");
}

int root_of(const Op& op, size_t members, const Where& where) {
  const int root = op.root < 0 ? 0 : op.root;
  if (static_cast<size_t>(root) >= members)
    throw std::runtime_error(describe(where) + ": root " + std::to_string(root) + " outside its group of " +
                             std::to_string(members));
  return root;
}

void enqueue_collective(const OpContext& c, const Op& op, const Where& where, char* send, char* recv) {
  const size_t members = members_of(op, c.grid);
  const CommSizes s = comm_sizes(op, members);
  const ncclDataType_t t = nccl_type(op.dtype);
  const cudaStream_t stream = c.streams[static_cast<size_t>(op.stream)];
  const ncclComm_t comm = c.comms->collective(op, where);
  switch (op.kind) {
    case OpKind::all_reduce:
      PARATWIN_GPU_CHECK(ncclAllReduce(send, recv, s.count, t, ncclSum, comm, stream), where);
      return;
    case OpKind::reduce_scatter:
      PARATWIN_GPU_CHECK(ncclReduceScatter(send, recv, s.count, t, ncclSum, comm, stream), where);
      return;
    case OpKind::all_gather:
      PARATWIN_GPU_CHECK(ncclAllGather(send, recv, s.count, t, comm, stream), where);
      return;
    case OpKind::broadcast:
      PARATWIN_GPU_CHECK(ncclBroadcast(send, recv, s.count, t, root_of(op, members, where), comm, stream), where);
      return;
    case OpKind::reduce:
      PARATWIN_GPU_CHECK(ncclReduce(send, recv, s.count, t, ncclSum, root_of(op, members, where), comm, stream), where);
      return;
    case OpKind::all_to_all: {
      // NCCL has no all-to-all: one send and one receive per peer, fused by the group call.
      const size_t chunk = s.count * element_bytes(op.dtype);
      PARATWIN_GPU_CHECK(ncclGroupStart(), where);
      for (size_t peer = 0; peer < members; ++peer) {
        const int p = static_cast<int>(peer);
        PARATWIN_GPU_CHECK(ncclSend(send + peer * chunk, s.count, t, p, comm, stream), where);
        PARATWIN_GPU_CHECK(ncclRecv(recv + peer * chunk, s.count, t, p, comm, stream), where);
      }
      PARATWIN_GPU_CHECK(ncclGroupEnd(), where);
      return;
    }
    default:
      return;
  }
}

void enqueue_p2p(const OpContext& c, const Op& op, const Where& where, char* send, char* recv) {
  const CommSizes s = comm_sizes(op, 1);
  const auto [comm, peer] = c.comms->p2p(op, where);
  const cudaStream_t stream = c.streams[static_cast<size_t>(op.stream)];
  if (op.kind == OpKind::send)
    PARATWIN_GPU_CHECK(ncclSend(send, s.count, nccl_type(op.dtype), peer, comm, stream), where);
  else
    PARATWIN_GPU_CHECK(ncclRecv(recv, s.count, nccl_type(op.dtype), peer, comm, stream), where);
}

}  // namespace

Footprint footprint(const Op& op, const workloads::Grid& grid) {
  switch (op.kind) {
    case OpKind::gemm: {
      const GemmBytes g = gemm_bytes(op.gemm, op.dtype);
      return {g.a + g.b, g.c};
    }
    case OpKind::elementwise:
    case OpKind::optimizer: {
      const size_t half = aligned(static_cast<size_t>(op.bytes) / 2);
      return {half, half};
    }
    case OpKind::host_transfer: {
      const size_t bytes = aligned(static_cast<size_t>(op.bytes));
      return to_host(op) ? Footprint{bytes, 0} : Footprint{0, bytes};
    }
    case OpKind::alloc:
    case OpKind::free:
      return {};
    default: {
      const CommSizes s = comm_sizes(op, members_of(op, grid));
      return {aligned(s.send), aligned(s.recv)};
    }
  }
}

void enqueue(const OpContext& c, const Op& op, const Where& where) {
  const size_t index = static_cast<size_t>(op.stream);
  const cudaStream_t stream = c.streams[index];
  char* base = static_cast<char*>(c.arenas[index]);
  const Footprint f = footprint(op, c.grid);
  if ((f.inputs > 0 || f.outputs > 0) && !base)
    throw std::runtime_error(describe(where) + ": no buffer on its stream (the op is not from the prepared Program)");
  char* in = base;
  char* out = base ? base + c.outputs[index] : nullptr;
  switch (op.kind) {
    case OpKind::gemm:
      if (!c.blas[index])
        throw std::runtime_error(describe(where) + ": no cuBLAS handle on its stream (not from the prepared Program)");
      enqueue_gemm(c.blas[index], op.gemm, op.dtype, in, out, where,
                   {c.gemm_workspace[index], c.gemm_workspace[index] ? kGemmWorkspace : 0});
      return;
    case OpKind::elementwise:
    case OpKind::optimizer: {
      // A device-to-device copy reads half of op.bytes and writes the other half: the memory traffic of
      // the op, and it needs no kernel of ours, so a host compiler alone builds the backend.
      const size_t half = static_cast<size_t>(op.bytes) / 2;
      if (half) PARATWIN_GPU_CHECK(cudaMemcpyAsync(out, in, half, cudaMemcpyDeviceToDevice, stream), where);
      return;
    }
    case OpKind::host_transfer: {
      const size_t bytes = static_cast<size_t>(op.bytes);
      if (!bytes) return;
      if (to_host(op))
        PARATWIN_GPU_CHECK(cudaMemcpyAsync(c.host, in, bytes, cudaMemcpyDeviceToHost, stream), where);
      else
        PARATWIN_GPU_CHECK(cudaMemcpyAsync(out, c.host, bytes, cudaMemcpyHostToDevice, stream), where);
      return;
    }
    case OpKind::alloc:
    case OpKind::free:
      return;  // the stash is not allocated for real: only the begin and end events are recorded
    case OpKind::send:
    case OpKind::recv:
      enqueue_p2p(c, op, where, in, out);
      return;
    default:
      enqueue_collective(c, op, where, in, out);
      return;
  }
}

}  // namespace paratwin::exec::gpu

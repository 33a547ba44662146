#pragma once
// The NCCL communicators of one rank. NCCL runs the operations of one communicator one after the other
// in the order they were issued, whatever stream they were issued on, so a communicator shared by two
// Program streams would make one stream wait for the other and could deadlock a schedule that the
// Program's validation proved free of cycles. Every communicator here is therefore used by one stream
// on each member:
// - collectives: one per (axis mask, stream) that the collectives use; a rank joins the communicator
//   of its own group where that group uses the key, with its index in the group as NCCL rank (so
//   Op::root maps as is);
// - pipeline messages: one per directed flow (sender, receiver, forward|backward) of the rank's sends
//   and receives; the sender is NCCL rank 0. Its sends leave from one stream (send_fwd or send_bwd) and
//   its receives arrive on one (recv_fwd or recv_bwd), in the same order on both sides.
#include <nccl.h>

#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <utility>

#include "exec/cuda_support.hpp"
#include "workloads/program.hpp"

namespace paratwin::exec::gpu {

class Communicators {
 public:
  Communicators() = default;
  Communicators(const Communicators&) = delete;
  Communicators& operator=(const Communicators&) = delete;
  ~Communicators();

  // Collective over MPI_COMM_WORLD (every rank, same Program). Keys are created in one sorted order on
  // every rank, so that no rank waits in one communicator's setup for a peer that waits in another's.
  void build(const workloads::Program& program, int64_t rank);

  ncclComm_t collective(const workloads::Op& op, const Where& where) const;
  // The communicator of a send or receive and the peer's NCCL rank in it.
  std::pair<ncclComm_t, int> p2p(const workloads::Op& op, const Where& where) const;

  // Throws when a communicator reports an asynchronous error (a peer died, a network failure).
  void check_async(const Where& where) const;
  // After a failure: operations in flight may never end, so communicators are aborted, not destroyed.
  void abort() { aborted_ = true; }
  // Destroys (or aborts) every communicator now; the destructor does it otherwise.
  void release();

 private:
  using GroupKey = std::pair<workloads::AxisMask, workloads::Stream>;
  using FlowKey = std::tuple<int64_t, int64_t, bool>;  // sender, receiver, backward

  FlowKey flow_of(const workloads::Op& op) const;
  std::string label(const GroupKey& key) const;

  workloads::Grid grid_;
  int64_t rank_ = -1;
  int pipe_axis_ = -1;
  std::map<GroupKey, ncclComm_t> groups_;
  std::map<FlowKey, ncclComm_t> flows_;
  bool aborted_ = false;
};

}  // namespace paratwin::exec::gpu

#include "exec/cuda_comms.hpp"

#include <mpi.h>

#include <set>
#include <stdexcept>

namespace paratwin::exec::gpu {

using workloads::AxisMask;
using workloads::Op;
using workloads::OpKind;
using workloads::Stream;

namespace {

constexpr int kIdTag = 6;  // unique ids of pipeline flows, on a private duplicate of the world

// A duplicate of MPI_COMM_WORLD for the setup messages, so that none can match someone else's.
class PrivateWorld {
 public:
  PrivateWorld() { MPI_Comm_dup(MPI_COMM_WORLD, &comm_); }
  PrivateWorld(const PrivateWorld&) = delete;
  PrivateWorld& operator=(const PrivateWorld&) = delete;
  ~PrivateWorld() { MPI_Comm_free(&comm_); }
  MPI_Comm get() const { return comm_; }

 private:
  MPI_Comm comm_ = MPI_COMM_NULL;
};

}  // namespace

Communicators::~Communicators() {
  release();
}

void Communicators::release() {
  // Errors are ignored: this runs during unwinding too, and nothing can be done about them here.
  const auto release_one = [this](ncclComm_t comm) {
    if (comm) (void)(aborted_ ? ncclCommAbort(comm) : ncclCommDestroy(comm));
  };
  for (const auto& [key, comm] : groups_) release_one(comm);
  for (const auto& [key, comm] : flows_) release_one(comm);
  groups_.clear();
  flows_.clear();
}

void Communicators::build(const workloads::Program& program, int64_t rank) {
  grid_ = program.grid;
  rank_ = rank;
  pipe_axis_ = grid_.axis_index("pipe");

  const workloads::Role& mine = program.roles.at(static_cast<size_t>(program.role_of(rank)));
  std::set<GroupKey> groups, my_groups;  // every role's: each rank takes part in each key's split
  for (const workloads::Role& role : program.roles)
    for (const Op& op : role.ops)
      if (workloads::is_collective(op.kind)) (&role == &mine ? my_groups : groups).insert({op.group, op.stream});
  groups.insert(my_groups.begin(), my_groups.end());
  std::set<FlowKey> flows;  // this rank's: a flow's two ends are the only ones to meet
  for (const Op& op : mine.ops)
    if (workloads::is_p2p(op.kind)) flows.insert(flow_of(op));

  const PrivateWorld world;
  for (const GroupKey& key : groups) {
    const std::string step = "prepare: NCCL communicator of " + label(key);
    const Where where{rank, nullptr, 0, step.c_str()};
    const AxisMask mask = key.first;
    const int size = static_cast<int>(grid_.group_size(mask));
    const int index = static_cast<int>(grid_.index_in_group(rank, mask));
    // A group without the pipe axis lies within one role: it needs the communicator only if that role
    // uses it. One across the pipe axis spans every role, so it needs it if any role uses it.
    const bool needed = (mask & grid_.mask("pipe")) != 0 || my_groups.count(key) != 0;
    // Ranks of one group share a colour: its first member. The unique id travels inside the group.
    MPI_Comm group = MPI_COMM_NULL;
    MPI_Comm_split(world.get(), needed ? static_cast<int>(grid_.group_member(rank, mask, 0)) : MPI_UNDEFINED, index,
                   &group);
    if (!needed) continue;
    ncclUniqueId id{};
    if (index == 0) PARATWIN_GPU_CHECK(ncclGetUniqueId(&id), where);
    MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, group);
    MPI_Comm_free(&group);
    ncclComm_t comm = nullptr;
    PARATWIN_GPU_CHECK(ncclCommInitRank(&comm, size, id, index), where);
    groups_[key] = comm;
  }
  // Flows in one global order (sender, receiver, direction): the smallest flow not yet built has both
  // ends waiting on it, so setting them up one by one cannot deadlock.
  for (const FlowKey& key : flows) {
    const auto [sender, receiver, backward] = key;
    const std::string step = "prepare: NCCL communicator of the " + std::string(backward ? "backward" : "forward") +
                             " flow " + std::to_string(sender) + " -> " + std::to_string(receiver);
    const Where where{rank, nullptr, 0, step.c_str()};
    const bool sending = sender == rank;
    ncclUniqueId id{};
    if (sending) {
      PARATWIN_GPU_CHECK(ncclGetUniqueId(&id), where);
      MPI_Send(&id, sizeof id, MPI_BYTE, static_cast<int>(receiver), kIdTag, world.get());
    } else {
      MPI_Recv(&id, sizeof id, MPI_BYTE, static_cast<int>(sender), kIdTag, world.get(), MPI_STATUS_IGNORE);
    }
    ncclComm_t comm = nullptr;
    PARATWIN_GPU_CHECK(ncclCommInitRank(&comm, 2, id, sending ? 0 : 1), where);
    flows_[key] = comm;
  }
}

Communicators::FlowKey Communicators::flow_of(const Op& op) const {
  if (pipe_axis_ < 0)
    throw std::runtime_error("rank " + std::to_string(rank_) + ": " + to_string(op.kind) + " '" + op.name +
                             "' in a Program without a pipe axis");
  const int64_t peer = grid_.with_coord(rank_, pipe_axis_, op.peer_stage);
  const bool backward = op.stream == Stream::send_bwd || op.stream == Stream::recv_bwd;
  return op.kind == OpKind::send ? FlowKey{rank_, peer, backward} : FlowKey{peer, rank_, backward};
}

std::string Communicators::label(const GroupKey& key) const {
  return "group '" + grid_.mask_name(key.first) + "' on stream " + workloads::to_string(key.second);
}

ncclComm_t Communicators::collective(const Op& op, const Where& where) const {
  const auto it = groups_.find({op.group, op.stream});
  if (it == groups_.end())
    throw std::runtime_error(describe(where) + ": no NCCL communicator for " + label({op.group, op.stream}) +
                             " (the op is not from the prepared Program)");
  return it->second;
}

std::pair<ncclComm_t, int> Communicators::p2p(const Op& op, const Where& where) const {
  const auto it = flows_.find(flow_of(op));
  if (it == flows_.end())
    throw std::runtime_error(describe(where) +
                             ": no NCCL communicator for this pipeline flow (the op is not from "
                             "the prepared Program)");
  return {it->second, op.kind == OpKind::send ? 1 : 0};
}

void Communicators::check_async(const Where& where) const {
  const auto check_one = [&](ncclComm_t comm, const std::string& what) {
    ncclResult_t state = ncclSuccess;
    PARATWIN_GPU_CHECK(ncclCommGetAsyncError(comm, &state), where);
    if (state != ncclSuccess && state != ncclInProgress)
      fail("ncclCommGetAsyncError", std::string(ncclGetErrorString(state)) + " on the communicator of " + what, where);
  };
  for (const auto& [key, comm] : groups_) check_one(comm, label(key));
  for (const auto& [key, comm] : flows_)
    check_one(comm, "the flow " + std::to_string(std::get<0>(key)) + " -> " + std::to_string(std::get<1>(key)));
}

}  // namespace paratwin::exec::gpu

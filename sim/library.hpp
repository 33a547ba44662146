#pragma once
// A communication library as the simulator models it: its traits (how it lays its rings over a node's
// NICs, where it reduces, whether NCCL's tuning tables price it, which collectives it runs itself) and
// its algorithm selector. One file per library in sim/libraries/ defines them, as SimGrid's per-library
// selectors do (src/smpi/colls/smpi_*_selector.cpp); the list that registers them is
// topology/communication_libraries.hpp.
#include <string>
#include <vector>

#include "sim/collectives.hpp"
#include "topology/communication_libraries.hpp"

namespace paratwin::sim {

class Tuner;

struct LibrarySpec {
  const char* name = "";
  // One ring per NIC a node's members use, each entering and leaving every node through its own members
  // (NCCL's and RCCL's channels); false: one ring.
  bool channels = false;
  // Every ring also runs reversed, half the share each way (RCCL's ring pairs).
  bool counter_rotating = false;
  // Reductions on the CPU: 3 × bytes over host memory per step (the MPI libraries, [singh2025dissertation]
  // §6.1.3); GPU libraries fuse them into the transfer.
  bool host_reductions = false;
  // Every inter-node flow leaves through the node's first NIC (Cray MPICH, [singh2025dissertation] §6.1.2).
  bool one_nic_per_node = false;
  // Inter-node transfers leave through the NIC of the receiver's rail (NCCL's same-NIC ring graphs and
  // PXN; topology::TopologyOptions::rail_matched_nics).
  bool rail_matched_nics = false;
  // NCCL's tuning tables (machine profile "nccl") price its rings, trees and PAT.
  bool nccl_tables = false;
  // The collective kinds the library implements itself; the others run on the machine's vendor library
  // (vendor_library), laid out and tuned as that library does. Null: every kind.
  bool (*implements)(workloads::OpKind kind) = nullptr;
  // The library's choice of algorithm without tuning (and the fallback of its tuning).
  Algorithm (*default_algorithm)(workloads::OpKind kind) = nullptr;
  // The selector: the algorithm the library runs for a collective of `kind` and `bytes` over a group laid
  // out as `layout`, given the tuner's estimates (sim/tuner.hpp).
  Algorithm (*select)(workloads::OpKind kind, const GroupLayout& layout, double bytes, Tuner& tuner) = nullptr;

  bool implements_every_kind() const { return implements == nullptr; }
  bool runs(workloads::OpKind kind) const { return implements == nullptr || implements(kind); }
};

// Every registered library, in the order of topology/communication_libraries.hpp.
const std::vector<LibrarySpec>& registered_libraries();
// The library named `name`; throws std::invalid_argument listing the registered ones (names are checked
// where they are read: machine files, --library, sweep and reference files).
const LibrarySpec& library_spec(const std::string& name);

// Each library's definition, sim/libraries/IDENTIFIER.cpp.
#define PARATWIN_LIBRARY_DECLARATION(identifier, name) LibrarySpec identifier##_library();
PARATWIN_COMMUNICATION_LIBRARIES(PARATWIN_LIBRARY_DECLARATION)
#undef PARATWIN_LIBRARY_DECLARATION

}  // namespace paratwin::sim

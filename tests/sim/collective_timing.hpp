#pragma once
// One kind of collective over one group of a workload on a slice of Perlmutter, in the SimGrid engine
// (a forked child per simulation) or the analytical model: the iteration, and the collectives' time and
// exposed part per rank. For tests that compare a workload with and without an overlap.
#include <nlohmann/json.hpp>
#include <vector>

#include "sim/analytical_model.hpp"
#include "sim/engine.hpp"
#include "tests/topology/simgrid_child.hpp"
#include "topology/topology.hpp"
#include "workloads/lower.hpp"

namespace paratwin::test {

// 8 layers on the 4 GPUs of a Perlmutter node, pure data parallelism, 4 micro-batches per replica,
// gradients in 25 MB buckets, with or without overlap_gradient_sync.
inline workloads::Workload data_parallel(bool overlap) {
  nlohmann::json j = {{"name", "dp-overlap"},
                      {"model", {{"layers", 8}, {"hidden", 2048}, {"heads", 16}, {"seq_len", 2048}, {"vocab", 8192}}},
                      {"training", {{"global_batch", 32}, {"micro_batch", 2}, {"checkpointing", "none"}}},
                      {"parallelism", {{"data", {{"size", 4}}}, {"tensor", {{"mode", "none"}}}}},
                      {"optimizations", {{"overlap_gradient_sync", overlap}}},
                      {"framework", {{"profile", "generic"}, {"gradient_bucket_bytes", 25e6}}}};
  return workloads::parse_workload(j, "");
}

struct CollectiveTiming {
  double iteration = 0, total = 0, exposed = 0;
};

// {-1, -1, -1} after recording a test failure when the SimGrid child failed.
inline CollectiveTiming collective_timing(bool simgrid, const workloads::Workload& w, workloads::OpKind kind,
                                          const char* group, int nodes) {
  if (!simgrid) {
    const topology::Topology topology(topology::resolve_machine("perlmutter").slice(nodes));
    const auto e = sim::estimate(w, topology);
    CollectiveTiming t{e.iteration, 0, 0};
    for (const auto& c : e.collectives)
      if (c.kind == kind && c.group == group) {
        t.total += c.seconds;
        t.exposed += c.exposed;
      }
    return t;
  }
  const auto program = workloads::lower(w);
  const auto out = run_simulation([&] {
    const topology::Topology topology(topology::resolve_machine("perlmutter").slice(nodes));
    const auto r = sim::simulate(program, topology, {});
    double total = 0, exposed = 0;
    for (const auto& c : r.collectives)
      if (c.kind == kind && c.group == program.grid.mask(group)) {
        total += c.seconds;
        exposed += c.exposed;
      }
    return std::vector<double>{r.iteration_time, total, exposed};
  });
  if (out.size() != 3) return {-1, -1, -1};
  return {out[0], out[1], out[2]};
}

}  // namespace paratwin::test

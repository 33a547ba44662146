// `paratwin lower`: lower a workload to its Program and report, per rank role, op counts, FLOPs,
// collective bytes per kind and axis, memory per rank, and every all-gather / reduce-scatter of the
// data-parallel stack (ZeRO / FSDP) with its size (every collective with --collectives).
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>

#include "cli/commands.hpp"
#include "common/run_files.hpp"
#include "common/text_file.hpp"
#include "reports/collective_listing.hpp"
#include "reports/lower_report.hpp"
#include "reports/lower_text.hpp"
#include "topology/machine.hpp"
#include "workloads/embedded_examples.hpp"
#include "workloads/error.hpp"
#include "workloads/lower.hpp"

namespace paratwin::cli {

namespace {

struct LowerArgs {
  std::string workload;
  int64_t rank = -1;
  std::string json;
  int64_t devices_per_node = 0;
  double device_memory_gib = 0;
  bool ops = false;
  bool schedule = false;
  bool collectives = false;
  std::string machine;
  int64_t nodes = 0;
};

}  // namespace

Action add_lower_command(CLI::App& app) {
  auto args = std::make_shared<LowerArgs>();
  CLI::App* cmd = app.add_subcommand(
      "lower", "Lower a workload to its per-rank Program and report op counts, FLOPs, collective bytes and memory");
  cmd->add_option("--workload,-w", args->workload, "workload JSON file (default: the built-in example)");
  cmd->add_option("--rank,-r", args->rank, "report only the role of this rank, with its grid coordinates")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--json", args->json, "also write the report as JSON to this file");
  cmd->add_option("--devices-per-node", args->devices_per_node,
                  "devices per node for the placement (overrides placement.devices_per_node)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--device-memory", args->device_memory_gib,
                  "device memory in GiB: judge whether every rank's memory fits")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--machine,-m", args->machine,
                  "machine (built-in name or file): devices per node and device memory come from it");
  cmd->add_option("--nodes", args->nodes, "use a slice of the machine of this many nodes")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 20));
  cmd->add_flag("--ops", args->ops, "print the op list of the role (of --rank, or of stage 0)");
  cmd->add_flag("--schedule", args->schedule, "print each stage's pipeline schedule (F/B order)");
  cmd->add_flag("--collectives", args->collectives,
                "list every collective of each role per iteration (by default: the all-gathers and reduce-scatters of "
                "sharded weights and gradients: ZeRO, FSDP, AxoNN z)");
  return [args]() -> int {
    if (!args->json.empty()) check_output_file(args->json, "--json");
    RunFiles()
        .input("--workload", args->workload)
        .input("--machine", topology::machine_file(args->machine))
        .output("--json", args->json)
        .check();
    workloads::Workload w = workloads::load_workload_or_default(args->workload);
    workloads::LowerOptions options;
    options.devices_per_node = args->devices_per_node;
    std::optional<double> memory = args->device_memory_gib > 0
                                       ? std::optional<double>(args->device_memory_gib * 1024.0 * 1024 * 1024)
                                       : std::nullopt;
    if (args->nodes > 0 && args->machine.empty()) throw InputError("--nodes", "needs --machine");
    if (!args->machine.empty()) {
      auto machine = topology::resolve_machine(args->machine);
      if (args->nodes > 0) machine = machine.slice(args->nodes);
      if (options.devices_per_node == 0) options.devices_per_node = machine.devices_per_node();
      if (!memory) memory = machine.node.device.memory;
      if (w.total_ranks() > machine.total_devices())
        throw InputError(args->nodes > 0 ? "--nodes" : "--machine",
                         machine.name + " (" + std::to_string(machine.network.nodes) +
                             (machine.network.nodes == 1 ? " node" : " nodes") + ") has " +
                             std::to_string(machine.total_devices()) + " devices, but the workload needs " +
                             std::to_string(w.total_ranks()));
    }
    workloads::Program program = workloads::lower(w, options);
    int64_t role = -1;
    if (args->rank >= 0) {
      if (args->rank >= program.grid.size())
        throw workloads::WorkloadError("--rank", "= " + std::to_string(args->rank) + " but the workload has " +
                                                     std::to_string(program.grid.size()) + " ranks (0.." +
                                                     std::to_string(program.grid.size() - 1) + ")");
      role = program.role_of(args->rank);
    }
    const auto summary = reports::summarize(program);
    if (!args->json.empty()) {
      auto j = reports::to_json(summary, memory);
      j[args->collectives ? "collectives" : "data_parallel_gathers"] =
          reports::collective_listing_json(program, args->collectives);
      write_file_atomically(args->json, j.dump(2) + "\n");
    }
    if (args->workload.empty())
      std::cout << "(no --workload given: using the " << workloads::kDefaultWorkloadName << ")\n";
    std::cout << reports::format_text(summary, memory, role);
    std::cout << reports::format_collective_listing(program, role, args->collectives);
    if (args->rank >= 0) std::cout << reports::rank_text(program, args->rank);
    if (args->schedule) std::cout << reports::schedules_text(w);
    if (args->ops) std::cout << reports::op_list_text(program, role < 0 ? 0 : role);
    return 0;
  };
}

}  // namespace paratwin::cli

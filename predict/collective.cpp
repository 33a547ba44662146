#include "predict/collective.hpp"

#include "predict/fidelity.hpp"
#include "predict/predict.hpp"
#include "sim/analytical_collectives.hpp"
#include "sim/engine.hpp"
#include "topology/platform.hpp"

namespace paratwin::predict {

double collective_seconds(const topology::Machine& machine, workloads::OpKind kind, double bytes, int64_t gpus,
                          const std::string& library, Model model) {
  const auto topology = topology_for(machine, gpus, library);
  const auto program = workloads::single_collective_program(workloads::Grid({{"pipe", 1}, {"data", gpus}}),
                                                            machine.devices_per_node(), kind, bytes);
  if (model == Model::analytical) {
    sim::CollectiveTimes times(topology, library, true);
    return times.seconds(program, program.placement(), 0, kind, program.grid.mask("data"), bytes, 0);
  }
  const auto choice = choose_fidelity(gpus, "auto", false);
  const auto engine = topology::start_engine();
  sim::SimOptions options;
  options.library = library;
  options.fidelity = choice.fidelity == "fast" ? sim::Fidelity::fast : sim::Fidelity::exact;
  options.fold = choice.fold;
  return sim::simulate(program, topology, options).iteration_time;
}

}  // namespace paratwin::predict

// Benchmark: building a machine's SimGrid platform (the target: 8,192 Frontier GCDs in under 5 s; the
// whole of Frontier, 75,264 GCDs, in under 60 s and 4 GB). One machine per process, as SimGrid allows
// one engine per process. Usage: bench_platform MACHINE [NODES]
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <string>

#include "topology/platform.hpp"

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s MACHINE [NODES]\n", argv[0]);
    return 2;
  }
  try {
    int sg_argc = 1;
    simgrid::s4u::Engine engine(&sg_argc, argv);
    paratwin::topology::configure_engine(engine);
    const auto t0 = std::chrono::steady_clock::now();
    auto machine = paratwin::topology::resolve_machine(argv[1]);
    if (argc > 2) machine = machine.slice(std::stoll(argv[2]));
    const paratwin::topology::Topology topology(machine);
    const auto platform = paratwin::topology::build_platform(topology);
    const auto t1 = std::chrono::steady_clock::now();
    // One flow across the machine proves the platform routes.
    double done = 0;
    simgrid::s4u::Actor::create("probe", platform.hosts.front(), [&] {
      simgrid::s4u::Comm::sendto(platform.hosts.front(), platform.hosts.back(), 1e9);
      done = simgrid::s4u::Engine::get_clock();
    });
    engine.run();
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    std::printf(
        "%-10s %8lld nodes %8lld devices %9zu links  build %7.2f s  peak RSS %7.0f MiB  1 GB first->last %.4f s\n",
        machine.name.c_str(), static_cast<long long>(machine.network.nodes), static_cast<long long>(topology.devices()),
        topology.resources(), std::chrono::duration<double>(t1 - t0).count(),
        static_cast<double>(usage.ru_maxrss) / 1024.0, done);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
  return 0;
}

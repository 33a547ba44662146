// `mpirun -np R paratwin calibrate micro`: measure a machine through an executor backend and fit its
// profile (issue 7).
#include <mpi.h>

#include <cstdio>
#include <iostream>

#include "calibration/micro.hpp"
#include "cli/commands.hpp"
#include "common/input_error.hpp"

namespace paratwin::cli {

namespace {

struct CalibrateArgs {
  std::string backend = "cpu";
  std::string machine = "localhost";
  std::string out;
  bool quick = false;
  int repeats = 5;
};

int micro(const CalibrateArgs& a) {
  int provided = 0;
  MPI_Init_thread(nullptr, nullptr, MPI_THREAD_MULTIPLE, &provided);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  nlohmann::json profile;
  try {
    if (size > 2 && size % 2 != 0)
      throw InputError("mpirun -np",
                       "= " + std::to_string(size) + ": use 1, 2 or an even number of ranks (groups of 2 and of all)");
    const auto machine = topology::resolve_machine(a.machine);
    auto backend = exec::make_backend(a.backend);
    calibration::MicroOptions options;
    options.quick = a.quick;
    options.repeats = a.repeats;
    profile = calibration::run_micro(*backend, rank, size, machine, options);
    if (rank == 0) write_file_atomically(a.out, profile.dump(2) + "\n");
  } catch (const std::exception& e) {
    if (rank == 0) std::cerr << "paratwin: error: " << e.what() << "\n";
    MPI_Finalize();
    return dynamic_cast<const InputError*>(&e) ? kExitBadInput : 1;
  }
  if (rank == 0) {
    const auto& f = profile["fit"];
    std::printf("calibrated %s with the %s backend on %d ranks -> %s\n", a.machine.c_str(), a.backend.c_str(), size,
                a.out.c_str());
    std::printf("  GEMM fp32: peak %.4g TFLOP/s, max efficiency %.3f, half size %.3g GFLOP (rms error %.1f %%)\n",
                f["peak_tflops"]["fp32"].get<double>(), f["gemm"]["fp32"]["max_efficiency"].get<double>(),
                f["gemm"]["fp32"]["half_gflop"].get<double>(),
                100 * profile["fit_error"]["gemm_rms_relative"].get<double>());
    std::printf("  element-wise: launch %.3g us, memory %.3g GB/s (rms error %.1f %%)\n",
                f["launch_overhead_us"].get<double>(), f["memory_GBps"].get<double>(),
                100 * profile["fit_error"]["sweep_rms_relative"].get<double>());
    if (f.contains("collectives")) {
      std::printf("  %-15s %5s %14s %12s %10s\n", "collective", "ranks", "alpha/step us", "busbw GB/s", "rms err");
      for (const auto& c : f["collectives"])
        std::printf("  %-15s %5lld %14.3g %12.3g %9.1f%%\n", c["kind"].get<std::string>().c_str(),
                    static_cast<long long>(c["group_size"].get<int64_t>()), c["alpha_us_per_step"].get<double>(),
                    c["busbw_GBps"].get<double>(), 100 * c["rms_relative_error"].get<double>());
      std::printf(
          "  profile: collective_step %.3g us, link %.3g GB/s (medians over all-reduce, reduce-scatter, "
          "all-gather)\n",
          f["collective_step_us"].get<double>(), f["link_GBps"].get<double>());
    }
  }
  MPI_Finalize();
  return 0;
}

}  // namespace

Action add_calibrate_command(CLI::App& app) {
  auto a = std::make_shared<CalibrateArgs>();
  CLI::App* cmd = app.add_subcommand(
      "calibrate", "Measure a machine through an executor backend and fit its profile (run with mpirun)");
  cmd->require_subcommand(1);
  CLI::App* m = cmd->add_subcommand(
      "micro",
      "GEMMs of many shapes, element-wise sweeps and every collective over sizes and group sizes, each timed alone on "
      "every rank at once; writes the raw measurements, the fitted profile parameters and the fit errors");
  m->add_option("--backend", a->backend, "cpu or cuda")->capture_default_str();
  m->add_option("--machine,-m", a->machine, "the machine measured (its nominal peaks are the reference)")
      ->capture_default_str();
  m->add_option("--out,-o", a->out, "profile JSON to write")->required();
  m->add_option("--repeats", a->repeats, "runs of each benchmark (the median counts)")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  m->add_flag("--quick", a->quick, "fewer, smaller sizes (a few seconds)");
  return [a]() -> int { return micro(*a); };
}

}  // namespace paratwin::cli

// `mpirun -np R paratwin calibrate micro`: measure a machine through an executor backend and fit its
// profile; `calibrate refit`: fit a profile's recorded GEMMs again.
#include <mpi.h>

#include <cstdio>
#include <iostream>

#include "calibration/gemm_fit.hpp"
#include "calibration/micro.hpp"
#include "cli/calibrate_runs.hpp"
#include "cli/commands.hpp"
#include "common/input_error.hpp"
#include "common/json_file.hpp"
#include "workloads/lower.hpp"
#include "workloads/workload.hpp"

namespace paratwin::cli {

namespace {

struct CalibrateArgs {
  std::string backend = "cpu";
  std::string machine = "localhost";
  std::string out;
  bool quick = false;
  int repeats = 5;
  std::vector<std::string> workloads;  // their GEMM shapes are timed one by one
};

// One line per dtype: the GEMM model's parameters and how well they fit.
void print_gemm_fit(const nlohmann::json& profile) {
  const auto& f = profile["fit"];
  for (const auto& [dtype, g] : f["gemm"].items()) {
    const std::string suffix = dtype == "fp32" ? "" : "_" + dtype;
    std::printf(
        "  GEMM %s: peak %.4g TFLOP/s, main loop at %.3f of it, tile overhead %.3g K steps, operand reuse %.3g, "
        "fixed %.3g us, packing %s (rms error %.1f %%, max %.1f %%)\n",
        dtype.c_str(), f["peak_tflops"][dtype].get<double>(), g["max_efficiency"].get<double>(),
        g["tile_overhead_k"].get<double>(), g["operand_reuse"].get<double>(), g["fixed_us"].get<double>(),
        g.value("packing_GBps", 0.0) > 0
            ? (std::to_string(std::lround(g["packing_GBps"].get<double>())) + " GB/s").c_str()
            : "none",
        100 * profile["fit_error"]["gemm_rms_relative" + suffix].get<double>(),
        100 * profile["fit_error"]["gemm_max_relative" + suffix].get<double>());
  }
}

struct RefitArgs {
  std::string profile;
  std::string out;
};

int refit(const RefitArgs& a) {
  auto profile = parse_json<InputError>(read_text_file<InputError>(a.profile), a.profile);
  try {
    if (!profile.is_object() || !profile.contains("machine") || !profile.contains("measurements") ||
        !profile.contains("fit"))
      throw InputError(a.profile, "is not a profile written by paratwin calibrate micro (machine, measurements, fit)");
    const auto machine = topology::resolve_machine(profile["machine"].get<std::string>());
    calibration::fit_profile_gemms(profile, machine);
  } catch (const nlohmann::json::exception& e) {
    throw InputError(a.profile, std::string("does not read as a profile: ") + e.what());
  } catch (const std::invalid_argument& e) {
    throw InputError(a.profile, e.what());
  }
  const std::string out = a.out.empty() ? a.profile : a.out;
  write_file_atomically(out, profile.dump(2) + "\n");
  std::printf("refitted the GEMM model of %s -> %s\n", a.profile.c_str(), out.c_str());
  print_gemm_fit(profile);
  return 0;
}

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
    for (const auto& path : a.workloads)
      calibration::add_gemm_shapes(workloads::lower(workloads::load_workload_file(path)), options.shapes);
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
    print_gemm_fit(profile);
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
          "  profile: link %.3g GB/s (the fastest kind's bus bandwidth); per kind the step cost and the cost per byte "
          "beyond the link's (collective_costs); collective_step %.3g us (median) for other kinds\n",
          f["link_GBps"].get<double>(), f["collective_step_us"].get<double>());
    }
    if (f.contains("messages"))
      std::printf("  messages between rank pairs: alpha %.3g us, %.3g GB/s (rms error %.1f %%)\n",
                  f["messages"]["alpha_us"].get<double>(), f["messages"]["GBps"].get<double>(),
                  100 * f["messages"]["rms_relative_error"].get<double>());
    if (f.contains("compute_slowdown_communicating"))
      std::printf("  GEMMs run %.3g %% slower while a collective is in flight (polls and copies on the same core)\n",
                  100 * f["compute_slowdown_communicating"].get<double>());
    if (!f["gemm_shapes"].empty())
      std::printf("  %zu GEMM shapes of the workloads timed one by one\n", f["gemm_shapes"].size());
    if (f.contains("overlapped_step_extra_us"))
      std::printf("  a collective step costs %.3g us more while its rank computes (polled between GEMM slices)\n",
                  f["overlapped_step_extra_us"].get<double>());
  }
  MPI_Finalize();
  return 0;
}

}  // namespace

Action add_calibrate_command(CLI::App& app) {
  auto a = std::make_shared<CalibrateArgs>();
  CLI::App* cmd = app.add_subcommand(
      "calibrate",
      "Measure a machine through an executor backend and fit its profile (micro, under mpirun); compare predicted with "
      "measured times (compare, suite)");
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
  m->add_option("--workload,-w", a->workloads,
                "also time every GEMM shape of this workload one by one (repeatable); simulate uses these times for "
                "exactly these shapes");

  auto r = std::make_shared<RefitArgs>();
  CLI::App* refit_cmd = cmd->add_subcommand(
      "refit",
      "Fit the GEMM model again to the GEMMs a profile recorded (after a model change, or on another machine than the "
      "one measured); rewrites the profile's fit.gemm, fit.peak_tflops and GEMM fit errors; no MPI");
  refit_cmd->add_option("profile", r->profile, "profile JSON written by calibrate micro")->required();
  refit_cmd->add_option("--out,-o", r->out, "write here instead of rewriting the profile");

  auto c = std::make_shared<CompareArgs>();
  CLI::App* compare = cmd->add_subcommand(
      "compare",
      "Execute a workload (through mpirun) and simulate it with a fitted profile; report predicted versus measured per "
      "iteration and per op class (Markdown, CSV, bars and the two timelines); run without mpirun");
  compare->add_option("--workload,-w", c->job.workload, "workload JSON file")->required();
  compare->add_option("--profile,-p", c->job.profile, "profile fitted by calibrate micro on the same rank count")
      ->required();
  compare->add_option("--machine,-m", c->launch.machine, "machine the ranks run on")->capture_default_str();
  compare->add_option("--backend", c->launch.backend, "cpu or cuda")->capture_default_str();
  compare->add_option("--ranks,-n", c->job.ranks, "MPI ranks (default: the workload's)")->check(CLI::Range(1, 4096));
  compare->add_option("--iterations", c->job.iterations, "iterations measured")
      ->check(CLI::Range(1, 10000))
      ->capture_default_str();
  compare->add_option("--warmup", c->job.warmup, "iterations run first and not measured")
      ->check(CLI::Range(0, 10000))
      ->capture_default_str();
  compare->add_option("--out,-o", c->job.out, "report folder (default: calibration-WORKLOAD)");
  compare->add_option("--mpirun", c->launcher, "the launcher, before -np")->capture_default_str();

  auto s = std::make_shared<SuiteArgs>();
  CLI::App* suite = cmd->add_subcommand(
      "suite",
      "Fit a profile for every rank count of a suite (micro-benchmarks), then compare every workload of the suite; "
      "writes README.md with the table, CSVs and plots; exit status 1 when a prediction is outside the suite's "
      "tolerance; run without mpirun");
  suite->add_option("suite", s->file, "suite JSON file, e.g. calibration/suites/localhost.json")->required();
  suite->add_option("--out,-o", s->out, "report folder (default: results/calibration/SUITE_NAME)");
  suite->add_option("--mpirun", s->launcher, "the launcher, before -np")->capture_default_str();
  return [a, c, compare, s, suite, r, refit_cmd]() -> int {
    if (refit_cmd->parsed()) return refit(*r);
    if (compare->parsed()) return calibrate_compare(*c);
    if (suite->parsed()) return calibrate_suite(*s);
    return micro(*a);
  };
}

}  // namespace paratwin::cli

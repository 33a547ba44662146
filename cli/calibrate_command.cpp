// `mpirun -np R paratwin calibrate micro`: measure a machine through an executor backend and fit its
// profile; `calibrate refit`: fit a profile's recorded GEMMs again.
#include <mpi.h>

#include <cstdio>
#include <iostream>
#include <memory>
#include <stdexcept>

#include "calibration/gemm_fit.hpp"
#include "calibration/micro.hpp"
#include "calibration/micro_report.hpp"
#include "calibration/suite_run.hpp"
#include "cli/commands.hpp"
#include "common/input_error.hpp"
#include "common/json_file.hpp"
#include "common/text_file.hpp"
#include "exec/backend.hpp"
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

struct RefitArgs {
  std::string profile;
  std::string out;
};

int refit(const RefitArgs& a) {
  const std::string out = a.out.empty() ? a.profile : a.out;
  check_output_file(out, "--out");
  auto profile = parse_json<InputError>(read_text_file<InputError>(a.profile), a.profile);
  calibration::refit_profile_gemms(profile, a.profile);
  write_file_atomically(out, profile.dump(2) + "\n");
  std::printf("refitted the GEMM model of %s -> %s\n%s", a.profile.c_str(), out.c_str(),
              calibration::gemm_fit_text(profile).c_str());
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
    check_output_file(a.out, "--out");
    if (size > 2 && size % 2 != 0)
      throw InputError("mpirun -np",
                       "= " + std::to_string(size) + ": use 1, 2 or an even number of ranks (groups of 2 and of all)");
    const auto machine = topology::resolve_machine(a.machine);
    std::unique_ptr<exec::Backend> backend = exec::make_backend(a.backend);  // InputError naming --backend
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
    // Bad input; a bug; otherwise the measurement failed on this host (no GPU, its plugin, MPI).
    if (dynamic_cast<const InputError*>(&e)) return kExitBadInput;
    return dynamic_cast<const std::logic_error*>(&e) ? 1 : kExitJobFailed;
  }
  if (rank == 0)
    std::printf("calibrated %s with the %s backend on %d ranks -> %s\n%s", a.machine.c_str(), a.backend.c_str(), size,
                a.out.c_str(), calibration::micro_fit_text(profile).c_str());
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

  auto c = std::make_shared<calibration::CompareRun>();
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
  compare->add_option("--timeout", c->launch.timeout, "exec's --timeout: seconds a rank may go without progress")
      ->check(CLI::NonNegativeNumber);

  auto s = std::make_shared<calibration::SuiteRun>();
  CLI::App* suite = cmd->add_subcommand(
      "suite",
      "Fit a profile for every rank count of a suite (micro-benchmarks), then compare every workload of the suite; "
      "writes README.md with the table, CSVs and plots; exit status 3 when a prediction is outside the suite's "
      "tolerance; run without mpirun");
  suite->add_option("suite", s->file, "suite JSON file, e.g. calibration/suites/localhost.json")->required();
  suite->add_option("--out,-o", s->out, "report folder (default: results/calibration/SUITE_NAME)");
  suite->add_option("--mpirun", s->launcher, "the launcher, before -np")->capture_default_str();
  suite
      ->add_option("--timeout", s->timeout,
                   "exec's --timeout for every workload: seconds a rank may go without progress")
      ->check(CLI::NonNegativeNumber);
  return [a, c, compare, s, suite, r, refit_cmd]() -> int {
    if (refit_cmd->parsed()) return refit(*r);
    if (compare->parsed()) {
      calibration::compare_workload(*c);
      return 0;
    }
    if (suite->parsed()) return calibration::run_suite(*s) == 0 ? 0 : kExitSomeFailed;
    return micro(*a);
  };
}

}  // namespace paratwin::cli

// `mpirun -np R paratwin exec`: run a workload's Program for real, rank by rank, and measure it.
#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <utility>
#include <vector>

#include "cli/commands.hpp"
#include "common/input_error.hpp"
#include "common/text_file.hpp"
#include "exec/backend.hpp"
#include "exec/executor.hpp"
#include "exec/fault_injection.hpp"
#include "exec/verify.hpp"
#include "exec/watchdog.hpp"
#include "predict/measured_run.hpp"
#include "predict/predict.hpp"
#include "predict/run_summary.hpp"
#include "workloads/embedded_examples.hpp"
#include "workloads/lower.hpp"
#include "workloads/trace.hpp"

namespace paratwin::cli {

namespace {

struct ExecArgs {
  std::string workload;
  std::string backend = "cpu";
  std::string machine = "localhost";
  int iterations = 3;
  int warmup = 1;
  std::string trace;
  std::string json;
  std::string fail_at;
  double timeout = -1;  // seconds without progress; negative: exec::default_timeout
  bool verify = false;
  // Options given with --verify that verify mode cannot honour (the option and why), refused as bad input.
  std::vector<std::pair<std::string, std::string>> not_with_verify;
};

// What the rank measured, in the form rank 0 merges.
predict::RankMeasurement measurement(const exec::RankResult& r) {
  const auto& b = r.breakdown;
  predict::RankMeasurement m{r.iterations, {b.compute, b.exposed_comm, b.bubble, b.other_idle}, r.events, {}};
  for (const auto& [key, c] : r.collectives)
    m.collectives.push_back(
        {static_cast<workloads::OpKind>(key.first), key.second, "", c.count, c.bytes, c.seconds, c.exposed});
  return m;
}

std::vector<double> gather(const std::vector<double>& mine, int rank, int size, std::vector<int>& offsets) {
  const int count = static_cast<int>(mine.size());
  std::vector<int> counts(static_cast<size_t>(size));
  MPI_Gather(&count, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
  offsets.assign(static_cast<size_t>(size) + 1, 0);
  for (int r = 0; r < size; ++r)
    offsets[static_cast<size_t>(r) + 1] = offsets[static_cast<size_t>(r)] + counts[static_cast<size_t>(r)];
  std::vector<double> all(rank == 0 ? static_cast<size_t>(offsets.back()) : 0);
  MPI_Gatherv(mine.data(), count, MPI_DOUBLE, all.data(), counts.data(), offsets.data(), MPI_DOUBLE, 0, MPI_COMM_WORLD);
  return all;
}

// A failure only some ranks see (a bad file is seen by all; a workspace too large by one): every rank
// learns the worst exit status, so that none waits in a collective the others never reach.
int agreed(int code) {
  int worst = 0;
  MPI_Allreduce(&code, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  return worst;
}

// One line on stderr in one write: the ranks of a job share the terminal, and cerr writes each piece
// at once.
void error_line(const std::string& message) {
  std::cerr << ("paratwin: error: " + message + "\n") << std::flush;
}

// One failing rank ends the whole job: the others wait in collectives it will never join.
[[noreturn]] void abort_job(const std::string& message) {
  error_line(message + "; aborting the job");
  MPI_Abort(MPI_COMM_WORLD, kExitJobFailed);
  std::_Exit(kExitJobFailed);  // MPI_Abort does not return; this says so to the compiler
}

// The analytical model's iteration time for the workload on the machine, from which the watchdog's
// default timeout is derived; 0 when it cannot predict it (a machine with too few devices, say).
double predicted_iteration(const workloads::Workload& w, const topology::Machine& machine) {
  try {
    predict::PointOptions options;
    options.model = predict::Model::analytical;
    return predict::predict(w, machine, options).iteration_seconds;
  } catch (const std::exception&) {
    return 0;
  }
}

// --verify: real data through the distributed layers against a single-rank reference.
int verify(const workloads::Workload& w, const workloads::Program& program, int rank) {
  std::vector<exec::Check> checks;
  std::string problem;
  try {
    checks = exec::verify(w, program, rank);
  } catch (const std::exception& e) {
    abort_job("rank " + std::to_string(rank) + ": " + e.what());
  }
  bool ok = !checks.empty();
  for (const auto& c : checks) ok = ok && c.ok();
  if (rank == 0) {
    std::printf("%s: verify mode, %lld ranks, real data against a single-rank reference (relative tolerance %.0e)\n",
                w.name.c_str(), static_cast<long long>(program.grid.size()), exec::kVerifyTolerance);
    if (checks.empty())
      std::printf(
          "  nothing to verify: verify mode covers Megatron 1-D and AxoNN 3-D tensor parallelism and pipelines\n");
    for (const auto& c : checks) {
      if (!c.problem.empty())
        std::printf("  FAIL  %-62s the Program does not describe it: %s\n", c.what.c_str(), c.problem.c_str());
      else
        std::printf("  %s  %-62s max relative error %.2e\n", c.ok() ? "ok  " : "FAIL", c.what.c_str(), c.error);
    }
  }
  return ok ? 0 : kExitSomeFailed;
}

int run(const ExecArgs& a) {
  int provided = 0;
  MPI_Init_thread(nullptr, nullptr, MPI_THREAD_MULTIPLE, &provided);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  std::unique_ptr<exec::Watchdog> watchdog;
  const auto finish = [&](int code) {
    if (watchdog) watchdog->step("MPI_Finalize at the end of the job");
    MPI_Finalize();
    watchdog.reset();
    return code;
  };
  const auto fail = [&](const std::string& message, int code) {
    if (rank == 0 || code == 1) error_line((rank == 0 ? "" : "rank " + std::to_string(rank) + ": ") + message);
    return finish(code);
  };
  if (provided < MPI_THREAD_MULTIPLE)
    return fail("the MPI library does not provide MPI_THREAD_MULTIPLE, which the CPU backend's progress thread needs",
                kExitJobFailed);

  // Input: every rank reads the same files, so every rank fails the same way; rank 0 says why.
  workloads::Workload w;
  workloads::Program program;
  topology::Machine machine;
  exec::ExecOptions options;
  try {
    // Verify mode runs each check once on the CPU and prints its checks: an option it would ignore is
    // refused rather than silently dropped.
    if (!a.not_with_verify.empty())
      throw InputError(a.not_with_verify.front().first,
                       "cannot be used with --verify: " + a.not_with_verify.front().second);
    // Every rank checks, so that all stop together; a typo in an output path must not cost the run.
    if (!a.trace.empty()) check_output_file(a.trace, "--trace");
    if (!a.json.empty()) check_output_file(a.json, "--json");
    w = workloads::load_workload_or_default(a.workload);
    machine = topology::resolve_machine(a.machine);
    workloads::LowerOptions lo;
    lo.devices_per_node = machine.devices_per_node();
    program = workloads::lower(w, lo);
    // Verify mode's single-rank references are a GPT-3 layer's: multi-head attention, a GeLU MLP.
    if (a.verify && w.parallel.tensor.mode == workloads::TensorMode::megatron && w.parallel.tensor.size > 1) {
      if (w.model.kv_heads > 0 && w.model.kv_heads != w.model.heads)
        throw InputError(a.workload + ": model.kv_heads",
                         "grouped-query attention cannot be checked by --verify (its reference is multi-head)");
      if (w.model.mlp != workloads::Mlp::gelu)
        throw InputError(a.workload + ": model.mlp",
                         "a gated MLP cannot be checked by --verify (its reference is a GeLU MLP)");
    }
    if (!a.fail_at.empty()) {
      const exec::Fault fault = exec::parse_fault(a.fail_at, program);
      options.fail_rank = fault.rank;
      options.fail_op = fault.op;
    }
  } catch (const std::exception& e) {
    return fail(e.what(), kExitBadInput);
  }
  if (program.grid.size() != size)
    return fail(w.name + " has " + std::to_string(program.grid.size()) + " ranks but " + std::to_string(size) +
                    " MPI processes were started (run it with mpirun -np " + std::to_string(program.grid.size()) + ")",
                kExitBadInput);
  options.iterations = a.iterations;
  options.warmup = a.warmup;

  // From here on every rank waits on the others: a rank that stops making progress ends the job.
  const double timeout = a.timeout >= 0 ? a.timeout : exec::default_timeout(predicted_iteration(w, machine));
  watchdog = std::make_unique<exec::Watchdog>(program, rank, timeout, [](const std::string& message) {
    error_line(message + "; ending the job");
    MPI_Abort(MPI_COMM_WORLD, kExitJobFailed);
  });
  if (a.verify) {
    watchdog->step("verify mode");
    return finish(verify(w, program, rank));
  }

  // A backend name this build lacks is bad input; one that cannot run here (its plugin does not load,
  // no GPU, too little memory) fails the job. Both are agreed on before the next collective step.
  watchdog->step("loading the " + a.backend + " backend");
  std::unique_ptr<exec::Backend> backend;
  std::string problem;
  int mine = 0;  // this rank's exit status; every rank ends with the worst
  try {
    backend = exec::make_backend(a.backend);
  } catch (const std::invalid_argument& e) {
    problem = e.what();
    mine = kExitBadInput;
  } catch (const std::exception& e) {
    problem = e.what();
    mine = kExitJobFailed;
  }
  int code = agreed(mine);
  if (code == 0) {
    watchdog->step("prepare (the " + a.backend + " backend's communicators and buffers)");
    try {
      backend->prepare(program, rank);
    } catch (const std::exception& e) {
      problem = e.what();
      mine = kExitJobFailed;
    }
    code = agreed(mine);
  }
  if (code != 0) {
    // A name this build lacks is the same on every rank: rank 0 says it once.
    if (mine == kExitJobFailed)
      error_line((problem.rfind("rank ", 0) == 0 ? "" : "rank " + std::to_string(rank) + ": ") + problem);
    else if (mine == kExitBadInput && rank == 0)
      error_line(problem);
    backend.reset();
    return finish(code);
  }

  exec::RankResult result;
  try {
    result = exec::run_rank(program, rank, *backend, options, watchdog.get());
  } catch (const std::exception& e) {
    abort_job(e.what());
  }

  watchdog->step("gathering the measurements on rank 0");
  std::vector<int> offsets;
  const auto all = gather(predict::pack(measurement(result)), rank, size, offsets);
  backend.reset();
  if (rank == 0) {
    const auto run = predict::merge_ranks(w, program, machine,
                                          predict::unpack(all, offsets, static_cast<size_t>(options.iterations)));
    try {
      std::vector<std::pair<std::string, std::string>> outputs;
      if (!a.json.empty()) outputs.emplace_back(a.json, predict::to_json(run, a.backend, a.warmup).dump(2) + "\n");
      // Through the trace's streamed output, as simulate's: a name ending in .gz is gzip-compressed.
      std::unique_ptr<StreamedOutput> trace;
      if (!a.trace.empty()) {
        trace = std::make_unique<StreamedOutput>(a.trace, "--trace");
        trace->stream() << workloads::chrome_trace(program, run.events);
      }
      std::vector<StreamedOutput*> streamed;
      if (trace) streamed.push_back(trace.get());
      write_files_atomically(outputs, streamed);
    } catch (const std::exception& e) {
      error_line(e.what());
      return finish(kExitBadInput);
    }
    std::printf("%s", predict::measured_heading(run, w.name, size, a.backend, a.warmup, machine.name).c_str());
    predict::print_summary(w, run.summary, "ran anyway");
  }
  return finish(0);
}

}  // namespace

Action add_exec_command(CLI::App& app) {
  auto a = std::make_shared<ExecArgs>();
  CLI::App* cmd = app.add_subcommand(
      "exec",
      "Run a workload for real, rank by rank (launch with mpirun -np RANKS), and measure every op: the same Program "
      "and the same summary and trace formats as simulate");
  cmd->add_option("--workload,-w", a->workload, "workload JSON file (default: the built-in example)");
  CLI::Option* backend =
      cmd->add_option("--backend", a->backend, "cpu (MPI + BLAS) or cuda (cuBLAS + NCCL, when built with CUDA)")
          ->capture_default_str();
  cmd->add_option("--machine,-m", a->machine,
                  "machine the ranks run on, for % of peak and the memory verdict (built-in name or file)")
      ->capture_default_str();
  CLI::Option* iterations = cmd->add_option("--iterations", a->iterations, "iterations measured")
                                ->check(CLI::Range(1, 1000000))
                                ->capture_default_str();
  CLI::Option* warmup = cmd->add_option("--warmup", a->warmup, "iterations run first and not measured")
                            ->check(CLI::Range(0, 1000000))
                            ->capture_default_str();
  CLI::Option* trace = cmd->add_option(
      "--trace", a->trace,
      "write the last iteration's Chrome trace (every op of every rank) here; gzip-compressed when the name ends in "
      ".gz");
  CLI::Option* json = cmd->add_option("--json", a->json, "write the summary as JSON to this file");
  CLI::Option* fail_at =
      cmd->add_option("--fail-at", a->fail_at,
                      "RANK:OP_NAME: make that rank fail when it starts that op in the first measured iteration (tests "
                      "the job-wide abort: exit status 4)");
  cmd->add_option("--timeout", a->timeout,
                  "seconds a rank may go without progress (no op of its role ends, no step passes) before the job is "
                  "ended with exit status 4, naming the rank and the ops it waits on; 0: never (default: 20 x the "
                  "analytical model's iteration time on --machine, at least 60 s; 600 s when it cannot predict it)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_flag(
      "--verify", a->verify,
      "instead of timing: run the distributed layers (1-D MLP, 3-D FC layers, pipeline stages) with real data "
      "and compare them with a single-rank reference, each check once on the CPU backend; exit status 3 when one "
      "differs (--iterations, --warmup, --json, --trace, --fail-at and another --backend than cpu are refused with "
      "it)");
  return [a, backend, iterations, warmup, trace, json, fail_at]() -> int {
    if (a->verify) {
      const std::pair<CLI::Option*, const char*> refused[] = {
          {backend, "verify mode runs on the CPU backend only"},
          {iterations, "verify mode runs each check once and times nothing"},
          {warmup, "verify mode runs each check once and times nothing"},
          {json, "verify mode writes no summary (its checks are printed)"},
          {trace, "verify mode records no trace"},
          {fail_at, "verify mode injects no faults"}};
      for (const auto& [option, why] : refused)
        if (option->count() > 0 && !(option == backend && a->backend == "cpu"))
          a->not_with_verify.emplace_back(option->get_name(), why);
    }
    return run(*a);
  };
}

}  // namespace paratwin::cli

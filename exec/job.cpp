#include "exec/job.hpp"

#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <stdexcept>

#include "common/exit_codes.hpp"
#include "common/input_error.hpp"
#include "common/text_file.hpp"
#include "exec/backend.hpp"
#include "exec/executor.hpp"
#include "exec/fault_injection.hpp"
#include "exec/verify.hpp"
#include "exec/watchdog.hpp"
#include "predict/measured_run.hpp"
#include "predict/predict.hpp"
#include "reports/run_summary.hpp"
#include "reports/summary_text.hpp"
#include "reports/trace.hpp"
#include "workloads/embedded_examples.hpp"
#include "workloads/lower.hpp"

namespace paratwin::exec {

namespace {

// What the rank measured, in the form rank 0 merges.
predict::RankMeasurement measurement(const RankResult& r) {
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
int verify_job(const workloads::Workload& w, const workloads::Program& program, int rank) {
  std::vector<Check> checks;
  try {
    checks = verify(w, program, rank);
  } catch (const std::exception& e) {
    abort_job("rank " + std::to_string(rank) + ": " + e.what());
  }
  bool ok = !checks.empty();
  for (const auto& c : checks) ok = ok && c.ok();
  if (rank == 0) {
    std::printf("%s: verify mode, %lld ranks, real data against a single-rank reference (relative tolerance %.0e)\n",
                w.name.c_str(), static_cast<long long>(program.grid.size()), kVerifyTolerance);
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

// What every rank reads: the same files, so every rank fails the same way.
struct Inputs {
  workloads::Workload w;
  workloads::Program program;
  topology::Machine machine;
  ExecOptions options;
};

// Verify mode's single-rank references are a GPT-3 layer's: multi-head attention, a GeLU MLP.
void check_verifiable(const JobOptions& a, const workloads::Workload& w) {
  if (!a.verify || w.parallel.tensor.mode != workloads::TensorMode::megatron || w.parallel.tensor.size <= 1) return;
  if (w.model.kv_heads > 0 && w.model.kv_heads != w.model.heads)
    throw InputError(a.workload + ": model.kv_heads",
                     "grouped-query attention cannot be checked by --verify (its reference is multi-head)");
  if (w.model.mlp != workloads::Mlp::gelu)
    throw InputError(a.workload + ": model.mlp",
                     "a gated MLP cannot be checked by --verify (its reference is a GeLU MLP)");
}

// Throws InputError naming the option or file at fault.
Inputs read_inputs(const JobOptions& a) {
  Inputs in;
  // Verify mode runs each check once on the CPU and prints its checks: an option it would ignore is
  // refused rather than silently dropped.
  if (!a.not_with_verify.empty())
    throw InputError(a.not_with_verify.front().first,
                     "cannot be used with --verify: " + a.not_with_verify.front().second);
  // Every rank checks, so that all stop together; a typo in an output path must not cost the run.
  if (!a.trace.empty()) check_output_file(a.trace, "--trace");
  if (!a.json.empty()) check_output_file(a.json, "--json");
  in.w = workloads::load_workload_or_default(a.workload);
  in.machine = topology::resolve_machine(a.machine);
  workloads::LowerOptions lo;
  lo.devices_per_node = in.machine.devices_per_node();
  in.program = workloads::lower(in.w, lo);
  check_verifiable(a, in.w);
  if (!a.fail_at.empty()) {
    const Fault fault = parse_fault(a.fail_at, in.program);
    in.options.fail_rank = fault.rank;
    in.options.fail_op = fault.op;
  }
  in.options.iterations = a.iterations;
  in.options.warmup = a.warmup;
  return in;
}

// This rank in MPI, and how it ends: MPI finalised under the watchdog's eye.
class MpiRank {
 public:
  MpiRank() {
    MPI_Init_thread(nullptr, nullptr, MPI_THREAD_MULTIPLE, &provided_);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
  }
  int rank() const { return rank_; }
  int size() const { return size_; }
  bool multithreaded() const { return provided_ >= MPI_THREAD_MULTIPLE; }

  // From here on every rank waits on the others: a rank that stops making progress ends the job.
  Watchdog& start_watchdog(const workloads::Program& program, double timeout) {
    watchdog_ = std::make_unique<Watchdog>(program, rank_, timeout, [](const std::string& message) {
      error_line(message + "; ending the job");
      MPI_Abort(MPI_COMM_WORLD, kExitJobFailed);
    });
    return *watchdog_;
  }
  Watchdog* watchdog() { return watchdog_.get(); }

  int finish(int code) {
    if (watchdog_) watchdog_->step("MPI_Finalize at the end of the job");
    MPI_Finalize();
    watchdog_.reset();
    return code;
  }
  // Rank 0 says why (every rank sees the same bad input); an internal error on any rank is said there.
  int fail(const std::string& message, int code) {
    if (rank_ == 0 || code == 1) error_line((rank_ == 0 ? "" : "rank " + std::to_string(rank_) + ": ") + message);
    return finish(code);
  }

 private:
  int provided_ = 0, rank_ = 0, size_ = 1;
  std::unique_ptr<Watchdog> watchdog_;
};

// A backend name this build lacks is bad input; one that cannot run here (its plugin does not load,
// no GPU, too little memory) fails the job. Both are agreed on before the next collective step: the
// worst exit status of every rank, 0 with `backend` prepared.
int open_backend(const JobOptions& a, const workloads::Program& program, int rank, Watchdog& watchdog,
                 std::unique_ptr<Backend>& backend) {
  watchdog.step("loading the " + a.backend + " backend");
  std::string problem;
  int mine = 0;  // this rank's exit status; every rank ends with the worst
  try {
    backend = make_backend(a.backend);
  } catch (const InputError& e) {
    problem = e.what();
    mine = kExitBadInput;
  } catch (const std::exception& e) {
    problem = e.what();
    mine = kExitJobFailed;
  }
  int code = agreed(mine);
  if (code == 0) {
    watchdog.step("prepare (the " + a.backend + " backend's communicators and buffers)");
    try {
      backend->prepare(program, rank);
    } catch (const std::exception& e) {
      problem = e.what();
      mine = kExitJobFailed;
    }
    code = agreed(mine);
  }
  if (code == 0) return 0;
  // A name this build lacks is the same on every rank: rank 0 says it once.
  if (mine == kExitJobFailed)
    error_line((problem.rfind("rank ", 0) == 0 ? "" : "rank " + std::to_string(rank) + ": ") + problem);
  else if (mine == kExitBadInput && rank == 0)
    error_line(problem);
  backend.reset();
  return code;
}

// Rank 0: --json and --trace written (through the trace's streamed output, as simulate's: a name ending
// in .gz is gzip-compressed), then the summary printed. Returns the exit status.
int report_run(const JobOptions& a, const Inputs& in, const predict::MeasuredRun& run, int size) {
  try {
    std::vector<std::pair<std::string, std::string>> outputs;
    if (!a.json.empty()) outputs.emplace_back(a.json, predict::to_json(run, a.backend, a.warmup).dump(2) + "\n");
    std::unique_ptr<StreamedOutput> trace;
    if (!a.trace.empty()) {
      trace = std::make_unique<StreamedOutput>(a.trace, "--trace");
      trace->stream() << reports::chrome_trace(in.program, run.events);
    }
    std::vector<StreamedOutput*> streamed;
    if (trace) streamed.push_back(trace.get());
    write_files_atomically(outputs, streamed);
  } catch (const std::exception& e) {
    error_line(e.what());
    return kExitBadInput;
  }
  std::printf("%s", predict::measured_heading(run, in.w.name, size, a.backend, a.warmup, in.machine.name).c_str());
  std::printf("%s", reports::summary_text(in.w, run.summary, "ran anyway").c_str());
  return 0;
}

// The measured iterations on this rank, then every rank's measurements gathered on rank 0, which
// reports them. Returns the exit status.
int measure(const JobOptions& a, const Inputs& in, MpiRank& mpi, std::unique_ptr<Backend> backend) {
  RankResult result;
  try {
    result = run_rank(in.program, mpi.rank(), *backend, in.options, mpi.watchdog());
  } catch (const std::exception& e) {
    abort_job(e.what());
  }
  mpi.watchdog()->step("gathering the measurements on rank 0");
  std::vector<int> offsets;
  const auto all = gather(predict::pack(measurement(result)), mpi.rank(), mpi.size(), offsets);
  backend.reset();
  if (mpi.rank() != 0) return 0;
  const auto run = predict::merge_ranks(in.w, in.program, in.machine,
                                        predict::unpack(all, offsets, static_cast<size_t>(in.options.iterations)));
  return report_run(a, in, run, mpi.size());
}

}  // namespace

int run_job(const JobOptions& a) {
  MpiRank mpi;
  if (!mpi.multithreaded())
    return mpi.fail(
        "the MPI library does not provide MPI_THREAD_MULTIPLE, which the CPU backend's progress thread needs",
        kExitJobFailed);
  Inputs in;
  try {
    in = read_inputs(a);
  } catch (const std::exception& e) {
    return mpi.fail(e.what(), kExitBadInput);
  }
  const int64_t ranks = in.program.grid.size();
  if (ranks != mpi.size())
    return mpi.fail(in.w.name + " has " + std::to_string(ranks) + " ranks but " + std::to_string(mpi.size()) +
                        " MPI processes were started (run it with mpirun -np " + std::to_string(ranks) + ")",
                    kExitBadInput);
  const double timeout = a.timeout >= 0 ? a.timeout : default_timeout(predicted_iteration(in.w, in.machine));
  Watchdog& watchdog = mpi.start_watchdog(in.program, timeout);
  if (a.verify) {
    watchdog.step("verify mode");
    return mpi.finish(verify_job(in.w, in.program, mpi.rank()));
  }
  std::unique_ptr<Backend> backend;
  if (const int code = open_backend(a, in.program, mpi.rank(), watchdog, backend); code != 0) return mpi.finish(code);
  return mpi.finish(measure(a, in, mpi, std::move(backend)));
}

}  // namespace paratwin::exec

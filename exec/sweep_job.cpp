#include "exec/sweep_job.hpp"

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <thread>

#include "common/exit_codes.hpp"
#include "common/input_error.hpp"
#include "common/run_files.hpp"
#include "common/text_file.hpp"
#include "exec/sweep_liveness.hpp"
#include "exec/sweep_mpi.hpp"
#include "predict/sweep_journal.hpp"
#include "predict/sweep_outputs.hpp"
#include "predict/sweep_point.hpp"
#include "predict/sweep_run.hpp"
#include "predict/sweep_spec.hpp"
#include "topology/machine.hpp"

namespace paratwin::exec {

using predict::SweepJournal;
using predict::SweepPoint;
using predict::SweepSpec;

namespace {

// Fault injection for the resume test: PARATWIN_SWEEP_ABORT_AFTER=K kills the sweep (SIGKILL, no
// cleanup at all) right after the K-th point of this run is in the journal.
int abort_after() {
  const char* value = std::getenv("PARATWIN_SWEEP_ABORT_AFTER");
  return value != nullptr ? std::atoi(value) : 0;
}

int default_jobs(const SweepComm& comm) {
  const int cores = static_cast<int>(std::thread::hardware_concurrency());
  return std::max(1, cores / std::max(1, comm.local_size()));
}

// How points run: --jobs at once, --point-timeout, and a line on stderr as each starts.
predict::SweepRunOptions run_options(const SweepJob& a, const SweepSpec& spec, const std::vector<SweepPoint>& points,
                                     int jobs) {
  predict::SweepRunOptions o;
  o.jobs = jobs;
  o.point_timeout = a.point_timeout;
  if (!a.no_progress)
    o.started = [&spec, &points, timeout = a.point_timeout](size_t index) {
      const auto& p = points[index];
      std::fprintf(stderr, "paratwin sweep: %s\n",
                   predict::sweep_start_line(index + 1, points.size(), spec, p,
                                             timeout < 0 ? predict::default_point_timeout(spec, p) : timeout)
                       .c_str());
    };
  return o;
}

int run_worker(const SweepJob& a, const SweepSpec& spec, const std::vector<SweepPoint>& points, const SweepComm& comm,
               int jobs) {
  const auto mine = predict::share_of(comm.broadcast({}), comm.rank(), comm.size());
  size_t sent = 0;
  RankLiveness liveness(comm, RankLiveness::silence_limit(a.point_timeout), kExitJobFailed);
  predict::run_sweep_points(
      spec, points, mine, run_options(a, spec, points, jobs),
      [&](size_t index, nlohmann::json row, int) {
        const nlohmann::json message = {{"index", index}, {"rank", comm.rank()}, {"row", std::move(row)}};
        comm.send_to_root(message.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
        ++sent;
      },
      [&] {
        liveness.tick();
        comm.rows_sent();
        return false;
      },
      [&] { return sent == mine.size(); });
  // Rank 0 may still wait on others' rows: finish when it says so, watching it meanwhile.
  while (!comm.ended()) {
    liveness.tick();
    comm.rows_sent();
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return 0;
}

// The files the sweep writes into its folder must not be its spec or a file the spec names.
void check_sweep_files(const SweepJob& a, const SweepSpec& spec, const std::filesystem::path& dir) {
  RunFiles files;
  files.input("--spec", a.spec);
  for (size_t i = 0; i < spec.workload_files.size(); ++i)
    files.input("workloads[" + std::to_string(i) + "] of --spec " + a.spec, spec.workload_files[i]);
  for (size_t i = 0; i < spec.machine_refs.size(); ++i)
    files.input("machines[" + std::to_string(i) + "] of --spec " + a.spec,
                topology::machine_file(spec.machine_refs[i]));
  const std::string out = a.out.empty() ? "--out (default)" : "--out";
  for (const std::string name : {"journal.jsonl", "sweep.csv", "sweep.json", "plots.gp", "plots.log"})
    files.output(out, (dir / name).string());
  if (a.plots != "none")
    for (const std::string name : {"scaling.", "breakdown."}) files.output(out, (dir / (name + a.plots)).string());
  files.check();
}

int run_root(const SweepJob& a, const SweepSpec& spec, const std::vector<SweepPoint>& points, const SweepComm& comm,
             int jobs) {
  const std::filesystem::path dir = a.out.empty() ? "sweep-" + spec.name : a.out;
  check_sweep_files(a, spec, dir);
  prepare_output_folder(dir.string(), "--out");
  SweepJournal journal((dir / "journal.jsonl").string(), a.restart);
  if (journal.dropped_lines() > 0)
    std::fprintf(stderr, "paratwin sweep: warning: dropped %d unreadable journal line(s) (a write cut by a crash)\n",
                 journal.dropped_lines());

  auto resume = predict::resume_sweep(spec, points, journal, a.retry_failed);
  for (const auto& warning : resume.warnings) std::fprintf(stderr, "paratwin sweep: warning: %s\n", warning.c_str());
  auto& rows = resume.rows;
  const auto& todo = resume.todo;
  const size_t skipped = resume.skipped;
  comm.broadcast(todo);

  const auto start = std::chrono::steady_clock::now();
  const int kill_after = abort_after();
  size_t computed = 0;
  const auto done = [&](size_t index, nlohmann::json row, int rank) {
    journal.record(points[index].key, row, rank);
    ++computed;
    if (kill_after > 0 && computed == static_cast<size_t>(kill_after)) {
      std::fprintf(stderr, "paratwin sweep: PARATWIN_SWEEP_ABORT_AFTER=%d: killed after %zu journaled points\n",
                   kill_after, computed);
      std::raise(SIGKILL);
    }
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const double eta = elapsed / static_cast<double>(computed) * static_cast<double>(todo.size() - computed);
    if (!a.no_progress)
      std::fprintf(
          stderr, "paratwin sweep: %s\n",
          predict::sweep_progress(skipped + computed, points.size(), points[index], row, elapsed, eta).c_str());
    rows[index] = std::move(row);
  };
  std::function<bool()> poll;
  RankLiveness liveness(comm, RankLiveness::silence_limit(a.point_timeout), kExitJobFailed);
  if (comm.distributed())
    poll = [&] {
      liveness.tick();
      const auto text = comm.poll_from_workers();
      if (!text) return false;
      const auto message = nlohmann::json::parse(*text);
      done(message.at("index").get<size_t>(), message.at("row"), message.at("rank").get<int>());
      return true;
    };
  predict::run_sweep_points(spec, points, predict::share_of(todo, comm.rank(), comm.size()),
                            run_options(a, spec, points, jobs), done, poll, [&] { return computed == todo.size(); });
  comm.send_end();

  write_file_atomically((dir / "sweep.csv").string(), predict::sweep_csv(rows));
  write_file_atomically((dir / "sweep.json").string(), predict::sweep_json(spec, rows).dump(2) + "\n");
  const std::string plots = a.plots == "none" ? "no plots (--plots none)"
                                              : predict::write_sweep_plots(spec, points, rows, dir.string(), a.plots);
  size_t failed = 0;
  for (const auto& row : rows) failed += row["status"] == "ok" ? 0 : 1;
  std::printf("paratwin sweep %s: %zu points: %zu skipped (finished earlier, in %s), %zu computed, %zu failed\n",
              spec.name.c_str(), points.size(), skipped, (dir / "journal.jsonl").c_str(), computed, failed);
  std::printf("  wrote %s and %s; %s\n", (dir / "sweep.csv").c_str(), (dir / "sweep.json").c_str(), plots.c_str());
  return failed > 0 ? kExitSomeFailed : 0;
}

}  // namespace

int run_sweep_job(const SweepJob& a) {
  SweepComm comm;
  SweepSpec spec;
  std::vector<SweepPoint> points;
  try {
    spec = predict::load_sweep_spec(a.spec);
    points = enumerate_points(spec);
  } catch (const InputError&) {
    if (comm.rank() != 0) return kExitBadInput;  // every rank read the same spec; rank 0 reports it
    throw;
  }
  const int jobs = a.jobs > 0 ? a.jobs : default_jobs(comm);
  if (!comm.distributed()) return run_root(a, spec, points, comm, jobs);
  // Across ranks a failure on one must end all: the others would wait for it forever.
  try {
    return comm.rank() == 0 ? run_root(a, spec, points, comm, jobs) : run_worker(a, spec, points, comm, jobs);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "paratwin: error (MPI rank %d): %s\n", comm.rank(), e.what());
    comm.abort(dynamic_cast<const InputError*>(&e) ? kExitBadInput : 1);
  }
}

}  // namespace paratwin::exec

// `paratwin sweep --spec FILE`: a grid of workloads × machines × GPU counts × configurations × models,
// evaluated in child processes (--jobs at once) and across MPI ranks when launched by mpirun, journaled
// point by point so that an interrupted sweep resumes, and written as CSV, JSON and plots.
#include <memory>

#include "cli/commands.hpp"
#include "exec/sweep_job.hpp"

namespace paratwin::cli {

Action add_sweep_command(CLI::App& app) {
  auto a = std::make_shared<exec::SweepJob>();
  CLI::App* cmd = app.add_subcommand(
      "sweep",
      "Evaluate a grid of workloads x machines x GPU counts x configurations (weak or strong scaling) and write CSV, "
      "JSON and plots; resumes an interrupted sweep; under mpirun every rank takes a share of the points. Exit "
      "status: 0 every point succeeded, 3 some points failed (their rows say why; a point past --point-timeout is "
      "one), 2 bad input, 4 under mpirun a rank stopped or stuck ended the job, 1 internal error");
  cmd->add_option("--spec,-s", a->spec, "sweep spec JSON (format: results/sweep/README.md)")->required();
  cmd->add_option("--out,-o", a->out, "output folder (default: sweep-NAME in the current folder)");
  cmd->add_option("--jobs,-j", a->jobs,
                  "points evaluated at once on this machine (default: cores / MPI ranks on this node)")
      ->check(CLI::Range(1, 4096));
  cmd->add_flag("--restart", a->restart, "forget the journal: recompute every point");
  cmd->add_flag("--retry-failed", a->retry_failed, "recompute the points the journal records as failed");
  cmd->add_option(
         "--point-timeout", a->point_timeout,
         "seconds a point may run before it is killed and reported failed (a stopped or stuck point "
         "would hold the sweep forever); 0: none (default: 600 s, and for simulated points per GPU 5 s more at "
         "exact fidelity, 2 s at fast, 0.2 s folded: about 3x SimGrid's cost)")
      ->check(CLI::Range(0.0, 1e9));
  cmd->add_flag("--no-progress", a->no_progress,
                "no progress on stderr (by default a line as each point starts, with its fidelity and timeout, "
                "and one as it finishes)");
  cmd->add_option("--plots", a->plots, "plot format: svg, png, or none")
      ->check(CLI::IsMember({"svg", "png", "none"}))
      ->capture_default_str();
  return [a]() -> int { return exec::run_sweep_job(*a); };
}

}  // namespace paratwin::cli

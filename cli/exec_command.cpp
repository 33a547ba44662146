// `mpirun -np R paratwin exec`: run a workload's Program for real, rank by rank, and measure it.
#include <memory>
#include <utility>

#include "cli/commands.hpp"
#include "exec/job.hpp"

namespace paratwin::cli {

Action add_exec_command(CLI::App& app) {
  auto a = std::make_shared<exec::JobOptions>();
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
    return exec::run_job(*a);
  };
}

}  // namespace paratwin::cli

// `paratwin compare A B`: two runs side by side. A and B are two machines (built-in names or machine
// files), two workloads, two communication libraries, or two saved summaries (`simulate --json`,
// `exec --json`); what they do not name (the workload, the machine) comes from the options. With
// `--machines DIR` the two runs are the built-in machine and DIR's edited copy of it: a what-if study.
#include <memory>

#include "cli/commands.hpp"
#include "predict/compare_run.hpp"
#include "topology/machine.hpp"

namespace paratwin::cli {

Action add_compare_command(CLI::App& app) {
  auto a = std::make_shared<predict::CompareRun>();
  CLI::App* cmd = app.add_subcommand(
      "compare",
      "Two runs side by side: A and B are two machines (names or machine files), two workload files, two "
      "libraries, or two saved summaries (simulate --json, exec --json). Prints every figure of both, their "
      "difference and change, and draws them with --plot");
  cmd->add_option("A", a->a, "the first run: machine, workload file, library or saved summary");
  cmd->add_option("B", a->b, "the second run, of the same kind as A");
  cmd->add_option("--workload,-w", a->workload,
                  "the workload of both runs when A and B are machines or libraries (default: the built-in example)");
  cmd->add_option("--machine,-m", a->machine,
                  "the machine of both runs when A and B are workloads or libraries, and the machine --machines "
                  "edits")
      ->capture_default_str();
  cmd->add_option("--library", a->library, "communication library of both runs (default: each machine profile's)")
      ->check(CLI::IsMember(topology::communication_libraries()));
  cmd->add_option("--fidelity", a->fidelity, "as in simulate")
      ->check(CLI::IsMember({"auto", "exact", "fast"}))
      ->capture_default_str();
  cmd->add_flag("--fold", a->fold, "as in simulate");
  cmd->add_option("--algorithm", a->algorithms,
                  "as in simulate, for both runs: KIND=ALGORITHM runs this collective kind with this algorithm "
                  "instead of each library's choice (repeatable); the table's algorithm rows show what each ran");
  cmd->add_option("--machines", a->machines,
                  "what-if: compare the built-in --machine with DIR/NAME.json, an edited copy of it (copy "
                  "topology/machines/NAME.json and change what the question asks); no A and B then");
  cmd->add_option("--plot", a->plot, "draw both runs' breakdowns and collectives into this .svg or .png file");
  cmd->add_option("--json", a->json, "write both summaries and the comparison rows as JSON to this file");
  return [a]() -> int {
    predict::run_compare(*a);
    return 0;
  };
}

}  // namespace paratwin::cli

// `paratwin simulate`: predict one training iteration of a workload on a machine with SimGrid.
#include <cstdio>
#include <exception>
#include <iostream>
#include <memory>
#include <optional>
#include <string>

#include "cli/commands.hpp"
#include "common/input_error.hpp"
#include "common/report_text.hpp"
#include "common/run_files.hpp"
#include "common/text_file.hpp"
#include "predict/closed_form.hpp"
#include "predict/fidelity.hpp"
#include "predict/predict.hpp"
#include "predict/progress_log.hpp"
#include "predict/simulation_text.hpp"
#include "reports/run_plot.hpp"
#include "reports/trace.hpp"
#include "topology/machine.hpp"
#include "workloads/embedded_examples.hpp"

namespace paratwin::cli {

namespace {

struct SimulateArgs {
  std::string workload;
  std::string machine = "frontier";
  int64_t nodes = 0;
  std::string fidelity = "auto";
  std::string library;
  std::string trace;
  std::string json;
  std::string plot;
  std::vector<std::string> trace_ranks;
  std::vector<std::string> algorithms;
  bool progress = false;
  bool no_progress = false;
  bool fold = false;
  std::string profile;
  double max_hours = 1;
};

// The ranks `--trace-ranks` names: each value a rank, a range A-B, or "all". A rank past the last one
// is left for predict() to refuse with the rest (it names the workload's ranks).
std::vector<int64_t> parse_trace_ranks(const std::vector<std::string>& values, int64_t ranks) {
  std::vector<int64_t> out;
  const auto number = [](const std::string& value, const std::string& text) {
    size_t used = 0;
    int64_t n = -1;
    try {
      n = std::stoll(text, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (text.empty() || used != text.size() || n < 0 || text.find_first_not_of("0123456789") != std::string::npos)
      throw InputError("--trace-ranks", "= " + value + " is neither a rank, a range of ranks A-B, nor all");
    return n;
  };
  for (const std::string& v : values) {
    if (v == "all") {
      for (int64_t r = 0; r < ranks; ++r) out.push_back(r);
      continue;
    }
    const size_t dash = v.find('-');
    if (dash == std::string::npos) {
      out.push_back(number(v, v));
      continue;
    }
    const int64_t first = number(v, v.substr(0, dash)), last = number(v, v.substr(dash + 1));
    if (last < first) throw InputError("--trace-ranks", "= " + v + " is an empty range");
    if (last >= ranks) {
      out.push_back(last);  // refused by predict(), naming the workload's ranks
      continue;
    }
    for (int64_t r = first; r <= last; ++r) out.push_back(r);
  }
  return out;
}

// Progress by default where a run takes long enough to look hung without it.
bool wants_progress(const SimulateArgs& a, int64_t ranks) {
  if (a.no_progress) return false;
  return a.progress || ranks > predict::kProgressAboveRanks;
}

int run_simulate(const SimulateArgs& a) {
  // Outputs are checked before the work: a typo in a path must not cost a simulation.
  if (!a.trace.empty()) check_output_file(a.trace, "--trace");
  if (!a.json.empty()) check_output_file(a.json, "--json");
  if (!a.plot.empty()) {
    reports::plot_format(a.plot, "--plot");
    check_output_file(a.plot, "--plot");
  }
  RunFiles()
      .input("--workload", a.workload)
      .input("--machine", topology::machine_file(a.machine))
      .input("--profile", a.profile)
      .output("--trace", a.trace)
      .output("--json", a.json)
      .output("--plot", a.plot)
      .check();
  const auto w = workloads::load_workload_or_default(a.workload);
  const auto choice = predict::choose_fidelity(w.total_ranks(), a.fidelity, a.fold);
  // First, before anything slow: what will be simulated and how to choose otherwise.
  std::fprintf(stderr, "paratwin simulate: %s\n", predict::describe(choice, w.total_ranks()).c_str());
  predict::PointOptions options;
  options.nodes = a.nodes;
  options.fidelity = a.fidelity;
  options.fidelity_choice = choice;  // made once, here, and recorded by predict
  options.library = a.library;
  options.profile = a.profile;
  options.algorithms = a.algorithms;
  options.trace_ranks = parse_trace_ranks(a.trace_ranks, w.total_ranks());
  // Streamed into a temporary file as the simulation runs; committed with --json below, or removed.
  std::unique_ptr<StreamedOutput> trace;
  if (!a.trace.empty()) trace = std::make_unique<StreamedOutput>(a.trace, "--trace");
  options.trace = trace ? &trace->stream() : nullptr;
  options.progress = wants_progress(a, w.total_ranks());
  options.fold = a.fold;
  options.max_seconds = a.max_hours * 3600;
  if (options.progress) options.step = predict::step_log();
  options.warn = predict::print_warning;
  const auto machine = predict::load_machine(a.machine, a.profile);
  const auto p = predict::predict(w, machine, options);
  // The analytical model on the same point, beside it: where the network simulation departs from the
  // closed form, and why. Not with --algorithm: the closed form runs the library's own choices.
  std::optional<predict::ClosedFormComparison> closed_form;
  if (a.algorithms.empty()) {
    predict::PointOptions closed_form_options;
    closed_form_options.model = predict::Model::analytical;
    closed_form_options.nodes = a.nodes;
    closed_form_options.library = a.library;
    closed_form_options.profile = a.profile;
    try {
      closed_form = predict::compare_with_closed_form(p, predict::predict(w, machine, closed_form_options));
    } catch (const std::exception& e) {
      // The simulation stands on its own: a point the closed form cannot price is reported, not fatal.
      predict::print_warning(std::string("no closed form beside the simulation: ") + e.what());
    }
  }
  std::vector<std::pair<std::string, std::string>> outputs;
  if (!a.json.empty()) {
    auto j = predict::to_json(p);
    if (closed_form) j["closed_form"] = predict::to_json(*closed_form);
    outputs.emplace_back(a.json, j.dump(2) + "\n");
  }
  if (!a.plot.empty())
    outputs.emplace_back(
        a.plot, reports::render_run_plot(w.name + " on " + p.summary->machine + ", " + std::to_string(w.total_ranks()) +
                                             " ranks: " + formatted(p.iteration_seconds, "%.4g") + " s per iteration",
                                         {{w.name, *p.summary}}, reports::plot_format(a.plot, "--plot")));
  std::vector<StreamedOutput*> streamed;
  if (trace) streamed.push_back(trace.get());
  write_files_atomically(outputs, streamed);
  std::printf("%s%s", predict::simulation_report_text(w, p).c_str(),
              closed_form ? predict::closed_form_text(*closed_form).c_str() : "");
  return 0;
}

}  // namespace

Action add_simulate_command(CLI::App& app) {
  auto a = std::make_shared<SimulateArgs>();
  CLI::App* cmd = app.add_subcommand("simulate", "Predict one training iteration of a workload on a machine (SimGrid)");
  cmd->add_option("--workload,-w", a->workload, "workload JSON file (default: the built-in example)");
  cmd->add_option("--machine,-m", a->machine, "built-in machine name or machine file")->capture_default_str();
  cmd->add_option("--nodes", a->nodes,
                  "use a slice of the machine of this many nodes (default: as many as the workload needs)")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 20));
  cmd->add_option("--fidelity", a->fidelity,
                  "exact: one phase per algorithm step; fast: aggregated phases; auto: by the rank count (exact up "
                  "to " +
                      std::to_string(predict::kAutoExactUpToRanks) + " ranks, fast up to " +
                      std::to_string(predict::kAutoFoldAboveRanks) + ", fast with --fold above)")
      ->check(CLI::IsMember({"auto", "exact", "fast"}))
      ->capture_default_str();
  cmd->add_option("--max-hours", a->max_hours,
                  "refuse (exit 2) a simulation estimated to take longer than this, naming the estimate and what to "
                  "use instead (0: no limit); one estimated to need more address space than the process may have "
                  "(ulimit -v) is refused whatever this says. The estimate is made before any actor starts")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  cmd->add_option("--profile", a->profile,
                  "apply a profile fitted by `paratwin calibrate micro` on this machine: GEMM curve and peak, "
                  "launch overhead, memory bandwidth, per-step collective cost and link bandwidth");
  cmd->add_option("--library", a->library,
                  "communication library: nccl, rccl (rings over all NICs, GPU reductions), cray-mpich (rings, "
                  "one NIC per node for all traffic, CPU reductions), mpi (rings, CPU reductions), pccl "
                  "(hierarchical: intra-node ring, inter-node recursive doubling/halving); default: the machine "
                  "profile's")
      ->check(CLI::IsMember(topology::communication_libraries()));
  cmd->add_option("--algorithm", a->algorithms,
                  "KIND=ALGORITHM: run this collective kind with this algorithm instead of the library's choice "
                  "(ring, recursive, tree, hierarchical, binomial_tree, pairwise, direct); repeatable, e.g. "
                  "--algorithm all_reduce=tree");
  cmd->add_option("--trace", a->trace, "write a Chrome-trace timeline (Perfetto) to this file");
  cmd->add_option("--trace-ranks", a->trace_ranks,
                  "ranks to trace: ranks, ranges A-B, or all (default: one pipeline column end to end, one rank "
                  "per pipeline stage of data replica 0 with tensor and expert coordinates 0, plus stage 0's "
                  "tensor group when it has at most " +
                      std::to_string(reports::kSmallTensorGroup) +
                      " ranks, else its lines along each tensor axis; folded, the actors standing for them, "
                      "the trace saying which ranks each stands for)")
      ->needs("--trace");
  cmd->add_option("--json", a->json, "write the results as JSON to this file");
  cmd->add_option("--plot", a->plot,
                  "draw the breakdown per pipeline stage and the collectives' total and exposed time into this .svg "
                  "or .png file (gnuplot)");
  auto* progress = cmd->add_flag(
      "--progress", a->progress,
      "report progress on stderr (the default above " + std::to_string(predict::kProgressAboveRanks) + " ranks)");
  cmd->add_flag("--no-progress", a->no_progress, "no progress on stderr, however large the run")->excludes(progress);
  cmd->add_flag("--fold", a->fold,
                "with --fidelity fast or auto (implies fast): one actor per node of a data-parallel replica, "
                "standing for that node in every replica (its phases carry all their ranks' transfers), and "
                "collectives inside a node timed analytically, where the program allows; the default above " +
                    std::to_string(predict::kAutoFoldAboveRanks) +
                    " ranks (within 0.4-1.5% of one actor per rank in our measurements, up to 2,048 ranks; see "
                    "sim/README.md)");
  return [a]() -> int { return run_simulate(*a); };
}

}  // namespace paratwin::cli

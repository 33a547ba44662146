// `paratwin compare A B`: two runs side by side. A and B are two machines (built-in names or machine
// files), two workloads, two communication libraries, or two saved summaries (`simulate --json`,
// `exec --json`); what they do not name (the workload, the machine) comes from the options. With
// `--machines DIR` the two runs are the built-in machine and DIR's edited copy of it: a what-if study.
#include <algorithm>
#include <cstdio>
#include <filesystem>

#include "cli/commands.hpp"
#include "common/input_error.hpp"
#include "common/json_file.hpp"
#include "common/path_name.hpp"
#include "common/run_files.hpp"
#include "common/text_file.hpp"
#include "predict/compare_sides.hpp"
#include "predict/predict.hpp"
#include "predict/run_comparison.hpp"
#include "predict/saved_summary.hpp"
#include "topology/machine.hpp"
#include "workloads/embedded_examples.hpp"
#include "workloads/workload.hpp"

namespace paratwin::cli {

namespace {

enum class Kind { machine, workload, library, summary };

const char* kind_name(Kind k) {
  switch (k) {
    case Kind::machine:
      return "a machine";
    case Kind::workload:
      return "a workload";
    case Kind::library:
      return "a library";
    case Kind::summary:
      return "a saved summary";
  }
  return "";
}

struct Operand {
  Kind kind = Kind::machine;
  std::string text;  // as given
  nlohmann::json document;
};

Operand classify(const std::string& text, const char* which) {
  std::error_code ec;
  if (std::filesystem::exists(text, ec)) {
    const auto j = parse_json<InputError>(read_text_file<InputError>(text), text);
    if (j.is_object() && j.contains("iteration_seconds") && j.contains("ranks_compute_exposed_bubble_other"))
      return {Kind::summary, text, j};
    if (j.is_object() && j.contains("model") && j.contains("training")) return {Kind::workload, text, j};
    return {Kind::machine, text, {}};  // the machine reader says what is wrong with it, if anything
  }
  const auto& libraries = topology::communication_libraries();
  if (std::find(libraries.begin(), libraries.end(), text) != libraries.end()) return {Kind::library, text, {}};
  for (const auto& name : topology::builtin_machine_names())
    if (name == text) return {Kind::machine, text, {}};
  auto listed = [](const std::vector<std::string>& names) {
    std::string out;
    for (const auto& name : names) out += (out.empty() ? "" : ", ") + name;
    return out;
  };
  throw InputError(which, "\"" + text + "\" is neither a file (a workload, machine or saved summary), a library (" +
                              listed(libraries) + ") nor a built-in machine (" +
                              listed(topology::builtin_machine_names()) + ")");
}

struct CompareArgs {
  std::string a, b;
  std::string workload, machine = "frontier", library, fidelity = "auto", machines, plot, json;
  std::vector<std::string> algorithms;
  bool fold = false;
};

// A label for each side: the names, or the file names where the names are the same.
std::pair<std::string, std::string> labels(const std::string& a, const std::string& b, const std::string& file_a,
                                           const std::string& file_b) {
  if (a != b) return {a, b};
  auto where = [](const std::string& name, const std::string& file) {
    std::error_code ec;
    return name + " (" + (std::filesystem::exists(file, ec) ? file : std::string("built-in")) + ")";
  };
  return {where(a, file_a), where(b, file_b)};
}

}  // namespace

Action add_compare_command(CLI::App& app) {
  auto a = std::make_shared<CompareArgs>();
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
    if (!a->plot.empty()) {
      predict::plot_format(a->plot, "--plot");
      check_output_file(a->plot, "--plot");
    }
    if (!a->json.empty()) check_output_file(a->json, "--json");
    std::string first = a->a, second = a->b;
    if (!a->machines.empty()) {
      if (!first.empty())
        throw InputError("--machines", "compares the built-in --machine with its edited copy: give no A or B");
      if (!is_path_name(a->machine))
        throw InputError("--machine", "= \"" + a->machine + "\" names the file of --machines DIR: " + kPathNameRule);
      const auto edited = std::filesystem::path(a->machines) / (a->machine + ".json");
      std::error_code ec;
      if (!std::filesystem::is_regular_file(edited, ec))
        throw InputError("--machines", edited.string() + " does not exist: put an edited copy of " + a->machine +
                                           " there (or name another machine with --machine)");
      first = a->machine;
      second = edited.string();
    }
    if (first.empty() || second.empty())
      throw InputError("compare", "give two runs to compare (A and B), or --machines DIR");
    RunFiles()
        .input(a->machines.empty() ? "A" : "--machine", first)
        .input(a->machines.empty() ? "B" : "--machines", second)
        .input("--workload", a->workload)
        .input("--machine", topology::machine_file(a->machine))
        .output("--json", a->json)
        .output("--plot", a->plot)
        .check();
    const Operand oa = classify(first, "A"), ob = classify(second, "B");
    if (oa.kind != ob.kind)
      throw InputError("compare", "A (" + first + ") is " + kind_name(oa.kind) + " but B (" + second + ") is " +
                                      kind_name(ob.kind) + ": compare two of the same kind");

    predict::LabelledRun ra, rb;
    std::vector<std::string> notes;
    if (oa.kind == Kind::summary) {
      if (!a->algorithms.empty())
        throw InputError("--algorithm", "saved summaries are compared as they ran: simulate them again with it");
      const auto l = labels(std::filesystem::path(first).stem().string(), std::filesystem::path(second).stem().string(),
                            first, second);
      ra = {l.first, predict::read_saved_summary(oa.document, first)};
      rb = {l.second, predict::read_saved_summary(ob.document, second)};
    } else {
      // Both runs are predicted, each in a child process of its own, both at once; both are checked
      // first, so that an input error on either side is reported before anything runs.
      auto side = [&](const Operand& o, const char* name) {
        // A workload operand was read and parsed by classify(): its document is used, not the file again.
        predict::CompareSide s{name,
                               o.text,
                               o.kind == Kind::workload ? workloads::parse_workload(o.document, o.text)
                                                        : workloads::load_workload_or_default(a->workload),
                               predict::load_machine(o.kind == Kind::machine ? o.text : a->machine),
                               {},
                               o.kind == Kind::machine};
        s.options.library = o.kind == Kind::library ? o.text : a->library;
        s.options.fidelity = a->fidelity;
        s.options.fold = a->fold;
        s.options.algorithms = a->algorithms;
        return s;
      };
      const auto sa = side(oa, "A"), sb = side(ob, "B");
      predict::check_sides(sa, sb);
      std::fprintf(stderr, "paratwin compare: simulating A (%s) and B (%s) ...\n", first.c_str(), second.c_str());
      const auto [pa, pb] = predict::predict_sides(sa, sb);
      for (const auto& w : pa.warnings) std::fprintf(stderr, "paratwin compare: warning: A: %s\n", w.c_str());
      for (const auto& w : pb.warnings) std::fprintf(stderr, "paratwin compare: warning: B: %s\n", w.c_str());
      std::pair<std::string, std::string> l;
      if (oa.kind == Kind::machine) l = labels(sa.machine.name, sb.machine.name, first, second);
      if (oa.kind == Kind::workload) l = labels(sa.workload.name, sb.workload.name, first, second);
      if (oa.kind == Kind::library) l = {pa.simulation->library, pb.simulation->library};
      ra = {l.first, *pa.summary};
      rb = {l.second, *pb.summary};
      for (const auto& n : {predict::library_note(sa, pa), predict::library_note(sb, pb)})
        if (!n.empty()) notes.push_back(n);
    }
    std::printf("%s", predict::comparison_table(ra, rb, notes).c_str());
    std::vector<std::pair<std::string, std::string>> outputs;
    // The labels may be file names, which need not be UTF-8: such bytes are written as U+FFFD.
    if (!a->json.empty())
      outputs.emplace_back(
          a->json,
          predict::comparison_json(ra, rb, notes).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
    if (!a->plot.empty())
      // The bars are named A and B, the title says which is which: full labels would squeeze the panels.
      outputs.emplace_back(a->plot, predict::render_run_plot("A: " + ra.first + "    B: " + rb.first,
                                                             {{"A", ra.second}, {"B", rb.second}},
                                                             predict::plot_format(a->plot, "--plot")));
    write_files_atomically(outputs);
    if (!a->plot.empty()) std::fprintf(stderr, "paratwin compare: plot %s\n", a->plot.c_str());
    return 0;
  };
}

}  // namespace paratwin::cli

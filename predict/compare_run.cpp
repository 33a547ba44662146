#include "predict/compare_run.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <utility>

#include "common/input_error.hpp"
#include "common/json_file.hpp"
#include "common/path_name.hpp"
#include "common/run_files.hpp"
#include "common/text_file.hpp"
#include "predict/compare_sides.hpp"
#include "predict/predict.hpp"
#include "predict/run_comparison.hpp"
#include "reports/run_plot.hpp"
#include "reports/saved_summary.hpp"
#include "topology/machine.hpp"
#include "workloads/embedded_examples.hpp"
#include "workloads/workload.hpp"

namespace paratwin::predict {

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
    // A run summary, as written since schema version 1 or before it (read_saved_summary reads both).
    const bool summary =
        j.is_object() && (j.contains("iteration_s") || j.contains("iteration_seconds")) &&
        (j.contains("ranks_compute_exposed_bubble_other_s") || j.contains("ranks_compute_exposed_bubble_other"));
    if (summary) return {Kind::summary, text, j};
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

// The two runs, A and B: as given, or with --machines the built-in --machine and its edited copy.
std::pair<std::string, std::string> operands(const CompareRun& a) {
  std::string first = a.a, second = a.b;
  if (!a.machines.empty()) {
    if (!first.empty())
      throw InputError("--machines", "compares the built-in --machine with its edited copy: give no A or B");
    if (!is_path_name(a.machine))
      throw InputError("--machine", "= \"" + a.machine + "\" names the file of --machines DIR: " + kPathNameRule);
    const auto edited = std::filesystem::path(a.machines) / (a.machine + ".json");
    std::error_code ec;
    if (!std::filesystem::is_regular_file(edited, ec))
      throw InputError("--machines", edited.string() + " does not exist: put an edited copy of " + a.machine +
                                         " there (or name another machine with --machine)");
    first = a.machine;
    second = edited.string();
  }
  if (first.empty() || second.empty())
    throw InputError("compare", "give two runs to compare (A and B), or --machines DIR");
  return {first, second};
}

// Two saved summaries, compared as they ran.
std::pair<reports::LabelledRun, reports::LabelledRun> saved_runs(const CompareRun& a, const Operand& oa,
                                                                 const Operand& ob) {
  if (!a.algorithms.empty())
    throw InputError("--algorithm", "saved summaries are compared as they ran: simulate them again with it");
  const auto l = labels(std::filesystem::path(oa.text).stem().string(), std::filesystem::path(ob.text).stem().string(),
                        oa.text, ob.text);
  return {{l.first, reports::read_saved_summary(oa.document, oa.text)},
          {l.second, reports::read_saved_summary(ob.document, ob.text)}};
}

// One side of a predicted comparison: what its operand names, the rest from the options.
CompareSide side(const CompareRun& a, const Operand& o, const char* name) {
  // A workload operand was read and parsed by classify(): its document is used, not the file again.
  CompareSide s{name,
                o.text,
                o.kind == Kind::workload ? workloads::parse_workload(o.document, o.text)
                                         : workloads::load_workload_or_default(a.workload),
                load_machine(o.kind == Kind::machine ? o.text : a.machine),
                {},
                o.kind == Kind::machine};
  s.options.library = o.kind == Kind::library ? o.text : a.library;
  s.options.fidelity = a.fidelity;
  s.options.fold = a.fold;
  s.options.algorithms = a.algorithms;
  return s;
}

// Both runs predicted, each in a child process of its own, both at once; both are checked first, so
// that an input error on either side is reported before anything runs. Notes on the library each chose
// go to `notes`.
std::pair<reports::LabelledRun, reports::LabelledRun> predicted_runs(const CompareRun& a, const Operand& oa,
                                                                     const Operand& ob,
                                                                     std::vector<std::string>& notes) {
  const auto sa = side(a, oa, "A"), sb = side(a, ob, "B");
  check_sides(sa, sb);
  std::fprintf(stderr, "paratwin compare: simulating A (%s) and B (%s) ...\n", oa.text.c_str(), ob.text.c_str());
  const auto [pa, pb] = predict_sides(sa, sb);
  for (const auto& w : pa.warnings) std::fprintf(stderr, "paratwin compare: warning: A: %s\n", w.c_str());
  for (const auto& w : pb.warnings) std::fprintf(stderr, "paratwin compare: warning: B: %s\n", w.c_str());
  std::pair<std::string, std::string> l;
  if (oa.kind == Kind::machine) l = labels(sa.machine.name, sb.machine.name, oa.text, ob.text);
  if (oa.kind == Kind::workload) l = labels(sa.workload.name, sb.workload.name, oa.text, ob.text);
  if (oa.kind == Kind::library) l = {pa.simulation->library, pb.simulation->library};
  for (const auto& n : {library_note(sa, pa), library_note(sb, pb)})
    if (!n.empty()) notes.push_back(n);
  return {{l.first, *pa.summary}, {l.second, *pb.summary}};
}

void write_outputs(const CompareRun& a, const reports::LabelledRun& ra, const reports::LabelledRun& rb,
                   const std::vector<std::string>& notes) {
  std::vector<std::pair<std::string, std::string>> outputs;
  // The labels may be file names, which need not be UTF-8: such bytes are written as U+FFFD.
  if (!a.json.empty())
    outputs.emplace_back(
        a.json, comparison_json(ra, rb, notes).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
  if (!a.plot.empty())
    // The bars are named A and B, the title says which is which: full labels would squeeze the panels.
    outputs.emplace_back(
        a.plot, reports::render_run_plot("A: " + ra.first + "    B: " + rb.first, {{"A", ra.second}, {"B", rb.second}},
                                         reports::plot_format(a.plot, "--plot")));
  write_files_atomically(outputs);
}

}  // namespace

void run_compare(const CompareRun& a) {
  if (!a.plot.empty()) {
    reports::plot_format(a.plot, "--plot");
    check_output_file(a.plot, "--plot");
  }
  if (!a.json.empty()) check_output_file(a.json, "--json");
  const auto [first, second] = operands(a);
  RunFiles()
      .input(a.machines.empty() ? "A" : "--machine", first)
      .input(a.machines.empty() ? "B" : "--machines", second)
      .input("--workload", a.workload)
      .input("--machine", topology::machine_file(a.machine))
      .output("--json", a.json)
      .output("--plot", a.plot)
      .check();
  const Operand oa = classify(first, "A"), ob = classify(second, "B");
  if (oa.kind != ob.kind)
    throw InputError("compare", "A (" + first + ") is " + kind_name(oa.kind) + " but B (" + second + ") is " +
                                    kind_name(ob.kind) + ": compare two of the same kind");
  std::vector<std::string> notes;
  const auto [ra, rb] = oa.kind == Kind::summary ? saved_runs(a, oa, ob) : predicted_runs(a, oa, ob, notes);
  std::printf("%s", comparison_table(ra, rb, notes).c_str());
  write_outputs(a, ra, rb, notes);
  if (!a.plot.empty()) std::fprintf(stderr, "paratwin compare: plot %s\n", a.plot.c_str());
}

}  // namespace paratwin::predict

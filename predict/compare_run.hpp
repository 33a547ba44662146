#pragma once
// `paratwin compare A B`: two runs side by side. A and B are two machines (built-in names or machine
// files), two workloads, two communication libraries, or two saved summaries (`simulate --json`,
// `exec --json`); what they do not name (the workload, the machine) comes from the options. With
// `--machines DIR` the two runs are the built-in machine and DIR's edited copy of it: a what-if study.
// The operands told apart, both runs predicted (compare_sides.hpp) or read, the table printed
// (run_comparison.hpp), the JSON document and the plot written.
#include <string>
#include <vector>

namespace paratwin::predict {

struct CompareRun {
  std::string a, b;
  std::string workload, machine = "frontier", library, fidelity = "auto", machines, plot, json;
  std::vector<std::string> algorithms;
  bool fold = false;
};

// Throws InputError naming the operand or option at fault.
void run_compare(const CompareRun& a);

}  // namespace paratwin::predict

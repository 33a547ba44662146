#pragma once
// Names that become part of a path (a suite's report folder, a sweep's output folder, a machine's file
// in a --machines folder) follow one rule, so that no name can climb out of the folder it is put in
// ("..") or reach into another ("a/b").
#include <string>

namespace paratwin {

// Letters, digits, '-', '_' and '.', but neither "." nor "..".
bool is_path_name(const std::string& name);

// The rule, as error messages state it: "use letters, digits, ...".
extern const char* const kPathNameRule;

}  // namespace paratwin

#pragma once
// How `paratwin simulate` and `search` tell the user about a long run as it goes: its steps and its
// warnings, on stderr (stdout holds the report).
#include <functional>
#include <string>

namespace paratwin::predict {

// "paratwin simulate: [12.3 s] routing 1024 nodes of frontier" on stderr, the seconds since the call.
std::function<void(const std::string&)> step_log();

// "paratwin: warning: ..." on stderr.
void print_warning(const std::string& what);

}  // namespace paratwin::predict

#include "exec/fault_injection.hpp"

#include <charconv>
#include <set>

#include "common/input_error.hpp"

namespace paratwin::exec {

namespace {

constexpr size_t kNamesListed = 8;

std::string op_names(const workloads::Role& role) {
  std::set<std::string> seen;
  std::string list;
  for (const auto& op : role.ops) {
    if (!seen.insert(op.name).second) continue;
    if (seen.size() > kNamesListed) return list + ", ...";
    list += (list.empty() ? "" : ", ") + std::string(op.name);
  }
  return list;
}

}  // namespace

Fault parse_fault(const std::string& text, const workloads::Program& program) {
  const auto bad = [&](const std::string& why) { return InputError("--fail-at", "\"" + text + "\": " + why); };
  const auto colon = text.find(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == text.size())
    throw bad("expected RANK:OP_NAME, e.g. 1:fc1.dgrad");
  Fault fault;
  fault.op = text.substr(colon + 1);
  const char* begin = text.data();
  const char* end = begin + colon;
  const auto [stop, error] = std::from_chars(begin, end, fault.rank);
  if (error != std::errc() || stop != end) throw bad("RANK = \"" + text.substr(0, colon) + "\" is not a rank number");
  const int64_t ranks = program.grid.size();
  if (fault.rank < 0 || fault.rank >= ranks)
    throw bad("rank " + std::to_string(fault.rank) + " does not exist: the workload has " + std::to_string(ranks) +
              " ranks, 0 to " + std::to_string(ranks - 1));
  const auto& role = program.roles[static_cast<size_t>(program.role_of(fault.rank))];
  for (const auto& op : role.ops)
    if (fault.op == op.name) return fault;
  throw bad("rank " + std::to_string(fault.rank) + " has no op named \"" + fault.op + "\" (its ops: " + op_names(role) +
            ")");
}

}  // namespace paratwin::exec

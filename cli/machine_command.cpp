// `paratwin machine list` and `paratwin machine show NAME|FILE [--nodes N]`.
#include <cstdio>

#include "cli/commands.hpp"
#include "topology/machine.hpp"
#include "topology/machine_text.hpp"

namespace paratwin::cli {

Action add_machine_command(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand("machine", "List the built-in machines or show one machine's description");
  cmd->require_subcommand(1);
  CLI::App* list = cmd->add_subcommand("list", "List the built-in machines");
  auto name = std::make_shared<std::string>();
  auto nodes = std::make_shared<int64_t>(0);
  CLI::App* show = cmd->add_subcommand("show", "Show a machine: devices, links, NICs, path bandwidths, network");
  show->add_option("machine", *name, "a built-in machine name or a machine file")->required();
  show->add_option("--nodes", *nodes, "take a slice of the machine of this many nodes")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 20));
  return [list, show, name, nodes]() -> int {
    if (list->parsed()) {
      std::printf("%s", topology::machine_list_text().c_str());
      return 0;
    }
    if (show->parsed()) {
      auto m = topology::resolve_machine(*name);
      if (*nodes > 0) m = m.slice(*nodes);
      std::printf("%s", topology::machine_text(m).c_str());
    }
    return 0;
  };
}

}  // namespace paratwin::cli

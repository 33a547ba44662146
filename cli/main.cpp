// paratwin: a digital twin of large-model training. Thin driver over the libraries.
#include "cli/commands.hpp"
#include "cli/exit_status.hpp"
#include "cli/given_values.hpp"

int main(int argc, char** argv) {
  using namespace paratwin;
  CLI::App app{
      "paratwin: a digital twin of large-model training on supercomputers.\n"
      "One workload description (JSON) is lowered to a per-rank Program that is simulated,\n"
      "executed and calibrated. Run `paratwin SUBCOMMAND --help` for each subcommand."};
  app.require_subcommand(1);
  app.set_version_flag("--version", "paratwin 0.1.0");
  cli::Action lower = cli::add_lower_command(app);
  cli::Action machine = cli::add_machine_command(app);
  cli::Action simulate = cli::add_simulate_command(app);
  cli::Action sweep = cli::add_sweep_command(app);
  cli::Action search = cli::add_search_command(app);
  cli::Action exec = cli::add_exec_command(app);
  cli::Action calibrate = cli::add_calibrate_command(app);
  cli::Action validate = cli::add_validate_command(app);
  cli::Action baseline = cli::add_baseline_command(app);
  cli::Action compare = cli::add_compare_command(app);
  cli::Action import_megatron = cli::add_import_command(app);
  // The exit-status table closes every help text, after a command's own footer.
  const auto with_exit_table = [](CLI::App* a) {
    const std::string own = a->get_footer();
    a->footer(own.empty() ? cli::kExitStatusHelp : own + "\n" + cli::kExitStatusHelp);
  };
  with_exit_table(&app);
  cli::refuse_empty_values(app);
  for (CLI::App* sub : app.get_subcommands({})) {
    with_exit_table(sub);
    for (CLI::App* nested : sub->get_subcommands({})) with_exit_table(nested);
  }
  try {
    app.parse(argc, argv);
    cli::check_given_values(app);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? 0 : cli::kExitBadInput;
  }
  try {
    if (app.got_subcommand("lower")) return lower();
    if (app.got_subcommand("machine")) return machine();
    if (app.got_subcommand("simulate")) return simulate();
    if (app.got_subcommand("sweep")) return sweep();
    if (app.got_subcommand("search")) return search();
    if (app.got_subcommand("exec")) return exec();
    if (app.got_subcommand("calibrate")) return calibrate();
    if (app.got_subcommand("validate")) return validate();
    if (app.got_subcommand("baseline")) return baseline();
    if (app.got_subcommand("compare")) return compare();
    if (app.got_subcommand("import")) return import_megatron();
  } catch (const std::exception& e) {
    return cli::report_error(e);
  }
  return cli::kExitInternal;
}

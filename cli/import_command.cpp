// `paratwin import megatron [options] -- COMMAND`: a workload file from a Megatron-LM pretrain_gpt.py
// command line (workloads/import_megatron.hpp does the translation).
#include <iostream>

#include "cli/commands.hpp"
#include "common/input_error.hpp"
#include "common/report_text.hpp"
#include "common/run_files.hpp"
#include "common/text_file.hpp"
#include "topology/machine.hpp"
#include "workloads/framework.hpp"
#include "workloads/import_megatron.hpp"

namespace paratwin::cli {

namespace {

struct ImportArgs {
  std::vector<std::string> words;
  std::string out;
  std::string machine;
  workloads::MegatronImportOptions options;
};

std::string understood_arguments() {
  std::string text =
      "Megatron-LM arguments it translates (all others: listed as not modelled, refused as inexpressible, or "
      "refused as unknown; see workloads/README.md):\n";
  for (const auto& [flags, meaning] : workloads::megatron_modelled_arguments())
    text += "  " + flags + "\n      → " + meaning + "\n";
  return text;
}

void print_list(const char* title, const std::vector<std::string>& items, const std::string& sep = ", ") {
  if (items.empty()) return;
  std::cerr << "  " << title << " (" << items.size() << "): ";
  for (size_t i = 0; i < items.size(); ++i) std::cerr << (i ? sep : "") << items[i];
  std::cerr << "\n";
}

}  // namespace

Action add_import_command(CLI::App& app) {
  auto a = std::make_shared<ImportArgs>();
  CLI::App* cmd = app.add_subcommand("import", "Write a workload file from another framework's training command");
  cmd->require_subcommand(1);
  CLI::App* megatron = cmd->add_subcommand(
      "megatron",
      "Write a workload file from a Megatron-LM pretrain_gpt.py command line, given after `--` (torchrun's "
      "--nproc_per_node and --nnodes, the script path and launcher words may come with it).\n"
      "Unknown arguments are an error (exit 2) that lists every one, unless --allow-unknown; arguments that "
      "change the performance but that the workload format cannot express (e.g. --swiglu, "
      "--group-query-attention, --context-parallel-size 2) are an error naming each, unless --approximate. "
      "Arguments with no effect on the cost model (learning rate, data, logging, checkpoint files, ...) are "
      "listed on stderr and in the workload's description.");
  megatron->add_option("--out,-o", a->out, "write the workload to this file (default: standard output)");
  megatron->add_option("--name", a->options.name, "the workload's name (default: megatron-gpt-LAYERSl-HIDDENh-WORLD)");
  megatron->add_option("--machine,-m", a->machine,
                       "built-in machine name or machine file: placement.devices_per_node from it");
  megatron
      ->add_option("--framework", a->options.framework,
                   "framework profile (workloads/frameworks/; default: megatron-core if the arguments use a flag it "
                   "added, such as --use-flash-attn or --overlap-grad-reduce, else megatron-lm-2022)")
      ->check(CLI::IsMember(workloads::builtin_framework_names()));
  megatron
      ->add_option("--world-size", a->options.world_size,
                   "GPUs in all (default: torchrun's --nproc_per_node × --nnodes from the command)")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 22));
  megatron
      ->add_option("--gpus-per-node", a->options.gpus_per_node,
                   "GPUs per node, where the command has no --nproc_per_node (e.g. srun with 8 tasks per node)")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 16));
  megatron
      ->add_option("--tokenizer-vocab-size", a->options.tokenizer_vocab_size,
                   "the tokenizer's vocabulary before padding, for tokenizers other than GPT2BPETokenizer")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 24));
  megatron->add_flag("--allow-unknown", a->options.allow_unknown,
                     "import despite unknown arguments, listing them as warnings");
  megatron->add_flag("--approximate", a->options.approximate,
                     "import despite inexpressible arguments, leaving them out and listing them");
  megatron->add_option("command", a->words, "the Megatron-LM command line, after `--`")->required();
  megatron->footer(understood_arguments());
  return [a]() -> int {
    if (!a->out.empty()) check_output_file(a->out, "--out");
    RunFiles().input("--machine", topology::machine_file(a->machine)).output("--out", a->out).check();
    // The name is the workload's own, written as given: it must be text JSON can hold.
    if (const size_t bad = invalid_utf8_at(a->options.name); bad != std::string::npos)
      throw InputError("--name", printed("is not UTF-8 text (byte 0x%02x at offset %zu): give the name in UTF-8",
                                         static_cast<unsigned char>(a->options.name[bad]), bad));
    if (!a->machine.empty()) {
      const auto machine = topology::resolve_machine(a->machine);
      a->options.devices_per_node = machine.devices_per_node();
      a->options.machine = machine.name;
    }
    workloads::MegatronImport result;
    try {
      result = workloads::import_megatron(a->words, a->options);
    } catch (const workloads::MegatronArgumentsError& e) {
      // One line each: a long command can have many.
      std::cerr << "paratwin import megatron: the workload was not written:\n";
      for (const auto& u : e.unknown()) std::cerr << "  unknown argument: " << u << "\n";
      for (const auto& c : e.inexpressible()) std::cerr << "  cannot be expressed: " << c << "\n";
      if (!e.unknown().empty()) std::cerr << "  (--allow-unknown imports without the unknown arguments)\n";
      if (!e.inexpressible().empty()) std::cerr << "  (--approximate imports without the inexpressible ones)\n";
      return kExitBadInput;
    }
    const auto& w = result.workload;
    if (a->out.empty())
      std::cout << result.text;
    else
      write_file_atomically(a->out, result.text);
    std::cerr << "paratwin import megatron: " << (a->out.empty() ? "wrote the workload" : "wrote " + a->out) << " \""
              << w.name << "\": " << w.total_ranks() << " ranks, " << workloads::configuration_label(w) << ", "
              << w.micro_batches() << " micro-batches per iteration, vocab " << w.model.vocab << "\n";
    print_list("assumed", result.assumptions, "; ");
    print_list("unknown, left out", result.unknown);
    print_list("not expressible, left out", result.dropped, "; ");
    print_list("not modelled (no effect on the cost model)", result.not_modelled);
    return 0;
  };
}

}  // namespace paratwin::cli

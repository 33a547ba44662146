// `paratwin import megatron [options] -- COMMAND`: a workload file from a Megatron-LM pretrain_gpt.py
// command line (workloads/import_megatron.hpp does the translation).
#include <iostream>

#include "cli/commands.hpp"
#include "common/input_error.hpp"
#include "common/json_file.hpp"
#include "common/report_text.hpp"
#include "common/run_files.hpp"
#include "common/text_file.hpp"
#include "importers/effects.hpp"
#include "importers/hf.hpp"
#include "importers/launch_script.hpp"
#include "importers/megatron.hpp"
#include "topology/machine.hpp"
#include "workloads/arithmetic.hpp"
#include "workloads/framework.hpp"

namespace paratwin::cli {

namespace {

struct ImportArgs {
  std::vector<std::string> words;
  std::string script;
  std::string out;
  std::string machine;
  importers::MegatronImportOptions options;
};

std::string understood_arguments() {
  std::string text =
      "Megatron-LM arguments it translates (all others: listed as not modelled, refused as inexpressible, or "
      "refused as unknown; see workloads/README.md):\n";
  for (const auto& [flags, meaning] : importers::megatron_modelled_arguments())
    text += "  " + flags + "\n      → " + meaning + "\n";
  return text;
}

void print_list(const char* title, const std::vector<std::string>& items, const std::string& sep = ", ") {
  if (items.empty()) return;
  std::cerr << "  " << title << " (" << items.size() << "): ";
  for (size_t i = 0; i < items.size(); ++i) std::cerr << (i ? sep : "") << items[i];
  std::cerr << "\n";
}

// What --approximate left out, one per line, each with what leaving it out changes.
void print_dropped(const std::vector<std::string>& items, const workloads::ModelConfig& m) {
  if (items.empty()) return;
  std::cerr << "  not expressible, left out (" << items.size() << "):\n";
  for (const auto& item : items)
    std::cerr << "    " << item << ": " << importers::approximation_effect(item, m) << "\n";
}

struct HfArgs {
  std::string config, workload, out;
  importers::HfImportOptions options;
  CLI::App* cmd = nullptr;
};

// `paratwin import hf CONFIG [--workload W]`: a Hugging Face config.json to the model section, alone or
// in place of a workload's.
std::pair<CLI::App*, Action> add_import_hf(CLI::App& import) {
  auto a = std::make_shared<HfArgs>();
  std::string names;
  for (const auto& n : importers::hf_architectures()) names += (names.empty() ? "" : ", ") + n;
  a->cmd = import.add_subcommand(
      "hf",
      "Write the model section from a Hugging Face config.json (" + names +
          "): alone ({\"model\": ...}), or in place of the model of the workload given with --workload, which "
          "keeps its batch, parallelism, stack and attention kernel. Features the workload format cannot express "
          "(DeepSeek-V3's multi-latent attention, Qwen2's q/k/v biases, sliding windows, ...) are an error listing "
          "each, unless --approximate.");
  a->cmd->add_option("config", a->config, "the config.json")->required();
  a->cmd->add_option("--workload,-w", a->workload, "a workload file whose model section is replaced");
  a->cmd->add_option("--out,-o", a->out, "write to this file (default: standard output)");
  a->cmd->add_option("--seq-len", a->options.seq_len, "the training sequence length (default: the workload's)")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 24));
  a->cmd->add_flag("--approximate", a->options.approximate,
                   "import despite inexpressible features, leaving them out and listing each");
  return {
      a->cmd, [a]() -> int {
        if (!a->out.empty()) check_output_file(a->out, "--out");
        RunFiles().input("config", a->config).input("--workload", a->workload).output("--out", a->out).check();
        const auto config =
            parse_json<workloads::WorkloadError>(read_text_file<workloads::WorkloadError>(a->config), a->config);
        nlohmann::ordered_json base;
        if (!a->workload.empty()) {
          base = nlohmann::ordered_json::parse(read_text_file<workloads::WorkloadError>(a->workload), nullptr, false);
          if (base.is_discarded() || !base.is_object() || !base.contains("model") || !base["model"].is_object())
            throw workloads::WorkloadError(a->workload, "is not a workload file (a JSON object with a model section)");
          workloads::parse_workload_text(base.dump(), a->workload);  // a valid workload to start from
          if (a->options.seq_len == 0) a->options.seq_len = base["model"].value("seq_len", int64_t{0});
        }
        const auto hf = importers::import_hf_config(config, a->config, a->options);
        std::string text;
        std::string summary;
        workloads::ModelConfig m;
        if (a->workload.empty()) {
          text = nlohmann::ordered_json{{"model", hf.model}}.dump(2) + "\n";
          // A model section alone: counted through a minimal workload around it.
          auto probe = hf.model;
          if (!probe.contains("seq_len")) probe["seq_len"] = 1;
          nlohmann::json doc = {{"name", "probe"},
                                {"model", probe},
                                {"training", {{"global_batch", 1}, {"micro_batch", 1}}},
                                {"parallelism", {{"data", {{"size", 1}}}}}};
          m = workloads::parse_workload(doc, a->config).model;
        } else {
          auto model = hf.model;
          // The attention kernel is the training stack's choice, not the model's: the workload's stays.
          if (base["model"].contains("attention") && !model.contains("attention"))
            model["attention"] = base["model"]["attention"];
          base["model"] = model;
          const std::string note = " Model from " + a->config + " (" + hf.architecture + ").";
          base["description"] = base.value("description", std::string()) + note;
          text = base.dump(2) + "\n";
          const auto w = workloads::parse_workload_text(text, a->out.empty() ? "the imported workload" : a->out);
          summary = ", " + workloads::configuration_label(w);
          m = w.model;
        }
        if (a->out.empty())
          std::cout << text;
        else
          write_file_atomically(a->out, text);
        std::cerr << "paratwin import hf: " << (a->out.empty() ? "wrote" : "wrote " + a->out) << " " << hf.architecture
                  << ": " << workloads::parameters_label(m) << summary << "\n";
        if (!hf.model.contains("seq_len"))
          std::cerr << "  no seq_len: give --seq-len, or --workload, for a model section a workload can take\n";
        print_dropped(hf.dropped, m);
        print_list("not modelled (no effect on the cost model)", hf.not_modelled);
        return 0;
      }};
}

// `paratwin import megatron`: the command line (or the one a launch script builds) imported, the
// workload written, what was assumed or left out listed on stderr.
int run_import_megatron(ImportArgs& a) {
  if (!a.out.empty()) check_output_file(a.out, "--out");
  RunFiles()
      .input("--machine", topology::machine_file(a.machine))
      .input("--script", a.script)
      .output("--out", a.out)
      .check();
  // The name is the workload's own, written as given: it must be text JSON can hold.
  if (const size_t bad = invalid_utf8_at(a.options.name); bad != std::string::npos)
    throw InputError("--name", printed("is not UTF-8 text (byte 0x%02x at offset %zu): give the name in UTF-8",
                                       static_cast<unsigned char>(a.options.name[bad]), bad));
  if (!a.machine.empty()) {
    const auto machine = topology::resolve_machine(a.machine);
    a.options.devices_per_node = machine.devices_per_node();
    a.options.machine = machine.name;
  }
  if (a.script.empty() && a.words.empty())
    throw InputError("command", "give the Megatron-LM command line after `--`, or a launch script with --script");
  std::vector<std::string> words = a.words;
  if (!a.script.empty()) {
    words = importers::training_command("--script", a.script, importers::record_launch("--script", a.script, a.words));
    std::cerr << "paratwin import megatron: " << a.script << " launches: " << words.front() << " ... ("
              << words.size() - 1 << " arguments)\n";
  }
  importers::MegatronImport result;
  try {
    result = importers::import_megatron(words, a.options);
  } catch (const importers::MegatronArgumentsError& e) {
    // One line each: a long command can have many.
    std::cerr << "paratwin import megatron: the workload was not written:\n";
    if (!e.error().empty()) std::cerr << "  error: " << e.error() << "\n";
    for (const auto& u : e.unknown()) std::cerr << "  unknown argument: " << u << "\n";
    for (const auto& c : e.inexpressible()) std::cerr << "  cannot be expressed: " << c << "\n";
    if (!e.unknown().empty()) std::cerr << "  (--allow-unknown imports without the unknown arguments)\n";
    if (!e.inexpressible().empty()) std::cerr << "  (--approximate imports without the inexpressible ones)\n";
    return kExitBadInput;
  }
  const auto& w = result.workload;
  if (a.out.empty())
    std::cout << result.text;
  else
    write_file_atomically(a.out, result.text);
  std::cerr << "paratwin import megatron: " << (a.out.empty() ? "wrote the workload" : "wrote " + a.out) << " \""
            << w.name << "\": " << w.total_ranks() << " ranks, " << workloads::configuration_label(w) << ", "
            << w.micro_batches() << " micro-batches per iteration, vocab " << w.model.vocab << "; "
            << workloads::parameters_label(w.model) << "\n";
  print_list("assumed", result.assumptions, "; ");
  print_list("unknown, left out", result.unknown);
  print_dropped(result.dropped, w.model);
  print_list("not modelled (no effect on the cost model)", result.not_modelled);
  return 0;
}

}  // namespace

Action add_import_command(CLI::App& app) {
  auto a = std::make_shared<ImportArgs>();
  CLI::App* cmd = app.add_subcommand("import", "Write a workload file from another framework's training command");
  cmd->require_subcommand(1);
  CLI::App* megatron = cmd->add_subcommand(
      "megatron",
      "Write a workload file from a Megatron-LM pretrain_gpt.py command line, given after `--` (torchrun's "
      "--nproc_per_node and --nnodes, the script path and launcher words may come with it), or from a launch "
      "script (--script train.sh): bash runs the script in an empty scratch folder with torchrun, python, uv, "
      "srun, nsys, ... replaced by a recorder that starts nothing, and the training command it would launch is "
      "imported. The script sees paratwin's environment: set what it reads from the launcher there (e.g. "
      "SLURM_NNODES=4 paratwin import megatron --script train.sh), or give --world-size.\n"
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
  megatron->add_option("--script", a->script,
                       "a bash launch script to import: the command it launches (arguments after `--` are the "
                       "script's own)");
  megatron->add_option("command", a->words,
                       "the Megatron-LM command line after `--`; with --script, the script's arguments");
  megatron->footer(understood_arguments());
  const auto hf_command = add_import_hf(*cmd);
  CLI::App* hf = hf_command.first;
  const Action run_hf = hf_command.second;
  return [a, hf, run_hf]() -> int { return hf->parsed() ? run_hf() : run_import_megatron(*a); };
}

}  // namespace paratwin::cli

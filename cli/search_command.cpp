// `paratwin search`: rank every configuration of N GPUs with the analytical model, then simulate the best.
#include <memory>
#include <string>

#include "cli/commands.hpp"
#include "predict/fidelity.hpp"
#include "predict/search_run.hpp"
#include "topology/machine.hpp"

namespace paratwin::cli {

Action add_search_command(CLI::App& app) {
  auto a = std::make_shared<predict::SearchRun>();
  CLI::App* cmd = app.add_subcommand(
      "search",
      "Rank every parallel configuration of a workload's model on N GPUs with the analytical model, drop those that "
      "do not fit in memory, and simulate the best few with SimGrid.\n"
      "Each configuration (the family's axes; with a pipeline also the micro-batch and the chunks v) is ranked by its "
      "fastest variant that fits in memory, over the settings that trade memory for time: recomputation (none, sel, "
      "full), ZeRO stage (zeroN), sequence parallelism (sp) and, without a pipeline, the micro-batch. Variants taken "
      "to be no faster than one that fits (more recomputation, a higher ZeRO stage among 1-3, a smaller micro-batch "
      "without a pipeline) or no smaller than one that does not fit are skipped unless --exhaustive. Labels: x, y, z "
      "AxoNN "
      "axes, t tensor, c context, p stages, e experts (ef: whole experts over t·e ranks), d data, mb micro-batch, v "
      "chunks, firstN/lastN an uneven split, +emb+loss the embedding and loss counted as layers.");
  cmd->add_option("--workload,-w", a->workload,
                  "base workload JSON (model, batch, training settings, optimisations; its own parallelism is "
                  "replaced; default: the built-in example)");
  cmd->add_option("--machine,-m", a->machine, "built-in machine name or machine file")->capture_default_str();
  cmd->add_option("--gpus,-n", a->gpus, "number of GPUs to configure")
      ->required()
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 22));
  cmd->add_option(
         "--family", a->family,
         "configuration families: 4d (AxoNN x·y·z·data), ptdp (Megatron tensor·context·pipeline·data), ted (MoE "
         "tensor·expert·data), all (those that apply to the model)")
      ->check(CLI::IsMember({"4d", "ptdp", "ted", "all"}))
      ->capture_default_str();
  cmd->add_option("--top", a->top, "configurations to print")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 20))
      ->capture_default_str();
  cmd->add_option("--simulate", a->simulate,
                  "simulate this many of the best with SimGrid (0: none) and re-rank them by their simulated "
                  "times")
      ->check(CLI::Range(int64_t{0}, int64_t{1} << 20))
      ->capture_default_str();
  cmd->add_option("--fidelity", a->fidelity,
                  "fidelity of those simulations: exact, fast, or auto (by the GPU count: exact up to 64, fast and "
                  "folded above, where "
                  "`paratwin simulate` folds above 512; --fidelity fast for one actor per rank)")
      ->check(CLI::IsMember({"auto", "exact", "fast"}))
      ->capture_default_str();
  cmd->add_flag("--fold", a->fold,
                "those simulations run the ranks of a node as one actor (with --fidelity fast or auto; see "
                "`paratwin simulate --help`)");
  cmd->add_option("--algorithm", a->algorithms,
                  "KIND=ALGORITHM for those simulations, as `paratwin simulate --algorithm` (repeatable; the "
                  "analytical ranking keeps the library's choices)");
  cmd->add_flag("--no-progress", a->no_progress,
                "no progress on stderr: neither the ranking's (a line every few seconds while it lasts) nor the "
                "engine's in those simulations (shown by default above " +
                    std::to_string(predict::kProgressAboveRanks) + " GPUs)");
  cmd->add_option("--library", a->library, "communication library (default: the machine profile's)")
      ->check(CLI::IsMember(topology::communication_libraries()));
  cmd->add_flag(
      "--placement-agnostic", a->placement_agnostic,
      "give every collective one NIC's bandwidth wherever its group sits (the baseline [singh2025dissertation] §5.1.2 "
      "improves on) instead of loading the machine's links with every group's rings");
  cmd->add_flag("--show-rejected", a->show_rejected, "list every configuration dropped, with the reason");
  cmd->add_option("--vary", a->vary,
                  "what to search beyond the family's axes, comma-separated: micro_batch (powers of two up to "
                  "max(8, the base's)), chunks (PTD-P with p > 1: interleaved with v chunks, p·v dividing the "
                  "layers), sp (sequence parallelism, Megatron t > 1), checkpointing (none, selective, full), zero "
                  "(ZeRO stage 0-3 with data parallelism; 4d up to 2), context (PTD-P context parallelism c where "
                  "the stack runs it and each rank keeps at least 4,096 tokens of the sequence), uneven (PTD-P "
                  "stages that do not divide the layers, split as Megatron-Core does), expert_folding (MoE: whole "
                  "experts over tensor × expert ranks beside TED's split ones), all or none; what is not varied "
                  "keeps the base's value")
      ->delimiter(',')
      ->capture_default_str();
  cmd->add_flag("--exhaustive", a->exhaustive,
                "estimate every recomputation / ZeRO / sequence-parallel / micro-batch variant of a configuration "
                "instead of skipping those taken to be no faster than one that fits or no smaller than one that "
                "does not");
  cmd->add_option("--json", a->json,
                  "write every ranked (with its whole workload), rejected and invalid configuration as JSON to this "
                  "file");
  auto* emit = cmd->add_option("--emit", a->emit,
                               "write the configurations of the table (the rows printed and simulated) as workload "
                               "files DIR/RANK-FAMILY-LABEL.json (e.g. 001-ptdp-t8-p16-d8-mb1-v3-sp-sel-zero1.json: "
                               "the table's rank, zero-padded to the digits of the number ranked, at least two) that "
                               "`paratwin simulate -w` and `paratwin exec -w` run as they are, and DIR/index.csv "
                               "listing them; a search that ranks nothing makes no folder")
                   ->type_name("DIR");
  cmd->add_flag("--emit-all", a->emit_all, "with --emit: every ranked configuration, not only the table's")
      ->needs(emit);
  return [a]() -> int { return predict::run_search(*a) ? 0 : kExitSomeFailed; };
}

}  // namespace paratwin::cli

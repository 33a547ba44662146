#include "workloads/pipeline_layers.hpp"

#include <string>

#include "workloads/error.hpp"

namespace paratwin::workloads {

namespace {

std::string n(int64_t v) {
  return std::to_string(v);
}

}  // namespace

// Megatron-Core's get_num_layers_to_build (megatron/core/transformer/transformer_block.py, main
// 2026-11): with --decoder-first/last-pipeline-num-layers the first (last) stage holds that many layers
// and the other stages split the rest evenly; otherwise the embedding and the loss, where counted in
// the split, are a layer each of the first (last) stage. A stage's layers split evenly over its
// model chunks; the counted embedding (loss) takes a layer's place in the first (last) chunk.
std::vector<int64_t> virtual_stage_starts(const Workload& w) {
  const auto& p = w.parallel.pipeline;
  const int64_t stages = p.stages, chunks = p.chunks, layers = w.model.layers;
  const bool uneven = p.first_stage_layers > 0 || p.last_stage_layers > 0;
  const bool counted = p.embedding_in_split || p.loss_in_split;
  if (uneven && counted)
    throw WorkloadError("parallelism.pipeline.embedding_in_split",
                        "and loss_in_split exclude first_stage_layers and last_stage_layers (as in Megatron-Core)");
  if ((uneven || counted) && stages < 2)
    throw WorkloadError(p.first_stage_layers > 0  ? "parallelism.pipeline.first_stage_layers"
                        : p.last_stage_layers > 0 ? "parallelism.pipeline.last_stage_layers"
                        : p.embedding_in_split    ? "parallelism.pipeline.embedding_in_split"
                                                  : "parallelism.pipeline.loss_in_split",
                        "needs parallelism.pipeline.stages > 1");
  std::vector<int64_t> per_stage(static_cast<size_t>(stages), 0);
  if (uneven) {
    int64_t rest = layers, left = stages;
    if (p.first_stage_layers > 0) rest -= p.first_stage_layers, --left;
    if (p.last_stage_layers > 0) rest -= p.last_stage_layers, --left;
    if (rest < 0 || (left == 0 && rest != 0) || (left > 0 && (rest == 0 || rest % left != 0)))
      throw WorkloadError("parallelism.pipeline.first_stage_layers",
                          "= " + n(p.first_stage_layers) + " and last_stage_layers = " + n(p.last_stage_layers) +
                              " leave " + n(rest) + " of the " + n(layers) + " layers (model.layers) for the " +
                              n(left) + " other stages: they must split evenly, at least one each");
    for (auto& s : per_stage) s = left > 0 ? rest / left : 0;
    if (p.first_stage_layers > 0) per_stage.front() = p.first_stage_layers;
    if (p.last_stage_layers > 0) per_stage.back() = p.last_stage_layers;
  } else {
    const int64_t slots = layers + (p.embedding_in_split ? 1 : 0) + (p.loss_in_split ? 1 : 0);
    if (slots % stages != 0)
      throw WorkloadError(counted ? "parallelism.pipeline.stages" : "model.layers",
                          "= " + n(counted ? stages : layers) + ": " + n(layers) + " layers" +
                              (p.embedding_in_split ? " + the embedding" : "") +
                              (p.loss_in_split ? " + the loss" : "") + " = " + n(slots) +
                              " are not divisible by parallelism.pipeline.stages" + (counted ? "" : " × chunks") + " " +
                              n(counted ? stages : stages * chunks));
    for (auto& s : per_stage) s = slots / stages;
  }
  for (int64_t s = 0; s < stages; ++s)
    if (per_stage[static_cast<size_t>(s)] % chunks != 0)
      throw WorkloadError("parallelism.pipeline.chunks",
                          "= " + n(chunks) + " does not divide the " + n(per_stage[static_cast<size_t>(s)]) +
                              " layers" + (counted ? " (embedding and loss counted)" : "") + " of stage " + n(s));
  std::vector<int64_t> starts{0};
  for (int64_t c = 0; c < chunks; ++c)
    for (int64_t s = 0; s < stages; ++s) {
      int64_t count = per_stage[static_cast<size_t>(s)] / chunks;
      if (p.embedding_in_split && c == 0 && s == 0) --count;
      if (p.loss_in_split && c == chunks - 1 && s == stages - 1) --count;
      if (count < 1)
        throw WorkloadError("parallelism.pipeline", "leaves model chunk " + n(c) + " of stage " + n(s) +
                                                        " without a transformer layer (not modelled)");
      starts.push_back(starts.back() + count);
    }
  return starts;
}

bool recomputes(const TrainingConfig& t, int64_t index_in_chunk) {
  return t.checkpointing == Checkpointing::full &&
         (t.recompute_num_layers == 0 || index_in_chunk < t.recompute_num_layers);
}

std::vector<bool> recomputed_layers(const Workload& w) {
  std::vector<bool> out(static_cast<size_t>(w.model.layers), false);
  if (w.training.checkpointing != Checkpointing::full) return out;
  const auto starts = virtual_stage_starts(w);
  // Virtual stages hold consecutive layers, their starts increasing with the virtual stage.
  for (size_t v = 0; v + 1 < starts.size(); ++v)
    for (int64_t l = starts[v]; l < starts[v + 1]; ++l)
      out[static_cast<size_t>(l)] = recomputes(w.training, l - starts[v]);
  return out;
}

}  // namespace paratwin::workloads

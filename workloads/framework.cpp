#include "workloads/framework.hpp"

#include <algorithm>
#include <array>
#include <nlohmann/json.hpp>

#include "common/json_file.hpp"
#include "common/json_reader.hpp"
#include "workloads/error.hpp"

namespace paratwin::workloads {

namespace {

struct Builtin {
  const char* name;
  const char* text;
};

const Builtin kBuiltins[] = {
#include "builtin_frameworks.inc"
};

const char* const kFormatDoc = "workloads/README.md";

// ElementwiseTraffic's keys and members, for the reader and to_json alike.
template <class Traffic>  // ElementwiseTraffic, const or not
auto traffic_fields(Traffic& x) {
  using Field = std::pair<const char*, decltype(&x.rmsnorm)>;
  return std::array<Field, 8>{Field{"rmsnorm", &x.rmsnorm},
                              {"rmsnorm_backward", &x.rmsnorm_backward},
                              {"rope", &x.rope},
                              {"rope_backward", &x.rope_backward},
                              {"gated_activation", &x.gated_activation},
                              {"gated_activation_backward", &x.gated_activation_backward},
                              {"loss", &x.loss},
                              {"loss_backward", &x.loss_backward}};
}

nlohmann::json traffic_json(const ElementwiseTraffic& x) {
  nlohmann::json out = nlohmann::json::object();
  for (const auto& [key, value] : traffic_fields(x)) out[key] = *value;
  return out;
}

// Reads the mechanism values of a profile file (each {"value": V, "source": "..."}) or of a
// workload's overrides (plain values, sourced "set in the workload") into `f`.
class MechanismReader {
 public:
  MechanismReader(Framework& f, bool profile) : f_(f), profile_(profile) {}

  template <class Get>
  void field(JsonReader& r, const std::string& key, const std::string& label, Get get) {
    if (!r.has(key)) return;
    std::string source = "set in the workload";
    if (profile_) {
      JsonReader v = r.object(key);
      get(v, std::string("value"));
      source = v.string("source");
      v.finish();
    } else {
      get(r, key);
    }
    const auto it =
        std::find_if(f_.sources.begin(), f_.sources.end(), [&](const Sourced& s) { return s.key == label; });
    if (it != f_.sources.end())
      it->source = source;
    else
      f_.sources.push_back({label, source});
  }

  void read(JsonReader& r) {
    auto efficiency = [&](const char* key, double& out) {
      field(r, key, key, [&](JsonReader& v, const std::string& k) { out = v.number(k, std::nullopt, 1e-3, 1.0); });
    };
    const bool kernel_set = r.has("kernel_efficiency");
    double kernel = f_.kernel_efficiency;
    if (profile_ && kernel_set && r.object("kernel_efficiency").has("same_as")) {
      // Another profile's value (a stack that runs the same kernels): {"same_as": NAME, "source": why}.
      JsonReader v = r.object("kernel_efficiency");
      const std::string other = v.string("same_as");
      kernel = builtin_framework(other).kernel_efficiency;
      f_.sources.push_back(
          {"kernel_efficiency", other + "'s value (" + std::to_string(kernel) + "): " + v.string("source")});
      v.finish();
    } else {
      efficiency("kernel_efficiency", kernel);
    }
    // A profile's classes not given follow its GEMMs' value (a profile that measured one number); a
    // workload's new value carries to the classes that followed the profile's.
    if (kernel_set && profile_) {
      f_.kernel_efficiency = f_.attention_efficiency = f_.elementwise_efficiency = f_.optimizer_efficiency = kernel;
    } else if (kernel_set) {
      f_.set_kernel_efficiency(kernel);
    }
    efficiency("attention_efficiency", f_.attention_efficiency);
    efficiency("elementwise_efficiency", f_.elementwise_efficiency);
    efficiency("optimizer_efficiency", f_.optimizer_efficiency);
    field(r, "optimizer_bytes_per_param", "optimizer_bytes_per_param", [&](JsonReader& v, const std::string& k) {
      f_.optimizer_bytes_per_param = v.number(k, std::nullopt, 0, 1e4);
    });
    field(r, "loss_logit_bytes", "loss_logit_bytes",
          [&](JsonReader& v, const std::string& k) { f_.loss_logit_bytes = v.number(k, std::nullopt, 0, 64); });
    field(r, "gradient_bucket_bytes", "gradient_bucket_bytes",
          [&](JsonReader& v, const std::string& k) { f_.gradient_bucket_bytes = v.number(k, std::nullopt, 0, 1e12); });
    field(r, "gradient_buckets_first_stage_only", "gradient_buckets_first_stage_only",
          [&](JsonReader& v, const std::string& k) { f_.gradient_buckets_first_stage_only = v.boolean(k); });
    if (r.has("sharding")) {
      JsonReader s = r.object("sharding");
      auto& m = f_.sharding;
      field(s, "gather_unit", "sharding.gather_unit", [&](JsonReader& v, const std::string& k) {
        m.gather_unit = v.choice(k, {"layer", "submodule"}) == "layer" ? GatherUnit::layer : GatherUnit::submodule;
      });
      field(s, "prefetch", "sharding.prefetch", [&](JsonReader& v, const std::string& k) {
        m.prefetch = static_cast<int>(v.integer(k, std::nullopt, -1, 64));
      });
      field(s, "reshard_after_forward", "sharding.reshard_after_forward",
            [&](JsonReader& v, const std::string& k) { m.reshard_after_forward = v.boolean(k); });
      field(s, "regather_after_recompute", "sharding.regather_after_recompute",
            [&](JsonReader& v, const std::string& k) { m.regather_after_recompute = v.boolean(k); });
      field(s, "call_overhead_s", "sharding.call_overhead_s",
            [&](JsonReader& v, const std::string& k) { m.call_overhead = v.number(k, std::nullopt, 0, 1); });
      field(s, "shard_group", "sharding.shard_group",
            [&](JsonReader& v, const std::string& k) { m.shard_group = v.integer(k, std::nullopt, 0, 1 << 22); });
      field(s, "persistence_threshold", "sharding.persistence_threshold",
            [&](JsonReader& v, const std::string& k) { m.persistence_threshold = v.number(k, std::nullopt, 0, 1e15); });
      field(s, "synchronize_per_gather", "sharding.synchronize_per_gather",
            [&](JsonReader& v, const std::string& k) { m.synchronize_per_gather = v.boolean(k); });
      field(s, "copy_out", "sharding.copy_out",
            [&](JsonReader& v, const std::string& k) { m.copy_out = v.boolean(k); });
      field(s, "copy_in", "sharding.copy_in", [&](JsonReader& v, const std::string& k) { m.copy_in = v.boolean(k); });
      field(s, "predivide", "sharding.predivide",
            [&](JsonReader& v, const std::string& k) { m.predivide = v.boolean(k); });
      field(s, "reduce_in_flight", "sharding.reduce_in_flight", [&](JsonReader& v, const std::string& k) {
        m.reduce_in_flight = static_cast<int>(v.integer(k, std::nullopt, 0, 1024));
      });
      s.finish();
    }
    if (r.has("elementwise_traffic")) {
      JsonReader t = r.object("elementwise_traffic");
      auto& x = f_.elementwise_traffic;
      for (auto [key, out] : traffic_fields(x))
        field(t, key, std::string("elementwise_traffic.") + key,
              [&, out = out](JsonReader& v, const std::string& k) { *out = v.number(k, std::nullopt, 1.0, 100.0); });
      t.finish();
    }
    if (r.has("pipeline")) {
      JsonReader p = r.object("pipeline");
      field(p, "broadcast_p2p", "pipeline.broadcast_p2p",
            [&](JsonReader& v, const std::string& k) { f_.broadcast_p2p = v.boolean(k); });
      field(p, "micro_batch_overhead_s", "pipeline.micro_batch_overhead_s",
            [&](JsonReader& v, const std::string& k) { f_.micro_batch_overhead = v.number(k, std::nullopt, 0, 1); });
      field(p, "synchronous_p2p", "pipeline.synchronous_p2p",
            [&](JsonReader& v, const std::string& k) { f_.synchronous_p2p = v.boolean(k); });
      p.finish();
    }
    field(r, "features", "features", [&](JsonReader& v, const std::string& k) { read_features(v.object(k)); });
  }

 private:
  void read_features(JsonReader r) {
    auto& x = f_.features;
    if (r.has("zero_stages")) {
      x.zero_stages.clear();
      for (const auto s : r.integer_list("zero_stages", 0, 3)) x.zero_stages.push_back(static_cast<int>(s));
      if (x.zero_stages.empty()) r.fail("zero_stages", "must list at least stage 0");
    }
    x.zero_with_pipeline = static_cast<int>(r.integer("zero_with_pipeline", x.zero_with_pipeline, 0, 3));
    if (r.has("tensor_modes")) {
      x.tensor_modes = r.string_list("tensor_modes");
      for (const auto& m : x.tensor_modes)
        if (m != "none" && m != "megatron" && m != "optimus" && m != "axonn")
          r.fail("tensor_modes", "\"" + m + "\" is not a tensor mode (none, megatron, optimus, axonn)");
    }
    x.pipeline = r.boolean("pipeline", x.pipeline);
    x.interleaved = r.boolean("interleaved", x.interleaved);
    x.sequence_parallel = r.boolean("sequence_parallel", x.sequence_parallel);
    x.selective_recompute = r.boolean("selective_recompute", x.selective_recompute);
    x.op_selective_recompute = r.boolean("op_selective_recompute", x.op_selective_recompute);
    x.flash_attention = r.boolean("flash_attention", x.flash_attention);
    x.moe = r.boolean("moe", x.moe);
    x.param_gather_overlap = r.boolean("param_gather_overlap", x.param_gather_overlap);
    x.tensor_comm_overlap = r.boolean("tensor_comm_overlap", x.tensor_comm_overlap);
    x.context_parallel = r.boolean("context_parallel", x.context_parallel);
    x.fp8 = r.boolean("fp8", x.fp8);
    x.uneven_stages = r.boolean("uneven_stages", x.uneven_stages);
    r.finish();
  }

  Framework& f_;
  bool profile_;
};

Framework parse_profile(const Builtin& b) {
  const std::string source = std::string("workloads/frameworks/") + b.name + ".json";
  const auto doc = parse_json<WorkloadError>(b.text, source);
  try {
    JsonReader r(doc, "", kFormatDoc);
    Framework f;
    f.profile = r.string("name");
    if (f.profile != b.name) r.fail("name", "must match the file name (" + std::string(b.name) + ")");
    f.description = r.string("description");
    r.string_list("sources");
    if (!r.has("kernel_efficiency")) r.fail("kernel_efficiency", "missing: every profile rates its GEMMs");
    MechanismReader(f, true).read(r);
    f.source = f.sources.front().source;  // kernel_efficiency's, read first
    r.finish();
    return f;
  } catch (const InputError& e) {
    throw WorkloadError(source + ": " + e.path(), e.message());
  }
}

}  // namespace

const char* to_string(GatherUnit u) {
  return u == GatherUnit::layer ? "layer" : "submodule";
}

void Framework::set_kernel_efficiency(double value) {
  for (double* c : {&attention_efficiency, &elementwise_efficiency, &optimizer_efficiency})
    if (*c == kernel_efficiency) *c = value;
  kernel_efficiency = value;
}

std::string stack_label(const Framework& f) {
  if (f.chosen_because.empty()) return "framework " + f.profile;
  return "framework " + f.profile + " (chosen for " + f.chosen_because +
         "; the workload names none: set \"framework\": {\"profile\": ...}, \"generic\" for the ideal stack)";
}

std::vector<std::string> builtin_framework_names() {
  std::vector<std::string> out;
  for (const auto& b : kBuiltins) out.emplace_back(b.name);
  return out;
}

Framework builtin_framework(const std::string& name) {
  for (const auto& b : kBuiltins)
    if (name == b.name) return parse_profile(b);
  std::string known;
  for (const auto& b : kBuiltins) known += (known.empty() ? "" : ", ") + std::string(b.name);
  throw WorkloadError("framework.profile", "\"" + name + "\" is not a shipped framework profile (" + known + ")");
}

Framework read_framework(JsonReader r) {
  std::string name = r.string("profile", "generic");
  Framework f;
  try {
    f = builtin_framework(name);
  } catch (const WorkloadError&) {
    std::string known;
    for (const auto& n : builtin_framework_names()) known += (known.empty() ? "" : ", ") + n;
    r.fail("profile", "\"" + name + "\" is not a shipped framework profile (" + known + ")");
  }
  MechanismReader(f, false).read(r);
  if (r.has("kernel_efficiency")) f.source = "set in the workload";
  r.finish();
  return f;
}

nlohmann::json to_json(const Framework& f) {
  const auto& x = f.features;
  return {{"profile", f.profile},
          {"kernel_efficiency", f.kernel_efficiency},
          {"attention_efficiency", f.attention_efficiency},
          {"elementwise_efficiency", f.elementwise_efficiency},
          {"optimizer_efficiency", f.optimizer_efficiency},
          {"optimizer_bytes_per_param", f.optimizer_bytes_per_param},
          {"loss_logit_bytes", f.loss_logit_bytes},
          {"gradient_bucket_bytes", f.gradient_bucket_bytes},
          {"gradient_buckets_first_stage_only", f.gradient_buckets_first_stage_only},
          {"elementwise_traffic", traffic_json(f.elementwise_traffic)},
          {"sharding",
           {{"gather_unit", to_string(f.sharding.gather_unit)},
            {"prefetch", f.sharding.prefetch},
            {"reshard_after_forward", f.sharding.reshard_after_forward},
            {"regather_after_recompute", f.sharding.regather_after_recompute},
            {"call_overhead_s", f.sharding.call_overhead},
            {"shard_group", f.sharding.shard_group},
            {"persistence_threshold", f.sharding.persistence_threshold},
            {"synchronize_per_gather", f.sharding.synchronize_per_gather},
            {"copy_out", f.sharding.copy_out},
            {"copy_in", f.sharding.copy_in},
            {"predivide", f.sharding.predivide},
            {"reduce_in_flight", f.sharding.reduce_in_flight}}},
          {"pipeline",
           {{"broadcast_p2p", f.broadcast_p2p},
            {"micro_batch_overhead_s", f.micro_batch_overhead},
            {"synchronous_p2p", f.synchronous_p2p}}},
          {"features",
           {{"zero_stages", x.zero_stages},
            {"zero_with_pipeline", x.zero_with_pipeline},
            {"tensor_modes", x.tensor_modes},
            {"pipeline", x.pipeline},
            {"interleaved", x.interleaved},
            {"sequence_parallel", x.sequence_parallel},
            {"selective_recompute", x.selective_recompute},
            {"op_selective_recompute", x.op_selective_recompute},
            {"flash_attention", x.flash_attention},
            {"moe", x.moe},
            {"param_gather_overlap", x.param_gather_overlap},
            {"tensor_comm_overlap", x.tensor_comm_overlap},
            {"context_parallel", x.context_parallel},
            {"fp8", x.fp8},
            {"uneven_stages", x.uneven_stages}}}};
}

nlohmann::json to_workload_json(const Framework& f) {
  nlohmann::json mine = to_json(f), shipped = to_json(builtin_framework(f.profile));
  nlohmann::json out = {{"profile", f.profile}};
  for (const auto& [key, value] : mine.items()) {
    if (key == "profile" || shipped[key] == value) continue;
    if (value.is_object()) {
      for (const auto& [sub, v] : value.items())
        if (shipped[key][sub] != v) out[key][sub] = v;
    } else {
      out[key] = value;
    }
  }
  return out;
}

}  // namespace paratwin::workloads

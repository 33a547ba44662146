#include "reports/run_summary.hpp"

#include <algorithm>
#include <stdexcept>

#include "common/schema_version.hpp"
#include "workloads/arithmetic.hpp"

namespace paratwin::reports {

// A report is of the workload model's programs, roles and ops: their names read unqualified here.
using namespace workloads;

namespace {

double bus_factor(workloads::OpKind kind, double n) {
  switch (kind) {
    case workloads::OpKind::all_reduce:
      return 2 * (n - 1) / n;
    case workloads::OpKind::reduce_scatter:
    case workloads::OpKind::all_gather:
    case workloads::OpKind::all_to_all:
      return (n - 1) / n;
    default:
      return 1;
  }
}

workloads::OpKind kind_named(const std::string& name) {
  const auto kind = workloads::parse_op_kind(name);
  if (!kind || !(workloads::is_collective(*kind) || workloads::is_p2p(*kind)))
    throw std::invalid_argument("unknown collective kind \"" + name + "\" in a run summary");
  return *kind;
}

}  // namespace

double CollectiveSummary::busbw() const {
  return algbw() * bus_factor(kind, static_cast<double>(group_size));
}

const StageSummary& RunSummary::busiest_stage() const {
  if (stages.empty()) throw std::logic_error("a run summary without stages");
  const StageSummary* busiest = &stages.front();
  for (const auto& s : stages)
    if (s.compute > busiest->compute) busiest = &s;
  return *busiest;
}

double RunSummary::exposed_seconds(const std::string& group) const {
  double exposed = 0;
  for (const auto& c : collectives)
    if (c.group == group) exposed += c.exposed;
  return exposed;
}

RunSummary summarize(const workloads::Workload& w, const workloads::Program& program, const topology::Machine& machine,
                     double iteration_seconds, const std::vector<RankRow>& ranks,
                     const std::vector<CollectiveRow>& collectives) {
  const double T = iteration_seconds;
  const double devices = static_cast<double>(program.grid.size());
  const auto& dev = machine.node.device;
  const std::string dtype = workloads::to_string(w.training.dtype);
  const auto peak_entry = dev.peak_flops.count(dtype) ? dev.peak_flops.find(dtype) : dev.peak_flops.begin();
  const double peak = peak_entry->second;
  RunSummary s;
  s.peak_dtype = peak_entry->first;
  s.workload = w.name;
  s.machine = machine.name;
  s.framework = w.framework.profile;
  s.ranks = program.grid.size();
  s.iteration_seconds = T;
  s.tokens_per_second = static_cast<double>(program.tokens_per_iteration) / T;
  const auto rates = workloads::flop_rates({program.model_flops, program.hardware_flops}, T, devices, peak);
  s.model_tflops_per_device = rates.model_per_device / 1e12;
  s.percent_of_peak = rates.model_percent;
  s.hardware_tflops_per_device = rates.hardware_per_device / 1e12;
  s.percent_of_peak_hardware = rates.hardware_percent;
  s.recomputation = workloads::to_string(w.training.checkpointing);
  s.recompute_num_layers = w.training.recompute_num_layers;
  if (dev.empirical_flops.count(dtype))
    s.percent_of_empirical_peak = 100 * rates.model_per_device / dev.empirical_flops.at(dtype);
  // Pipeline bubble: measured from the timeline against (p-1)/m, or (p-1)/(v·m) interleaved.
  const auto& pp = w.parallel.pipeline;
  s.bubble_analytical = static_cast<double>(pp.stages - 1) /
                        (static_cast<double>(pp.chunks) * static_cast<double>(program.micro_batches));
  double bubble = 0, compute = 0;
  for (const auto& t : ranks) {
    bubble += t.bubble;
    compute += t.compute;
  }
  s.bubble_measured = compute > 0 ? bubble / compute : 0;
  for (size_t stage = 0; stage < program.roles.size(); ++stage) {
    double c = 0, e = 0, b = 0, o = 0, n = 0;
    for (int64_t rank = 0; rank < program.grid.size(); ++rank)
      if (program.role_of(rank) == static_cast<int64_t>(stage)) {
        const auto& t = ranks[static_cast<size_t>(rank)];
        c += t.compute;
        e += t.exposed_comm;
        b += t.bubble;
        o += t.other_idle;
        ++n;
      }
    s.stages.push_back({static_cast<int64_t>(stage), c / n, e / n, b / n, o / n});
  }
  s.per_rank = ranks;
  for (const auto& c : collectives)
    s.collectives.push_back({c.kind, c.algorithm.empty() ? "measured" : c.algorithm, program.grid.mask_name(c.group),
                             program.grid.group_size(c.group), c.count, c.bytes, c.seconds, c.exposed, c.waiting,
                             c.call_seconds});
  for (const auto& role : program.roles) s.max_bytes_per_rank = std::max(s.max_bytes_per_rank, role.memory.total());
  s.device_bytes = dev.memory;
  s.fits = s.max_bytes_per_rank <= dev.memory;
  return s;
}

nlohmann::json to_json(const RunSummary& s) {
  // Key names follow schemas/README.md (seconds end in _s, rates in _per_s, figures per device in
  // _per_gpu); the document is schemas/run-summary.schema.json.
  nlohmann::json j;
  j["schema_version"] = kSchemaVersion;
  j["workload"] = s.workload;
  j["machine"] = s.machine;
  if (!s.framework.empty()) j["framework"] = s.framework;
  j["ranks"] = s.ranks;
  j["iteration_s"] = s.iteration_seconds;
  j["tokens_per_s"] = s.tokens_per_second;
  if (!s.legacy_flops) {  // a summary read from before model and hardware FLOPs were told apart has no model figure
    j["model_tflops_per_gpu"] = s.model_tflops_per_device;
    j["percent_of_peak"] = s.percent_of_peak;
    if (s.percent_of_empirical_peak) j["percent_of_empirical_peak"] = *s.percent_of_empirical_peak;
    j["flops_convention"] = {{"attention", workloads::kAttentionFlops}, {"recomputation", s.recomputation}};
  }
  j["hardware_tflops_per_gpu"] = s.hardware_tflops_per_device;
  j["percent_of_peak_hardware"] = s.percent_of_peak_hardware;
  j["bubble_fraction"] = {{"measured", s.bubble_measured}, {"analytical", s.bubble_analytical}};
  for (const auto& st : s.stages)
    j["stages"].push_back({{"stage", st.stage},
                           {"compute_s", st.compute},
                           {"exposed_comm_s", st.exposed_comm},
                           {"bubble_s", st.bubble},
                           {"other_idle_s", st.other_idle}});
  // Per rank, in rank order: [compute, exposed communication, bubble, other idle] seconds.
  nlohmann::json per_rank = nlohmann::json::array();
  for (const auto& t : s.per_rank) per_rank.push_back({t.compute, t.exposed_comm, t.bubble, t.other_idle});
  j["ranks_compute_exposed_bubble_other_s"] = std::move(per_rank);
  j["collectives"] = nlohmann::json::array();
  for (const auto& c : s.collectives) {
    j["collectives"].push_back({{"kind", workloads::to_string(c.kind)},
                                {"algorithm", c.algorithm},
                                {"group", c.group},
                                {"group_size", c.group_size},
                                {"count", c.count},
                                {"bytes", c.bytes},
                                {"bytes_per_call", c.bytes_per_call()},
                                {"per_call_s", c.seconds_per_call()},
                                {"total_s", c.seconds},
                                {"waiting_s", c.waiting},
                                {"exposed_s", c.exposed},
                                {"overlapped_s", std::max(0.0, c.seconds - c.exposed)},
                                {"algbw", c.algbw()},
                                {"busbw", c.busbw()}});
    // The calls' own time, where the run knows it (simulated): per_call_s, algbw and busbw use it.
    if (c.call_seconds >= 0) j["collectives"].back()["call_s"] = c.call_seconds;
  }
  j["memory"] = {{"max_bytes_per_gpu", s.max_bytes_per_rank}, {"device_bytes", s.device_bytes}, {"fits", s.fits}};
  return j;
}

RunSummary run_summary_from_json(const nlohmann::json& j) {
  RunSummary s;
  s.workload = j.at("workload").get<std::string>();
  s.machine = j.at("machine").get<std::string>();
  s.framework = j.value("framework", std::string());
  s.ranks = j.at("ranks").get<int64_t>();
  s.iteration_seconds = j.at("iteration_s").get<double>();
  s.tokens_per_second = j.at("tokens_per_s").get<double>();
  s.legacy_flops = !j.contains("model_tflops_per_gpu");
  if (!s.legacy_flops) {
    s.model_tflops_per_device = j.at("model_tflops_per_gpu").get<double>();
    s.percent_of_peak = j.at("percent_of_peak").get<double>();
    if (j.contains("percent_of_empirical_peak"))
      s.percent_of_empirical_peak = j["percent_of_empirical_peak"].get<double>();
    s.recomputation = j.at("flops_convention").at("recomputation").get<std::string>();
  }
  s.hardware_tflops_per_device = j.at("hardware_tflops_per_gpu").get<double>();
  s.percent_of_peak_hardware = j.at("percent_of_peak_hardware").get<double>();
  s.bubble_measured = j.at("bubble_fraction").at("measured").get<double>();
  s.bubble_analytical = j.at("bubble_fraction").at("analytical").get<double>();
  for (const auto& st : j.at("stages"))
    s.stages.push_back({st.at("stage").get<int64_t>(), st.at("compute_s").get<double>(),
                        st.at("exposed_comm_s").get<double>(), st.at("bubble_s").get<double>(),
                        st.at("other_idle_s").get<double>()});
  for (const auto& r : j.at("ranks_compute_exposed_bubble_other_s"))
    s.per_rank.push_back({r.at(0).get<double>(), r.at(1).get<double>(), r.at(2).get<double>(), r.at(3).get<double>()});
  for (const auto& c : j.at("collectives"))
    s.collectives.push_back({kind_named(c.at("kind").get<std::string>()), c.at("algorithm").get<std::string>(),
                             c.at("group").get<std::string>(), c.at("group_size").get<int64_t>(),
                             c.at("count").get<int64_t>(), c.at("bytes").get<double>(), c.at("total_s").get<double>(),
                             c.at("exposed_s").get<double>(), c.at("waiting_s").get<double>(),
                             c.value("call_s", -1.0)});
  const auto& m = j.at("memory");
  s.max_bytes_per_rank = m.at("max_bytes_per_gpu").get<double>();
  s.device_bytes = m.at("device_bytes").get<double>();
  s.fits = m.at("fits").get<bool>();
  return s;
}

}  // namespace paratwin::reports

#include "predict/prediction.hpp"

#include <stdexcept>
#include <utility>

#include "workloads/arithmetic.hpp"

namespace paratwin::predict {

const char* to_string(Model m) {
  return m == Model::simulate ? "simulate" : "analytical";
}

Prediction prediction_of(reports::RunSummary summary, SimulationRecord record) {
  Prediction p;
  p.model = Model::simulate;
  p.iteration_seconds = summary.iteration_seconds;
  p.tokens_per_second = summary.tokens_per_second;
  p.model_tflops_per_device = summary.model_tflops_per_device;
  p.percent_of_peak = summary.percent_of_peak;
  p.hardware_tflops_per_device = summary.hardware_tflops_per_device;
  p.percent_of_peak_hardware = summary.percent_of_peak_hardware;
  const auto& busiest = summary.busiest_stage();
  p.compute_seconds = busiest.compute;
  p.exposed_comm_seconds = busiest.exposed_comm;
  p.bubble_seconds = busiest.bubble;
  p.other_idle_seconds = busiest.other_idle;
  p.exposed_data_seconds = summary.exposed_seconds("data");
  p.memory_bytes_per_rank = summary.max_bytes_per_rank;
  p.fits = summary.fits;
  p.summary = std::move(summary);
  p.simulation = std::move(record);
  return p;
}

Prediction prediction_of(const sim::AnalyticalEstimate& e, int64_t ranks) {
  Prediction p;
  p.model = Model::analytical;
  p.iteration_seconds = e.iteration;
  p.tokens_per_second = e.tokens_per_second;
  const auto rates =
      workloads::flop_rates({e.model_flops, e.hardware_flops}, e.iteration, static_cast<double>(ranks), 1.0);
  p.model_tflops_per_device = rates.model_per_device / 1e12;
  p.percent_of_peak = e.percent_of_peak;
  p.hardware_tflops_per_device = rates.hardware_per_device / 1e12;
  p.percent_of_peak_hardware = e.percent_of_peak_hardware;
  p.compute_seconds = e.compute;
  p.exposed_comm_seconds = e.exposed_comm;
  p.bubble_seconds = e.bubble;
  p.other_idle_seconds = e.other_idle;
  for (const auto& c : e.collectives)
    if (c.group == "data") p.exposed_data_seconds += c.exposed;
  p.memory_bytes_per_rank = e.memory.total();
  p.fits = e.fits();
  p.estimate = e;
  return p;
}

nlohmann::json to_json(const sim::AnalyticalEstimate& e) {
  // The names of the run summary's figures (schemas/README.md), for the busiest stage.
  nlohmann::json j = {{"iteration_s", e.iteration},
                      {"compute_s", e.compute},
                      {"exposed_comm_s", e.exposed_comm},
                      {"bubble_s", e.bubble},
                      {"bubble_fraction", {{"analytical", e.bubble_fraction}}},
                      {"other_idle_s", e.other_idle},
                      {"tokens_per_s", e.tokens_per_second},
                      {"percent_of_peak", e.percent_of_peak},
                      {"percent_of_peak_hardware", e.percent_of_peak_hardware},
                      {"model_flops", e.model_flops},
                      {"hardware_flops", e.hardware_flops},
                      {"memory", {{"max_bytes_per_gpu", e.memory.total()}, {"fits", e.fits()}}},
                      {"collectives", nlohmann::json::array()}};
  for (const auto& c : e.collectives)
    j["collectives"].push_back({{"kind", workloads::to_string(c.kind)},
                                {"group", c.group},
                                {"group_size", c.group_size},
                                {"count", c.count},
                                {"bytes", c.bytes},
                                {"bandwidth", c.bandwidth},
                                {"total_s", c.seconds},
                                {"exposed_s", c.exposed}});
  return j;
}

nlohmann::json to_json(const Prediction& p) {
  if (p.model == Model::analytical) return to_json(*p.estimate);
  nlohmann::json j = to_json(*p.summary);
  const auto& r = *p.simulation;
  j["nodes"] = r.nodes;
  j["fidelity"] = r.fidelity;
  j["fidelity_chosen_by"] = r.fidelity_chosen_by;
  j["library"] = r.library;
  if (!r.vendor_library.empty()) j["vendor_library"] = r.vendor_library;
  if (!r.profile.empty()) j["profile"] = r.profile;
  j["flows"] = r.flows;
  j["transfers"] = r.transfers;
  j["actors"] = r.actors;
  j["folded"] = r.folded;
  if (r.folded) j["folded_by"] = r.folded_by;
  if (r.not_folded_because) j["not_folded_because"] = *r.not_folded_because;
  return j;
}

Prediction prediction_from_json(const nlohmann::json& j) {
  try {
    SimulationRecord r;
    r.nodes = j.at("nodes").get<int64_t>();
    r.fidelity = j.at("fidelity").get<std::string>();
    r.fidelity_chosen_by = j.at("fidelity_chosen_by").get<std::string>();
    r.library = j.at("library").get<std::string>();
    r.vendor_library = j.value("vendor_library", std::string());
    r.profile = j.value("profile", std::string());
    r.flows = j.at("flows").get<int64_t>();
    r.transfers = j.at("transfers").get<int64_t>();
    r.actors = j.at("actors").get<int64_t>();
    r.folded = j.at("folded").get<bool>();
    r.folded_by = j.value("folded_by", std::string());
    if (j.contains("not_folded_because")) r.not_folded_because = j["not_folded_because"].get<std::string>();
    return prediction_of(reports::run_summary_from_json(j), std::move(r));
  } catch (const nlohmann::json::exception& e) {
    throw std::invalid_argument(std::string("not a simulation's prediction: ") + e.what());
  }
}

}  // namespace paratwin::predict

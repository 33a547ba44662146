#include "sim/search.hpp"

#include <algorithm>
#include <cstdio>
#include <stdexcept>

#include "sim/config_space.hpp"
#include "workloads/error.hpp"

namespace paratwin::sim {

const char* to_string(Family f) {
  switch (f) {
    case Family::four_d:
      return "4d";
    case Family::ptdp:
      return "ptdp";
    case Family::ted:
      return "ted";
  }
  return "?";
}

namespace {

std::string gib(double bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f GiB", bytes / (1024.0 * 1024.0 * 1024.0));
  return text;
}

}  // namespace

SearchResult search(const workloads::Workload& base, const topology::Topology& topology, const SearchOptions& options) {
  if (options.gpus <= 0) throw std::invalid_argument("the number of GPUs must be positive");
  if (options.gpus > topology.devices())
    throw std::invalid_argument("the machine (as given) has " + std::to_string(topology.devices()) + " devices, not " +
                                std::to_string(options.gpus));
  std::vector<Family> families = options.families;
  if (families.empty()) families = {Family::four_d, Family::ptdp, Family::ted};
  std::vector<Family> used;
  for (Family f : families)
    if (applies(f, base)) used.push_back(f);
  if (used.empty()) {
    std::string asked;
    for (Family f : families) asked += std::string(asked.empty() ? "" : ", ") + to_string(f);
    throw std::invalid_argument(
        "no asked family (" + asked + ") can train " + base.name +
        (base.model.moe.enabled() ? ": an MoE model needs ted or ptdp" : ": a dense model needs 4d or ptdp"));
  }
  AnalyticalModel model(topology, options.model);
  SearchResult out;
  for (Family f : used)
    for (auto& c : configurations(base, f, options.gpus)) {
      try {
        workloads::validate(c.workload);
      } catch (const workloads::WorkloadError& e) {
        out.invalid.push_back({f, c.label, e.what()});
        continue;
      }
      ++out.enumerated;
      Candidate cand{f, c.label, std::move(c.workload), {}};
      cand.estimate = model.estimate(cand.workload);
      if (!cand.estimate.fits()) {
        out.rejected.push_back({f, cand.label,
                                "needs " + gib(cand.estimate.memory.total()) + " per GPU, the device has " +
                                    gib(cand.estimate.device_memory)});
        continue;
      }
      out.ranked.push_back(std::move(cand));
    }
  std::stable_sort(out.ranked.begin(), out.ranked.end(), [](const Candidate& a, const Candidate& b) {
    if (a.estimate.iteration != b.estimate.iteration) return a.estimate.iteration < b.estimate.iteration;
    return a.label < b.label;
  });
  return out;
}

}  // namespace paratwin::sim

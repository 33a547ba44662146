#include "predict/search_rerank.hpp"

#include <algorithm>
#include <map>
#include <numeric>
#include <set>

#include "common/report_text.hpp"

namespace paratwin::predict {

namespace {

bool succeeded(const nlohmann::json& simulation) {
  return simulation.contains("iteration_s");
}

double gib(double bytes) {
  return bytes / (1024.0 * 1024.0 * 1024.0);
}

// The GPU counts nearest `gpus` (one below, one above, where they exist) that divide `batch`: every
// data-parallel degree of them can take an equal share.
std::string dividing_gpu_counts(int64_t gpus, int64_t batch) {
  int64_t below = 0, above = 0;
  for (int64_t g = gpus - 1; g >= 1 && below == 0; --g)
    if (batch % g == 0) below = g;
  for (int64_t g = gpus + 1; g <= batch && above == 0; ++g)
    if (batch % g == 0) above = g;
  std::string out;
  for (const int64_t g : {below, above})
    if (g > 0) out += (out.empty() ? "--gpus " : " or --gpus ") + std::to_string(g);
  return out;
}

// The nearest power of two to `n` other than n: GPU counts with many small factors let more
// configurations split heads, layers and the batch evenly.
int64_t other_power_of_two(int64_t n) {
  int64_t p = 1;
  while (p * 2 <= n) p *= 2;
  if (p == n) return n * 2;
  return n - p <= 2 * p - n ? p : 2 * p;
}

}  // namespace

size_t rerank_by_simulation(sim::SearchResult& result, nlohmann::json& simulations) {
  const size_t n = std::min(simulations.size(), result.ranked.size());
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    const bool ok_a = succeeded(simulations[a]), ok_b = succeeded(simulations[b]);
    if (ok_a != ok_b) return ok_a;
    if (!ok_a) return false;
    return simulations[a]["iteration_s"].get<double>() < simulations[b]["iteration_s"].get<double>();
  });
  std::vector<sim::Candidate> candidates;
  nlohmann::json reordered = nlohmann::json::array();
  size_t moved = 0;
  for (size_t i = 0; i < n; ++i) {
    candidates.push_back(std::move(result.ranked[order[i]]));
    reordered.push_back(std::move(simulations[order[i]]));
    moved += order[i] != i ? 1 : 0;
  }
  for (size_t i = 0; i < n; ++i) result.ranked[i] = std::move(candidates[i]);
  simulations = std::move(reordered);
  return moved;
}

std::string nothing_ranked(const SearchSetting& s, const sim::SearchResult& r, int64_t global_batch) {
  const std::string gpus = std::to_string(s.gpus) + (s.gpus == 1 ? " GPU" : " GPUs");
  if (!r.rejected.empty()) {
    const auto least =
        std::min_element(r.rejected.begin(), r.rejected.end(),
                         [](const sim::Rejected& a, const sim::Rejected& b) { return a.memory < b.memory; });
    std::string out = printed(
        "  no configuration of %s fits in memory: the smallest, %s %s, needs %.1f GiB per GPU and a %s device has "
        "%.1f GiB.\n  To fit: more GPUs (--gpus %lld splits the model further), a machine with more memory per "
        "GPU, or less memory per GPU in the workload (a smaller training.micro_batch, a shorter model.seq_len)",
        gpus.c_str(), sim::to_string(least->family), least->label.c_str(), gib(least->memory), s.machine.c_str(),
        gib(least->device_memory), static_cast<long long>(s.gpus * 2));
    if (!r.invalid.empty())
      out += printed("; %zu other configuration(s) break a rule (--show-rejected lists them)", r.invalid.size());
    return out + ".\n";
  }
  if (r.invalid.empty() && !r.lacking.empty())
    return printed(
        "  no configuration of %s that framework %s can run: e.g. %s %s: %s. Choose a framework.profile that "
        "has it (\"generic\" for the ideal stack).\n",
        gpus.c_str(), s.stack.c_str(), sim::to_string(r.lacking.front().family), r.lacking.front().label.c_str(),
        r.lacking.front().reason.c_str());
  if (r.invalid.empty())
    return printed("  no configuration of %s: none of the families searched can split %s.\n", gpus.c_str(),
                   s.workload.c_str());
  // The rule (by the field it names) that the most configurations broke: a rule broken by several
  // variants of one configuration (each micro-batch, say) counts once.
  std::map<std::string, std::set<size_t>> broken_by;
  for (const auto& i : r.invalid) broken_by[i.rule].insert(i.configuration);
  std::map<std::string, size_t> count;
  for (const auto& [rule, configurations] : broken_by) count[rule] = configurations.size();
  const auto most =
      std::max_element(count.begin(), count.end(), [](const auto& a, const auto& b) { return a.second < b.second; });
  const auto example =
      std::find_if(r.invalid.begin(), r.invalid.end(), [&](const sim::Rejected& i) { return i.rule == most->first; });
  std::string out = printed(
      "  every configuration of %s breaks a rule of the workload format; the one broken most, by %zu of %lld "
      "configurations, is on %s, e.g. %s %s: %s\n",
      gpus.c_str(), most->second, static_cast<long long>(r.configurations), most->first.c_str(),
      sim::to_string(example->family), example->label.c_str(), example->reason.c_str());
  std::vector<std::pair<size_t, std::string>> others;
  for (const auto& [rule, n] : count)
    if (rule != most->first) others.emplace_back(n, rule);
  std::sort(others.rbegin(), others.rend());
  if (!others.empty()) {
    out += "  other rules broken, by configurations:";
    for (size_t i = 0; i < others.size() && i < 3; ++i)
      out += printed("%s %s (%zu)", i ? "," : "", others[i].second.c_str(), others[i].first);
    out += others.size() > 3 ? ", ...\n" : "\n";
  }
  if (most->first == "training.global_batch") {
    const std::string counts = dividing_gpu_counts(s.gpus, global_batch);
    const int64_t multiple = std::max<int64_t>(s.gpus, global_batch / s.gpus * s.gpus);
    out += printed(
        "  To change: the global batch %lld must split evenly among the data-parallel replicas: %s%s"
        "a training.global_batch that %lld divides (e.g. %lld).\n",
        static_cast<long long>(global_batch), counts.c_str(), counts.empty() ? "" : ", or ",
        static_cast<long long>(s.gpus), static_cast<long long>(multiple));
  } else {
    out += printed(
        "  To change: a GPU count with more small factors splits the model's sizes evenly (e.g. --gpus "
        "%lld); --show-rejected lists every configuration with its rule.\n",
        static_cast<long long>(other_power_of_two(s.gpus)));
  }
  return out;
}

}  // namespace paratwin::predict

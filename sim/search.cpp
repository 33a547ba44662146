#include "sim/search.hpp"

#include <algorithm>
#include <cstdio>
#include <iterator>
#include <map>
#include <stdexcept>

#include "sim/config_space.hpp"
#include "workloads/error.hpp"
#include "workloads/stack_features.hpp"

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

namespace {

struct Tried {
  size_t variant = 0;
  AnalyticalEstimate estimate;
};

// Whether an estimated variant settles `k` without an estimate: one that fits and is taken to be no
// slower, or one that does not fit and is taken to need no more memory, here or in a configuration
// that differs only in a smaller micro-batch (`too_large`).
bool settled(const Configuration& c, const std::vector<Tried>& tried, const std::vector<Knobs>& too_large,
             const Knobs& k) {
  for (const auto& t : tried) {
    const Knobs& u = c.variants[t.variant];
    if (t.estimate.fits() ? no_slower(c, u, k) : no_larger(u, k)) return true;
  }
  return std::any_of(too_large.begin(), too_large.end(), [&](const Knobs& u) { return no_larger(u, k); });
}

// The order variants are looked at: the expected fastest first (if it fits, it settles every variant
// taken to be no faster), then the one needing least memory (if even it does not fit, no other can),
// then the rest, expected fastest first, so that a fitting one settles the slower ones behind it.
std::vector<size_t> visiting_order(const Configuration& c) {
  std::vector<size_t> order(c.variants.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  size_t least = 0;
  for (size_t i = 1; i < c.variants.size(); ++i)
    if (no_larger(c.variants[i], c.variants[least])) least = i;
  if (least > 1)
    std::rotate(order.begin() + 1, order.begin() + static_cast<std::ptrdiff_t>(least),
                order.begin() + static_cast<std::ptrdiff_t>(least) + 1);
  return order;
}

// Estimates the variants of one configuration and adds it to the ranking (its fastest variant that
// fits) or to the rejected (none fits). `too_large`: the variants found not to fit in the configurations
// that differ from this one in a smaller micro-batch only; this one's are added.
void search_configuration(const Configuration& c, size_t index, AnalyticalModel& model, bool exhaustive,
                          SearchResult& out, std::vector<Knobs>& too_large) {
  out.variants += static_cast<int64_t>(c.variants.size());
  std::vector<Tried> tried;
  std::vector<std::string> reasons;  // each broken rule once per configuration
  const auto order = visiting_order(c);
  std::vector<size_t> inferred;  // variants skipped as too large by a smaller micro-batch's
  // A variant that breaks a rule, counted; its reason listed once per configuration.
  const auto broken = [&](std::vector<Rejected>& list, const Knobs& k, const std::string& why,
                          const std::string& path) {
    ++out.broken;
    if (std::find(reasons.begin(), reasons.end(), why) != reasons.end()) return;
    reasons.push_back(why);
    list.push_back({c.family, c.label(k), why, path, 0, 0, index});
  };
  const auto visit = [&](size_t i) {
    const Knobs& k = c.variants[i];
    const workloads::Workload w = c.with(k);
    // What the stack cannot run is not proposed, and is counted apart from the format's rules: the
    // answer to it is another framework profile, not another configuration.
    if (const auto missing = workloads::missing_stack_features(w); !missing.empty())
      return broken(out.lacking, k, missing.front().path + " " + missing.front().message, missing.front().path);
    try {
      workloads::validate(w);
    } catch (const workloads::WorkloadError& e) {
      return broken(out.invalid, k, e.what(), e.path());
    }
    ++out.estimated;
    tried.push_back({i, model.estimate_if_fits(w)});
  };
  for (size_t i : order) {
    if (!exhaustive && settled(c, tried, {}, c.variants[i])) {
      ++out.skipped;
    } else if (!exhaustive && settled(c, tried, too_large, c.variants[i])) {
      ++out.skipped;
      inferred.push_back(i);
    } else {
      visit(i);
    }
  }
  // Every variant skipped or broken: the one needing least memory says how much this configuration needs.
  if (tried.empty() && !inferred.empty()) {
    const size_t least_memory = order.size() > 1 ? order[1] : order[0];
    const bool skipped = std::find(inferred.begin(), inferred.end(), least_memory) != inferred.end();
    --out.skipped;
    visit(skipped ? least_memory : inferred.front());
  }
  for (const auto& t : tried)
    if (!t.estimate.fits()) too_large.push_back(c.variants[t.variant]);
  if (tried.empty()) return;
  ++out.enumerated;
  const Tried* best = nullptr;
  const Tried* least = &tried.front();
  for (const auto& t : tried) {
    if (t.estimate.memory.total() < least->estimate.memory.total()) least = &t;
    if (!t.estimate.fits()) continue;
    // Equal times: the variant earlier in the configuration's order (less recomputation, lower ZeRO).
    if (!best || t.estimate.iteration < best->estimate.iteration ||
        (t.estimate.iteration == best->estimate.iteration && t.variant < best->variant))
      best = &t;
  }
  if (!best) {
    out.rejected.push_back({c.family, c.label(c.variants[least->variant]),
                            "needs " + gib(least->estimate.memory.total()) + " per GPU, the device has " +
                                gib(least->estimate.device_memory),
                            "", least->estimate.memory.total(), least->estimate.device_memory, index});
    return;
  }
  const Knobs& k = c.variants[best->variant];
  out.ranked.push_back({c.family, c.label(k), c.with(k), best->estimate, 0});
}

}  // namespace

namespace {

std::vector<Family> applying(const workloads::Workload& base, const std::vector<Family>& asked,
                             std::vector<Family>& families) {
  families = asked;
  if (families.empty()) families = {Family::four_d, Family::ptdp, Family::ted};
  std::vector<Family> used;
  for (Family f : families)
    if (applies(f, base)) used.push_back(f);
  return used;
}

}  // namespace

std::string families_problem(const workloads::Workload& base, const std::vector<Family>& asked) {
  std::vector<Family> families;
  if (!applying(base, asked, families).empty()) return "";
  std::string names;
  for (Family f : families) names += std::string(names.empty() ? "" : ", ") + to_string(f);
  return "no asked family (" + names + ") can train " + base.name +
         (base.model.moe.enabled() ? ": an MoE model needs ted or ptdp" : ": a dense model needs 4d or ptdp");
}

std::vector<Family> families_for(const workloads::Workload& base, const std::vector<Family>& asked) {
  std::vector<Family> families;
  auto used = applying(base, asked, families);
  if (used.empty()) throw std::logic_error(families_problem(base, asked));
  return used;
}

SearchResult search(const workloads::Workload& base, const topology::Topology& topology, const SearchOptions& options) {
  // Preconditions the callers check where the user gives them (search's --gpus, a sweep's gpus).
  if (options.gpus <= 0) throw std::logic_error("search: the number of GPUs must be positive");
  if (options.gpus > topology.devices())
    throw std::logic_error("search: the machine (as given) has " + std::to_string(topology.devices()) +
                           " devices, not " + std::to_string(options.gpus));
  const std::vector<Family> used = families_for(base, options.families);
  // One model for all: its caches (collective times, GEMM times) serve every configuration.
  AnalyticalModel model(topology, options.model);
  SearchResult out;
  // Variants that do not fit, by configuration less its micro-batch: activations grow with the
  // micro-batch, so what does not fit with one does not with a larger one either (configurations come
  // smallest micro-batch first).
  std::map<std::string, std::vector<Knobs>> too_large;
  // Every family's configurations first: progress can then say how many are left.
  std::vector<Configuration> all;
  for (Family f : used) {
    auto some = configurations(base, f, options.gpus, options.vary);
    all.insert(all.end(), std::make_move_iterator(some.begin()), std::make_move_iterator(some.end()));
  }
  for (size_t i = 0; i < all.size(); ++i) {
    const auto& c = all[i];
    const auto& p = c.workload.parallel.pipeline;
    const std::string siblings = std::string(to_string(c.family)) + " " + c.axes + " " +
                                 workloads::to_string(p.schedule) + " " + std::to_string(p.chunks);
    search_configuration(c, i, model, options.exhaustive, out, too_large[siblings]);
    if (options.progress) options.progress({i + 1, all.size(), out.estimated, static_cast<int64_t>(out.ranked.size())});
  }
  std::stable_sort(out.ranked.begin(), out.ranked.end(), [](const Candidate& a, const Candidate& b) {
    if (a.estimate.iteration != b.estimate.iteration) return a.estimate.iteration < b.estimate.iteration;
    return a.label < b.label;
  });
  for (size_t i = 0; i < out.ranked.size(); ++i) out.ranked[i].analytical_rank = i + 1;
  out.configurations = static_cast<int64_t>(all.size());
  return out;
}

}  // namespace paratwin::sim

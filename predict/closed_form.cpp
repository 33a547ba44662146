#include "predict/closed_form.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <utility>

#include "common/report_text.hpp"

namespace paratwin::predict {

namespace {

double relative(double a, double b) {
  return b > 0 ? a / b - 1 : 0;
}

std::string percent(double fraction) {
  return printed("%+.1f %%", 100 * fraction);
}

// What the simulation saw that the closed form does not, each where it moves the figure by more than
// kNoticeable: a collective's calls slower or faster than alone (other traffic on its links, or links
// loaded only while flows overlap), its members arriving apart, the pipeline's bubble.
std::vector<std::string> reasons_of(const ClosedFormComparison& c) {
  std::vector<std::string> out;
  const double iteration = std::max(c.simulated, c.closed_form);
  for (const auto& k : c.collectives) {
    const std::string name = k.kind + " over " + k.group;
    const double own = relative(k.simulated, k.closed_form);
    // A collective too small to move the iteration by 1 % is not a reason, whatever its own change.
    const bool weighs = std::abs(k.simulated - k.closed_form) > 0.01 * iteration;
    if (k.closed_form > 0 && own > kNoticeable && weighs)
      out.push_back(
          printed("%s: its calls take %s longer simulated than alone on the network (contention: links "
                  "shared with other flows in flight at the same time)",
                  name.c_str(), percent(own).c_str()));
    else if (k.closed_form > 0 && own < -kNoticeable && weighs)
      out.push_back(
          printed("%s: its calls take %.1f %% less simulated than the closed form (flows share a link only "
                  "while they overlap in time; the closed form loads the links with the rings of every group "
                  "of the axis at once)",
                  name.c_str(), -100 * own));
    if (k.waiting > kNoticeable * std::max(k.closed_form, k.simulated) && k.waiting > 0.01 * iteration)
      out.push_back(
          printed("%s: members reach its calls apart, %.1f ms per rank waiting for the last one (arrival "
                  "skew; the closed form has none)",
                  name.c_str(), 1e3 * k.waiting));
  }
  if (std::abs(c.simulated_bubble - c.closed_form_bubble) > kNoticeable * iteration)
    out.push_back(
        printed("pipeline bubble: %.4f s simulated, %.4f s by formula ((p-1)/(v·m) of the stage's compute "
                "and its messages)",
                c.simulated_bubble, c.closed_form_bubble));
  return out;
}

}  // namespace

ClosedFormComparison compare_with_closed_form(const Prediction& simulated, const Prediction& closed_form) {
  ClosedFormComparison c;
  c.simulated = simulated.iteration_seconds;
  c.closed_form = closed_form.iteration_seconds;
  c.simulated_compute = simulated.compute_seconds;
  c.closed_form_compute = closed_form.compute_seconds;
  c.simulated_exposed = simulated.exposed_comm_seconds;
  c.closed_form_exposed = closed_form.exposed_comm_seconds;
  c.simulated_bubble = simulated.bubble_seconds;
  c.closed_form_bubble = closed_form.bubble_seconds;
  // Rows by (kind, group), in the simulation's order, then the closed form's own.
  std::map<std::pair<std::string, std::string>, size_t> row;
  const auto at = [&](const std::string& kind, const std::string& group) -> ClosedFormComparison::Collective& {
    const auto [it, added] = row.emplace(std::make_pair(kind, group), c.collectives.size());
    if (added) c.collectives.push_back({kind, group});
    return c.collectives[it->second];
  };
  if (simulated.summary)
    for (const auto& s : simulated.summary->collectives) {
      auto& k = at(workloads::to_string(s.kind), s.group);
      k.simulated += s.own_seconds();
      k.waiting += s.waiting;
    }
  if (closed_form.estimate)
    for (const auto& a : closed_form.estimate->collectives)
      at(workloads::to_string(a.kind), a.group).closed_form += a.seconds;
  c.reasons = reasons_of(c);
  return c;
}

std::string closed_form_text(const ClosedFormComparison& c) {
  std::string out = printed(
      "\n  closed form           %.6g s, the analytical model on the same op lists and routes (each collective alone "
      "on\n                        the network, the bubble by formula): the simulation is %s\n",
      c.closed_form, percent(c.difference()).c_str());
  out += printed(
      "                        busiest stage, simulated / closed form: compute %.4f / %.4f s, exposed comm "
      "%.4f / %.4f s,\n                        bubble %.4f / %.4f s\n",
      c.simulated_compute, c.closed_form_compute, c.simulated_exposed, c.closed_form_exposed, c.simulated_bubble,
      c.closed_form_bubble);
  if (!c.collectives.empty()) {
    out += "  collective      group          simulated [ms]  waiting [ms]  closed form [ms]   calls vs closed form\n";
    for (const auto& k : c.collectives)
      out +=
          printed("  %-15s %-14s %14.3f %13.3f %17.3f   %s\n", k.kind.c_str(), k.group.c_str(), 1e3 * k.simulated,
                  1e3 * k.waiting, 1e3 * k.closed_form,
                  k.closed_form > 0 && k.simulated > 0 ? percent(relative(k.simulated, k.closed_form)).c_str() : "-");
    out +=
        "  (per rank per iteration: simulated, the calls' own time and the wait for their last member, the mean over\n"
        "   all ranks; closed form, each call alone, on the busiest stage)\n";
  }
  if (c.reasons.empty()) {
    out += printed("  no cause moves the simulation %s or more from the closed form\n",
                   percent(kNoticeable).substr(1).c_str());
  } else {
    out += "  where the simulation departs from the closed form:\n";
    for (const auto& r : c.reasons) out += "    - " + r + "\n";
  }
  return out;
}

nlohmann::json to_json(const ClosedFormComparison& c) {
  nlohmann::json j = {{"iteration_s", c.closed_form},
                      {"difference", c.difference()},
                      {"compute_s", c.closed_form_compute},
                      {"exposed_comm_s", c.closed_form_exposed},
                      {"bubble_s", c.closed_form_bubble},
                      {"collectives", nlohmann::json::array()},
                      {"reasons", c.reasons}};
  for (const auto& k : c.collectives)
    j["collectives"].push_back({{"kind", k.kind},
                                {"group", k.group},
                                {"simulated_s", k.simulated},
                                {"waiting_s", k.waiting},
                                {"closed_form_s", k.closed_form}});
  return j;
}

}  // namespace paratwin::predict

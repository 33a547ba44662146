#include "predict/simulation_text.hpp"

#include "common/report_text.hpp"
#include "reports/summary_text.hpp"

namespace paratwin::predict {

std::string simulation_heading(const workloads::Workload& w, const Prediction& p) {
  const auto& s = *p.summary;
  const auto& r = *p.simulation;
  std::string out = printed("%s on %s (%lld nodes, %lld ranks), %s fidelity, %s, %s\n", w.name.c_str(),
                            s.machine.c_str(), static_cast<long long>(r.nodes), static_cast<long long>(s.ranks),
                            r.fidelity.c_str(), r.library.c_str(), workloads::stack_label(w.framework).c_str());
  if (!r.vendor_library.empty())
    out += printed(
        "  library               pccl runs all-gather and reduce-scatter (hierarchical); all-reduce, broadcast and "
        "reduce are %s's,\n                        as it tunes them (PCCL implements only the first two: Thesis "
        "§6.2)\n",
        r.vendor_library.c_str());
  if (!r.profile.empty()) out += printed("  calibrated by         %s\n", r.profile.c_str());
  if (r.folded)
    out += printed(
        "  simulated as          %lld actors for %lld ranks (%s; collectives inside a node timed analytically)\n",
        static_cast<long long>(r.actors), static_cast<long long>(s.ranks),
        r.folded_by == "node" ? "one per node"
                              : "one per node of a data-parallel replica, standing for it in every replica");
  else if (r.not_folded_because)
    out += printed("  simulated as          one actor per rank (not folded: %s)\n", r.not_folded_because->c_str());
  return out;
}

std::string simulation_report_text(const workloads::Workload& w, const Prediction& p) {
  return simulation_heading(w, p) + reports::summary_text(w, *p.summary, "simulated anyway", collective_table_note(p));
}

std::string collective_table_note(const Prediction& p) {
  if (!p.simulation || p.simulation->fidelity != "exact") return "";
  // GPT-80B on 64 Frontier GCDs, x all-reduce 2.7 ms per rank and call at exact fidelity against
  // 1.2 ms fast, all of it waiting: from the last member's arrival it is 992 us at every fidelity. The
  // skew came from the z collectives, 17-33 % slower on the even GCDs, which reach their NIC through the
  // odd one: exact's point-to-point transfers carry their route latency, and SimGrid's CM02 model shares a
  // link among flows in inverse proportion to it (sim/README.md, Fidelity); fast's phases share equally.
  return "exact fidelity: flows sharing a link get bandwidth in inverse proportion to their route latency "
         "(SimGrid CM02),\n   so members with a longer route, e.g. to their NIC, finish later and their peers "
         "wait for them; fast fidelity shares equally";
}

}  // namespace paratwin::predict

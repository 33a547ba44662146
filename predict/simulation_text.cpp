#include "predict/simulation_text.hpp"

#include "common/report_text.hpp"

namespace paratwin::predict {

std::string simulation_heading(const workloads::Workload& w, const Prediction& p) {
  const auto& s = *p.summary;
  const auto& r = *p.simulation;
  std::string out =
      printed("%s on %s (%lld nodes, %lld ranks), %s fidelity, %s\n", w.name.c_str(), s.machine.c_str(),
              static_cast<long long>(r.nodes), static_cast<long long>(s.ranks), r.fidelity.c_str(), r.library.c_str());
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

}  // namespace paratwin::predict

#pragma once
// A simulated prediction beside the analytical model's of the same point (the same op lists, routes and
// library; each collective priced alone on the machine's links, the bubble by formula): where the two
// differ and what the simulation saw that the closed form cannot (links shared by collectives in flight
// at once, members reaching a call apart, the pipeline's real bubble). `paratwin simulate` prints it.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "predict/prediction.hpp"

namespace paratwin::predict {

struct ClosedFormComparison {
  // Per iteration; the busiest stage's breakdown (both models: its rank with the most compute).
  double simulated = 0, closed_form = 0;
  double simulated_compute = 0, closed_form_compute = 0;
  double simulated_exposed = 0, closed_form_exposed = 0;
  double simulated_bubble = 0, closed_form_bubble = 0;
  struct Collective {
    std::string kind, group;
    // Per rank and iteration. Simulated: the calls' own time (from the last member's arrival) and the
    // wait for the last member (the mean over all ranks); closed form: the busiest stage's, each call
    // alone. Absent from one model: 0 there.
    double simulated = 0, waiting = 0, closed_form = 0;
  };
  std::vector<Collective> collectives;
  // Where the simulation departs from the closed form by more than kNoticeable, with its cause.
  std::vector<std::string> reasons;

  double difference() const { return closed_form > 0 ? simulated / closed_form - 1 : 0; }
};

// A relative difference worth naming (5 %).
inline constexpr double kNoticeable = 0.05;

// `simulated` holds a simulation (summary and record), `closed_form` an analytical estimate of the same
// workload, machine, nodes and library.
ClosedFormComparison compare_with_closed_form(const Prediction& simulated, const Prediction& closed_form);

std::string closed_form_text(const ClosedFormComparison& c);
nlohmann::json to_json(const ClosedFormComparison& c);

}  // namespace paratwin::predict

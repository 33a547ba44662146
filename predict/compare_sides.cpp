#include "predict/compare_sides.hpp"

#include <stdexcept>
#include <vector>

#include "common/input_error.hpp"
#include "predict/child_pool.hpp"
#include "sim/collectives.hpp"

namespace paratwin::predict {

namespace {

// "A (summit)", then the option at fault, unless it is --machine and the side's machine is its operand.
InputError on_side(const CompareSide& s, const InputError& e) {
  const std::string where = s.name + " (" + s.operand + ")";
  if (e.path().empty() || (s.machine_is_operand && e.path() == "--machine")) return InputError(where, e.message());
  return InputError(where, e.path() + (e.message().rfind("= ", 0) == 0 ? " " : ": ") + e.message());
}

}  // namespace

void check_sides(const CompareSide& a, const CompareSide& b) {
  // The quick checks of both sides first, then lowering each (seconds for tens of thousands of ranks).
  for (const auto& [s, lower] :
       {std::pair{&a, false}, std::pair{&b, false}, std::pair{&a, true}, std::pair{&b, true}}) {
    try {
      check_point(s->workload, s->machine, s->options, lower);
    } catch (const InputError& e) {  // the machine holding fewer devices than the workload needs among them
      throw on_side(*s, e);
    }
  }
}

std::pair<Prediction, Prediction> predict_sides(const CompareSide& a, const CompareSide& b) {
  const CompareSide* sides[] = {&a, &b};
  ChildPool pool(2);
  for (size_t k = 0; k < 2; ++k) {
    const CompareSide& s = *sides[k];
    pool.start(k, [&s] {
      // An input error the checks before could not see travels back as one.
      try {
        const auto p = predict(s.workload, s.machine, s.options);
        auto j = to_json(p);
        j["compare_warnings"] = p.warnings;  // what had no effect, which the document does not hold
        return j;
      } catch (const InputError& e) {
        return nlohmann::json{{"input_error", {{"path", e.path()}, {"message", e.message()}}}};
      }
    });
  }
  std::vector<Prediction> got(2);
  for (int k = 0; k < 2; ++k) {
    const auto r = pool.wait(-1);
    if (!r) throw std::runtime_error("compare: a prediction did not finish");
    const CompareSide& s = *sides[r->id];
    if (!r->ok) throw std::runtime_error(s.name + " (" + s.operand + "): " + r->error);
    if (r->value.contains("input_error")) {
      const auto& e = r->value["input_error"];
      throw on_side(s, InputError(e.at("path").get<std::string>(), e.at("message").get<std::string>()));
    }
    got[r->id] = prediction_from_json(r->value);
    got[r->id].warnings = r->value.value("compare_warnings", std::vector<std::string>{});
  }
  return {std::move(got[0]), std::move(got[1])};
}

std::string library_note(const CompareSide& side, const Prediction& p) {
  if (!p.simulation || p.simulation->library != "pccl") return "";
  return side.name + " (pccl): all-gather and reduce-scatter run PCCL's hierarchical algorithms; all-reduce, " +
         "broadcast and reduce run " + sim::vendor_library(side.machine) +
         "'s, as it tunes them (PCCL implements only all-gather and reduce-scatter: Thesis §6.2)";
}

}  // namespace paratwin::predict

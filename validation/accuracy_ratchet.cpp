#include "validation/accuracy_ratchet.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "common/input_error.hpp"
#include "common/json_file.hpp"
#include "common/json_reader.hpp"
#include "common/report_text.hpp"
#include "common/schema_version.hpp"

namespace paratwin::validation {

namespace {

double rounded(double v) {
  const double scale = std::pow(10.0, kAccuracyDigits);
  return std::round(v * scale) / scale;
}

// The prediction a baseline holds for one point: simulated if there is one, else analytical.
const BaselinePoint* prediction_of(const Baseline& b, const std::string& label) {
  const BaselinePoint* analytical = nullptr;
  for (const auto& p : b.points) {
    if (p.label != label) continue;
    if (p.model == "simulate") return &p;
    analytical = &p;
  }
  return analytical;
}

}  // namespace

Accuracy accuracy_of(const std::vector<ReferenceSuite>& suites, const std::map<std::string, Baseline>& baselines) {
  Accuracy out;
  for (const auto& suite : suites) {
    const auto it = baselines.find(suite.name);
    if (it == baselines.end()) continue;
    std::vector<ValidationRow> rows(suite.points.size());
    for (size_t i = 0; i < suite.points.size(); ++i) {
      rows[i].suite = &suite;
      rows[i].point = &suite.points[i];
      if (const auto* p = prediction_of(it->second, suite.points[i].label)) rows[i].predicted = p->value;
    }
    std::vector<const ValidationRow*> all;
    for (const auto& r : rows) all.push_back(&r);
    const auto stats = error_stats(all);
    out[suite.name] = {stats.points, stats.failed, 100 * stats.mean_abs, 100 * stats.max_abs};
  }
  return out;
}

std::string accuracy_file(const std::string& baselines_dir) {
  return (std::filesystem::path(baselines_dir) / "accuracy.json").string();
}

std::string accuracy_json(const Accuracy& accuracy) {
  nlohmann::json suites = nlohmann::json::object();
  for (const auto& [name, a] : accuracy)
    suites[name] = {{"points", a.points},
                    {"failed", a.failed},
                    {"mean_abs_error_percent", rounded(a.mean_abs_percent)},
                    {"max_abs_error_percent", rounded(a.max_abs_percent)}};
  const nlohmann::json doc = {
      {"schema_version", kSchemaVersion},
      {"description",
       "The accuracy ratchet: per reference suite, the error against the published values of the committed "
       "baselines' predictions (simulated where the baseline holds a simulation, analytical elsewhere). A suite "
       "may not get worse than this; `paratwin baseline update` lowers it when a suite improves."},
      {"suites", suites}};
  return doc.dump(2) + "\n";
}

Accuracy parse_accuracy(const std::string& text, const std::string& source) {
  const auto doc = parse_json<InputError>(text, source);
  Accuracy out;
  try {
    if (!doc.is_object()) throw InputError("", "must be a JSON object");
    JsonReader top(doc, "");
    if (top.integer("schema_version", std::nullopt, 1) != kSchemaVersion)
      top.fail("schema_version", "= " + doc.at("schema_version").dump() + " but this paratwin reads version 1");
    top.string("description", "");
    auto suites = top.object("suites");
    for (const auto& name : suites.keys()) {
      auto s = suites.object(name);
      SuiteAccuracy a;
      a.points = static_cast<size_t>(s.integer("points", std::nullopt, 0, int64_t{1} << 20));
      a.failed = static_cast<size_t>(s.integer("failed", std::nullopt, 0, int64_t{1} << 20));
      a.mean_abs_percent = s.number("mean_abs_error_percent", std::nullopt, 0);
      a.max_abs_percent = s.number("max_abs_error_percent", std::nullopt, 0);
      s.finish();
      out[name] = a;
    }
    suites.finish();
    top.finish();
  } catch (const InputError& e) {
    throw InputError(source, e.what());
  }
  return out;
}

Accuracy committed_accuracy(const std::string& baselines_dir) {
  const auto path = accuracy_file(baselines_dir);
  if (!std::filesystem::exists(path)) return {};
  return parse_accuracy(read_text_file<InputError>(path), path);
}

std::vector<RatchetBreach> ratchet_breaches(const Accuracy& bar, const Accuracy& now) {
  const double slack = 0.5 * std::pow(10.0, -kAccuracyDigits) + 1e-9;
  std::vector<RatchetBreach> out;
  for (const auto& [name, a] : now) {
    const auto it = bar.find(name);
    if (it == bar.end()) {
      out.push_back({name, "missing", 0, a.mean_abs_percent});
      continue;
    }
    const auto& b = it->second;
    if (a.failed > b.failed)
      out.push_back({name, "failed", static_cast<double>(b.failed), static_cast<double>(a.failed)});
    if (a.mean_abs_percent > b.mean_abs_percent + slack)
      out.push_back({name, "mean_abs_error_percent", b.mean_abs_percent, a.mean_abs_percent});
    if (a.max_abs_percent > b.max_abs_percent + slack)
      out.push_back({name, "max_abs_error_percent", b.max_abs_percent, a.max_abs_percent});
  }
  return out;
}

Accuracy lowered_bar(const Accuracy& bar, const Accuracy& now, bool accept_worse) {
  Accuracy out = bar;
  for (const auto& [name, a] : now) {
    const auto it = bar.find(name);
    if (accept_worse || it == bar.end()) {
      out[name] = a;
      continue;
    }
    auto& b = out[name];
    b.points = a.points;
    b.failed = std::min(b.failed, a.failed);
    b.mean_abs_percent = std::min(b.mean_abs_percent, a.mean_abs_percent);
    b.max_abs_percent = std::min(b.max_abs_percent, a.max_abs_percent);
  }
  return out;
}

std::string ratchet_report(const std::vector<RatchetBreach>& breaches, size_t suites, const std::string& file) {
  if (breaches.empty())
    return printed("accuracy ratchet holds: %zu suite(s) no worse against the published values than %s\n", suites,
                   file.c_str());
  std::string out = printed("accuracy ratchet broken: %zu figure(s) worse against the published values than %s:\n",
                            breaches.size(), file.c_str());
  out += printed("  %-28s %-24s %10s %10s\n", "suite", "figure", "bar", "now");
  for (const auto& b : breaches) {
    if (b.figure == "missing") {
      out += printed("  %-28s %-24s %10s %10s\n", b.suite.c_str(), "no committed figure", "—", "");
      continue;
    }
    out += printed("  %-28s %-24s %10.3f %10.3f\n", b.suite.c_str(), b.figure.c_str(), b.bar, b.now);
  }
  out +=
      "A suite may only get closer to the published values. If the loss is intended (a mechanism that is "
      "right for the wrong-looking reason), commit it on purpose: `paratwin baseline update "
      "--accept-worse-accuracy`, and say why in the commit.\n";
  return out;
}

}  // namespace paratwin::validation

#include "validation/report.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <sstream>

#include "common/input_error.hpp"
#include "common/json_file.hpp"
#include "common/json_reader.hpp"
#include "common/report_text.hpp"
#include "common/schema_version.hpp"

namespace paratwin::validation {

namespace {

std::string num(double v) {
  return formatted(v, "%.4g");
}
std::string pct(double v) {
  return formatted(100 * v, "%+.1f");
}

// Baselines store 6 significant digits (stable across builds); values are compared as stored.
double stored(double v) {
  return std::stod(fixed_number(v));
}

// A plot's bar and axis end at a lower bound's value.
double upper_end(const ReferencePoint& p) {
  return p.range && std::isfinite((*p.range)[1]) ? (*p.range)[1] : p.published;
}

std::string published_text(const ReferencePoint& p) {
  if (!p.range) return num(p.published);
  if (std::isinf((*p.range)[1])) return "> " + num((*p.range)[0]);
  return num((*p.range)[0]) + "–" + num((*p.range)[1]);
}

}  // namespace

std::vector<const ValidationRow*> suite_rows(const std::vector<ValidationRow>& rows, const ReferenceSuite& suite) {
  std::vector<const ValidationRow*> out;
  for (const auto& r : rows)
    if (r.suite == &suite) out.push_back(&r);
  return out;
}

std::pair<std::vector<const ValidationRow*>, std::vector<const ValidationRow*>> split_end_to_end(
    const std::vector<ValidationRow>& rows) {
  std::pair<std::vector<const ValidationRow*>, std::vector<const ValidationRow*>> out;
  for (const auto& r : rows) (r.suite->end_to_end ? out.first : out.second).push_back(&r);
  return out;
}

ErrorStats error_stats(const std::vector<const ValidationRow*>& rows) {
  ErrorStats s;
  double sum = 0;
  for (const auto* r : rows) {
    if (!r->predicted) {
      ++s.failed;
      continue;
    }
    ++s.points;
    const double e = std::fabs(r->relative_error());
    sum += e;
    s.max_abs = std::max(s.max_abs, e);
  }
  s.mean_abs = s.points > 0 ? sum / static_cast<double>(s.points) : 0;
  return s;
}

std::vector<const ValidationRow*> held_out(const std::vector<const ValidationRow*>& rows) {
  std::vector<const ValidationRow*> out;
  for (const auto* r : rows)
    if (!r->point->calibration) out.push_back(r);
  return out;
}

std::vector<StackStats> stack_stats(const std::vector<const ValidationRow*>& rows) {
  std::map<std::string, std::vector<const ValidationRow*>> by_stack;
  for (const auto* r : rows)
    if (!r->stack.empty()) by_stack[r->stack].push_back(r);
  std::vector<StackStats> out;
  for (const auto& [stack, set] : by_stack) {
    const auto kept = held_out(set);
    out.push_back({stack, error_stats(set), error_stats(kept), set.size() - kept.size()});
  }
  return out;
}

std::string validation_csv(const std::vector<ValidationRow>& rows) {
  std::ostringstream o;
  o << "suite,label,machine,gpus,metric,end_to_end,published,range_low,range_high,model,predicted,error_percent,"
       "analytical,versus_analytical_percent,iteration_s,configuration,fits,error,predicted_low,predicted_high,"
       "stack\n";
  for (const auto& r : rows) {
    const auto& p = *r.point;
    o << csv_field(r.suite->name) << ',' << csv_field(p.label) << ',' << csv_field(p.machine) << ',' << r.gpus << ','
      << to_string(r.suite->metric) << ',' << (r.suite->end_to_end ? "true" : "false") << ','
      << fixed_number(p.published) << ',' << (p.range ? fixed_number((*p.range)[0]) : "") << ','
      << (p.range && std::isfinite((*p.range)[1]) ? fixed_number((*p.range)[1]) : "") << ',' << r.model << ','
      << (r.predicted ? fixed_number(*r.predicted) : "") << ','
      << (r.predicted ? formatted(100 * r.relative_error(), "%.2f") : "") << ','
      << (r.analytical ? fixed_number(*r.analytical) : "") << ','
      << (r.versus_analytical() ? formatted(100 * *r.versus_analytical(), "%.2f") : "") << ','
      << (r.predicted ? fixed_number(r.iteration) : "") << ',' << csv_field(r.configuration) << ','
      << (r.fits ? "true" : "false") << ',' << csv_field(r.error) << ','
      << (r.predicted_range ? fixed_number((*r.predicted_range)[0]) : "") << ','
      << (r.predicted_range ? fixed_number((*r.predicted_range)[1]) : "") << ',' << csv_field(r.stack) << '\n';
  }
  return o.str();
}

std::string validation_text(const std::vector<ReferenceSuite>& suites, const std::vector<ValidationRow>& rows) {
  std::string out;
  for (const auto& suite : suites) {
    const auto set = suite_rows(rows, suite);
    out += printed("\n%s: %s\n  (%s, %s; %s)\n", suite.name.c_str(), suite.title.c_str(), suite.source_label().c_str(),
                   suite.where.c_str(), to_string(suite.metric));
    out += printed("  %-44s %7s %-10s %12s %12s %9s %12s %9s\n", "point", "GPUs", "model", "published", "predicted",
                   "error", "analytical", "vs anal.");
    for (const auto* r : set) {
      const auto& p = *r->point;
      const std::string label = p.label.substr(0, 44);
      const std::string published = p.range ? num((*p.range)[0]) + "-" + num((*p.range)[1]) : num(p.published);
      const std::string analytical = r->analytical ? num(*r->analytical) : "";
      if (!r->predicted) {
        out +=
            printed("  %-44s %7lld %-10s %12s %12s %9s %12s %9s  %s\n", label.c_str(), static_cast<long long>(r->gpus),
                    r->model.c_str(), published.c_str(), "failed", "", analytical.c_str(), "", r->error.c_str());
        continue;
      }
      const auto versus = r->versus_analytical();
      const std::string versus_text = versus ? pct(*versus) + "%" : "";
      const std::string range = r->predicted_range ? "  assumed values give " + num((*r->predicted_range)[0]) + "-" +
                                                         num((*r->predicted_range)[1])
                                                   : "";
      out +=
          printed("  %-44s %7lld %-10s %12s %12s %8s%% %12s %9s%s%s\n", label.c_str(), static_cast<long long>(r->gpus),
                  r->model.c_str(), published.c_str(), num(*r->predicted).c_str(), pct(r->relative_error()).c_str(),
                  analytical.c_str(), versus_text.c_str(), r->fits ? "" : "  (does not fit in memory)", range.c_str());
    }
    const auto s = error_stats(set);
    out += printed("  suite: %zu points, mean |error| %.1f %%, max %.1f %%%s\n", s.points, 100 * s.mean_abs,
                   100 * s.max_abs, s.failed ? (", " + std::to_string(s.failed) + " failed").c_str() : "");
  }
  const auto [e2e, other] = split_end_to_end(rows);
  const auto a = error_stats(e2e), b = error_stats(other);
  out += printed(
      "\nend-to-end points (%% of peak, time or throughput per iteration): %zu, mean |error| %.1f %%, max %.1f %%\n",
      a.points, 100 * a.mean_abs, 100 * a.max_abs);
  if (const auto kept = held_out(e2e); kept.size() < e2e.size()) {
    const auto k = error_stats(kept);
    out += printed(
        "end-to-end points without those a profile parameter was fitted to: %zu, mean |error| %.1f %%, max %.1f %%\n",
        k.points, 100 * k.mean_abs, 100 * k.max_abs);
  }
  if (const auto stacks = stack_stats(e2e); !stacks.empty()) {
    out += "end-to-end points by software stack (framework profile), judged on the held-out ones:\n";
    for (const auto& st : stacks)
      out += printed("  %-20s %3zu points (%zu fitted to), held out: %zu, mean |error| %.1f %%, max %.1f %%%s\n",
                     st.stack.c_str(), st.all.points + st.all.failed, st.fitted, st.held_out.points,
                     100 * st.held_out.mean_abs, 100 * st.held_out.max_abs,
                     st.held_out.failed ? (", " + std::to_string(st.held_out.failed) + " failed").c_str() : "");
  }
  if (b.points + b.failed > 0)
    out += printed("phases and collective speedups: %zu, mean |error| %.1f %%, max %.1f %%\n", b.points,
                   100 * b.mean_abs, 100 * b.max_abs);
  return out;
}

std::string validation_markdown(const std::vector<ReferenceSuite>& suites, const std::vector<ValidationRow>& rows,
                                const std::string& command) {
  std::ostringstream md;
  md << "# Predicted versus published\n\nEvery published point of `results/reference/` (the five papers' measurements "
        "and published runs outside them), predicted by paratwin. "
        "Regenerate with one command from the repository root:\n\n```\n"
     << command << "\n```\n\n";
  const auto [e2e, other] = split_end_to_end(rows);
  const auto headline = [&](const char* what, const std::vector<const ValidationRow*>& set) {
    const auto s = error_stats(set);
    md << "| " << what << " | " << s.points << " | " << s.failed << " | " << formatted(100 * s.mean_abs, "%.1f")
       << " % | " << formatted(100 * s.max_abs, "%.1f") << " % |\n";
  };
  md << "| points | predicted | failed | mean absolute error | max absolute error |\n|---|---:|---:|---:|---:|\n";
  headline("end-to-end (% of peak, time or throughput per iteration)", e2e);
  if (const auto kept = held_out(e2e); kept.size() < e2e.size())
    headline("end-to-end, without the points a profile parameter was fitted to", kept);
  headline("phases and collective speedups", other);
  md << "\nError = (predicted − published) / published; for a published range, the distance to its nearest end; for a "
        "lower bound (> value), the shortfall below it. "
        "Analytical: the closed-form model's prediction of the same configuration; versus analytical = (predicted − "
        "analytical) / analytical. "
        "Each suite has one machine; its `assumptions` say what the source does not publish. Points marked "
        "(calibration) had a profile parameter fitted to them (their note says which). A prediction followed by "
        "(low–high) is the spread over the values the source does not publish and the point lists as sensitivity "
        "(e.g. the batch size); the error is that of the assumed value.\n\n";
  md << "By software stack (the workloads' framework profiles), end-to-end points; a stack is judged on the points "
        "none of its parameters was fitted to:\n\n"
     << "| stack | points | fitted to | held out | held-out mean abs error | held-out max abs error |\n"
        "|---|---:|---:|---:|---:|---:|\n";
  for (const auto& st : stack_stats(e2e))
    md << "| " << st.stack << " | " << st.all.points + st.all.failed << " | " << st.fitted << " | "
       << st.held_out.points << (st.held_out.failed ? " (+" + std::to_string(st.held_out.failed) + " failed)" : "")
       << " | " << formatted(100 * st.held_out.mean_abs, "%.1f") << " % | "
       << formatted(100 * st.held_out.max_abs, "%.1f") << " % |\n";
  md << "\n| suite | metric | points | mean abs error | max abs error |\n|---|---|---:|---:|---:|\n";
  for (const auto& suite : suites) {
    const auto set = suite_rows(rows, suite);
    if (set.empty()) continue;
    const auto s = error_stats(set);
    md << "| [" << suite.name << "](#" << suite.name << ") | " << to_string(suite.metric) << " | " << s.points
       << (s.failed ? " (+" + std::to_string(s.failed) + " failed)" : "") << " | "
       << formatted(100 * s.mean_abs, "%.1f") << " % | " << formatted(100 * s.max_abs, "%.1f") << " % |\n";
  }
  for (const auto& suite : suites) {
    const auto set = suite_rows(rows, suite);
    if (set.empty()) continue;
    md << "\n## " << suite.name << "\n\n"
       << suite.title << " — "
       << (suite.cite.empty() ? "*" + suite.publication + "* (outside the bibliography)" : suite.cite) << ", "
       << suite.where << ". Units: " << suite.units << ".\n\n";
    if (!suite.assumptions.empty()) md << "Assumed: " << suite.assumptions << "\n\n";
    md << "![" << suite.name << "](" << suite.name << ".svg)\n\n";
    md << "| point | GPUs | configuration | published | predicted | error | model | analytical | versus analytical "
          "|\n|---|---:|---|---:|---:|---:|---|---:|---:|\n";
    for (const auto* r : set) {
      md << "| " << r->point->label << (r->point->calibration ? " (calibration)" : "") << " | " << r->gpus << " | "
         << r->configuration << " | " << published_text(*r->point) << " | "
         << (r->predicted ? num(*r->predicted) : "failed: " + r->error)
         << (r->predicted_range ? " (" + num((*r->predicted_range)[0]) + "–" + num((*r->predicted_range)[1]) + ")" : "")
         << (r->fits ? "" : " (does not fit)") << " | " << (r->predicted ? pct(r->relative_error()) + " %" : "")
         << " | " << r->model << " | " << (r->analytical ? num(*r->analytical) : "") << " | "
         << (r->versus_analytical() ? pct(*r->versus_analytical()) + " %" : "") << " |\n";
    }
  }
  return md.str();
}

std::string suite_plot_script(const ReferenceSuite& suite, const std::vector<const ValidationRow*>& rows,
                              const std::string& output) {
  std::ostringstream gp;
  gp << "set terminal svg size 760,460 dynamic font 'sans,11'\nset output " << gp_string(output) << "\n";
  gp << "set title " << gp_string(suite.name + ": " + suite.title) << " noenhanced\nset key top left\nset grid\n";
  std::set<int64_t> gpus;
  double lo = 1e300, hi = 0;
  for (const auto* r : rows) {
    gpus.insert(r->gpus);
    lo = std::min(lo, r->point->range ? (*r->point->range)[0] : r->point->published);
    hi = std::max(hi, upper_end(*r->point));
    if (r->predicted) {
      lo = std::min(lo, *r->predicted);
      hi = std::max(hi, *r->predicted);
    }
  }
  // One point per GPU count: a scaling curve. Otherwise (several configurations or collectives at one
  // count) predicted against published, with the ±15 % band around the diagonal.
  const bool curve = gpus.size() == rows.size() && gpus.size() > 1;
  gp << "$data << EOD\n";
  for (const auto* r : rows) {
    const auto& p = *r->point;
    gp << (curve ? std::to_string(r->gpus) : fixed_number(p.published)) << ' ' << fixed_number(p.published) << ' '
       << fixed_number(p.range ? (*p.range)[0] : p.published) << ' ' << fixed_number(upper_end(p)) << ' '
       << (r->predicted ? fixed_number(*r->predicted) : "NaN") << '\n';
  }
  gp << "EOD\n";
  if (curve) {
    gp << "set xlabel 'GPUs'\nset logscale x 2\nset ylabel " << gp_string(to_string(suite.metric)) << " noenhanced\n";
    gp << "plot $data using 1:2:3:4 with yerrorlines lw 2 title 'published', "
          "$data using 1:5 with linespoints lw 2 pt 7 title 'paratwin'\n";
  } else {
    const bool log = hi > 10 * lo;
    if (log) gp << "set logscale xy\n";
    const double a = log ? lo / 1.5 : 0, b = hi * 1.15;
    gp << "set xrange [" << a << ":" << b << "]\nset yrange [" << a << ":" << b << "]\nset size square\n";
    gp << "set xlabel " << gp_string("published " + std::string(to_string(suite.metric))) << " noenhanced\n";
    gp << "set ylabel " << gp_string("predicted " + std::string(to_string(suite.metric))) << " noenhanced\n";
    gp << "set key bottom right\n";
    gp << "plot x with lines lc 'gray' title 'predicted = published', 1.15*x with lines dt 2 lc 'gray' title "
          "'±15 %', 0.85*x with lines dt 2 lc 'gray' notitle, "
          "$data using 2:5:3:4 with xerrorbars pt 7 lw 2 title 'points (bars: published range)'\n";
  }
  return gp.str();
}

std::string baseline_json(const Baseline& b) {
  nlohmann::json j;
  j["schema_version"] = kSchemaVersion;  // schemas/baseline.schema.json
  j["suite"] = b.suite;
  j["metric"] = b.metric;
  j["points"] = nlohmann::json::array();
  for (const auto& p : b.points) {
    nlohmann::json point = {{"label", p.label}, {"model", p.model}, {"gpus", p.gpus}};
    if (p.value) point["value"] = stored(*p.value);
    j["points"].push_back(point);
  }
  return j.dump(2) + "\n";
}

Baseline parse_baseline(const std::string& text, const std::string& source) {
  const auto doc = parse_json<InputError>(text, source);
  Baseline b;
  try {
    if (!doc.is_object()) throw InputError("", "must be a JSON object");
    JsonReader top(doc, "");
    // Absent from baselines written before schema version 1.
    if (top.has("schema_version") && top.integer("schema_version", std::nullopt, 1) != kSchemaVersion)
      top.fail("schema_version", "= " + doc.at("schema_version").dump() + " but this paratwin reads version " +
                                     std::to_string(kSchemaVersion));
    b.suite = top.string("suite");
    b.metric = top.string("metric");
    std::set<std::pair<std::string, std::string>> seen;
    for (auto& p : top.objects("points")) {
      BaselinePoint point;
      point.label = p.string("label");
      point.model = p.choice("model", {"analytical", "simulate"});
      if (!seen.insert({point.label, point.model}).second)
        throw InputError(p.path(), "point \"" + point.label + "\" (" + point.model + ") is listed twice");
      point.gpus = p.integer("gpus", std::nullopt, 1, int64_t{1} << 22);
      if (p.has("value")) {  // absent: the prediction failed
        point.value = p.number("value", std::nullopt, 0);
        if (*point.value <= 0)
          throw InputError(p.child_path("value"), "= 0 but every metric of a prediction is positive");
      }
      p.finish();
      b.points.push_back(std::move(point));
    }
    top.finish();
  } catch (const InputError& e) {
    throw InputError(source, e.what());
  }
  return b;
}

std::vector<BaselineChange> compare_baselines(const Baseline& before, const Baseline& after, double tolerance) {
  std::map<std::pair<std::string, std::string>, const BaselinePoint*> old;
  for (const auto& p : before.points) old[{p.label, p.model}] = &p;
  std::vector<BaselineChange> out;
  std::set<std::pair<std::string, std::string>> seen;
  for (const auto& p : after.points) {
    BaselineChange c;
    c.suite = after.suite;
    c.label = p.label;
    c.model = p.model;
    c.gpus = p.gpus;
    if (p.value) c.after = stored(*p.value);
    const auto it = old.find({p.label, p.model});
    seen.insert({p.label, p.model});
    if (it == old.end()) {
      c.beyond = true;  // new point
    } else {
      if (it->second->value) c.before = stored(*it->second->value);
      if (c.before && c.after) {
        c.change = (*c.after - *c.before) / *c.before;
        c.beyond = std::fabs(c.change) > tolerance;
      } else {
        c.beyond = c.before.has_value() != c.after.has_value();
      }
    }
    out.push_back(c);
  }
  for (const auto& p : before.points)
    if (!seen.count({p.label, p.model})) {
      BaselineChange c;
      c.suite = before.suite;
      c.label = p.label;
      c.model = p.model;
      c.gpus = p.gpus;
      c.before = p.value;
      c.beyond = true;  // removed
      out.push_back(c);
    }
  return out;
}

std::string changes_table(const std::vector<BaselineChange>& changes, bool beyond_only) {
  std::ostringstream o;
  char line[512];
  std::snprintf(line, sizeof line, "  %-26s %-44s %-10s %7s %12s %12s %9s\n", "suite", "point", "model", "GPUs",
                "baseline", "now", "change");
  o << line;
  for (const auto& c : changes) {
    if (beyond_only && !c.beyond) continue;
    const std::string before = c.before ? num(*c.before) : "—", after = c.after ? num(*c.after) : "—";
    const std::string change = c.before && c.after ? pct(c.change) + " %" : (c.before ? "removed" : "added");
    std::snprintf(line, sizeof line, "  %-26s %-44s %-10s %7lld %12s %12s %9s%s\n", c.suite.c_str(),
                  c.label.substr(0, 44).c_str(), c.model.c_str(), static_cast<long long>(c.gpus), before.c_str(),
                  after.c_str(), change.c_str(), c.beyond ? "  <--" : "");
    o << line;
  }
  return o.str();
}

}  // namespace paratwin::validation

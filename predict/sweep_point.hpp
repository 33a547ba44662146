#pragma once
// The points of a sweep and how one is evaluated. A point is one workload on one machine with one GPU
// count, configuration and model; it evaluates to one row of the sweep's CSV and JSON.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "predict/fidelity.hpp"
#include "predict/sweep_spec.hpp"
#include "workloads/workload.hpp"

namespace paratwin::predict {

struct SweepPoint {
  size_t index = 0;  // in spec order
  size_t workload = 0, machine = 0, configuration = 0;
  int64_t gpus = 0;
  std::string model;  // "simulate" or "analytical"
  // Hash of everything the point's result depends on (workload and machine file contents, GPUs,
  // configuration, scaling, model and its options): the journal's key, so a rerun of an edited spec
  // recomputes exactly the points whose definition changed.
  std::string key;
};

// The fidelity a simulated point runs at: the spec's, or `paratwin simulate`'s automatic choice by the
// point's GPU count.
FidelityChoice point_fidelity(const SweepSpec& spec, const SweepPoint& point);

// Spec order: workload, machine, configuration, model, then GPU count innermost, so that every scaling
// curve is a run of consecutive rows.
std::vector<SweepPoint> enumerate_points(const SweepSpec& spec);

// Runs the point (SimGrid for "simulate": call it in a child process, one engine per process). Never
// throws: an error gives a row with status "failed" and the message.
nlohmann::json evaluate_point(const SweepSpec& spec, const SweepPoint& point);

// The row of a point whose evaluation died without a result.
nlohmann::json failed_row(const SweepSpec& spec, const SweepPoint& point, const std::string& error);

// What is wrong with a row read back from a journal for `point`, as "row.KEY ..." (empty: nothing): it
// must hold every column with a value of its kind, nothing else, the point's machine, GPUs and model,
// and for status "ok" a positive iteration time and non-negative, finite measures.
std::string row_problem(const SweepSpec& spec, const SweepPoint& point, const nlohmann::json& row);

}  // namespace paratwin::predict

#pragma once
// The papers' published measurements (results/reference/*.json, format in results/reference/README.md)
// and how a prediction is scored against them.
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace paratwin::validation {

// What a suite's `published` values measure; see results/reference/README.md for how each is predicted.
enum class Metric {
  percent_of_peak,
  iteration_s,
  tflops_per_gpu,
  model_tflops_per_gpu,
  pflops,
  sequences_per_s,
  tokens_per_s_per_gpu,
  pipeline_phase_s,
  speedup
};
const char* to_string(Metric m);

struct ReferenceCollective {
  std::string kind;  // workloads::to_string of an OpKind: all_gather, reduce_scatter, all_reduce
  double bytes = 0;  // per process: output buffer (all-gather), input buffer (others)
  int64_t gpus = 0;
  std::string library, versus;
};

// A value the source does not publish and the workload assumes: the point is also predicted with each
// alternative, and the predictions' spread is reported beside the error (validate only).
struct Sensitivity {
  std::string key;  // dotted path into the workload JSON, e.g. "training.global_batch"
  std::vector<double> values;
  // Or other machines the run may have had (files resolved against the reference file), e.g. a GPU
  // whose clock under a power limit the source gives as a range: {"machines": [...]} (key empty).
  std::vector<std::string> machines;
};

struct ReferencePoint {
  std::string label;
  std::string workload;  // resolved path; empty for collective points
  std::string machine;   // built-in name, or a machine file path resolved against the reference file
  double published = 0;
  std::optional<std::array<double, 2>> range;  // published as "low-high"; "more than low": high is +inf
  std::string where, note;
  std::optional<ReferenceCollective> collective;
  // The paper does not publish the configuration and its authors chose it with a performance model:
  // predict with the configuration paratwin's analytical model ranks first (paratwin search, the
  // workload's family) instead of the one written in the workload.
  bool best_configuration = false;
  // A machine profile parameter was fitted to this point (named in its note): its error says how well
  // the fit went, not how well paratwin predicts, and the headline also gives the error without it.
  bool calibration = false;
  std::vector<Sensitivity> sensitivity;
};

struct ReferenceSuite {
  std::string file;
  std::string name, title, where, units, held_fixed, assumptions;
  std::string cite;         // the source's key in BIBLIOGRAPHY.md, bracketed: "[narayanan2021megatron]"
  std::string publication;  // a publication not in BIBLIOGRAPHY.md, by title (then `cite` is empty)
  // The source as printed: the bibliography key, or the publication's title.
  std::string source_label() const { return cite.empty() ? publication : cite; }
  Metric metric = Metric::percent_of_peak;
  bool end_to_end = true;
  std::vector<ReferencePoint> points;
};

// Throws InputError naming the file and JSON path (unknown keys, missing files, bad values).
ReferenceSuite load_reference_suite(const std::string& path);
// Every *.json of `dir`, ordered by file name; suite names must be unique and match their files.
std::vector<ReferenceSuite> load_reference_dir(const std::string& dir);
// The suites of `all` (read from `dir`) named in `names`, in that order; every suite when `names` is
// empty. Throws InputError naming --suite and the suites there are when a name is not one of them.
std::vector<ReferenceSuite> select_reference_suites(std::vector<ReferenceSuite> all,
                                                    const std::vector<std::string>& names, const std::string& dir);

// Relative error of a prediction: (predicted − published) / published, or for a range the distance to
// its nearest end over that end (0 inside).
double relative_error(const ReferencePoint& point, double predicted);

}  // namespace paratwin::validation

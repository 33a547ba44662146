// libFuzzer target for the sweep-spec reader: the input is a spec's JSON text, read as if it were the
// file tests/e2e/sweep/fuzz-spec.json of the source tree, so that the paths in the seeds (copies of the
// specs in tests/e2e/sweep/ and results/sweep/examples/) name real workload and machine files.
// parse_sweep_spec() must either accept the spec or throw an InputError that names the spec and a JSON
// path in one line; an accepted spec must hold the invariants the sweep relies on, and enumerate into
// its points (workloads × machines × configurations × models × GPU counts, in that order, each with its
// own key). Anything else — any other exception, a crash, undefined behaviour, a leak — is a bug and
// aborts.
//
// Build: scripts/build.sh fuzz      Run: tests/fuzz/run_fuzz.sh sweep_spec SECONDS
#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <set>
#include <string>

#include "common/input_error.hpp"
#include "predict/sweep_point.hpp"
#include "predict/sweep_spec.hpp"
#include "tests/fuzz/json_mutator.hpp"
#include "tests/fuzz/rejection_check.hpp"

namespace {

namespace pp = paratwin::predict;

const std::string kSpec = PARATWIN_SOURCE_DIR "/tests/e2e/sweep/fuzz-spec.json";

// Each point hashes the workload's text: a spec of many points takes long to enumerate without
// telling the fuzzer anything a smaller one does not.
constexpr double kMaxFuzzPoints = 2000;

[[noreturn]] void bug(const char* stage, const std::string& what) {
  paratwin::fuzz::bug("fuzz_sweep_spec", stage, what);
}

void check_error(const paratwin::InputError& e) {
  paratwin::fuzz::check_rejection(e, kSpec, "fuzz_sweep_spec", "InputError");
}

void check_spec(const pp::SweepSpec& s) {
  if (s.file != kSpec) bug("the spec's file is not the one read", s.file);
  // The one rule for names that become paths (common/path_name.hpp): letters, digits, '-', '_', '.',
  // and not "." nor "..".
  const bool plain = std::all_of(s.name.begin(), s.name.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.';
  });
  if (s.name.empty() || s.name == "." || s.name == ".." || !plain)
    bug("a name that is not one plain path component", s.name);
  if (s.workloads.empty() || s.workloads.size() != s.workload_files.size()) bug("workloads and their files differ", "");
  if (s.machines.empty() || s.machines.size() != s.machine_refs.size() || s.machines.size() != s.machine_texts.size())
    bug("machines and their references differ", "");
  if (s.gpus.empty() || s.gpus.front() < 1) bug("no GPU count, or one below 1", "");
  for (size_t i = 1; i < s.gpus.size(); ++i)
    if (s.gpus[i] <= s.gpus[i - 1]) bug("GPU counts not increasing", std::to_string(s.gpus[i]));
  if (s.models.empty() || s.models.size() > 2) bug("models", std::to_string(s.models.size()));
  if ((s.configurations == pp::ConfigurationMode::listed) == s.listed.empty())
    bug("listed configurations without a list, or a list without them", "");
  for (const auto& c : s.listed)
    if (!c.parallelism.is_object()) bug("a configuration's parallelism is not an object", c.parallelism.dump());
  if (s.fold && s.fidelity != "fast" && s.fidelity != "auto") bug("fold without fast or auto fidelity", s.fidelity);
}

void check_points(const pp::SweepSpec& s) {
  const double count = static_cast<double>(s.workloads.size()) * static_cast<double>(s.machines.size()) *
                       static_cast<double>(s.configuration_count()) * static_cast<double>(s.models.size()) *
                       static_cast<double>(s.gpus.size());
  if (count > kMaxFuzzPoints) return;
  const auto points = pp::enumerate_points(s);
  if (static_cast<double>(points.size()) != count)
    bug("points are not workloads × machines × configurations × models × GPU counts", std::to_string(points.size()));
  std::set<std::string> keys;
  for (size_t i = 0; i < points.size(); ++i) {
    const auto& p = points[i];
    if (p.index != i) bug("point index out of order", std::to_string(p.index));
    if (p.gpus != s.gpus[i % s.gpus.size()]) bug("GPU count is not the innermost loop", std::to_string(i));
    if (p.workload >= s.workloads.size() || p.machine >= s.machines.size() ||
        p.configuration >= s.configuration_count())
      bug("point outside the spec", std::to_string(i));
    if (p.key.size() != 16 || p.key.find_first_not_of("0123456789abcdef") != std::string::npos)
      bug("point key is not 16 hex digits", p.key);
    if (!keys.insert(p.key).second) bug("two points share a key", p.key);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  pp::SweepSpec spec;
  try {
    spec = pp::parse_sweep_spec(text, kSpec);
  } catch (const paratwin::InputError& e) {
    check_error(e);
    return 0;  // an expected outcome: the input is not a valid spec
  } catch (const std::exception& e) {
    bug("parse_sweep_spec threw a non-InputError", e.what());
  }
  try {
    check_spec(spec);
    check_points(spec);
  } catch (const std::exception& e) {
    bug("an accepted spec threw", e.what());
  }
  return 0;
}

// ---- Structure-aware mutation -------------------------------------------------------------------

namespace {

const paratwin::fuzz::Vocabulary& vocabulary() {
  static const paratwin::fuzz::Vocabulary v{
      // The spec's keys (results/sweep/README.md) and those of a configuration's sections.
      {"name",
       "description",
       "workloads",
       "machines",
       "gpus",
       "scaling",
       "configurations",
       "model",
       "fidelity",
       "library",
       "fold",
       "label",
       "parallelism",
       "optimizations",
       "micro_batch",
       "tensor",
       "pipeline",
       "expert",
       "data",
       "size",
       "zero",
       "sequence_parallel",
       "mode",
       "x",
       "y",
       "z",
       "q",
       "stages",
       "schedule",
       "chunks"},
      // Enum values, machine names, workload and machine files (relative to tests/e2e/sweep/), bad names.
      {"weak",
       "strong",
       "as-is",
       "best",
       "simulate",
       "analytical",
       "both",
       "fast",
       "exact",
       "nccl",
       "rccl",
       "cray-mpich",
       "mpi",
       "pccl",
       "megatron",
       "axonn",
       "optimus",
       "frontier",
       "perlmutter",
       "localhost",
       "summit",
       "frontear",
       "../../../workloads/examples/tiny-dp.json",
       "../../../workloads/examples/tiny-pp-1f1b.json",
       "../../../workloads/examples/tiny-gpt-3d.json",
       "../bad/x-does-not-divide.json",
       "../bad/not-json.json",
       "../../../topology/machines/localhost.json",
       "../bad-machines/unknown-endpoint.json",
       "../bad-machines/not-json.json",
       "no-such-file.json",
       "..",
       ".",
       "",
       ".hidden",
       "a/b",
       "sweep-1"},
      {0, 1, 2, 3, 4, 8, 16, 32, 64, 1000, 4096, int64_t{1} << 22, (int64_t{1} << 22) + 1, int64_t{1} << 30,
       (int64_t{1} << 30) + 1, -1, INT64_MAX},
      {0.0, 0.5, 1.0, 2.5, -1.0, 1e300}};
  return v;
}

}  // namespace

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size, size_t max_size, unsigned int seed) {
  return paratwin::fuzz::mutate_json(data, size, max_size, seed, vocabulary());
}

// libFuzzer target for the workload reader: the input is JSON text. parse_workload_text() must either
// accept it or throw a WorkloadError that names the source; an accepted workload must survive a
// to_json() round trip and lower into a Program that validate_program() accepts. Anything else — any
// other exception, a crash, undefined behaviour, a leak — is a bug and aborts.
//
// Build: CC=clang CXX=clang++ cmake -S . -B build-fuzz -DPARATWIN_FUZZ=ON -DPARATWIN_UNIT_ONLY=ON
// Run:   tests/fuzz/run_fuzz.sh SECONDS
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>

#include <nlohmann/json.hpp>

#include "workloads/error.hpp"
#include "workloads/lower.hpp"
#include "workloads/program_graph.hpp"
#include "workloads/workload.hpp"

namespace {

using paratwin::workloads::Workload;
using paratwin::workloads::WorkloadError;

constexpr const char* kSource = "fuzz.json";

[[noreturn]] void bug(const char* stage, const char* what) {
  std::fprintf(stderr, "fuzz_workload: %s: %s\n", stage, what);
  std::fflush(stderr);
  std::abort();
}

// Every rejection names where: the source, then the JSON path (or the source alone for bad JSON).
void check_error(const WorkloadError& e) {
  const std::string& path = e.path();
  if (path.rfind(kSource, 0) != 0) bug("WorkloadError without the source in its path", e.what());
  if (e.message().empty()) bug("WorkloadError with an empty message", e.what());
  if (std::string(e.what()) != path + ": " + e.message()) bug("WorkloadError what() is not path: message", e.what());
}

// Lowering is bounded by validate() at about 5e7 ops per role, which takes seconds to minutes: far
// too slow for fuzzing. Lower only workloads well below that: at most 4096 ranks and about 2e5 ops,
// estimated as validate() does (40 · layers / stages · micro-batches, × 4q for optimus) but for the
// whole program — all stages — since validate_program() builds one graph over every role (with the
// per-role estimate alone, the shipped gpt-100b-summit-384-axonn example, 48 stages × 8e4 ops, needs
// over 2 GB under ASan). Larger workloads are still parsed, validated and round-tripped.
bool small_enough_to_lower(const Workload& w) {
  const auto& p = w.parallel;
  const double ranks = static_cast<double>(w.total_ranks());
  const double ops_per_role = 40.0 * static_cast<double>(w.model.layers) /
                              static_cast<double>(p.pipeline.stages) *
                              static_cast<double>(w.micro_batches()) *
                              (p.tensor.mode == paratwin::workloads::TensorMode::optimus
                                   ? 4.0 * static_cast<double>(p.tensor.rows)
                                   : 1.0);
  return ranks <= 4096 && ops_per_role * static_cast<double>(p.pipeline.stages) <= 200000;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  Workload w;
  try {
    w = paratwin::workloads::parse_workload_text(text, kSource);
  } catch (const WorkloadError& e) {
    check_error(e);
    return 0;  // an expected outcome: the input is not a valid workload
  } catch (const std::exception& e) {
    bug("parse_workload_text threw a non-WorkloadError", e.what());
  }

  // What to_json() writes must read back as the same workload.
  try {
    const nlohmann::json once = paratwin::workloads::to_json(w);
    const nlohmann::json twice = paratwin::workloads::to_json(paratwin::workloads::parse_workload(once, ""));
    if (once != twice) bug("to_json round trip changed the workload", (once.dump() + " vs " + twice.dump()).c_str());
  } catch (const std::exception& e) {
    bug("to_json round trip of an accepted workload failed", e.what());
  }

  if (!small_enough_to_lower(w)) return 0;
  try {
    const paratwin::workloads::Program program = paratwin::workloads::lower(w);
    paratwin::workloads::validate_program(program);
  } catch (const WorkloadError& e) {
    // Accepted as an expected outcome, though validate() should have caught it first: with
    // PARATWIN_FUZZ_STRICT=1 in the environment it counts as a validator gap and aborts.
    if (std::getenv("PARATWIN_FUZZ_STRICT")) bug("lower() rejected a workload that validate() accepted", e.what());
  } catch (const std::exception& e) {
    bug("lower/validate_program of an accepted workload threw", e.what());
  }
  return 0;
}

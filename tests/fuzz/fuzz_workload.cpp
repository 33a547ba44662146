// libFuzzer target for the workload reader: the input is JSON text. parse_workload_text() must either
// accept it or throw a WorkloadError that names the source; an accepted workload must survive a
// to_json() round trip and lower into a Program that validate_program() accepts. Anything else — any
// other exception, a crash, undefined behaviour, a leak — is a bug and aborts.
//
// Byte-level mutations of JSON mostly produce syntax errors, so half of the mutations are
// structure-aware (LLVMFuzzerCustomMutator below): parse the input, change, add or remove one workload
// key with a value of the right kind, and write the JSON back. That reaches the cross-field rules and
// the lowering of every tensor mode, schedule and option.
//
// Build: scripts/build.sh fuzz      Run: tests/fuzz/run_fuzz.sh workload SECONDS
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "workloads/error.hpp"
#include "workloads/lower.hpp"
#include "workloads/program_graph.hpp"
#include "workloads/program_size.hpp"
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
  if (std::string(e.what()).find('\n') != std::string::npos) bug("WorkloadError of more than one line", e.what());
  if (e.message().empty()) bug("WorkloadError with an empty message", e.what());
  // "<path>: <message>", or "<path> = ..." for a message that starts with a value.
  const std::string joined = path + (e.message().rfind("= ", 0) == 0 ? " " : ": ") + e.message();
  if (e.what() != joined) bug("WorkloadError what() does not join path and message", e.what());
}

// validate() bounds a Program at 2.5e7 ops, which take seconds to minutes to lower: far too slow for
// fuzzing. Lower only workloads of at most 4096 ranks and about 2e5 ops (the whole program, all stages:
// validate_program() builds one graph over every role). Larger workloads are still parsed, validated
// and round-tripped.
bool small_enough_to_lower(const Workload& w) {
  return w.total_ranks() <= 4096 && paratwin::workloads::estimate_program_size(w).ops <= 200000;
}

// The size limit rests on the estimate: it must not be below the ops lowering emits.
void check_estimate(const Workload& w, const paratwin::workloads::Program& program) {
  double ops = 0;
  for (const auto& role : program.roles) ops += static_cast<double>(role.ops.size());
  const double estimate = paratwin::workloads::estimate_program_size(w).ops;
  if (ops > estimate)
    bug("estimate_program_size() is below the ops lower() emitted",
        (std::to_string(estimate) + " < " + std::to_string(ops) + ": " + paratwin::workloads::to_json(w).dump())
            .c_str());
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
    check_estimate(w, program);
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

// ---- Structure-aware mutation -------------------------------------------------------------------

extern "C" size_t LLVMFuzzerMutate(uint8_t* data, size_t size, size_t max_size);

namespace {

enum class Kind { integer, number, boolean, dtype, checkpointing, mode, schedule, order };

struct Key {
  const char* pointer;
  Kind kind;
};

// Every key of the format (workloads/README.md) with the kind of value it takes.
const Key kKeys[] = {
    {"/model/layers", Kind::integer},
    {"/model/hidden", Kind::integer},
    {"/model/heads", Kind::integer},
    {"/model/ffn_hidden", Kind::integer},
    {"/model/seq_len", Kind::integer},
    {"/model/vocab", Kind::integer},
    {"/model/moe/experts", Kind::integer},
    {"/model/moe/top_k", Kind::integer},
    {"/model/moe/capacity_factor", Kind::number},
    {"/model/moe/every", Kind::integer},
    {"/model/moe/imbalance", Kind::number},
    {"/training/global_batch", Kind::integer},
    {"/training/micro_batch", Kind::integer},
    {"/training/dtype", Kind::dtype},
    {"/training/checkpointing", Kind::checkpointing},
    {"/training/offload_optimizer", Kind::boolean},
    {"/training/offload_bucket", Kind::integer},
    {"/training/fp32_gradient_copy", Kind::boolean},
    {"/parallelism/data/size", Kind::integer},
    {"/parallelism/data/zero", Kind::integer},
    {"/parallelism/tensor/mode", Kind::mode},
    {"/parallelism/tensor/size", Kind::integer},
    {"/parallelism/tensor/q", Kind::integer},
    {"/parallelism/tensor/x", Kind::integer},
    {"/parallelism/tensor/y", Kind::integer},
    {"/parallelism/tensor/z", Kind::integer},
    {"/parallelism/sequence_parallel", Kind::boolean},
    {"/parallelism/pipeline/stages", Kind::integer},
    {"/parallelism/pipeline/schedule", Kind::schedule},
    {"/parallelism/pipeline/chunks", Kind::integer},
    {"/parallelism/pipeline/pipeline_limit", Kind::integer},
    {"/parallelism/expert/size", Kind::integer},
    {"/optimizations/overlap_all_reduce", Kind::boolean},
    {"/optimizations/overlap_reduce_scatter", Kind::boolean},
    {"/optimizations/overlap_all_gather", Kind::boolean},
    {"/optimizations/overlap_gradient_sync", Kind::boolean},
    {"/optimizations/cache_all_gather", Kind::boolean},
    {"/optimizations/duplicate_token_dropping", Kind::boolean},
    {"/optimizations/comm_aware_checkpointing", Kind::boolean},
    {"/optimizations/scatter_gather", Kind::boolean},
    {"/placement/order", Kind::order},
    {"/placement/devices_per_node", Kind::integer},
};

template <typename T, size_t N>
const T& pick(std::minstd_rand& rng, const T (&items)[N]) {
  return items[rng() % N];
}

nlohmann::json integer_near(std::minstd_rand& rng, const nlohmann::json& old) {
  static const int64_t kInteresting[] = {0,
                                         1,
                                         2,
                                         3,
                                         4,
                                         5,
                                         6,
                                         7,
                                         8,
                                         12,
                                         16,
                                         24,
                                         32,
                                         48,
                                         64,
                                         96,
                                         128,
                                         256,
                                         1024,
                                         4096,
                                         65536,
                                         1 << 20,
                                         1 << 22,
                                         1 << 24,
                                         1 << 30,
                                         int64_t{1} << 31,
                                         int64_t{1} << 40,
                                         -1,
                                         INT64_MAX};
  if (old.is_number_integer() && rng() % 2 == 0) {
    const int64_t v = old.get<int64_t>();
    switch (rng() % 4) {
      case 0:
        return v / 2;
      case 1:
        return v < (INT64_MAX / 2) ? v * 2 : v;
      case 2:
        return v < INT64_MAX ? v + 1 : v;
      default:
        return v > INT64_MIN ? v - 1 : v;
    }
  }
  return pick(rng, kInteresting);
}

nlohmann::json value_for(std::minstd_rand& rng, Kind kind, const nlohmann::json& old) {
  static const char* const kDtypes[] = {"bf16", "fp16", "fp32"};
  static const char* const kCheckpointing[] = {"none", "full", "selective"};
  static const char* const kModes[] = {"none", "megatron", "optimus", "axonn"};
  static const char* const kSchedules[] = {"1f1b", "gpipe", "interleaved", "axonn"};
  static const char* const kAxes[] = {"tensor", "col", "row", "x", "y", "z", "expert", "pipe", "data"};
  static const double kNumbers[] = {0.0, 0.5, 1.0, 1.25, 2.0, 4.0, 1e6};
  switch (kind) {
    case Kind::integer:
      return integer_near(rng, old);
    case Kind::number:
      return pick(rng, kNumbers);
    case Kind::boolean:
      return old.is_boolean() ? !old.get<bool>() : true;
    case Kind::dtype:
      return pick(rng, kDtypes);
    case Kind::checkpointing:
      return pick(rng, kCheckpointing);
    case Kind::mode:
      return pick(rng, kModes);
    case Kind::schedule:
      return pick(rng, kSchedules);
    case Kind::order: {
      std::vector<std::string> axes(std::begin(kAxes), std::end(kAxes));
      std::shuffle(axes.begin(), axes.end(), rng);
      axes.resize(1 + rng() % axes.size());
      return axes;
    }
  }
  return nullptr;
}

}  // namespace

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size, size_t max_size, unsigned int seed) {
  std::minstd_rand rng(seed);
  if (rng() % 2 == 0) return LLVMFuzzerMutate(data, size, max_size);
  nlohmann::json doc = nlohmann::json::parse(data, data + size, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded() || !doc.is_object()) return LLVMFuzzerMutate(data, size, max_size);
  const int changes = 1 + static_cast<int>(rng() % 3);
  for (int i = 0; i < changes; ++i) {
    const Key& key = pick(rng, kKeys);
    const nlohmann::json::json_pointer ptr(key.pointer);
    const nlohmann::json::json_pointer parent = ptr.parent_pointer();
    // Intermediate values that are not objects (after byte mutations) cannot take a child key.
    bool reachable = true;
    for (auto p = parent; !p.empty(); p = p.parent_pointer())
      if (doc.contains(p) && !doc.at(p).is_object()) reachable = false;
    if (!reachable) continue;
    if (doc.contains(ptr) && rng() % 8 == 0) {
      doc.at(parent).erase(ptr.back());
    } else {
      const nlohmann::json old = doc.contains(ptr) ? doc.at(ptr) : nlohmann::json();
      doc[ptr] = value_for(rng, key.kind, old);
    }
  }
  const std::string text = doc.dump(rng() % 2 ? 1 : -1);
  if (text.size() > max_size) return LLVMFuzzerMutate(data, size, max_size);
  std::memcpy(data, text.data(), text.size());
  return text.size();
}

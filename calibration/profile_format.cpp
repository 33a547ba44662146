#include "calibration/profile_format.hpp"

#include <array>
#include <utility>

#include "common/schema_version.hpp"

namespace paratwin::calibration {

namespace {

void rename(nlohmann::json& object, const char* from, const char* to) {
  if (!object.is_object() || !object.contains(from) || object.contains(to)) return;
  object[to] = std::move(object[from]);
  object.erase(from);
}

}  // namespace

void upgrade_profile(nlohmann::json& profile) {
  if (!profile.is_object() || profile.contains("schema_version")) return;
  constexpr std::array<std::pair<const char*, const char*>, 5> kMeasurementNames = {{
      {"seconds", "time_s"},
      {"gemm_alone_seconds", "gemm_alone_s"},
      {"gemm_shared_seconds", "gemm_shared_s"},
      {"collective_seconds_alone", "collective_alone_s"},
      {"collective_seconds_while_computing", "collective_while_computing_s"},
  }};
  if (auto it = profile.find("measurements"); it != profile.end() && it->is_array())
    for (auto& m : *it)
      for (const auto& [from, to] : kMeasurementNames) rename(m, from, to);
  if (auto fit = profile.find("fit"); fit != profile.end() && fit->is_object())
    if (auto shapes = fit->find("gemm_shapes"); shapes != fit->end() && shapes->is_array())
      for (auto& g : *shapes) rename(g, "seconds", "time_s");
  profile["schema_version"] = kSchemaVersion;
}

}  // namespace paratwin::calibration

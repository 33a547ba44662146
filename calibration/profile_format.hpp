#pragma once
// The profile document `calibrate micro` writes (schemas/profile.schema.json, version kSchemaVersion),
// and the one place that knows its older form: before version 1, a timed GEMM or sweep point said
// "seconds" where it now says "time_s", and the interference measurements said "gemm_alone_seconds",
// "gemm_shared_seconds", "collective_seconds_alone" and "collective_seconds_while_computing" where they
// now end in "_s" (schemas/README.md, "Names"). Readers upgrade what they read, then read one set of names.
#include <nlohmann/json.hpp>

namespace paratwin::calibration {

// A profile without "schema_version" (written before version 1) renamed in place to version 1's keys and
// stamped with it; a version-1 document, or anything that is not an object, is left as it is (the
// readers report what is wrong with it).
void upgrade_profile(nlohmann::json& profile);

}  // namespace paratwin::calibration

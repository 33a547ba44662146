#pragma once
// What `calibrate micro` and `calibrate refit` say of a fitted profile: one line per GEMM model, the
// element-wise and collective costs, message costs and the interference measured, read from the
// profile document they write.
#include <nlohmann/json.hpp>
#include <string>

namespace paratwin::calibration {

// One line per dtype: the GEMM model's parameters and how well they fit.
std::string gemm_fit_text(const nlohmann::json& profile);

// The GEMM lines, then element-wise costs, the collectives' table and what the profile takes of it,
// messages between rank pairs, the slowdown of GEMMs beside a collective, the workloads' GEMM shapes
// timed, and the extra cost of a collective step beside compute: each where the profile holds it.
std::string micro_fit_text(const nlohmann::json& profile);

}  // namespace paratwin::calibration

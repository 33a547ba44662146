#pragma once
// `paratwin validate` replaces a report folder's validation.csv and README.md whole. A run of some
// suites over a folder that holds a report of more (the committed results/validation, say) would
// leave a partial report in its place: refused, naming the folder.
#include <string>
#include <vector>

namespace paratwin::predict {

// Throws InputError naming `option` (--out) when `folder`/validation.csv lists a suite that `suites`
// does not hold.
void refuse_partial_report(const std::string& folder, const std::vector<std::string>& suites,
                           const std::string& option);

}  // namespace paratwin::predict

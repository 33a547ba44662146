#include "predict/report_guard.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>

#include "common/input_error.hpp"

namespace paratwin::predict {

void refuse_partial_report(const std::string& folder, const std::vector<std::string>& suites,
                           const std::string& option) {
  std::ifstream csv(std::filesystem::path(folder) / "validation.csv");
  if (!csv) return;  // no report there
  std::set<std::string> held;
  std::string line;
  std::getline(csv, line);  // the header
  while (std::getline(csv, line))
    if (!line.empty()) held.insert(line.substr(0, line.find(',')));  // suite names hold no comma
  std::vector<std::string> left_out;
  for (const auto& suite : held)
    if (std::find(suites.begin(), suites.end(), suite) == suites.end()) left_out.push_back(suite);
  if (left_out.empty()) return;
  std::string names;
  for (size_t i = 0; i < left_out.size() && i < 4; ++i) names += (i ? ", " : "") + left_out[i];
  if (left_out.size() > 4) names += ", ...";
  throw InputError(option + " " + folder,
                   "holds a report of " + std::to_string(held.size()) + " suites, " + std::to_string(left_out.size()) +
                       " of which (" + names +
                       ") this run does not validate: it would replace the report with a partial one; write to "
                       "another folder (--out DIR), validate every suite it holds, or remove its validation.csv");
}

}  // namespace paratwin::predict

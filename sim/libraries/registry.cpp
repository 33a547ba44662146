// The registered libraries' table, built from the list in topology/communication_libraries.hpp.
#include <stdexcept>

#include "sim/library.hpp"

namespace paratwin::sim {

const std::vector<LibrarySpec>& registered_libraries() {
#define PARATWIN_LIBRARY_ENTRY(identifier, name) identifier##_library(),
  static const std::vector<LibrarySpec> all = {PARATWIN_COMMUNICATION_LIBRARIES(PARATWIN_LIBRARY_ENTRY)};
#undef PARATWIN_LIBRARY_ENTRY
  return all;
}

const LibrarySpec& library_spec(const std::string& name) {
  std::string known;
  for (const auto& library : registered_libraries()) {
    if (name == library.name) return library;
    known += (known.empty() ? "" : ", ") + std::string(library.name);
  }
  throw std::invalid_argument("no communication library \"" + name + "\" (registered: " + known + ")");
}

}  // namespace paratwin::sim

#pragma once
// The version every JSON document paratwin writes carries as "schema_version": its schema is
// schemas/NAME.schema.json, whose names follow schemas/README.md. Raise it when a key is renamed or its
// meaning changes; the readers of saved documents (reports/saved_summary.cpp) keep reading the older ones.
namespace paratwin {

constexpr int kSchemaVersion = 1;

}  // namespace paratwin

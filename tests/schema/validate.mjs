// Validates JSON files against one of paratwin's JSON Schemas (schemas/*.schema.json, draft 2020-12) with
// Ajv in strict mode; every schema of the folder is loaded so that they may $ref each other.
// Usage: node validate.mjs SCHEMA_DIR SCHEMA_FILE JSON_FILE...  Exit 0 when every file validates; 1 naming
// each file, JSON pointer and rule that fails; 2 on a bad invocation or an unreadable file.
import Ajv2020 from "ajv/dist/2020.js";
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";

const [dir, schemaFile, ...files] = process.argv.slice(2);
if (!dir || !schemaFile || files.length === 0) {
  console.error("usage: node validate.mjs SCHEMA_DIR SCHEMA_FILE JSON_FILE...");
  process.exit(2);
}
const read = (path) => {
  try {
    return JSON.parse(readFileSync(path, "utf8"));
  } catch (e) {
    console.error(`${path}: ${e.message}`);
    process.exit(2);
  }
};
const ajv = new Ajv2020({ strict: true, allowUnionTypes: true, allErrors: true });
for (const name of readdirSync(dir).filter((f) => f.endsWith(".schema.json")))
  ajv.addSchema(read(join(dir, name)), name);
const validate = ajv.getSchema(schemaFile);
if (!validate) {
  console.error(`${schemaFile}: no such schema in ${dir}`);
  process.exit(2);
}
let failed = 0;
for (const file of files) {
  if (validate(read(file))) {
    console.log(`${file}: valid (${schemaFile})`);
    continue;
  }
  failed++;
  for (const e of validate.errors)
    console.log(`${file}: ${e.instancePath || "/"}: ${e.message}${e.params ? " " + JSON.stringify(e.params) : ""}`);
}
process.exit(failed ? 1 : 0);

#!/usr/bin/env bash
# Installs the third-party dependencies of an npm package of this repository
# (SOURCE: its package.json and package-lock.json) with `npm ci` into
# DIR/node_modules, without its `file:` dependencies on the repository's
# other packages, which scripts/install-ts-package.sh links itself: what the
# components' cache keeps of a package that is built in target/
# (scripts/test.sh), so that target/ holds the build and not the
# dependencies.
#
# usage: install-npm-deps.sh SOURCE DIR
set -euo pipefail
source="$(cd "$1" && pwd)"
dir="$2"
mkdir -p "$dir"
node - "$source" "$dir" <<'JS'
const fs = require("fs");
const path = require("path");
const [source, dir] = process.argv.slice(2);
const read = (name) => JSON.parse(fs.readFileSync(path.join(source, name), "utf8"));
const pkg = read("package.json");
const lock = read("package-lock.json");
const root = lock.packages[""];
for (const field of ["dependencies", "devDependencies", "optionalDependencies"]) {
  for (const [name, spec] of Object.entries(pkg[field] || {})) {
    if (spec.startsWith("file:")) {
      delete pkg[field][name];
      delete (root[field] || {})[name];
    }
  }
}
// The linked packages and their own trees (keys outside node_modules/).
for (const [key, entry] of Object.entries(lock.packages)) {
  if (key !== "" && (!key.startsWith("node_modules/") || entry.link)) {
    delete lock.packages[key];
  }
}
// Nothing to build here: the package itself is built in target/.
delete pkg.scripts;
const write = (name, value) =>
  fs.writeFileSync(path.join(dir, name), JSON.stringify(value, null, 2) + "\n");
write("package.json", pkg);
write("package-lock.json", lock);
JS
(cd "$dir" && npm ci --no-audit --no-fund --silent)

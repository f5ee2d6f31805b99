#!/usr/bin/env bash
# Installs and builds a TypeScript package of this repository that depends on
# the runtime package (`@mcp-resolve/runtime` as a `file:` dependency: the
# host library packages/host, the example examples/file-server-ts), from
# SOURCE under DIR, against the runtime built under RUNTIME (default
# target/ts-runtime, scripts/install-ts-runtime.sh): its files copied there,
# the runtime dependency pointed at RUNTIME (in the package and its lockfile
# alike), `npm ci` from the lockfile, then `tsc`. With DEPS, the
# third-party dependencies are those scripts/install-npm-deps.sh installed
# there (scripts/test.sh keeps them in the components' cache): DIR's
# node_modules links to each, and to RUNTIME as npm would. Prints DIR.
#
# usage: install-ts-package.sh SOURCE DIR [RUNTIME [DEPS]]
set -euo pipefail
source="$(cd "$1" && pwd)"
dir="$2"
runtime="${3:-target/ts-runtime}"
deps="${4:-}"
mkdir -p "$dir"
dir="$(cd "$dir" && pwd)"
runtime="$(cd "$runtime" && pwd)"
[ -f "$runtime/dist/index.js" ] || {
  echo "install-ts-package: $runtime has no built runtime (run scripts/install-ts-runtime.sh)" >&2
  exit 1
}
written="$(node -p 'require(process.argv[1]).dependencies["@mcp-resolve/runtime"].replace(/^file:/, "")' "$source/package.json")"
link="$(python3 -c 'import os, sys; print(os.path.relpath(sys.argv[1], sys.argv[2]))' "$runtime" "$dir")"

for file in package.json package-lock.json; do
  sed "s#\"$written\"#\"$link\"#g; s#\"file:$written\"#\"file:$link\"#g" "$source/$file" > "$dir/$file.new"
done
if [ -n "$deps" ]; then
  deps="$(cd "$deps" && pwd)"
  mv "$dir/package.json.new" "$dir/package.json"
  mv "$dir/package-lock.json.new" "$dir/package-lock.json"
  rm -rf "$dir/node_modules"
  mkdir -p "$dir/node_modules/@mcp-resolve"
  for entry in "$deps"/node_modules/* "$deps"/node_modules/.bin; do
    if [ "$(basename "$entry")" = @mcp-resolve ]; then
      echo "install-ts-package: $deps has an @mcp-resolve package of its own" >&2
      exit 1
    fi
    ln -s "$entry" "$dir/node_modules/"
  done
  ln -s "$runtime" "$dir/node_modules/@mcp-resolve/runtime"
  # (An install without DEPS starts again from nothing.)
  touch "$dir/node_modules/.linked"
elif [ -e "$dir/node_modules/.linked" ] \
   || ! cmp -s "$dir/package-lock.json.new" "$dir/package-lock.json" \
   || [ ! -x "$dir/node_modules/.bin/tsc" ]; then
  rm -rf "$dir/node_modules"
  mv "$dir/package.json.new" "$dir/package.json"
  mv "$dir/package-lock.json.new" "$dir/package-lock.json"
  (cd "$dir" && npm ci --no-audit --no-fund --silent >&2)
else
  mv "$dir/package.json.new" "$dir/package.json"
  rm "$dir/package-lock.json.new"
fi
cp "$source/tsconfig.json" "$dir/"
rm -rf "$dir/src" "$dir/dist"
cp -R "$source/src" "$dir/src"
(cd "$dir" && node_modules/.bin/tsc -p tsconfig.json >&2)
echo "$dir"

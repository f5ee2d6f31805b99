#!/usr/bin/env bash
# Installs the authorization server of the --auth-issuer tests (oidc-provider,
# OpenID-certified, with tests/fixtures/auth/auth_server.mjs) and the Node 22
# it supports under DIR (default target/node22), from the lockfile in
# scripts/node22, which it shares with the official conformance suite (one
# Node 22 for both). Prints DIR.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
exec "$here/install-with-node22.sh" node22 "${1:-target/node22}"

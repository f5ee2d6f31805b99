#!/usr/bin/env bash
# Installs the authorization server of the --auth-issuer tests (oidc-provider,
# OpenID-certified, with tests/fixtures/auth/auth_server.mjs) and the Node 22
# it supports under DIR (default target/auth-server), from the lockfile in
# scripts/auth-server. Prints DIR.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
exec "$here/install-with-node22.sh" auth-server "${1:-target/auth-server}"

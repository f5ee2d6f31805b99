#!/usr/bin/env bash
# Installs the MCP hosts the in-host tests drive through the proxy
# (tests/it/in_hosts/), at the versions pinned in scripts/hosts: Claude
# Code, Codex CLI, Gemini CLI and opencode from npm. Claude Code and Codex
# are native binaries in a platform package npm picks from
# optionalDependencies; opencode is its linux x64 baseline package alone
# (the binary its `opencode-ai` launcher runs on an x86-64 CPU without
# AVX2, so it runs on any). No package's install script runs
# but Claude Code's own, which puts its platform binary in place (a local
# copy; it fetches nothing).
# Prints DIR (default target/hosts).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
dir="${1:-target/hosts}"
mkdir -p "$dir"
dir="$(cd "$dir" && pwd)"

if ! command -v npm >/dev/null 2>&1; then
  "$here/apt-install.sh" nodejs npm >&2
fi

cp "$here/hosts/package.json" "$here/hosts/package-lock.json" "$dir/"
(cd "$dir" && npm ci --no-audit --no-fund --silent --ignore-scripts >&2)
(cd "$dir" && node node_modules/@anthropic-ai/claude-code/install.cjs >&2)
for host in claude codex gemini; do
  "$dir/node_modules/.bin/$host" --version >/dev/null
done
"$dir/node_modules/opencode-linux-x64-baseline/bin/opencode" --version >/dev/null
echo "$dir"

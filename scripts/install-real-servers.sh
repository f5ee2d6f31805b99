#!/usr/bin/env bash
# Installs the real MCP servers of tests/it/real_servers.rs, at the versions its
# snapshots were taken from (tests/fixtures/real/README.md), under DIR
# (default target/real-servers): npm packages from the lockfiles in
# scripts/real-servers/node*, PyPI packages from the frozen requirements in
# scripts/real-servers/py*-requirements.txt. Prints DIR.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
dir="${1:-target/real-servers}"
mkdir -p "$dir"
dir="$(cd "$dir" && pwd)"

if ! command -v npm >/dev/null 2>&1; then
  "$here/apt-install.sh" nodejs npm >&2
fi

for project in node node-old; do
  mkdir -p "$dir/$project"
  cp "$here/real-servers/$project/package.json" "$here/real-servers/$project/package-lock.json" "$dir/$project/"
  (cd "$dir/$project" && npm ci --no-audit --no-fund --silent >&2)
done

for venv in py py-old; do
  if [ ! -x "$dir/$venv/bin/python" ]; then
    if ! python3 -m venv "$dir/$venv" >&2 2>/dev/null; then
      "$here/apt-install.sh" python3-venv >&2
      rm -rf "${dir:?}/$venv"; python3 -m venv "$dir/$venv" >&2
    fi
  fi
  "$dir/$venv/bin/python" -m pip install -q --disable-pip-version-check \
    -r "$here/real-servers/$venv-requirements.txt" >&2
done
echo "$dir"

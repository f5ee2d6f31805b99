#!/usr/bin/env bash
# Builds the `mcp-resolve` command as a wheel for this machine's platform,
# the way ruff ships: maturin's `bin` bindings put the binary in the wheel's
# scripts, so `pip install mcp-resolve` (or `uvx mcp-resolve`) installs the
# command and nothing else (packages/pypi/pyproject.toml). maturin is
# installed, pinned (maturin_pin below), into the virtual environment
# MCP_RESOLVE_MATURIN if set (the test command's components' cache), else
# target/maturin. Prints the wheel's path.
#
# usage: scripts/pypi-wheel.sh OUT_DIR [PROFILE [MATURIN_ARGS...]]
#   OUT_DIR       where the wheel goes
#   PROFILE       the Cargo profile (default release)
#   MATURIN_ARGS  passed to `maturin build` (the test command passes
#                 `--no-default-features`, so that the wheel reuses its light
#                 build instead of compiling the command a second time)
#
# A release runs it once per platform, in a manylinux container for Linux
# (maturin names the wheel after the oldest glibc its binary needs);
# docs/publishing.md has the matrix.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/.." && pwd)"
usage="usage: scripts/pypi-wheel.sh OUT_DIR [PROFILE [MATURIN_ARGS...]]"
out="${1:?$usage}"
profile="${2:-release}"
shift $(($# < 2 ? $# : 2))
mkdir -p "$out"
out="$(cd "$out" && pwd)"

# The wheel's version is the workspace's.
workspace=$(sed -n 's/^version = "\(.*\)"$/\1/p' "$root/Cargo.toml" | head -1)
wheel_version=$(sed -n 's/^version = "\(.*\)"$/\1/p' "$root/packages/pypi/pyproject.toml" | head -1)
if [ "$workspace" != "$wheel_version" ]; then
  echo "pypi-wheel: packages/pypi/pyproject.toml has version $wheel_version, the workspace $workspace" >&2
  exit 1
fi

maturin_pin="maturin==1.16.0"
venv="${MCP_RESOLVE_MATURIN:-$root/target/maturin}"
if [ ! -x "$venv/bin/maturin" ]; then
  if ! python3 -m venv "$venv" 2>/dev/null; then
    "$here/apt-install.sh" python3 python3-venv >&2
    rm -rf "$venv"; python3 -m venv "$venv"
  fi
  "$venv/bin/python" -m pip install -q --disable-pip-version-check "$maturin_pin" >&2
fi

rm -f "$out"/mcp_resolve-"$workspace"-*.whl
(cd "$root/packages/pypi" && "$venv/bin/maturin" build --locked --profile "$profile" --out "$out" "$@" >&2)
ls "$out"/mcp_resolve-"$workspace"-*.whl

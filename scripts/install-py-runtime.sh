#!/usr/bin/env bash
# Installs the runtime package of generated Python resolvers
# (packages/python-runtime, `mcp_resolve_runtime`) into a virtual
# environment at DIR (default target/py-runtime), with its one dependency
# (jsonschema-rs, pinned), the host library (packages/python-host,
# `mcp_resolve_host`, with rfc8785), the Python MCP SDK they work with and
# FastMCP 4 on it (`mcp`, `fastmcp`, pinned: the example server
# examples/file-server-py runs in this environment) and
# mypy (the tests type-check generated modules and the runtime with `mypy
# --strict`). python3-venv from apt when missing. Prints DIR.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
package="$here/../packages/python-runtime"
dir="${1:-target/py-runtime}"

if [ ! -x "$dir/bin/python" ]; then
  mkdir -p "$(dirname "$dir")"
  if ! python3 -m venv "$dir" 2>/dev/null; then
    "$here/apt-install.sh" python3 python3-venv >&2
    rm -rf "$dir"; python3 -m venv "$dir"
  fi
fi
dir="$(cd "$dir" && pwd)"
"$dir/bin/python" -m pip install -q --disable-pip-version-check \
  "jsonschema-rs==0.60.3" "rfc8785==0.1.4" "mcp==2.3.0" "fastmcp==4.2.3" "mypy==2.4.1" >&2
# Installed as a user installs it (a wheel built from the package), again on
# every run so that the tests see the package as it is in the tree; built
# from a copy, so that the build leaves nothing in the tree.
for source in "$package" "$here/../packages/python-host"; do
  copy="$dir/package-copy"
  rm -rf "$copy"; mkdir -p "$copy"
  cp -R "$source/pyproject.toml" "$source/src" "$copy/"
  "$dir/bin/python" -m pip install -q --disable-pip-version-check --no-deps \
    --force-reinstall "$copy" >&2
  rm -rf "$copy"
done
echo "$dir"

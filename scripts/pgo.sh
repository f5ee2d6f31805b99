#!/usr/bin/env bash
# Builds the mcp-resolve binary with profile-guided optimisation (rustc's
# stable `-Cprofile-generate` / `-Cprofile-use`, as rustc and CPython ship
# theirs): an instrumented build runs scripts/pgo_train.py's workload, LLVM's
# `llvm-profdata` (rustup's `llvm-tools` component, added if missing) merges
# what it counted, and the release build then lays out and inlines the code
# by it: each function's blocks in the order they run, cold blocks apart,
# and hot functions linked together (`-z keep-text-section-prefix`). On the
# measured machine this takes 10–17% off the proxy's CPU per message
# (docs/performance.md).
#
# Linux only (the linker flag). Two release builds of the CLI in their own
# target directories under target/pgo (about 20 minutes on 2 cores from
# clean). The real server-filesystem joins the workload when the real
# servers are installed: MCP_RESOLVE_REAL_SERVERS, or the test command's
# (target/components.env), or target/real-servers
# (scripts/install-real-servers.sh).
#
#   usage: scripts/pgo.sh      prints the path of the binary it built
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

host=$(rustc -vV | sed -n 's/^host: //p')
profdata="$(rustc --print sysroot)/lib/rustlib/$host/bin/llvm-profdata"
if [ ! -x "$profdata" ]; then
  rustup component add llvm-tools-preview
fi
dir="$PWD/target/pgo"
rm -rf "$dir/profiles" "$dir/merged.profdata"
mkdir -p "$dir/profiles"

# `--target`: build scripts and proc macros are built without the flags
# (they are not what is measured).
echo "== the instrumented build" >&2
RUSTFLAGS="-Cprofile-generate=$dir/profiles" \
  cargo build --release --locked --target "$host" --target-dir "$dir/gen" -p mcp-resolve-cli

echo "== the workload" >&2
cargo build --release --locked -p file-server
real=()
servers="${MCP_RESOLVE_REAL_SERVERS:-}"
if [ -z "$servers" ] && [ -f target/components.env ]; then
  servers=$(. target/components.env && echo "${MCP_RESOLVE_REAL_SERVERS:-}")
fi
servers="${servers:-target/real-servers}"
if [ -x "$servers/node/node_modules/.bin/mcp-server-filesystem" ]; then
  real=(--real-servers "$servers")
fi
python3 scripts/pgo_train.py "$dir/gen/$host/release/mcp-resolve" target/release/file-server "${real[@]}"
"$profdata" merge -o "$dir/merged.profdata" "$dir/profiles"

echo "== the optimised build" >&2
RUSTFLAGS="-Cprofile-use=$dir/merged.profdata -Clink-arg=-Wl,-z,keep-text-section-prefix" \
  cargo build --release --locked --target "$host" --target-dir "$dir/use" -p mcp-resolve-cli
echo "$dir/use/$host/release/mcp-resolve"

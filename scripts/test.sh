#!/usr/bin/env bash
# README's test command: every test suite, including those that drive real
# components, which it installs beside the builds. The pinned third-party
# ones go to the components' cache (scripts/components.sh:
# ~/.cache/mcp-resolve/components, or MCP_RESOLVE_COMPONENTS), installed
# once and reused by every clone and run until their pins change; those
# built from this repository go to target/; Debian's packages to the system:
#
#   - cel-python (cel-venv; the CEL differential test);
#   - the Python MCP SDK, rfc8785, jsonschema, joserfc and
#     opentelemetry-proto (mcp-venv; end-to-end and conformance tests,
#     signing cross-checks, the OTLP receiver);
#   - the TypeScript SDKs v2 and v1, and Cedar's own engine prebuilt to
#     WebAssembly (@cedar-policy/cedar-wasm, the policy tests' cross-check)
#     (ts-client; scripts/install-ts-client.sh);
#   - the official MCP conformance suite, a real OAuth authorization server
#     (oidc-provider) and the Node 22 they need, one copy for both (node22;
#     scripts/install-official-conformance.sh and
#     scripts/install-auth-server.sh);
#   - the pinned real MCP servers (real-servers;
#     scripts/install-real-servers.sh);
#   - the MCP hosts Claude Code, Codex CLI, Gemini CLI and opencode from
#     npm, pinned (hosts; scripts/install-hosts.sh), for the in-host tests;
#   - maturin (maturin), which builds the light build's command as a wheel
#     into target/wheels (scripts/pypi-wheel.sh) for the PyPI test;
#   - in target/: the runtime package of generated TypeScript resolvers
#     (packages/runtime), built in target/ts-runtime
#     (scripts/install-ts-runtime.sh), and the TypeScript example server and
#     host library built against it, target/ts-example and target/ts-host
#     (scripts/install-ts-package.sh); their third-party dependencies (Ajv,
#     the TypeScript SDKs, TypeScript's compiler) from the cache, one
#     installation per lockfile (npm-deps-*; scripts/install-npm-deps.sh),
#     linked from their node_modules;
#   - the runtime package of generated Python resolvers
#     (packages/python-runtime) and the host library with jsonschema-rs and
#     mypy, in a virtual environment keyed by their sources too (py-runtime;
#     scripts/install-py-runtime.sh);
#   - in target/: the SARIF 2.1.0 schema (scripts/fetch-sarif-schema.sh);
#   - tmux from Debian's packages (the in-host tests drive the hosts'
#     terminal interfaces in it, as a user would);
#   - Neovim from Debian's packages (its LSP client on mcp-resolve lsp);
#   - redis-server and HAProxy from Debian's packages (several proxy
#     instances behind a load balancer, sharing a store; each test starts its
#     own, on a socket or a loopback port, and stops them);
#   - Chromium and ChromeDriver from Debian's packages (scripts/apt-install.sh:
#     as root or through sudo, without recommended packages, waiting for a
#     busy apt lock) for the explain page's browser test.
#
# Then `cargo test --workspace --locked` with the variables that point the
# suites at them, and CI=1 so that a component that is still missing fails
# its suite instead of skipping it; then the compiler's own suites once more
# without default features, as a build script builds it. Extra arguments go
# to `cargo test` (a filter, `--release`, …).
#
#   usage: scripts/test.sh [CARGO TEST ARGS…]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
# shellcheck source=scripts/components.sh
. scripts/components.sh

# Each stage's heading says when it began (since the test command
# started), so that a log shows where the time goes.
stage() { printf '== [%dm%02ds] %s\n' $((SECONDS / 60)) $((SECONDS % 60)) "$*"; }

# Debian packages without recommended ones, waiting for a busy apt lock.
apt_install() {
  scripts/apt-install.sh "$@"
}

# A Debian package whose service the tests do not use: installed if its
# program is missing, and its service stopped if installing started it (the
# tests start their own, on loopback, and stop them).
apt_install_tool() {
  local program=$1 package=$2 running_before
  command -v "$program" >/dev/null 2>&1 && return 0
  running_before=$(pgrep -x "$program" >/dev/null 2>&1 && echo yes || echo no)
  apt_install "$package"
  if [ "$running_before" = no ] && pgrep -x "$program" >/dev/null 2>&1; then
    (service "$package" stop || pkill -x "$program") >/dev/null 2>&1 || true
  fi
}

# The real components. The pinned third-party ones come from the cache of
# scripts/components.sh (installed there once, then reused by every clone
# and run: ~/.cache/mcp-resolve/components unless MCP_RESOLVE_COMPONENTS
# says otherwise); those built from this repository's sources go to
# target/. Run in the background beside the builds (below): the installs
# mostly wait on the network and the disk, the builds on the cores.
# The third-party dependencies of this repository's npm package SOURCE, in
# the cache (scripts/install-npm-deps.sh); prints their directory.
ts_deps() {
  local source=$1 dir
  dir=$(component_dir "npm-deps-$(basename "$source")" scripts/install-npm-deps.sh \
    "$source/package.json" "$source/package-lock.json")
  install_once "$dir" scripts/install-npm-deps.sh "$source" "$dir"
  echo "$dir"
}

install_components() {
  if ! command -v npm >/dev/null 2>&1; then
    apt_install nodejs npm
  fi
  local dir

  stage "cel-python (an independent CEL implementation, for the differential test)"
  local cel=("cel-python==0.5.0")
  dir=$(component_dir cel-venv "${cel[@]}")
  install_once "$dir" pip_venv "$dir" "${cel[@]}"
  export MCP_RESOLVE_CEL_PYTHON="$dir/bin/python"

  stage "Python MCP SDK (the real client of the end-to-end tests), joserfc (independent JOSE) and opentelemetry-proto (the OTLP receiver)"
  local client=("mcp==2.3.0" "rfc8785==0.1.4" "jsonschema==4.26.0" "joserfc==1.8.0" "opentelemetry-proto==1.45.2")
  dir=$(component_dir mcp-venv "${client[@]}")
  install_once "$dir" pip_venv "$dir" "${client[@]}"
  export MCP_RESOLVE_MCP_PYTHON="$dir/bin/python"

  stage "TypeScript SDKs v2 and v1 (the second real client, and the side-by-side host) and Cedar's engine (cedar-wasm)"
  dir=$(component_dir ts-client scripts/install-ts-client.sh scripts/ts-client/package.json scripts/ts-client/package-lock.json)
  install_once "$dir" scripts/install-ts-client.sh "$dir"
  export MCP_RESOLVE_TS_CLIENT="$dir"

  # The TypeScript packages of this repository are built in target/ (their
  # tests generate code beside them); their third-party dependencies come
  # from the cache, keyed by their lockfiles.
  stage "the runtime package of generated TypeScript resolvers (packages/runtime: Ajv, built with TypeScript's compiler)"
  dir=$(ts_deps packages/runtime)
  MCP_RESOLVE_TS_RUNTIME="$(scripts/install-ts-runtime.sh target/ts-runtime "$dir")"
  export MCP_RESOLVE_TS_RUNTIME

  stage "the TypeScript example server (examples/file-server-ts, on the TypeScript SDKs v2 and v1, against that runtime)"
  dir=$(ts_deps examples/file-server-ts)
  MCP_RESOLVE_TS_EXAMPLE="$(scripts/install-ts-package.sh examples/file-server-ts target/ts-example target/ts-runtime "$dir")"
  export MCP_RESOLVE_TS_EXAMPLE

  stage "the TypeScript host library (packages/host, against that runtime)"
  dir=$(ts_deps packages/host)
  MCP_RESOLVE_TS_HOST="$(scripts/install-ts-package.sh packages/host target/ts-host target/ts-runtime "$dir")"
  export MCP_RESOLVE_TS_HOST

  stage "the runtime package of generated Python resolvers (packages/python-runtime: jsonschema-rs), with mypy"
  # Keyed by the packages' sources too (the tests write nothing into it).
  local py_sources
  mapfile -t py_sources < <(find packages/python-runtime packages/python-host -type f \
    ! -path '*/__pycache__/*' ! -path '*.egg-info/*' | LC_ALL=C sort)
  dir=$(component_dir py-runtime scripts/install-py-runtime.sh "${py_sources[@]}")
  install_once "$dir" scripts/install-py-runtime.sh "$dir"
  export MCP_RESOLVE_PY_RUNTIME="$dir"

  stage "the official MCP conformance suite and an OAuth authorization server (oidc-provider), with the Node 22 both need"
  dir=$(component_dir node22 scripts/install-with-node22.sh scripts/install-official-conformance.sh \
    scripts/install-auth-server.sh scripts/node22/package.json scripts/node22/package-lock.json)
  # (One lockfile, one Node 22, for both.)
  install_once "$dir" scripts/install-official-conformance.sh "$dir"
  export MCP_RESOLVE_OFFICIAL_CONFORMANCE="$dir" MCP_RESOLVE_AUTH_SERVER="$dir"

  stage "real MCP servers (npm and PyPI, pinned) for the live import test"
  dir=$(component_dir real-servers scripts/install-real-servers.sh scripts/real-servers/*.txt \
    scripts/real-servers/node*/package.json scripts/real-servers/node*/package-lock.json)
  install_once "$dir" scripts/install-real-servers.sh "$dir"
  export MCP_RESOLVE_REAL_SERVERS="$dir"

  stage "MCP hosts from npm (Claude Code, Codex CLI, Gemini CLI, opencode, pinned) for the in-host tests"
  dir=$(component_dir hosts scripts/install-hosts.sh scripts/hosts/package.json scripts/hosts/package-lock.json)
  install_once "$dir" scripts/install-hosts.sh "$dir"
  export MCP_RESOLVE_HOSTS="$dir"

  stage "SARIF 2.1.0 schema (pinned serde-sarif crate, through cargo)"
  MCP_RESOLVE_SARIF_SCHEMA="$PWD/$(scripts/fetch-sarif-schema.sh target/sarif)"
  export MCP_RESOLVE_SARIF_SCHEMA

  stage "Redis and HAProxy (Debian's packages) for several proxy instances"
  apt_install_tool redis-server redis-server
  apt_install_tool haproxy haproxy
  MCP_RESOLVE_REDIS="$(command -v redis-server)"
  MCP_RESOLVE_HAPROXY="$(command -v haproxy)"
  export MCP_RESOLVE_REDIS MCP_RESOLVE_HAPROXY

  stage "tmux (Debian's package): the hosts' terminal interfaces, driven as a user would"
  apt_install_tool tmux tmux
  MCP_RESOLVE_TMUX="$(command -v tmux)"
  export MCP_RESOLVE_TMUX

  stage "Neovim (Debian's package): a real editor's LSP client for mcp-resolve lsp"
  apt_install_tool nvim neovim
  MCP_RESOLVE_NVIM="$(command -v nvim)"
  export MCP_RESOLVE_NVIM

  stage "Chromium and ChromeDriver (Debian's packages) for the explain page"
  if ! command -v chromedriver >/dev/null 2>&1 || ! command -v chromium >/dev/null 2>&1; then
    apt_install chromium chromium-driver
  fi
  MCP_RESOLVE_CHROMEDRIVER="$(command -v chromedriver)"
  MCP_RESOLVE_CHROMIUM="$(command -v chromium)"
  export MCP_RESOLVE_CHROMEDRIVER MCP_RESOLVE_CHROMIUM
}

# Every component is in place: one still missing is a failure, not a skip.
export CI="${CI:-1}"

# One build of every suite: incremental state (1.4 GB of target/debug from
# a fresh clone) would only help a second run of an edited crate; set
# CARGO_INCREMENTAL=1 to keep it while iterating.
export CARGO_INCREMENTAL="${CARGO_INCREMENTAL:-0}"

# The components' installs start now and run beside the builds; their log is
# target/components.log, shown whole when they are done, and their variables
# come back through target/components.env. If the test command stops first,
# so do they: no process outlives it.
mkdir -p target
rm -f target/components.env
stage "the real components, in the background (target/components.log)"
(
  set -e
  install_components
  export -p | grep -E '^declare -x MCP_RESOLVE_' > target/components.env
) > target/components.log 2>&1 &
components=$!
# The installs' whole tree, listed before any is stopped, so that none is
# left behind by a parent that went first.
tree_of() { local child; echo "$1"; for child in $(pgrep -P "$1"); do tree_of "$child"; done; }
stop_components() { kill $(tree_of "$components") 2>/dev/null || true; }
trap stop_components EXIT

started=$SECONDS
# README's first command builds the command without default features: the
# compiler's commands alone. They work, and the rest say what to build.
stage "the light build (--no-default-features): the compiler's commands, and a clear error for the rest"
# Its artifacts are listed (cargo's JSON messages) for the check after the
# test build.
# With the feature `workspace-hack` (no code: the dependencies' features of
# the test build, so that the test build compiles none of them again).
cargo build --locked --no-default-features --features workspace-hack --bin mcp-resolve \
  --message-format=json-render-diagnostics > target/light-build.json
# Kept beside the full build, which `cargo test` writes to the same path.
mkdir -p target/debug/light
light=target/debug/light/mcp-resolve
cp target/debug/mcp-resolve "$light"
"$light" check rules/ >/dev/null
"$light" signature rules/file-server.yaml --fingerprint-only >/dev/null
"$light" generate rules/file-server.yaml >/dev/null
for command in "proxy rules/file-server.yaml -- true" "policy schema rules/file-server.yaml" "lsp" "verify x.json --key k.jwk"; do
  set +e
  said=$($light $command 2>&1 >/dev/null); code=$?
  set -e
  case "$code:$said" in
    "2:error: \`mcp-resolve ${command%% *}"*"is not in this build"*) ;;
    *) echo "the light build's \`$command\` exited $code: $said" >&2; exit 1 ;;
  esac
done

# The wheel holds the light build's binary: what the PyPI test checks is the
# packaging (maturin's bin bindings, the tag, pip's install and uninstall) and
# the compiler's commands, which both builds answer alike; the full command's
# debug build would compile about 150 crates that `cargo test` compiles again
# with its own features (a release's wheel is the full command).
stage "the command as a wheel (maturin's bin bindings, the light build's binary) for the PyPI test"
maturin_pin=$(sed -n 's/^maturin_pin="\(.*\)"$/\1/p' scripts/pypi-wheel.sh)
MCP_RESOLVE_MATURIN=$(component_dir maturin "$maturin_pin")
install_once "$MCP_RESOLVE_MATURIN" pip_venv "$MCP_RESOLVE_MATURIN" "$maturin_pin"
export MCP_RESOLVE_MATURIN
MCP_RESOLVE_PYPI_WHEEL="$(scripts/pypi-wheel.sh target/wheels dev --no-default-features --features workspace-hack)"
export MCP_RESOLVE_PYPI_WHEEL

# A third of the suites' time is spent waiting on the processes they start
# (servers, hosts, Python's imports): one test thread more than the cores
# keeps every core busy (on two cores, the CLI's suite takes 386 s instead of
# 438 s). RUST_TEST_THREADS set by the caller wins.
export RUST_TEST_THREADS="${RUST_TEST_THREADS:-$(($(nproc) + 1))}"
# The build and the run as two stages, so that the log shows each one's time.
stage "cargo test --workspace: the build"
cargo test --workspace --locked --no-run --message-format=json-render-diagnostics "$@" \
  > target/test-build.json
# The test build compiled none of the light build's third-party
# dependencies again: crates/workspace-hack gives the light build the
# features the test build gives them. A dependency added with other features
# shows here, named, with the fix. Two kinds are compiled twice by design:
# the workspace's own crates (the example server turns on the runtime's rmcp
# serving, which the light build must not link) and schemars (rmcp gives it
# chrono, which the light build has no use for). With arguments such as
# --release the builds differ anyway, and nothing is checked.
if [ $# = 0 ]; then
  artifacts() {
    grep '"reason":"compiler-artifact"' "$1" | grep -v -e '"package_id":"path+file:' -e '#schemars@' |
      grep -o '"filenames":\[[^]]*\]' | grep -o '"/[^"]*"' | tr -d '"' | LC_ALL=C sort -u
  }
  again=$(LC_ALL=C comm -23 <(artifacts target/light-build.json) <(artifacts target/test-build.json))
  if [ -n "$again" ]; then
    echo "the test build compiled these dependencies of the light build again, with other features:" >&2
    echo "$again" | sed 's|.*/||' >&2
    echo "give crates/workspace-hack/Cargo.toml the features the test build resolves for them (its comment says how to list them)" >&2
    exit 1
  fi
fi
rm -f target/light-build.json target/test-build.json

stage "the real components (their own log follows)"
installed=0
wait "$components" || installed=$?
trap - EXIT
if [ "$installed" != 0 ]; then
  cat target/components.log
  echo "installing the real components failed: the log above, target/components.log" >&2
  exit 1
fi
cat target/components.log
# shellcheck disable=SC1091
. target/components.env
stage "cargo test --workspace: the run"
cargo test --workspace --locked "$@"

# Every build has the same grammar and defaults: `--help` of the light build
# (which states the proxy's defaults itself, src/cli/args/proxy.rs) is the full one's.
for command in "" proxy policy lsp verify import keygen; do
  if ! diff <($light $command --help) <(target/debug/mcp-resolve $command --help) >/dev/null; then
    echo "\`mcp-resolve $command --help\` differs between the light build and the full one" >&2
    exit 1
  fi
done

# The compiler in the build-script configuration (`default-features =
# false`: no preserve-order) passes its own suites too.
stage "cargo test -p mcp-resolve --no-default-features"
cargo test -p mcp-resolve --no-default-features --locked "$@"

# Every suite passed: their scratch (target/tmp: the npm test's packed and
# installed copies of the binary, the build.rs test's fresh crate, servers'
# directories; about 0.25 GB) and the light build's copy are needed no more,
# and their disk is given back. A failed run keeps them, to look into.
rm -rf target/tmp target/debug/light
prune_components

# What the suites cost (docs/performance.md compares layouts with these):
# the build's output, and the components installed beside it.
echo "== the suites took $((SECONDS - started)) s (builds included); target/ is $(du -sh target 2>/dev/null | cut -f1): the build (target/debug) $(du -sh target/debug 2>/dev/null | cut -f1), the rest the components built from this repository; the components' cache ($components_root) is $(du -sh "$components_root" 2>/dev/null | cut -f1)"

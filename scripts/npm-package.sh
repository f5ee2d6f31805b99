#!/usr/bin/env bash
# Packs the `mcp-resolve` command for npm, the way biome, esbuild and Codex
# ship theirs: one package per platform carrying the binary
# (`@mcp-resolve/cli-PLATFORM`, with the `os`, `cpu` and `libc` npm installs
# it for), and the `mcp-resolve` package, a small launcher that names every
# platform package in `optionalDependencies` and runs the one npm installed.
#
# usage: scripts/npm-package.sh BINARY PLATFORM OUT_DIR
#   BINARY    the built command (`cargo build --release --locked`, on or for
#             PLATFORM; `mcp-resolve.exe` for win32)
#   PLATFORM  darwin-arm64 | darwin-x64 | linux-arm64 | linux-x64 | win32-x64
#   OUT_DIR   where the two tarballs go (`npm pack`); printed, one a line
#
# A release runs it once per platform, each on a machine (or cross target)
# that builds that platform's binary, and packs the launcher with any one of
# them; docs/publishing.md says how. The packages' version is the
# workspace's (Cargo.toml), which packages/cli/package.json must carry too.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$here/.."
usage="usage: scripts/npm-package.sh BINARY PLATFORM OUT_DIR"
binary="${1:?$usage}"
platform="${2:?$usage}"
out="${3:?$usage}"

case "$platform" in
  darwin-arm64) os=darwin; cpu=arm64; libc= ;;
  darwin-x64) os=darwin; cpu=x64; libc= ;;
  linux-arm64) os=linux; cpu=arm64; libc=glibc ;;
  linux-x64) os=linux; cpu=x64; libc=glibc ;;
  win32-x64) os=win32; cpu=x64; libc= ;;
  *) echo "npm-package: unknown platform $platform ($usage)" >&2; exit 2 ;;
esac
exe=mcp-resolve
[ "$os" = win32 ] && exe=mcp-resolve.exe
if [ ! -f "$binary" ]; then
  echo "npm-package: no binary at $binary" >&2
  exit 2
fi

version="$(sed -n '/^\[workspace.package\]/,/^\[/s/^version = "\(.*\)"/\1/p' "$root/Cargo.toml")"
launcher_version="$(node -p 'require(process.argv[1]).version' "$root/packages/cli/package.json")"
if [ "$version" != "$launcher_version" ]; then
  echo "npm-package: packages/cli/package.json has version $launcher_version, the workspace $version" >&2
  exit 1
fi
if ! node -e '
  const pkg = require(process.argv[1]);
  const want = process.argv[2];
  const bad = Object.entries(pkg.optionalDependencies).filter(([, v]) => v !== want);
  if (bad.length) { console.error(`npm-package: optionalDependencies not at ${want}: ${bad.map(([k]) => k)}`); process.exit(1); }
' "$root/packages/cli/package.json" "$version"; then
  exit 1
fi

mkdir -p "$out"
out="$(cd "$out" && pwd)"
stage="$(mktemp -d)"
trap 'rm -rf "$stage"' EXIT

package="$stage/cli-$platform"
mkdir -p "$package/bin"
cp "$binary" "$package/bin/$exe"
chmod 755 "$package/bin/$exe"
node -e '
  const [name, version, os, cpu, libc, exe] = process.argv.slice(1);
  const pkg = {
    name, version,
    description: `The mcp-resolve command for ${os}-${cpu}${libc ? ` (${libc})` : ""}: installed by the mcp-resolve package, not on its own`,
    license: "MIT OR Apache-2.0",
    repository: { type: "git", url: "git+https://github.com/mcp-resolve/mcp-resolve.git" },
    os: [os], cpu: [cpu], ...(libc ? { libc: [libc] } : {}),
    files: [`bin/${exe}`],
    preferUnplugged: true,
  };
  process.stdout.write(JSON.stringify(pkg, null, 2) + "\n");
' "@mcp-resolve/cli-$platform" "$version" "$os" "$cpu" "$libc" "$exe" > "$package/package.json"
printf '# @mcp-resolve/cli-%s\n\nThe `mcp-resolve` binary for %s. Install `mcp-resolve`, which installs this package where it fits.\n' \
  "$platform" "$platform" > "$package/README.md"

(cd "$package" && npm pack --silent --pack-destination "$out" >/dev/null)
(cd "$root/packages/cli" && npm pack --silent --pack-destination "$out" >/dev/null)
echo "$out/mcp-resolve-cli-$platform-$version.tgz"
echo "$out/mcp-resolve-$version.tgz"

#!/usr/bin/env bash
# Installs the Cedar CLI (`cedar-policy-cli`, the same Cedar release the
# proxy decides with) under DIR, and prints the path of its `cedar` binary.
# Nothing is done again when it is in place. The policy tests validate and
# authorize with it, independently of the proxy.
#
#   usage: scripts/install-cedar-cli.sh DIR
set -euo pipefail
dir=${1:?usage: install-cedar-cli.sh DIR}
version=4.14.0
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
if [ ! -x "$dir/bin/cedar" ] || [ "$("$dir/bin/cedar" --version 2>/dev/null | awk '{print $2}')" != "$version" ]; then
  # Its own lockfile (--locked): the dependency versions its release tested.
  cargo install --quiet --locked --root "$dir" --version "$version" cedar-policy-cli >&2
fi
echo "$dir/bin/cedar"

#!/usr/bin/env bash
# Installs Debian packages for the test command: without recommended
# packages (only what the tests need), as root or through sudo, and waiting
# (up to ten minutes) for another apt or dpkg process to let go of its lock
# rather than failing at once.
#
#   usage: scripts/apt-install.sh PACKAGE…
set -euo pipefail

as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"; elif command -v sudo >/dev/null 2>&1; then sudo "$@"; else
    echo "error: installing packages needs root or sudo" >&2; return 1
  fi
}

# Runs apt-get with ARGS until it does not fail for a lock another process
# holds (dpkg's own wait covers the install; `update` has the lists lock).
apt_get() {
  local deadline=$((SECONDS + 600)) out
  while :; do
    if out=$(as_root env DEBIAN_FRONTEND=noninteractive \
      apt-get -o DPkg::Lock::Timeout=600 "$@" 2>&1); then
      return 0
    fi
    if grep -qiE 'could not get lock|unable to acquire the dpkg|is another process using it' <<<"$out" \
      && [ "$SECONDS" -lt "$deadline" ]; then
      echo "apt is busy (another process holds its lock); waiting" >&2
      sleep 5
      continue
    fi
    printf '%s\n' "$out" >&2
    return 1
  done
}

apt_get update -qq
apt_get install -y -qq --no-install-recommends "$@"

# The cache of the test command's pinned third-party components (sourced by
# scripts/test.sh and .ci/run): each one installed once into a directory
# named by what fixes its content, and reused by every clone and every run
# until that changes.
#
# What fixes a component's content is its pins: the files that list them
# (a lockfile, the install script) and the requirement strings, with the
# machine's architecture and the Node and Python it installs for. A change
# to any of them names a new directory, installed afresh; the old one is
# removed once it has gone unused for 30 days, or once three newer ones of
# its name have been used.
#
# The cache is MCP_RESOLVE_COMPONENTS if set, else
# ${XDG_CACHE_HOME:-~/.cache}/mcp-resolve/components. Setting
# MCP_RESOLVE_COMPONENTS=target/components keeps everything in the clone.
# A component is used only once its install has finished (`.complete` in
# its directory); an install that stopped half way is removed and done
# again. Two runs that want the same component take turns (`flock`): one
# installs, the other waits and reuses it.
#
# The Python runtime package and host library are cached too, keyed by
# their sources; the TypeScript packages built from this repository (the
# runtime package, the example server, the host library) are built into
# target/ on every run, from what the clone has (the tests write the code
# they generate beside them, where Node resolves their imports), and only
# their third-party dependencies are cached (npm-deps-NAME, keyed by each
# package's lockfile; scripts/install-npm-deps.sh), linked from their
# node_modules.

components_root="${MCP_RESOLVE_COMPONENTS:-${XDG_CACHE_HOME:-$HOME/.cache}/mcp-resolve/components}"
mkdir -p "$components_root"
components_root="$(cd "$components_root" && pwd)"

# component_dir NAME INPUT...: the directory of component NAME, whose
# content is fixed by INPUTs — files (their name and bytes) and strings.
component_dir() {
  local name=$1 input key
  shift
  key=$(
    {
      for input in "$@"; do
        printf '%s\n' "$input"
        if [ -f "$input" ]; then sha256sum < "$input"; fi
      done
      uname -sm
      node --version 2>/dev/null || echo "no node"
      python3 --version 2>/dev/null || echo "no python"
    } | sha256sum | cut -c1-16
  )
  echo "$components_root/$name-$key"
}

# install_once DIR COMMAND...: runs COMMAND (which installs into DIR)
# unless DIR holds a finished install, one run at a time.
install_once() {
  local dir=$1
  shift
  (
    if command -v flock >/dev/null 2>&1; then flock 9; fi
    if [ ! -e "$dir/.complete" ]; then
      rm -rf "$dir"
      "$@" >&2
      date -u +%FT%TZ > "$dir/.complete"
    fi
  ) 9> "$dir.lock"
  # Used now: not pruned for another 30 days.
  touch "$dir/.complete"
}

# Removes the components no run has used for 30 days, and of each
# component all but the three last used (a component keyed by sources that
# change, such as the Python runtime package's, leaves one behind at each
# change).
prune_components() {
  local stamp
  {
    find "$components_root" -mindepth 2 -maxdepth 2 -name .complete -mtime +30 2>/dev/null
    find "$components_root" -mindepth 2 -maxdepth 2 -name .complete -printf '%T@ %h\n' 2>/dev/null |
      sort -rn | awk '{ dir = substr($0, index($0, " ") + 1); name = dir; sub(/-[0-9a-f]+$/, "", name); if (++seen[name] > 3) print dir "/.complete" }'
  } | while read -r stamp; do
    rm -rf "$(dirname "$stamp")" "$(dirname "$stamp").lock"
  done
}

# A virtual environment at DIR with PINS installed (python3-venv from apt
# if the machine lacks it).
pip_venv() {
  local dir=$1 here
  shift
  here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
  if ! python3 -m venv "$dir" 2>/dev/null; then
    "$here/apt-install.sh" python3 python3-venv
    rm -rf "$dir"
    python3 -m venv "$dir"
  fi
  "$dir/bin/python" -m pip install -q --disable-pip-version-check "$@"
}

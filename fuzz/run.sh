#!/usr/bin/env bash
# Runs fuzz targets (libFuzzer through `cargo fuzz`, no sanitizer: stable
# Rust) after seeding their corpora (seed.py), FUZZ_JOBS at a time (default
# one after the other), and prints a table of executions per target. Any crash, timeout (an input over
# 10 s) or out-of-memory (over 2 GB) fails the run; the input is left in
# fuzz/artifacts/TARGET/.
#
# Usage: fuzz/run.sh SECONDS [TARGET...]        each target for SECONDS
#        fuzz/run.sh --runs N [TARGET...]       each target for N executions
# Every target when none is named. The table goes to fuzz/logs/table.md.
# cargo-fuzz must be on PATH (.ci/run installs it under target/tools).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"

usage="usage: fuzz/run.sh SECONDS [TARGET...] | fuzz/run.sh --runs N [TARGET...]"
limit=()
if [ "${1:-}" = "--runs" ]; then
  runs_wanted=${2:?$usage}
  limit=(-runs="$runs_wanted")
  shift 2
else
  seconds=${1:?$usage}
  limit=(-max_total_time="$seconds")
  shift
fi
if [ "$#" -gt 0 ]; then targets=("$@"); else mapfile -t targets < <(cargo fuzz list); fi

dict_of() {
  case "$1" in
    rules_yaml|rules_dsl|when_expression|format_roundtrip) echo dict/rules.dict ;;
    jsonrpc_host|jsonrpc_upstream|json_scan|host_verify|diff_witnesses|resolvers_agree|jcs) echo dict/jsonrpc.dict ;;
    policy) echo dict/policy.dict ;;
    cedar) echo dict/cedar.dict ;;
    jws_verify) echo dict/jose.dict ;;
    *) echo "" ;;
  esac
}

python3 seed.py >/dev/null
# One build, then the binaries themselves: a long run is not held up by
# (or run against) a rebuild of sources changed since it began.
if [ "$#" -gt 0 ]; then
  for target in "${targets[@]}"; do cargo fuzz build -s none "$target"; done
else
  cargo fuzz build -s none
fi
bin=target/$(rustc -vV | sed -n 's/^host: //p')/release
mkdir -p logs
table=logs/table.md

# One target: its run, then its row of the table in logs/TARGET.row; the
# exit status is libFuzzer's.
run_one() {
  local target=$1 dict log start code elapsed runs cov corpus rate
  dict=$(dict_of "$target")
  log="logs/$target.log"
  mkdir -p "corpus/$target" "artifacts/$target"
  start=$(date +%s)
  set +e
  "$bin/$target" "${limit[@]}" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
    -artifact_prefix="artifacts/$target/" ${dict:+-dict=$dict} "corpus/$target" >"$log" 2>&1
  code=$?
  set -e
  elapsed=$(( $(date +%s) - start ))
  [ "$elapsed" -gt 0 ] || elapsed=1
  runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo 0)
  cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1 | grep -o '[0-9]*' || echo 0)
  corpus=$(find "corpus/$target" -type f | wc -l)
  rate=$(( ${runs:-0} / elapsed ))
  printf '| %s | %s | %s | %s | %s | %s |\n' "$target" "$elapsed" "${runs:-0}" "$rate" "$corpus" "${cov:-0}" > "logs/$target.row"
  return "$code"
}

# FUZZ_JOBS targets at a time (default 1); each target is one process on
# one core, so on a machine with N idle cores N of them take the wall time
# of one.
jobs=${FUZZ_JOBS:-1}
declare -A pid_of=()
status=0
finish() {
  local target=$1
  if ! wait "${pid_of[$target]}"; then
    echo "FAILED: $target; the last lines of logs/$target.log:" >&2
    tail -40 "logs/$target.log" >&2
    status=1
  fi
}
running=()
for target in "${targets[@]}"; do
  if [ "${#running[@]}" -ge "$jobs" ]; then
    finish "${running[0]}"
    running=("${running[@]:1}")
  fi
  rm -f "logs/$target.row"
  run_one "$target" &
  pid_of[$target]=$!
  running+=("$target")
done
for target in "${running[@]}"; do finish "$target"; done

printf '| target | seconds | executions | per second | corpus | coverage (edges) |\n|---|---:|---:|---:|---:|---:|\n' > "$table"
for target in "${targets[@]}"; do cat "logs/$target.row" >> "$table"; done
cat "$table"
exit "$status"

#!/usr/bin/env bash
# Runs fuzz targets for a fixed time each (libFuzzer through `cargo fuzz`,
# no sanitizer: stable Rust), after seeding their corpora (seed.py), and
# prints a table of executions per target. Any crash, timeout (an input over
# 10 s) or out-of-memory (over 2 GB) fails the run; the input is left in
# fuzz/artifacts/TARGET/.
#
# Usage: fuzz/run.sh SECONDS [TARGET...]   (every target when none is named)
# cargo-fuzz must be on PATH (.ci/run installs it under target/tools).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"

seconds=${1:?usage: fuzz/run.sh SECONDS [TARGET...]}
shift
if [ "$#" -gt 0 ]; then targets=("$@"); else mapfile -t targets < <(cargo fuzz list); fi

dict_of() {
  case "$1" in
    rules_yaml|rules_dsl|when_expression|format_roundtrip) echo dict/rules.dict ;;
    jsonrpc_host|jsonrpc_upstream|host_verify|diff_witnesses|resolvers_agree) echo dict/jsonrpc.dict ;;
    policy) echo dict/policy.dict ;;
    jws_verify) echo dict/jose.dict ;;
    *) echo "" ;;
  esac
}

python3 seed.py >/dev/null
if [ "$#" -gt 0 ]; then
  for target in "${targets[@]}"; do cargo fuzz build -s none "$target"; done
else
  cargo fuzz build -s none
fi
mkdir -p logs
printf '| target | seconds | executions | per second | corpus | coverage (edges) |\n|---|---:|---:|---:|---:|---:|\n' > logs/table.md
status=0
for target in "${targets[@]}"; do
  dict=$(dict_of "$target")
  log="logs/$target.log"
  set +e
  cargo fuzz run -s none "$target" -- \
    -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
    ${dict:+-dict=$dict} >"$log" 2>&1
  code=$?
  set -e
  runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo 0)
  cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1 | grep -o '[0-9]*' || echo 0)
  corpus=$(find "corpus/$target" -type f | wc -l)
  rate=$(( ${runs:-0} / seconds ))
  printf '| %s | %s | %s | %s | %s | %s |\n' "$target" "$seconds" "${runs:-0}" "$rate" "$corpus" "${cov:-0}" >> logs/table.md
  if [ "$code" -ne 0 ]; then
    echo "FAILED: $target (exit $code); the last lines of $log:" >&2
    tail -40 "$log" >&2
    status=1
  fi
done
cat logs/table.md
exit "$status"

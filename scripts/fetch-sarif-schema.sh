#!/usr/bin/env bash
# Obtains the SARIF 2.1.0 JSON Schema (OASIS) that the SARIF output test
# validates against, and prints its path.
#
# The schema ships in the `serde-sarif` 0.8.0 crate (src/schema.json). It is
# obtained through cargo itself — a throwaway crate under DIR depends on the
# pinned version, `cargo metadata` fetches and unpacks it into cargo's own
# source cache — so no download address is written here. The extracted
# schema is checked against a pinned SHA-256, so a changed package fails here
# rather than weakening the test. Nothing is fetched when the schema is
# already in place.
#
#   usage: scripts/fetch-sarif-schema.sh [DIR]    (default: target/sarif)
set -euo pipefail

dir=${1:-target/sarif}
version=0.8.0
schema_sha256=af47e7b67f24efe74076621fd3a5fbe7398add9e84fe820c971219a385895cea
schema="$dir/sarif-schema-2.1.0.json"

sha256_of() {
  if command -v sha256sum >/dev/null 2>&1; then
    sha256sum "$1" | cut -d' ' -f1
  else
    shasum -a 256 "$1" | cut -d' ' -f1
  fi
}

if [ -f "$schema" ] && [ "$(sha256_of "$schema")" = "$schema_sha256" ]; then
  echo "$schema"
  exit 0
fi

fetch="$dir/fetch"
mkdir -p "$fetch/src"
cat > "$fetch/Cargo.toml" <<EOF
[package]
name = "sarif-schema-fetch"
version = "0.0.0"
edition = "2021"
publish = false

[dependencies]
serde-sarif = { version = "=$version", default-features = false }

[workspace]
EOF
: > "$fetch/src/lib.rs"
manifest=$(cargo metadata --quiet --format-version 1 --manifest-path "$fetch/Cargo.toml" |
  python3 -c '
import json, sys
packages = json.load(sys.stdin)["packages"]
print(next(p["manifest_path"] for p in packages
           if p["name"] == "serde-sarif" and p["version"] == sys.argv[1]))
' "$version")
source="$(dirname "$manifest")/src/schema.json"

cp "$source" "$schema.part"
actual=$(sha256_of "$schema.part")
if [ "$actual" != "$schema_sha256" ]; then
  rm -f "$schema.part"
  echo "error: the schema of serde-sarif $version has SHA-256 $actual, expected $schema_sha256" >&2
  exit 1
fi
mv "$schema.part" "$schema"
echo "$schema"

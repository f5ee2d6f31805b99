#!/usr/bin/env bash
# Fetches the SARIF 2.1.0 JSON Schema (OASIS) that the SARIF output test
# validates against, and prints its path.
#
# The schema is taken from the `serde-sarif` 0.8.0 crate on crates.io, which
# ships it as src/schema.json; the crate archive and the extracted schema are
# both checked against pinned SHA-256 sums, so a changed download fails here
# rather than weakening the test. Nothing is fetched when the schema is
# already in place.
#
#   usage: scripts/fetch-sarif-schema.sh [DIR]    (default: target/sarif)
set -euo pipefail

dir=${1:-target/sarif}
crate=serde-sarif-0.8.0
url="https://static.crates.io/crates/serde-sarif/$crate.crate"
crate_sha256=a053c46f18a8043570d4e32fefc4c6377f82bf29ec310a33e93f273048e3b0be
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

mkdir -p "$dir"
archive="$dir/$crate.crate"
if [ ! -f "$archive" ] || [ "$(sha256_of "$archive")" != "$crate_sha256" ]; then
  if command -v curl >/dev/null 2>&1; then
    curl -fsSL --retry 3 -o "$archive.part" "$url"
  else
    python3 -c 'import sys, urllib.request; urllib.request.urlretrieve(sys.argv[1], sys.argv[2])' \
      "$url" "$archive.part"
  fi
  mv "$archive.part" "$archive"
fi
actual=$(sha256_of "$archive")
if [ "$actual" != "$crate_sha256" ]; then
  echo "error: $archive has SHA-256 $actual, expected $crate_sha256" >&2
  exit 1
fi

tar -xzf "$archive" -O "$crate/src/schema.json" > "$schema.part"
actual=$(sha256_of "$schema.part")
if [ "$actual" != "$schema_sha256" ]; then
  rm -f "$schema.part"
  echo "error: the extracted schema has SHA-256 $actual, expected $schema_sha256" >&2
  exit 1
fi
mv "$schema.part" "$schema"
echo "$schema"

#!/usr/bin/env bash
# Merges every result folder under IN (one per matrix cell) into one cross-browser report in OUT.
# Usage: ci/merge-results.sh IN OUT
set -euo pipefail
in=$1
out=$2
mapfile -t folders < <(find "$in" -name results.json -printf '%h\n' | sort)
if [ ${#folders[@]} -eq 0 ]; then
  mkdir -p "$out"
  echo "No matrix cell produced results; see the suite jobs' logs." > "$out/summary.md"
  exit 1
fi
cargo run --release --locked -p harness -- report merge "${folders[@]}" --out "$out"

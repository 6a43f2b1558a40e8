#!/usr/bin/env bash
# Adds every results.json under IN (the matrix cells' artifacts) to the history kept with the
# published trend site, and writes the site into OUT, with the store beside it (OUT/history.sqlite)
# so that the next publish starts from it, as asv keeps its results with its pages: no server.
# Usage: ci/publish-trend.sh IN OUT [PUBLISHED_URL]   (PUBLISHED_URL: where OUT was published last)
set -euo pipefail
in=$1
out=$2
published=${3:-}
mkdir -p "$out"
store="$out/history.sqlite"
if [ -n "$published" ] && curl -fsSL "$published/history.sqlite" -o "$store.part"; then
  mv "$store.part" "$store"
  echo "publish-trend: continuing the history published at $published"
else
  rm -f "$store.part"
  echo "publish-trend: no published history yet; starting one"
fi
harness=(cargo run --release --locked -p harness --)
"${harness[@]}" history import "$in" --history "$store" --branch "${GITHUB_REF_NAME:-main}"
"${harness[@]}" trend --history "$store" --out "$out"
# The regressions of this commit, in the job's log and summary; the publish itself does not fail on them.
if ! "${harness[@]}" history check --history "$store" > "$out/check.txt"; then
  echo "publish-trend: regressions found (see check.txt on the site)"
fi
cat "$out/check.txt"

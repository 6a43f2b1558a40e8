#!/usr/bin/env bash
# One cell of the CI browser matrix: the quick suite on BROWSER, written to OUT.
# GitHub's hosted runners ship Chrome, Firefox and Edge, and name their drivers' folders in
# CHROMEWEBDRIVER, GECKOWEBDRIVER and EDGEWEBDRIVER; elsewhere harness searches PATH.
# Usage: ci/matrix-run.sh chrome|firefox|edge OUT
set -euo pipefail
browser=$1
out=$2
case "$browser" in
  chrome) dir=${CHROMEWEBDRIVER:-} name=chromedriver ;;
  firefox) dir=${GECKOWEBDRIVER:-} name=geckodriver ;;
  edge) dir=${EDGEWEBDRIVER:-} name=msedgedriver ;;
  *) echo "usage: $0 chrome|firefox|edge OUT" >&2; exit 2 ;;
esac
exe=""
if [ "${RUNNER_OS:-}" = Windows ]; then exe=.exe; fi
args=(run --browser "$browser" --suite quick --out "$out")
if [ -n "$dir" ] && [ -f "$dir/$name$exe" ]; then
  args+=(--driver-path "$dir/$name$exe")
fi
cargo run --release --locked -p harness -- "${args[@]}"

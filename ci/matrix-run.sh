#!/usr/bin/env bash
# One cell of a CI browser matrix: a suite (default quick) on platforms (default webgpu) in
# headless BROWSER, written to OUT. browsers.yml runs the quick suite on WebGPU; gpu.yml runs the
# default suite on webgpu,native on a self-hosted GPU runner.
# GitHub's hosted runners ship Chrome, Firefox and Edge, and name their drivers' folders in
# CHROMEWEBDRIVER, GECKOWEBDRIVER and EDGEWEBDRIVER; elsewhere harness searches PATH.
# Usage: ci/matrix-run.sh chrome|firefox|edge OUT [SUITE [PLATFORMS]]
set -euo pipefail
usage="usage: $0 chrome|firefox|edge OUT [quick|default|full [PLATFORM,...]]"
if [ $# -lt 2 ] || [ $# -gt 4 ]; then echo "$usage" >&2; exit 2; fi
browser=$1
out=$2
suite=${3:-quick}
platforms=${4:-webgpu}
case "$browser" in
  chrome) dir=${CHROMEWEBDRIVER:-} name=chromedriver ;;
  firefox) dir=${GECKOWEBDRIVER:-} name=geckodriver ;;
  edge) dir=${EDGEWEBDRIVER:-} name=msedgedriver ;;
  *) echo "$usage" >&2; exit 2 ;;
esac
exe=""
if [ "${RUNNER_OS:-}" = Windows ]; then exe=.exe; fi
args=(run --browser "$browser" --suite "$suite" --platform "$platforms" --headless --out "$out")
if [ -n "$dir" ] && [ -f "$dir/$name$exe" ]; then
  args+=(--driver-path "$dir/$name$exe")
fi
cargo run --release --locked -p harness -- "${args[@]}"

#!/usr/bin/env bash
# The whole test suite: installs what is missing (ci/setup.sh), then runs every test, the end-to-end
# ones against real headless Chromium included.
set -euo pipefail
cd "$(dirname "$0")/.."
bash ci/setup.sh
# Mesa (lavapipe, for the native wgpu tests) complains without a runtime dir.
export XDG_RUNTIME_DIR="${XDG_RUNTIME_DIR:-$(mktemp -d)}"
cargo test --workspace --exclude page --locked

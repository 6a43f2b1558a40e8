#!/usr/bin/env bash
# The whole test suite: installs what is missing (ci/setup.sh), lints the CI workflows, then runs
# every test, the end-to-end ones against real headless Chromium and Firefox included.
set -euo pipefail
cd "$(dirname "$0")/.."
bash ci/setup.sh
# Mesa (lavapipe, for the native wgpu tests) complains without a runtime dir.
export XDG_RUNTIME_DIR="${XDG_RUNTIME_DIR:-$(mktemp -d)}"
bash ci/lint-workflows.sh
# --show-output: a test that skips (Edge, which cannot be installed here) says why.
cargo test --workspace --exclude page --locked -- --show-output

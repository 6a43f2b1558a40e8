#!/usr/bin/env bash
# The whole test suite: installs what is missing (ci/setup.sh), lints the CI workflows, then runs
# every test, the end-to-end ones against real headless Chromium and Firefox included.
set -euo pipefail
cd "$(dirname "$0")/.."
bash ci/setup.sh
# The test build here is from scratch (CI's clean clone, or after README's release build): incremental
# compilation's bookkeeping would only slow it.
export CARGO_INCREMENTAL="${CARGO_INCREMENTAL:-0}"
# Mesa (lavapipe, for the native wgpu tests) complains without a runtime dir.
export XDG_RUNTIME_DIR="${XDG_RUNTIME_DIR:-$(mktemp -d)}"
bash ci/lint-workflows.sh
# With cargo-nextest (on CI's machines; .config/nextest.toml): six tests at a time, each in a process
# of its own. Without it, cargo test, one test binary after another. Either way every test runs even
# after a failure, and a test that skips says why.
if cargo nextest --version >/dev/null 2>&1; then
  cargo nextest run --workspace --exclude page --locked
else
  cargo test --workspace --exclude page --locked --no-fail-fast -- --show-output
fi
# The real Edge test is ignored (Edge is not in Debian); it runs where harness finds Edge and msedgedriver.
# The binary the tests ran: `cargo run` would build harness again without the dev-dependencies'
# features (about two minutes here).
if "${CARGO_TARGET_DIR:-target}/debug/harness" browsers | grep '^usable with --browser:.*\bedge\b' >/dev/null; then
  cargo test -p harness --test e2e_browsers --locked -- --ignored --exact edge_quick_suite_when_msedgedriver_is_present --show-output
fi

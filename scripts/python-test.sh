#!/usr/bin/env bash
# The Python package as a user installs it: `pip install .` into a fresh virtual environment
# (maturin builds the binary into it), then `rubricate --version` and the module's tests.
# CI runs it from .ci/run. MATURIN_PEP517_ARGS="--profile dev" (the default here) reuses the
# test build's dependencies; unset it for the release build users get.
set -euo pipefail
cd "$(dirname "$0")/.."
export MATURIN_PEP517_ARGS="${MATURIN_PEP517_ARGS---profile dev}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
python3 -m venv "$tmp/venv"
start=$(date +%s)
"$tmp/venv/bin/pip" install -q --disable-pip-version-check . pytest
echo "python: installed in $(( $(date +%s) - start )) s: $("$tmp/venv/bin/rubricate" --version)"
cd "$tmp" && "$tmp/venv/bin/python" -m pytest -q "$OLDPWD/python/tests"

#!/usr/bin/env bash
# The test command: lint (ruff, with the complexity limit), types (mypy --strict), then the whole pytest suite.
# Called by `make test` and by .ci/run.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=.venv/bin
"$BIN/ruff" check .
"$BIN/ruff" format --check .
"$BIN/mypy"
set +e
"$BIN/python" -m pytest "$@"
code=$?
set -e
if [ "$code" -eq 5 ]; then
  echo "pytest collected no tests: failing the run" >&2
  exit 1
fi
exit "$code"

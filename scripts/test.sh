#!/usr/bin/env bash
# The test command: lint (ruff, with the complexity limit), types (mypy --strict), then the whole pytest suite.
# Called by `make test` (which .ci/run calls). Before pytest, scripts/provision.sh installs what the tests need
# beyond .venv (redis-server, Chromium) when they are missing and we are root with apt-get, or says what is missing.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=.venv/bin
"$BIN/ruff" check .
"$BIN/ruff" format --check .
"$BIN/mypy"
# The benchmarks too: scripts that import each other by bare name (import bench_crawl), so benchmarks/ is
# their search path; pyproject.toml's settings (strict) hold for them as well.
MYPYPATH=benchmarks "$BIN/mypy" benchmarks/*.py
# The tests too: no package (they import tests.conftest) but some import benchmark scripts by bare name.
MYPYPATH=benchmarks "$BIN/mypy" --explicit-package-bases tests
bash scripts/provision.sh
# Tools provision.sh unpacked into .venv/tools (where apt-get could not install them): where they are.
if [ -f .venv/tools/env ]; then
  # shellcheck source=/dev/null
  . .venv/tools/env
fi
set +e
# In parallel, one test process per logical core (pytest-xdist).
# --dist loadfile keeps a file's tests in one process, so its module fixtures (crawls of the demo web) run once.
# A later -n wins (`bash scripts/test.sh -n 0` runs the suite in this process).
"$BIN/python" -m pytest -n logical --dist loadfile "$@"
code=$?
set -e
if [ "$code" -eq 5 ]; then
  echo "pytest collected no tests: failing the run" >&2
  exit 1
fi
exit "$code"

#!/usr/bin/env bash
# What the test suite needs beyond .venv, provided by `make test` (scripts/test.sh runs this first):
#   redis-server  tests/test_frontier.py runs a real one (they fail without it; REDIS_SERVER=/path names another)
#   chromium      tests/test_report_html.py renders the report in headless Chromium (that test skips without it)
# Missing ones are installed with Debian's apt-get when we are root and have it (`apt-get update` once, then
# `apt-get install -y` for each, so one that apt lacks does not stop the other), in one line saying what and why.
# Otherwise one line says what will fail or be skipped and how to install it. Exits 0 either way: the tests
# themselves then fail or skip, each saying why.
# FEEDCENSUS_INSTALL=no: never install (a root user who does not want apt-get run).
set -euo pipefail

CHROMIUM_NAMES=(chromium chromium-browser google-chrome google-chrome-stable) # as tests/test_report_html.py

have_redis() {
  if [ -n "${REDIS_SERVER:-}" ] && [ -x "$REDIS_SERVER" ]; then
    return 0
  fi
  command -v redis-server >/dev/null 2>&1
}

have_chromium() {
  local name
  for name in "${CHROMIUM_NAMES[@]}"; do
    if command -v "$name" >/dev/null 2>&1; then
      return 0
    fi
  done
  return 1
}

# The Debian packages still missing, one a line.
missing_packages() {
  have_redis || echo redis-server
  have_chromium || echo chromium
}

# What happens without each package, for the line that says so.
consequence() {
  case "$1" in
  redis-server) echo "tests/test_frontier.py will fail without redis-server (or set REDIS_SERVER=/path/to/redis-server)" ;;
  chromium) echo "the Chromium test in tests/test_report_html.py will be skipped" ;;
  esac
}

why() {
  case "$1" in
  redis-server) echo "tests/test_frontier.py runs a real redis-server" ;;
  chromium) echo "tests/test_report_html.py renders the report in headless Chromium" ;;
  esac
}

# "a, b" from the arguments, joined by sep ($1).
join() {
  local sep=$1 out="" item
  shift
  for item in "$@"; do
    out="${out:+$out$sep}$item"
  done
  echo "$out"
}

# One line: what is missing, why it was not installed ($1), what that means and the command that installs it.
report_missing() {
  local reason=$1
  shift
  local consequences=() pkg
  for pkg in "$@"; do
    consequences+=("$(consequence "$pkg")")
  done
  echo "make test: $(join ", " "$@") not installed ($reason): $(join "; " "${consequences[@]}");" \
    "install with: sudo apt-get install $*" >&2
}

main() {
  local missing
  mapfile -t missing < <(missing_packages)
  if [ "${#missing[@]}" -eq 0 ]; then
    return 0
  fi

  local reason=""
  if [ "${FEEDCENSUS_INSTALL:-}" = "no" ]; then
    reason="FEEDCENSUS_INSTALL=no"
  elif [ "$(id -u)" -ne 0 ]; then
    reason="not root"
  elif ! command -v apt-get >/dev/null 2>&1; then
    reason="no apt-get"
  fi
  if [ -n "$reason" ]; then
    report_missing "$reason" "${missing[@]}"
    return 0
  fi

  local reasons=() pkg
  for pkg in "${missing[@]}"; do
    reasons+=("$(why "$pkg")")
  done
  echo "make test: installing $(join " and " "${missing[@]}") with apt-get ($(join "; " "${reasons[@]}"))"
  local log
  log=$(mktemp "${TMPDIR:-/tmp}/feedcensus-apt.XXXXXX")
  export DEBIAN_FRONTEND=noninteractive
  # A failed update is not the end: the package lists already there may do.
  apt-get -o DPkg::Lock::Timeout=120 update -qq >>"$log" 2>&1 || true
  for pkg in "${missing[@]}"; do
    # --no-remove: an install that would remove any installed package is refused, not carried out.
    apt-get -o DPkg::Lock::Timeout=120 install -y -qq --no-remove "$pkg" >>"$log" 2>&1 || true
  done

  mapfile -t missing < <(missing_packages)
  if [ "${#missing[@]}" -eq 0 ]; then
    rm -f "$log"
    return 0
  fi
  report_missing "apt-get failed, its output is in $log" "${missing[@]}"
}

main

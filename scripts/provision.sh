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

# Where Debian's packages are unpacked when installing them is not possible or not enough (see unpack_local):
# the tools, and an env file scripts/test.sh reads (REDIS_SERVER, FEEDCENSUS_CHROMIUM).
here=${BASH_SOURCE[0]%/*}
TOOLS_DIR=${FEEDCENSUS_TOOLS_DIR:-"$(cd "$here/.." && pwd)/.venv/tools"}
TOOLS_ENV="$TOOLS_DIR/env"
LOCAL_REDIS="$TOOLS_DIR/root/usr/bin/redis-server"
LOCAL_CHROMIUM="$TOOLS_DIR/root/usr/lib/chromium/chromium"

# Whether a program is on PATH as a file that can be run (bash's own `command -v` also names one that cannot).
runnable() {
  local path
  path=$(command -v "$1" 2>/dev/null) && [ -f "$path" ] && [ -x "$path" ]
}

have_redis() {
  if [ -n "${REDIS_SERVER:-}" ] && [ -x "$REDIS_SERVER" ]; then
    return 0
  fi
  runnable redis-server
}

have_chromium() {
  local name
  if [ -n "${FEEDCENSUS_CHROMIUM:-}" ] && [ -x "$FEEDCENSUS_CHROMIUM" ]; then
    return 0
  fi
  for name in "${CHROMIUM_NAMES[@]}"; do
    if runnable "$name"; then
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

# The Debian packages whose files a tool needs when unpacked on its own (no maintainer scripts run).
debs_of() {
  case "$1" in
  redis-server) echo "redis-server redis-tools" ;;
  chromium) echo "chromium chromium-common" ;;
  esac
}

# Unpack the missing tools from Debian's packages into $TOOLS_DIR, without installing them: for a machine where
# apt-get cannot install them (not root) or believes they are installed while their programs are not there (hidden,
# removed by hand). Needs apt-get (to download) and dpkg-deb; a tool is kept only if it runs. Says so in one line.
unpack_local() {
  command -v apt-get >/dev/null 2>&1 && command -v dpkg-deb >/dev/null 2>&1 || return 0
  local pkg deb
  echo "make test: unpacking $(join " and " "$@") from Debian's packages into $TOOLS_DIR"
  mkdir -p "$TOOLS_DIR/debs" "$TOOLS_DIR/root"
  for pkg in "$@"; do
    # shellcheck disable=SC2046  # one word a package name
    (cd "$TOOLS_DIR/debs" && apt-get download -qq $(debs_of "$pkg")) >>"$log" 2>&1 || continue
  done
  for deb in "$TOOLS_DIR"/debs/*.deb; do
    [ -e "$deb" ] && dpkg-deb -x "$deb" "$TOOLS_DIR/root" >>"$log" 2>&1
  done
  : >"$TOOLS_ENV"
  if "$LOCAL_REDIS" --version >>"$log" 2>&1; then
    echo "export REDIS_SERVER='$LOCAL_REDIS'" >>"$TOOLS_ENV"
    export REDIS_SERVER="$LOCAL_REDIS"
  fi
  if "$LOCAL_CHROMIUM" --headless --no-sandbox --version >>"$log" 2>&1; then
    echo "export FEEDCENSUS_CHROMIUM='$LOCAL_CHROMIUM'" >>"$TOOLS_ENV"
    export FEEDCENSUS_CHROMIUM="$LOCAL_CHROMIUM"
  fi
}

main() {
  local missing log
  if [ -f "$TOOLS_ENV" ]; then  # unpacked by an earlier run
    # shellcheck source=/dev/null
    . "$TOOLS_ENV"
  fi
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
  log=$(mktemp "${TMPDIR:-/tmp}/feedcensus-apt.XXXXXX")
  if [ -n "$reason" ]; then
    [ "$reason" = "not root" ] && unpack_local "${missing[@]}"
    mapfile -t missing < <(missing_packages)
    if [ "${#missing[@]}" -gt 0 ]; then
      report_missing "$reason" "${missing[@]}"
    fi
    return 0
  fi

  local reasons=() pkg
  for pkg in "${missing[@]}"; do
    reasons+=("$(why "$pkg")")
  done
  echo "make test: installing $(join " and " "${missing[@]}") with apt-get ($(join "; " "${reasons[@]}"))"
  export DEBIAN_FRONTEND=noninteractive
  # A failed update is not the end: the package lists already there may do.
  apt-get -o DPkg::Lock::Timeout=120 update -qq >>"$log" 2>&1 || true
  for pkg in "${missing[@]}"; do
    # --no-remove: an install that would remove any installed package is refused, not carried out.
    apt-get -o DPkg::Lock::Timeout=120 install -y -qq --no-remove "$pkg" >>"$log" 2>&1 || true
  done

  mapfile -t missing < <(missing_packages)
  if [ "${#missing[@]}" -gt 0 ]; then  # apt-get could not, or found them installed with their programs gone
    unpack_local "${missing[@]}"
    mapfile -t missing < <(missing_packages)
  fi
  if [ "${#missing[@]}" -eq 0 ]; then
    rm -f "$log"
    return 0
  fi
  report_missing "apt-get failed, its output is in $log" "${missing[@]}"
}

main

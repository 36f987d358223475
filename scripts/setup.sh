#!/usr/bin/env bash
# Install the system packages the tests use (when root; else say how and what will not run),
# then make .venv and install ollie_nb with its development extras (idempotent).
set -euo pipefail

LOCK_WAIT=${SETUP_LOCK_WAIT:-300}  # s to wait for another apt-get or dpkg to finish

# Wait up to $2 s while another process holds the fcntl lock on $1 (apt-get and dpkg lock
# theirs so); one line says it waits, and one what to do if the wait runs out (status 1).
wait_for_lock() {
  local file=$1 limit=$2 waited=0
  [ -e "$file" ] || return 0
  until python3 - "$file" <<'PY'
import fcntl, sys
try:  # a lock file this user cannot open: apt-get's own DPkg::Lock::Timeout waits for it
    lock = open(sys.argv[1], "a")
except OSError:
    sys.exit(0)
try:
    fcntl.lockf(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
except OSError:
    sys.exit(1)
PY
  do
    if [ "$waited" -ge "$limit" ]; then
      echo "setup: $file is still held after ${limit} s: let the other apt-get or dpkg" \
        "finish (see which: fuser -v $file), then run scripts/setup.sh again" >&2
      return 1
    fi
    [ "$waited" -gt 0 ] || echo "setup: another apt-get or dpkg holds $file; waiting up to ${limit} s" >&2
    sleep 1
    waited=$((waited + 1))
  done
}

# apt-get once the package locks are free; apt-get itself waits as long for a lock taken
# in between (DPkg::Lock::Timeout), rather than failing at once with status 100.
apt_get() {
  wait_for_lock /var/lib/dpkg/lock-frontend "$LOCK_WAIT"
  wait_for_lock /var/lib/apt/lists/lock "$LOCK_WAIT"
  DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout="$LOCK_WAIT" "$@"
}

# Sourced (tests/meta/test_setup_script.py): the functions only.
[ "${BASH_SOURCE[0]}" = "$0" ] || return 0

cd "$(dirname "$0")/.."

# Which packages are missing, and which tests each one enables.
missing=()
skipped=()
command -v dot >/dev/null 2>&1 || { missing+=(graphviz); skipped+=("plan graph rendering (graphviz)"); }
# The real-browser test (tests/browser) drives Debian's Chromium; a font keeps its text legible.
{ [ -x /usr/bin/chromium ] || command -v chromium >/dev/null 2>&1; } ||
  { missing+=(chromium); skipped+=("tests/browser (chromium)"); }
if command -v dpkg >/dev/null 2>&1 && ! dpkg -s fonts-dejavu-core >/dev/null 2>&1; then
  missing+=(fonts-dejavu-core)
fi
# The task server's PostgreSQL tests start a throwaway cluster with initdb and pg_ctl.
{ command -v initdb >/dev/null 2>&1 || compgen -G '/usr/lib/postgresql/*/bin/initdb' >/dev/null; } ||
  { missing+=(postgresql); skipped+=("tests/tasks on PostgreSQL (postgresql)"); }

if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    apt_get update -qq
    apt_get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  else
    echo "setup: missing system packages: ${missing[*]}" >&2
    if command -v apt-get >/dev/null 2>&1; then
      echo "  install them with: sudo apt-get install -y ${missing[*]}" >&2
    elif command -v brew >/dev/null 2>&1; then
      brew=("${missing[@]/fonts-dejavu-core/}")
      brew=("${brew[@]/chromium/--cask chromium}")
      echo "  install them with: brew install ${brew[*]}" >&2
    fi
    if [ ${#skipped[@]} -gt 0 ]; then
      echo "  until then these tests skip (and fail when CI=true):" >&2
      printf '    %s\n' "${skipped[@]}" >&2
    fi
  fi
fi

PY=${PYTHON:-python3}
[ -x .venv/bin/python ] || "$PY" -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip
# setuptools warns on every editable install of a flat layout ("Editable installation ...
# Please be careful with folders ..."), and pip 25+ shows a backend's warnings despite -q:
# that one warning is ignored in the build backend, where it is raised.
PYTHONWARNINGS="ignore:Editable installation" .venv/bin/python -m pip install -q -e '.[dev]'
echo "setup: ready: .venv with ollie_nb ($(.venv/bin/python -c 'import ollie_nb, sys; print(ollie_nb.__version__ if hasattr(ollie_nb, "__version__") else "dev", "on Python", sys.version.split()[0])')) and its dev extras; run .venv/bin/pytest tests/<folder> or .venv/bin/jupyter lab notebooks/"

#!/usr/bin/env bash
# Install the system packages the tests use (when root; else say how and what will not run),
# then make .venv and install ollie_nb with its development extras (idempotent).
set -euo pipefail
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
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
      "${missing[@]}" >/dev/null
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
.venv/bin/python -m pip install -q -e '.[dev]'
echo "setup: ready: .venv with ollie_nb ($(.venv/bin/python -c 'import ollie_nb, sys; print(ollie_nb.__version__ if hasattr(ollie_nb, "__version__") else "dev", "on Python", sys.version.split()[0])')) and its dev extras; run .venv/bin/pytest tests/<folder> or .venv/bin/jupyter lab notebooks/"

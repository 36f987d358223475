#!/usr/bin/env bash
# Rebuild the Binder environment from binder/ the way repo2docker does, then execute every
# notebook in notebooks/ in it. Slow (fresh venv, packages from PyPI); not part of pytest.
#
#   scripts/check_binder.sh            fresh venv in $BINDER_VENV (default /tmp/binder-venv)
#   scripts/check_binder.sh --reuse    keep an existing venv; still reinstalls this repository
#
# What it mirrors: repo2docker starts from a base environment (Python from binder/runtime.txt,
# JupyterLab 4, ipywidgets 8, jupyter_server 2, notebook), installs binder/apt.txt with apt,
# copies the repository into $HOME and runs `pip install -r binder/requirements.txt` there.
# Here HOME is a private copy of the repository (so nothing is written to the real one) and
# no OLLIE_* variable or API key is set, as on mybinder.org.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
VENV=${BINDER_VENV:-/tmp/binder-venv}
REUSE=0
[ "${1:-}" = "--reuse" ] && REUSE=1

say() { printf '== %s\n' "$*"; }
# pip's own noise about unusable find-links entries of this machine's pip config.
quiet_pip() { "$VENV/bin/python" -m pip "$@" 2> >(grep -v "^WARNING: Location 'file:" >&2); }
fail() { printf 'check_binder: %s\n' "$*" >&2; exit 1; }

runtime=$(tr -d '[:space:]' < binder/runtime.txt)
version=${runtime#python-}
PY=$(command -v "python$version" || true)
if [ -z "$PY" ]; then
  PY=$(command -v python3)
  echo "warning: python$version (binder/runtime.txt) not found; using $($PY -V)" >&2
fi

say "apt packages of binder/apt.txt"
while read -r pkg; do
  pkg=${pkg%%#*}
  pkg=${pkg//[[:space:]]/}
  [ -n "$pkg" ] || continue
  dpkg -s "$pkg" >/dev/null 2>&1 || fail "apt package '$pkg' is not installed (apt-get install -y $pkg)"
  echo "$pkg: installed"
done < binder/apt.txt

if [ "$REUSE" = 0 ] || [ ! -x "$VENV/bin/python" ]; then
  say "fresh venv $VENV ($($PY -V))"
  rm -rf "$VENV"
  "$PY" -m venv "$VENV"
  quiet_pip install -q --upgrade pip
  say "repo2docker's base environment"
  quiet_pip install -q \
    'jupyterlab==4.*' 'ipywidgets==8.*' 'jupyter_server==2.*' notebook ipykernel nbconvert
fi

WORK=$(mktemp -d "${TMPDIR:-/tmp}/ollie-binder.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
REPO=$WORK/repo
mkdir -p "$REPO"
say "repository copy in $REPO (tracked and unignored files)"
git ls-files -z --cached --others --exclude-standard |
  while IFS= read -r -d '' f; do [ -e "$f" ] && printf '%s\0' "$f"; done |
  tar --null -T - -cf - | tar -xf - -C "$REPO"

say "pip install -r binder/requirements.txt (from the repository root)"
(cd "$REPO" && quiet_pip install -q -r binder/requirements.txt)

# The environment of a Binder session: HOME is the repository, no settings of this machine.
run() {
  env -i PATH="$VENV/bin:/usr/local/bin:/usr/bin:/bin" HOME="$REPO" LANG=C.UTF-8 \
    TMPDIR="${TMPDIR:-/tmp}" PYDEVD_DISABLE_FILE_VALIDATION=1 "$@"
}

say "checks of the environment"
# From a neutral dir: the repository root holds ollie_nb/ too, and the installed one is meant.
where=$(cd "$WORK" && run python -c 'import ipywidgets, jupyterlab_widgets, ollie_nb; print(ollie_nb.__file__)')
case $where in
  "$VENV"/*) echo "ollie_nb installed: $where" ;;
  *) fail "ollie_nb is imported from $where, not from the venv" ;;
esac
extensions=$(run jupyter labextension list 2>&1)
grep -q '@jupyter-widgets/jupyterlab-manager.*enabled' <<<"$extensions" ||
  fail "the ipywidgets lab extension is not enabled in JupyterLab"
echo "ipywidgets lab extension: enabled"
run jupyter kernelspec list

shopt -s nullglob
notebooks=("$REPO"/notebooks/*.ipynb)
[ ${#notebooks[@]} -gt 0 ] || fail "no notebooks in notebooks/"

status=0
for nb in "${notebooks[@]}"; do
  name=${nb#"$REPO"/}
  started=$(date +%s)
  if (cd "$(dirname "$nb")" && run jupyter nbconvert --to notebook --execute --inplace \
      --ExecutePreprocessor.timeout=600 --ExecutePreprocessor.kernel_name=python3 \
      "$(basename "$nb")" >"$WORK/log" 2>&1); then
    echo "ok    $name ($(($(date +%s) - started)) s)"
  else
    echo "FAIL  $name ($(($(date +%s) - started)) s)"
    tail -40 "$WORK/log"
    status=1
  fi
done
[ "$status" = 0 ] && say "Binder environment: every notebook ran" || say "Binder environment: failures above"
exit "$status"

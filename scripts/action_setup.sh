#!/usr/bin/env bash
# Give the action a ci-budget command and write its path to $GITHUB_OUTPUT (`cli`, `site`,
# `version`, `installer`).
#
# - Dependencies come only from the hash-locked files in requirements/: `run` (GPU jobs) the
#   run lock, without the GitHub client; plan and report the full lock. ci-budget itself is not
#   built or installed: the launcher puts the action's own src/ first on sys.path.
# - What decides that cached files may be used lives out of reach of anything a PR runs: the
#   lock in the action's checkout, which the runner downloads afresh at the start of each job.
#   The tool cache keeps only wheel files and the list of those this interpreter needs; every
#   job reads each listed wheel once, checks its sha256 against the lock and unpacks those same
#   bytes into a folder of its own under RUNNER_TEMP (scripts/wheelhouse.py). A wheel that was
#   changed, added or swapped is refused and downloaded again; nothing else in the cache is run.
# - Cold (no list for this lock and Python yet), the bootstrap's pip downloads the locked wheels
#   (--require-hashes --no-deps --only-binary=:all:: nothing unpinned, nothing built). Pip
#   settings (PIP_INDEX_URL, ...) pass through for runners behind a mirror.
# - The launcher runs the bootstrap interpreter isolated (-I: no user site, no PYTHON* variables,
#   no current directory on the path) and without its site-packages (-S: on a GPU runner that
#   interpreter holds the test environment, whose .pth files must not run in ci-budget). The
#   dependencies' bytecode is written beside them, in this job's folder, never into the cache
#   (the interpreter's own standard library keeps its own).
set -euo pipefail

action_path=${ACTION_PATH:?ACTION_PATH must name the ci-budget checkout}
bootstrap=${CI_BUDGET_BOOTSTRAP_PYTHON:-python3}
profile=full
# setup: a stage job's `ci-budget run` (or `run --from-log`), the run lock too.
if [[ "${INPUT_COMMAND:-}" == run || "${INPUT_COMMAND:-}" == setup ]]; then profile=run; fi
lock="$action_path/requirements/$profile.txt"

fail() {
  echo "::error title=ci-budget setup::$1"
  exit 1
}

command -v "$bootstrap" >/dev/null 2>&1 ||
  fail "no '$bootstrap' on PATH to run ci-budget (set CI_BUDGET_BOOTSTRAP_PYTHON)"
# One interpreter start: the version check, the cache key's Python part and the interpreter
# itself (not a wrapper such as pyenv's shim, which would read its settings at every start).
read -r pykey python < <("$bootstrap" -I -c 'import platform, sys
if sys.version_info < (3, 10): sys.exit(3)
v = sys.version_info
print("py%d.%d-%s" % (v[0], v[1], platform.machine()), sys.executable)') || true
[[ -n "${python:-}" ]] ||
  fail "$("$bootstrap" --version 2>&1) is too old: ci-budget needs Python >= 3.10"
[[ -f "$lock" ]] || fail "no lock file $lock in the action's checkout"

version=$(sed -n 's/^__version__ = "\(.*\)"$/\1/p' "$action_path/src/ci_budget/__init__.py")
[[ -n "$version" ]] || fail "no __version__ in $action_path/src/ci_budget/__init__.py"

cache=${RUNNER_TOOL_CACHE:-${RUNNER_TEMP:-/tmp}}/ci-budget
wheels="$cache/wheels"
selection="$cache/$profile-$(sha256sum "$lock" | cut -c1-16)-$pykey.wheels"
job=$(mktemp -d "${RUNNER_TEMP:-/tmp}/ci-budget-XXXXXX")

# A long-lived runner keeps what it needs: a list no job has used for 30 days goes, and with
# it every wheel that no list names (the list in use is touched first).
prune() {
  local named
  [[ ! -f "$selection" ]] || touch "$selection" 2>/dev/null || true
  find "$cache" -maxdepth 1 -name '*.wheels' -mtime +30 -delete 2>/dev/null || true
  named=$(cat "$cache"/*.wheels 2>/dev/null | LC_ALL=C sort -u) || true
  find "$wheels" -maxdepth 1 -name '*.whl' -mtime +30 -printf '%f\n' 2>/dev/null |
    while read -r name; do
      grep -qxF -- "$name" <<<"$named" || rm -f -- "${wheels:?}/$name"
    done || true
}

unpack() {
  "$python" -I -S "$action_path/scripts/wheelhouse.py" "$lock" "$wheels" "$selection" \
    "$job/site" 2>"$job/refused"
}

# The locked wheels this interpreter needs, into the cache's wheel folder; the list last, renamed
# into place, so a job that races us finds a complete list or none.
download() {
  local tmp pip=("$python" -m pip)
  mkdir -p "$wheels"
  # What a killed job left half downloaded (a download takes seconds: an hour-old one is dead).
  find "$cache" -maxdepth 1 -name '.new-*' -mmin +60 -exec rm -rf -- {} + 2>/dev/null || true
  tmp=$(mktemp -d "$cache/.new-XXXXXX")
  # A failed or cancelled download leaves nothing in the runner's tool cache.
  trap 'rm -rf -- "$tmp"' EXIT
  trap 'exit 130' INT
  trap 'exit 143' TERM
  if ! "${pip[@]}" --version >/dev/null 2>&1; then
    # No pip beside the bootstrap: the one ensurepip bundles, in a venv of this download only.
    "$python" -m venv "$tmp/pip" >/dev/null 2>&1 ||
      fail "$python has neither pip nor ensurepip (install python3-pip or python3-venv)"
    pip=("$tmp/pip/bin/python" -m pip)
  fi
  (cd "$tmp" && "${pip[@]}" download --quiet --disable-pip-version-check --no-deps \
    --require-hashes --only-binary=:all: --dest "$tmp/wheels" -r "$lock") ||
    fail "pip could not download the locked $profile dependencies (its error is above)"
  (cd "$tmp/wheels" && find . -maxdepth 1 -name '*.whl' -printf '%f\n' | LC_ALL=C sort) \
    >"$tmp/list"
  find "$tmp/wheels" -maxdepth 1 -name '*.whl' -exec mv -f -t "$wheels" -- {} +
  mv -f -T "$tmp/list" "$selection"
  rm -rf -- "$tmp"
  trap - EXIT INT TERM
}

prune
if [[ -f "$selection" ]] && unpack; then
  used=cached
  echo "ci-budget $version: $profile dependencies from the wheels cached in $wheels," \
    "each checked against $lock"
else
  if [[ -f "$selection" ]]; then
    echo "::warning title=ci-budget setup::a cached wheel does not match the lock" \
      "($(head -n 1 "$job/refused")); downloading the $profile dependencies again"
  fi
  echo "ci-budget $version: downloading the locked $profile dependencies into $wheels"
  download
  used=pip
  unpack || fail "a downloaded wheel does not match the lock: $(head -n 1 "$job/refused")"
fi

# Written by the shell (no interpreter start).
launch='import sys; sys.path[0:0] = sys.argv[1:3]; del sys.argv[1:3]
from ci_budget.cli import main; sys.exit(main())'
mkdir -p "$job/bin"
printf '#!/usr/bin/env bash\nexec %q -I -S -c %q %q %q "$@"\n' \
  "$python" "$launch" "$action_path/src" "$job/site" >"$job/bin/ci-budget"
chmod +x "$job/bin/ci-budget"

{
  echo "cli=$job/bin/ci-budget"
  echo "site=$job/site"
  echo "version=$version"
  echo "installer=$used"
} >>"${GITHUB_OUTPUT:?GITHUB_OUTPUT is not set}"

#!/usr/bin/env bash
# Give the action a ci-budget command and write its path to $GITHUB_OUTPUT (`cli`, `venv`,
# `version`).
#
# - Dependencies come only from the hash-locked files in requirements/ (pip --require-hashes,
#   --no-deps): nothing unpinned is fetched in a job. `run` (GPU jobs) installs the run lock,
#   without the GitHub client; plan and report install the full lock.
# - ci-budget itself is not built or installed: a launcher puts the action's own src/ first on
#   sys.path, so no build backend runs in a job.
# - The virtualenv is cached under $RUNNER_TOOL_CACHE (kept between jobs on a self-hosted
#   runner), keyed by the lock's hash, the Python version and the machine; a warm job only checks
#   a stamp. uv installs when it is on PATH, else pip.
# - Never installs into the runner's Python: on a GPU runner that interpreter holds the test
#   environment. Pip settings (PIP_INDEX_URL, ...) pass through for runners behind a mirror.
set -euo pipefail

action_path=${ACTION_PATH:?ACTION_PATH must name the ci-budget checkout}
bootstrap=${CI_BUDGET_BOOTSTRAP_PYTHON:-python3}
profile=full
if [[ "${INPUT_COMMAND:-}" == run ]]; then profile=run; fi
lock="$action_path/requirements/$profile.txt"

fail() {
  echo "::error title=ci-budget setup::$1"
  exit 1
}

command -v "$bootstrap" >/dev/null 2>&1 ||
  fail "no '$bootstrap' on PATH to create the ci-budget virtualenv"
# One interpreter start: the version check and the cache key's Python part together.
pykey=$("$bootstrap" -c 'import platform, sys
if sys.version_info < (3, 10): sys.exit(3)
print("py%d.%d-%s" % (sys.version_info[0], sys.version_info[1], platform.machine()))') ||
  fail "$("$bootstrap" --version 2>&1) is too old: ci-budget needs Python >= 3.10"
[[ -f "$lock" ]] || fail "no lock file $lock in the action's checkout"

version=$(sed -n 's/^__version__ = "\(.*\)"$/\1/p' "$action_path/src/ci_budget/__init__.py")
[[ -n "$version" ]] || fail "no __version__ in $action_path/src/ci_budget/__init__.py"

lock_hash=$(sha256sum "$lock" | cut -c1-16)
cache=${RUNNER_TOOL_CACHE:-${RUNNER_TEMP:-/tmp}}/ci-budget
venv="$cache/$profile-$lock_hash-$pykey"

install() {
  local dest=$1
  if command -v uv >/dev/null 2>&1; then
    uv venv --quiet --python "$bootstrap" "$dest"
    uv pip install --quiet --python "$dest/bin/python" --no-deps --require-hashes -r "$lock"
  elif "$bootstrap" -m pip --version >/dev/null 2>&1 &&
    "$bootstrap" -c 'import sys, pip; sys.exit(tuple(map(int, pip.__version__.split(".")[:2])) < (22, 3))'; then
    # The bootstrap's pip installs into a venv without its own pip (skips ensurepip's seconds).
    "$bootstrap" -m venv --without-pip "$dest"
    "$bootstrap" -m pip --python "$dest/bin/python" install --quiet --disable-pip-version-check \
      --no-deps --require-hashes -r "$lock"
  else
    "$bootstrap" -m venv "$dest"
    "$dest/bin/python" -m pip install --quiet --disable-pip-version-check \
      --no-deps --require-hashes -r "$lock"
  fi
  printf '%s\n' "$lock_hash" >"$dest/.ci-budget-stamp"
}

if [[ -f "$venv/.ci-budget-stamp" && -x "$venv/bin/python" ]]; then
  echo "ci-budget $version: reusing the $profile dependencies cached in $venv"
else
  echo "ci-budget $version: installing $profile dependencies into $venv"
  mkdir -p "$cache"
  tmp=$(mktemp -d "$cache/.new-XXXXXX")
  install "$tmp"
  # Built aside, then renamed: a job that races us finds a complete venv or none.
  mv -T "$tmp" "$venv" 2>/dev/null || rm -rf "$tmp"
fi

# The launcher lives with this job, the venv with the runner: the code is the action's own.
bin="${RUNNER_TEMP:-/tmp}/ci-budget-bin-$$"
mkdir -p "$bin"
"$venv/bin/python" -I - "$action_path/src" "$bin/ci_budget_main.py" <<'PY'
import sys
src, dest = sys.argv[1], sys.argv[2]
with open(dest, "w", encoding="utf-8") as out:
    out.write(f"import sys\nsys.path.insert(0, {src!r})\n")
    out.write("from ci_budget.cli import main\nsys.exit(main())\n")
PY
printf '#!/usr/bin/env bash\nexec %q -I %q "$@"\n' "$venv/bin/python" "$bin/ci_budget_main.py" >"$bin/ci-budget"
chmod +x "$bin/ci-budget"
"$bin/ci-budget" --version

{
  echo "cli=$bin/ci-budget"
  echo "venv=$venv"
  echo "version=$version"
} >>"${GITHUB_OUTPUT:?GITHUB_OUTPUT is not set}"

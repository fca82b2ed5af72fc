#!/usr/bin/env bash
# Give the action a ci-budget command and write its path to $GITHUB_OUTPUT (`cli`, `venv`,
# `version`, `installer`).
#
# - Dependencies come only from the hash-locked files in requirements/ (--require-hashes,
#   --no-deps): nothing unpinned is fetched in a job. `run` (GPU jobs) installs the run lock,
#   without the GitHub client; plan and report install the full lock.
# - ci-budget itself is not built or installed: the launcher puts the action's own src/ first on
#   sys.path, so no build backend runs in a job.
# - The virtualenv is cached under $RUNNER_TOOL_CACHE (kept between jobs on a self-hosted
#   runner), keyed by the lock's hash, the Python version and the machine; a warm job checks a
#   stamp and starts no Python beyond the one that names the cache key.
# - Installer: uv when it is on PATH; else uv's own PyPI wheel, fetched from the URL and checked
#   against the sha256 in requirements/uv.txt, kept in the tool cache (seconds faster than pip
#   on an empty cache); else pip. CI_BUDGET_INSTALLER=pip forces pip. Behind a mirror
#   (PIP_INDEX_URL set) no wheel is fetched directly and uv is pointed at the mirror.
# - Never installs into the runner's Python: on a GPU runner that interpreter holds the test
#   environment. Pip settings (PIP_INDEX_URL, ...) pass through for runners behind a mirror.
set -euo pipefail

action_path=${ACTION_PATH:?ACTION_PATH must name the ci-budget checkout}
bootstrap=${CI_BUDGET_BOOTSTRAP_PYTHON:-python3}
installer=${CI_BUDGET_INSTALLER:-auto}
profile=full
if [[ "${INPUT_COMMAND:-}" == run ]]; then profile=run; fi
lock="$action_path/requirements/$profile.txt"
uv_lock="$action_path/requirements/uv.txt"

fail() {
  echo "::error title=ci-budget setup::$1"
  exit 1
}

[[ "$installer" == auto || "$installer" == uv || "$installer" == pip ]] ||
  fail "CI_BUDGET_INSTALLER must be auto, uv or pip, not '$installer'"
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

# uv from its PyPI wheel: the one for this machine in requirements/uv.txt, checked against its
# sha256 before anything in it is run. Prints the binary's path; fails (quietly) when there is
# no wheel for this machine, no curl, no network to PyPI's file host, or the binary cannot run.
fetch_uv() {
  local key sha url dir tmp
  key="$(uname -s)-$(uname -m)"
  read -r _ sha url < <(grep "^$key " "$uv_lock" 2>/dev/null) || return 1
  dir="$cache/uv-$(sed -n 's/^# inputs-sha256: uv==//p' "$uv_lock")-$key"
  if [[ -x "$dir/uv" ]]; then
    echo "$dir/uv"
    return 0
  fi
  [[ -z "${PIP_INDEX_URL:-}" ]] || return 1 # a mirror: PyPI's file host may be out of reach
  command -v curl >/dev/null 2>&1 || return 1
  mkdir -p "$cache"
  tmp=$(mktemp -d "$cache/.uv-XXXXXX")
  if curl --fail --silent --show-error --location --proto '=https' --connect-timeout 5 \
    --max-time 120 --output "$tmp/uv.whl" "$url" &&
    "$bootstrap" -I - "$tmp/uv.whl" "$sha" "$tmp/uv" <<'PY' && "$tmp/uv" --version >/dev/null 2>&1; then
import hashlib, os, sys, zipfile
wheel, want, dest = sys.argv[1:]
with open(wheel, "rb") as handle:
    got = hashlib.sha256(handle.read()).hexdigest()
if got != want:
    sys.exit(f"::warning title=ci-budget setup::uv wheel sha256 {got} is not the locked {want}")
with zipfile.ZipFile(wheel) as whl:
    name = next(n for n in whl.namelist() if n.endswith(".data/scripts/uv"))
    with whl.open(name) as src, open(dest, "wb") as out:
        out.write(src.read())
os.chmod(dest, 0o755)
PY
    rm -f "$tmp/uv.whl"
    # Renamed into place: a job that races us finds a complete directory or none.
    mv -T "$tmp" "$dir" 2>/dev/null || rm -rf "$tmp"
    echo "$dir/uv"
    return 0
  fi
  rm -rf "$tmp"
  return 1
}

find_uv() {
  [[ "$installer" != pip ]] || return 1
  command -v uv 2>/dev/null && return 0
  fetch_uv
}

install() {
  local dest=$1 uv
  if uv=$(find_uv); then
    used="uv ($uv)"
    if [[ -n "${PIP_INDEX_URL:-}" && -z "${UV_DEFAULT_INDEX:-}${UV_INDEX_URL:-}" ]]; then
      export UV_DEFAULT_INDEX=$PIP_INDEX_URL # the runner's mirror
    fi
    "$bootstrap" -m venv --without-pip "$dest"
    # --no-config: no uv.toml or pyproject.toml of the checked-out repository has a say.
    "$uv" pip install --quiet --no-config --link-mode=copy --python "$dest/bin/python" \
      --no-deps --require-hashes -r "$lock"
  elif [[ "$installer" == uv ]]; then
    fail "CI_BUDGET_INSTALLER=uv, but no uv on PATH and none could be fetched"
  elif "$bootstrap" -m pip --version >/dev/null 2>&1 &&
    "$bootstrap" -c 'import sys, pip; sys.exit(tuple(map(int, pip.__version__.split(".")[:2])) < (22, 3))'; then
    used=pip
    # The bootstrap's pip installs into a venv without its own pip (skips ensurepip's seconds).
    "$bootstrap" -m venv --without-pip "$dest"
    "$bootstrap" -m pip --python "$dest/bin/python" install --quiet --disable-pip-version-check \
      --no-deps --require-hashes -r "$lock"
  else
    used=pip
    "$bootstrap" -m venv "$dest"
    "$dest/bin/python" -m pip install --quiet --disable-pip-version-check \
      --no-deps --require-hashes -r "$lock"
  fi
  printf '%s\n' "$lock_hash" >"$dest/.ci-budget-stamp"
}

used=cached
if [[ -f "$venv/.ci-budget-stamp" && -x "$venv/bin/python" ]]; then
  echo "ci-budget $version: reusing the $profile dependencies cached in $venv"
else
  echo "ci-budget $version: installing $profile dependencies into $venv"
  mkdir -p "$cache"
  # What a killed job left half built (an install takes seconds, so an hour-old one is dead).
  find "$cache" -maxdepth 1 \( -name '.new-*' -o -name '.uv-*' \) -mmin +60 \
    -exec rm -rf -- {} + 2>/dev/null || true
  tmp=$(mktemp -d "$cache/.new-XXXXXX")
  # A failed or cancelled install leaves nothing in the runner's tool cache.
  trap 'rm -rf -- "$tmp"' EXIT
  trap 'exit 130' INT
  trap 'exit 143' TERM
  install "$tmp"
  echo "ci-budget $version: installed with $used"
  # Built aside, then renamed: a job that races us finds a complete venv or none.
  mv -T "$tmp" "$venv" 2>/dev/null || rm -rf "$tmp"
  trap - EXIT INT TERM
fi

# The launcher lives with this job, the venv with the runner: the code is the action's own.
# Written by the shell (no interpreter start): the venv's Python, isolated (-I: no user site,
# no PYTHON* variables, no current directory on the path), with the action's src/ first.
bin="${RUNNER_TEMP:-/tmp}/ci-budget-bin-$$"
mkdir -p "$bin"
launch='import sys; sys.path.insert(0, sys.argv.pop(1)); from ci_budget.cli import main; sys.exit(main())'
printf '#!/usr/bin/env bash\nexec %q -I -c %q %q "$@"\n' \
  "$venv/bin/python" "$launch" "$action_path/src" >"$bin/ci-budget"
chmod +x "$bin/ci-budget"

{
  echo "cli=$bin/ci-budget"
  echo "venv=$venv"
  echo "version=$version"
  echo "installer=$used"
} >>"${GITHUB_OUTPUT:?GITHUB_OUTPUT is not set}"

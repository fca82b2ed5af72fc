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
#   runner), keyed by the lock's hash, the Python version and the machine. It is never trusted
#   by its name: a warm job reuses it only when every file, link and folder in it matches the
#   manifest written when it was built (a planted .pth or .pyc, an edited module: it is moved
#   aside and built again). The tests never see the tool cache (their sandbox hides it); the
#   manifest is for anything else that ran on this runner as its user. Bytecode is compiled at
#   install and the launcher runs with -B, so nothing writes into the venv afterwards.
# - Installer: uv when it is on PATH; else uv's own PyPI wheel, fetched from the URL, kept in
#   the tool cache, checked against the sha256 in requirements/uv.txt each time it is used and
#   unpacked for this job only (seconds faster than pip on an empty cache); else pip.
#   CI_BUDGET_INSTALLER=pip forces pip. Behind a mirror (PIP_INDEX_URL set) no wheel is fetched
#   directly and uv is pointed at the mirror.
# - Never installs into the runner's Python: on a GPU runner that interpreter holds the test
#   environment. Pip settings (PIP_INDEX_URL, ...) pass through for runners behind a mirror.
set -euo pipefail

action_path=${ACTION_PATH:?ACTION_PATH must name the ci-budget checkout}
bootstrap=${CI_BUDGET_BOOTSTRAP_PYTHON:-python3}
installer=${CI_BUDGET_INSTALLER:-auto}
profile=full
# setup: a stage job's `ci-budget run` (or `run --from-log`), the run lock too.
if [[ "${INPUT_COMMAND:-}" == run || "${INPUT_COMMAND:-}" == setup ]]; then profile=run; fi
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
# -m: venvs with a manifest (older ones, trusted by a stamp file, are never reused).
venv="$cache/$profile-$lock_hash-$pykey-m"
manifest_name=.ci-budget-manifest

# Every file, link and folder under $1 but the manifest: type, mode, link target and path,
# then each file's sha256. Paths are relative, so a venv built aside and renamed keeps it.
manifest() {
  (
    cd "$1" &&
      find . ! -name "$manifest_name" -printf '%y %m %l %p\n' | LC_ALL=C sort &&
      find . -type f ! -name "$manifest_name" -print0 | LC_ALL=C sort -z | xargs -0 -r sha256sum
  )
}

# The cached venv matches its manifest; else say (one line) what changed.
verified() {
  local diffs
  [[ -x "$venv/bin/python" && -f "$venv/$manifest_name" ]] || return 1
  diffs=$(manifest "$venv" | diff "$venv/$manifest_name" - | sed -n 's/^[<>] //p' | head -n 2) ||
    true
  [[ -z "$diffs" ]] && return 0
  echo "::warning title=ci-budget setup::the cached $profile dependencies in $venv changed" \
    "since they were installed ($(printf '%s' "$diffs" | awk '{print $NF}' | sort -u | paste -sd, -));" \
    "moving them aside and installing again"
  return 2
}

# uv from its PyPI wheel: the one for this machine in requirements/uv.txt, kept in the tool
# cache and checked against its sha256 on every use, then unpacked into a folder of this job
# (a binary kept in the cache would run whatever was written over it). Prints the binary's
# path; fails (quietly) when there is no wheel for this machine, no curl, no network to PyPI's
# file host, the wheel does not match, or the binary cannot run.
fetch_uv() {
  local key sha url dir tmp run
  key="$(uname -s)-$(uname -m)"
  read -r _ sha url < <(grep "^$key " "$uv_lock" 2>/dev/null) || return 1
  dir="$cache/uv-$(sed -n 's/^# inputs-sha256: uv==//p' "$uv_lock")-$key"
  if [[ ! -f "$dir/uv.whl" ]]; then
    [[ -z "${PIP_INDEX_URL:-}" ]] || return 1 # a mirror: PyPI's file host may be out of reach
    command -v curl >/dev/null 2>&1 || return 1
    mkdir -p "$cache"
    tmp=$(mktemp -d "$cache/.uv-XXXXXX")
    if ! curl --fail --silent --show-error --location --proto '=https' --connect-timeout 5 \
      --max-time 120 --output "$tmp/uv.whl" "$url"; then
      rm -rf "$tmp"
      return 1
    fi
    rm -rf "$dir" # an older layout that kept the unpacked binary
    # Renamed into place: a job that races us finds a complete directory or none.
    mv -T "$tmp" "$dir" 2>/dev/null || rm -rf "$tmp"
  fi
  run=$(mktemp -d "$dir/.run-XXXXXX") || return 1
  if "$bootstrap" -I - "$dir/uv.whl" "$sha" "$run/uv" <<'PY' && "$run/uv" --version >/dev/null 2>&1; then
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
    echo "$run/uv"
    return 0
  fi
  rm -rf "$run"
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
    "$uv" pip install --quiet --no-config --link-mode=copy --compile-bytecode \
      --python "$dest/bin/python" --no-deps --require-hashes -r "$lock"
    case $uv in "$cache"/uv-*/.run-*/uv) rm -rf "${uv%/uv}" ;; esac
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
  manifest "$dest" >"$dest/$manifest_name"
}

used=cached
state=0
verified || state=$?
if ((state == 0)); then
  echo "ci-budget $version: reusing the $profile dependencies cached in $venv (manifest checked)"
else
  echo "ci-budget $version: installing $profile dependencies into $venv"
  mkdir -p "$cache"
  # What a killed job left half built (an install takes seconds, so an hour-old one is dead).
  find "$cache" -maxdepth 1 \( -name '.new-*' -o -name '.uv-*' -o -name '.bad-*' \) -mmin +60 \
    -exec rm -rf -- {} + 2>/dev/null || true
  find "$cache" -mindepth 2 -maxdepth 2 -path '*/uv-*/.run-*' -mmin +60 \
    -exec rm -rf -- {} + 2>/dev/null || true
  if [[ -e "$venv" ]]; then # changed since it was built, or never finished: never reused
    bad=$(mktemp -u "$cache/.bad-XXXXXX")
    mv -T "$venv" "$bad" 2>/dev/null && rm -rf -- "$bad"
  fi
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
# no PYTHON* variables, no current directory on the path), writing no bytecode (-B: the venv
# stays as its manifest says), with the action's src/ first.
bin="${RUNNER_TEMP:-/tmp}/ci-budget-bin-$$"
mkdir -p "$bin"
launch='import sys; sys.path.insert(0, sys.argv.pop(1)); from ci_budget.cli import main; sys.exit(main())'
printf '#!/usr/bin/env bash\nexec %q -I -B -c %q %q "$@"\n' \
  "$venv/bin/python" "$launch" "$action_path/src" >"$bin/ci-budget"
chmod +x "$bin/ci-budget"

{
  echo "cli=$bin/ci-budget"
  echo "venv=$venv"
  echo "version=$version"
  echo "installer=$used"
} >>"${GITHUB_OUTPUT:?GITHUB_OUTPUT is not set}"
